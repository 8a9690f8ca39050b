// Package pkitest makes cluster authorities and node certificates for tests,
// with the pki package or with the openssl command line exactly as §17.2.2
// shows it.
package pkitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/pki"
)

// Node is a node's certificate files.
type Node struct {
	ID   string
	Dir  string
	Cert string // node.pem
	Key  string // node-key.pem
	CA   string // cluster-ca.pem
}

func nodeIn(id, dir string) Node {
	return Node{ID: id, Dir: dir,
		Cert: filepath.Join(dir, pki.NodeCertFile),
		Key:  filepath.Join(dir, pki.NodeKeyFile),
		CA:   filepath.Join(dir, pki.CACertFile)}
}

// NewCA creates an authority in a fresh temporary folder.
func NewCA(t testing.TB, name string) *pki.CA {
	t.Helper()
	ca, err := pki.InitCA(pki.InitOptions{Name: name, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// Issue signs a certificate for id (CN id, the SANs given, or 127.0.0.1).
func Issue(t testing.TB, ca *pki.CA, id string, sans ...string) Node {
	t.Helper()
	if len(sans) == 0 {
		sans = []string{"127.0.0.1"}
	}
	dir := t.TempDir()
	if _, err := ca.IssueNode(pki.NodeOptions{ID: id, SANs: sans, OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	return nodeIn(id, dir)
}

// RequireOpenSSL skips the test when the openssl command is not installed.
func RequireOpenSSL(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
}

// OpenSSLCA creates an authority with the openssl commands of §17.2.2 and
// returns its folder (cluster-ca.pem, cluster-ca-key.pem).
func OpenSSLCA(t testing.TB, name string) string {
	t.Helper()
	RequireOpenSSL(t)
	dir := t.TempDir()
	run(t, dir, "openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "cluster-ca-key.pem")
	run(t, dir, "openssl", "req", "-new", "-x509", "-key", "cluster-ca-key.pem", "-out", "cluster-ca.pem", "-days", "3650", "-sha256",
		"-subj", "/CN=Autorité du cluster "+name,
		"-addext", "basicConstraints=critical,CA:TRUE",
		"-addext", "keyUsage=critical,keyCertSign,cRLSign")
	return dir
}

// OpenSSLNode signs a node certificate with openssl as §17.2.2 shows, with
// the authority of caDir (made by OpenSSLCA or by pki.InitCA). sans are
// openssl subjectAltName items such as "IP:127.0.0.1" or "DNS:n1.local".
func OpenSSLNode(t testing.TB, caDir, id string, sans ...string) Node {
	t.Helper()
	RequireOpenSSL(t)
	if len(sans) == 0 {
		sans = []string{"IP:127.0.0.1"}
	}
	dir := t.TempDir()
	ext := "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n" +
		"extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=" + strings.Join(sans, ",") + "\n"
	extFile := filepath.Join(dir, "ext.cnf")
	if err := os.WriteFile(extFile, []byte(ext), 0o644); err != nil {
		t.Fatal(err)
	}
	caCert := filepath.Join(caDir, pki.CACertFile)
	run(t, dir, "openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "node-key.pem")
	run(t, dir, "openssl", "req", "-new", "-key", "node-key.pem", "-subj", "/CN="+id, "-out", "node.csr")
	run(t, dir, "openssl", "x509", "-req", "-in", "node.csr", "-CA", caCert,
		"-CAkey", filepath.Join(caDir, pki.CAKeyFile), "-CAserial", filepath.Join(dir, "ca.srl"), "-CAcreateserial",
		"-days", "825", "-sha256", "-out", "node.pem", "-extfile", extFile)
	if err := os.Remove(filepath.Join(dir, "node.csr")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(caCert)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, pki.CACertFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return nodeIn(id, dir)
}

func run(t testing.TB, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
