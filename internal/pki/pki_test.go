package pki_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/pki"
	"github.com/miraj-db/miraj/internal/pki/pkitest"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pki.ParseCertificatePEM(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestInitCA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	ca, err := pki.InitCA(pki.InitOptions{Name: "gestium-prod", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := readCert(t, filepath.Join(dir, pki.CACertFile))
	if !c.IsCA || !c.BasicConstraintsValid || c.KeyUsage != x509.KeyUsageCertSign|x509.KeyUsageCRLSign {
		t.Fatalf("CA constraints: IsCA=%v KeyUsage=%v", c.IsCA, c.KeyUsage)
	}
	if !strings.Contains(c.Subject.CommonName, "gestium-prod") {
		t.Fatalf("CN %q", c.Subject.CommonName)
	}
	if k, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
		t.Fatalf("key %T, want ECDSA P-256", c.PublicKey)
	}
	if days := c.NotAfter.Sub(c.NotBefore).Hours() / 24; days < 3649 || days > 3651 {
		t.Fatalf("validity %.1f days, want 3650", days)
	}
	if m := mode(t, filepath.Join(dir, pki.CAKeyFile)); m != 0o600 {
		t.Fatalf("key mode %v, want 0600", m)
	}
	loaded, err := pki.LoadCADir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Cert.Equal(ca.Cert) {
		t.Fatal("reloaded CA differs")
	}
}

func TestNoOverwriteWithoutForce(t *testing.T) {
	dir := t.TempDir()
	if _, err := pki.InitCA(pki.InitOptions{Name: "a", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, pki.CACertFile))
	if _, err := pki.InitCA(pki.InitOptions{Name: "b", Dir: dir}); !errors.Is(err, pki.ErrExists) {
		t.Fatalf("second init-ca: %v, want ErrExists", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, pki.CACertFile))
	if string(before) != string(after) {
		t.Fatal("cluster-ca.pem overwritten")
	}
	ca, err := pki.InitCA(pki.InitOptions{Name: "c", Dir: dir, Force: true})
	if err != nil {
		t.Fatalf("init-ca --force: %v", err)
	}
	out := t.TempDir()
	if _, err := ca.IssueNode(pki.NodeOptions{ID: "n1", SANs: []string{"10.0.0.1"}, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.IssueNode(pki.NodeOptions{ID: "n1", SANs: []string{"10.0.0.1"}, OutDir: out}); !errors.Is(err, pki.ErrExists) {
		t.Fatalf("second issue-node: %v, want ErrExists", err)
	}
	if _, err := ca.IssueNode(pki.NodeOptions{ID: "n1", SANs: []string{"10.0.0.1"}, OutDir: out, Force: true}); err != nil {
		t.Fatalf("issue-node --force: %v", err)
	}
	// A different cluster-ca.pem in the output folder is not replaced either.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, pki.CACertFile), []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.IssueNode(pki.NodeOptions{ID: "n2", SANs: []string{"10.0.0.2"}, OutDir: other}); !errors.Is(err, pki.ErrExists) {
		t.Fatalf("issue-node over another cluster-ca.pem: %v, want ErrExists", err)
	}
}

func TestIssueNode(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	ca := pkitest.NewCA(t, "gestium-prod")
	ca.Now = func() time.Time { return now }
	out := filepath.Join(t.TempDir(), "n1")
	cert, err := ca.IssueNode(pki.NodeOptions{ID: "n1", SANs: []string{"10.0.0.1", "n1.exemple.local", "IP:::1", "DNS:n1"}, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	onDisk := readCert(t, filepath.Join(out, pki.NodeCertFile))
	if !onDisk.Equal(cert) {
		t.Fatal("node.pem differs from the returned certificate")
	}
	if cert.Subject.CommonName != "n1" || cert.IsCA {
		t.Fatalf("CN %q IsCA %v", cert.Subject.CommonName, cert.IsCA)
	}
	if len(cert.IPAddresses) != 2 || !cert.IPAddresses[0].Equal(net.ParseIP("10.0.0.1")) || !cert.IPAddresses[1].Equal(net.IPv6loopback) {
		t.Fatalf("IP SANs %v", cert.IPAddresses)
	}
	if strings.Join(cert.DNSNames, ",") != "n1.exemple.local,n1" {
		t.Fatalf("DNS SANs %v", cert.DNSNames)
	}
	if len(cert.ExtKeyUsage) != 2 || cert.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth || cert.ExtKeyUsage[1] != x509.ExtKeyUsageClientAuth {
		t.Fatalf("EKU %v", cert.ExtKeyUsage)
	}
	if want := now.AddDate(0, 0, 825); !cert.NotAfter.Equal(want) {
		t.Fatalf("NotAfter %v, want %v", cert.NotAfter, want)
	}
	pool := x509.NewCertPool()
	pool.AddCert(readCert(t, filepath.Join(out, pki.CACertFile)))
	for _, eku := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "n1.exemple.local", CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{eku}}); err != nil {
			t.Fatalf("verify chain for %v: %v", eku, err)
		}
	}
	if err := cert.VerifyHostname("10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if err := cert.VerifyHostname("10.0.0.9"); err == nil {
		t.Fatal("SAN accepts an address it does not carry")
	}
	if m := mode(t, filepath.Join(out, pki.NodeKeyFile)); m != 0o600 {
		t.Fatalf("node-key.pem mode %v, want 0600", m)
	}
	if _, err := os.Stat(filepath.Join(out, pki.NodeKeyFile)); err != nil {
		t.Fatal(err)
	}
	reg, err := pki.ReadRegister(filepath.Join(ca.Dir, pki.RegisterFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(reg) != 1 || reg[0].Node != "n1" || reg[0].Serial.Cmp(cert.SerialNumber) != 0 || !reg[0].Time.Equal(cert.NotAfter) {
		t.Fatalf("register %+v", reg)
	}
}

func TestIssueNodeRejects(t *testing.T) {
	ca := pkitest.NewCA(t, "c")
	cases := []struct {
		name string
		o    pki.NodeOptions
		want string
	}{
		{"bad id", pki.NodeOptions{ID: "n-1", SANs: []string{"10.0.0.1"}}, "not allowed"},
		{"no san", pki.NodeOptions{ID: "n1"}, "at least one --san"},
		{"bad san", pki.NodeOptions{ID: "n1", SANs: []string{"a b"}}, "neither an IP address nor a DNS name"},
		{"bad ip san", pki.NodeOptions{ID: "n1", SANs: []string{"IP:n1.local"}}, "not an IP address"},
		{"days", pki.NodeOptions{ID: "n1", SANs: []string{"10.0.0.1"}, Days: -3}, "--days -3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.OutDir = t.TempDir()
			_, err := ca.IssueNode(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func crlSerials(t *testing.T, path string, ca *x509.Certificate) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crl, err := pki.ParseCRL(data, ca)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range crl.RevokedCertificateEntries {
		out = append(out, e.SerialNumber.String())
	}
	return out
}

func TestRevoke(t *testing.T) {
	ca := pkitest.NewCA(t, "c")
	n3a := pkitest.Issue(t, ca, "n3")
	n3b := pkitest.Issue(t, ca, "N3")
	n2 := pkitest.Issue(t, ca, "n2")
	crlPath := filepath.Join(ca.Dir, pki.CRLFile)

	// Revoke by id: every certificate of n3 (case-insensitive).
	got, err := ca.Revoke(pki.RevokeOptions{ID: "n3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("revoked %d, want 2", len(got))
	}
	s3a, s3b, s2 := readCert(t, n3a.Cert).SerialNumber.String(), readCert(t, n3b.Cert).SerialNumber.String(), readCert(t, n2.Cert).SerialNumber.String()
	if got := strings.Join(crlSerials(t, crlPath, ca.Cert), ","); got != s3a+","+s3b {
		t.Fatalf("CRL serials %s, want %s,%s", got, s3a, s3b)
	}
	// Again: nothing new, the list is regenerated with a higher number.
	data, _ := os.ReadFile(crlPath)
	first, _ := pki.ParseCRL(data, ca.Cert)
	if got, err := ca.Revoke(pki.RevokeOptions{ID: "n3"}); err != nil || len(got) != 0 {
		t.Fatalf("second revoke: %v %v", got, err)
	}
	data, _ = os.ReadFile(crlPath)
	second, _ := pki.ParseCRL(data, ca.Cert)
	if second.Number.Cmp(first.Number) <= 0 {
		t.Fatalf("CRL number %v after %v", second.Number, first.Number)
	}
	// Revoke one certificate by file, to another path.
	other := filepath.Join(t.TempDir(), "crl.pem")
	if _, err := ca.Revoke(pki.RevokeOptions{CertPath: n2.Cert, Out: other, Days: 30}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(crlSerials(t, other, ca.Cert), ","); got != s3a+","+s3b+","+s2 {
		t.Fatalf("CRL serials %s", got)
	}
	regs, _ := pki.ReadRegister(filepath.Join(ca.Dir, pki.RevocationsFile))
	if len(regs) != 3 || regs[2].Node != "n2" {
		t.Fatalf("revocations.txt %+v", regs)
	}
	// Unknown node, or a certificate of another authority.
	if _, err := ca.Revoke(pki.RevokeOptions{ID: "n9"}); !errors.Is(err, pki.ErrNotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
	foreign := pkitest.Issue(t, pkitest.NewCA(t, "other"), "n1")
	if _, err := ca.Revoke(pki.RevokeOptions{CertPath: foreign.Cert}); !errors.Is(err, pki.ErrNotSigned) {
		t.Fatalf("revoke foreign: %v", err)
	}
	// A CRL is checked against its authority.
	data, _ = os.ReadFile(crlPath)
	if _, err := pki.ParseCRL(data, readCert(t, foreign.CA)); !errors.Is(err, pki.ErrNotSigned) {
		t.Fatalf("ParseCRL with another CA: %v", err)
	}
	// No temporary file left behind.
	entries, _ := os.ReadDir(ca.Dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("leftover %s", e.Name())
		}
	}
}

func TestCRLNextUpdate(t *testing.T) {
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	ca := pkitest.NewCA(t, "c")
	ca.Now = func() time.Time { return now }
	crl, err := ca.WriteCRL("", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !crl.NextUpdate.Equal(now.AddDate(0, 0, 10)) || len(crl.RevokedCertificateEntries) != 0 {
		t.Fatalf("NextUpdate %v entries %d", crl.NextUpdate, len(crl.RevokedCertificateEntries))
	}
}

// TestOpenSSLInterop: an authority made with openssl (§17.2.2) signs with
// our tool; our certificates and CRLs verify with openssl, and openssl-made
// node certificates are revocable by our tool.
func TestOpenSSLInterop(t *testing.T) {
	caDir := pkitest.OpenSSLCA(t, "gestium-prod")
	ca, err := pki.LoadCADir(caDir)
	if err != nil {
		t.Fatal(err)
	}
	ours := pkitest.Issue(t, ca, "n1", "127.0.0.1")
	theirs := pkitest.OpenSSLNode(t, caDir, "n2", "IP:127.0.0.1", "DNS:n2.local")
	c := readCert(t, theirs.Cert)
	if c.Subject.CommonName != "n2" || len(c.ExtKeyUsage) != 2 {
		t.Fatalf("openssl cert: CN %q EKU %v", c.Subject.CommonName, c.ExtKeyUsage)
	}
	for _, n := range []pkitest.Node{ours, theirs} {
		out, err := exec.Command("openssl", "verify", "-CAfile", filepath.Join(caDir, pki.CACertFile),
			"-purpose", "sslclient", n.Cert).CombinedOutput()
		if err != nil {
			t.Fatalf("openssl verify %s: %v\n%s", n.ID, err, out)
		}
	}
	if _, err := ca.Revoke(pki.RevokeOptions{CertPath: theirs.Cert}); err != nil {
		t.Fatal(err)
	}
	crl := filepath.Join(caDir, pki.CRLFile)
	out, err := exec.Command("openssl", "crl", "-in", crl, "-CAfile", filepath.Join(caDir, pki.CACertFile), "-noout", "-text").CombinedOutput()
	if err != nil {
		t.Fatalf("openssl crl: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "verify OK") && !strings.Contains(string(out), "Revoked Certificates") {
		t.Fatalf("openssl crl output:\n%s", out)
	}
	out, err = exec.Command("openssl", "verify", "-crl_check", "-CAfile", filepath.Join(caDir, pki.CACertFile),
		"-CRLfile", crl, theirs.Cert).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "revoked") {
		t.Fatalf("openssl verify of a revoked certificate: %v\n%s", err, out)
	}
	if out, err := exec.Command("openssl", "verify", "-crl_check", "-CAfile", filepath.Join(caDir, pki.CACertFile),
		"-CRLfile", crl, ours.Cert).CombinedOutput(); err != nil {
		t.Fatalf("openssl verify of a valid certificate with the CRL: %v\n%s", err, out)
	}
}
