package pki_test

import (
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/pki"
)

func serverPairOptions(dir string) pki.ServerPairOptions {
	return pki.ServerPairOptions{Dir: dir, CAFile: "ca.pem", CAKeyFile: "ca-key.pem", CertFile: "server-cert.pem", KeyFile: "server-key.pem",
		CAName: "test authority", ServerName: "test server", Hosts: []string{"localhost", "127.0.0.1", "::1"}}
}

// The pair verifies as a server certificate for its hosts under its own
// authority, the keys are private to the owner, and nothing existing is
// overwritten without Force.
func TestNewServerPair(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	if err := pki.NewServerPair(serverPairOptions(dir)); err != nil {
		t.Fatal(err)
	}
	ca := readCert(t, filepath.Join(dir, "ca.pem"))
	cert := readCert(t, filepath.Join(dir, "server-cert.pem"))
	if !ca.IsCA || cert.IsCA || cert.Subject.CommonName != "test server" || ca.Subject.CommonName != "test authority" {
		t.Fatalf("CA %v %q, server %v %q", ca.IsCA, ca.Subject.CommonName, cert.IsCA, cert.Subject.CommonName)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Fatalf("verify for %s: %v", host, err)
		}
	}
	if days := cert.NotAfter.Sub(time.Now()).Hours() / 24; days < 3640 {
		t.Fatalf("server certificate valid %.0f more days, want about 3650", days)
	}
	for _, f := range []string{"ca-key.pem", "server-key.pem"} {
		if m := mode(t, filepath.Join(dir, f)); m != 0o600 {
			t.Fatalf("%s mode %v, want 0600", f, m)
		}
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pki.ParseKeyPEM(data); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if err := pki.NewServerPair(serverPairOptions(dir)); !errors.Is(err, pki.ErrExists) {
		t.Fatalf("second pair in the same folder: %v, want ErrExists", err)
	}
	o := serverPairOptions(dir)
	o.Force = true
	if err := pki.NewServerPair(o); err != nil {
		t.Fatalf("with Force: %v", err)
	}
	if again := readCert(t, filepath.Join(dir, "server-cert.pem")); again.Equal(cert) {
		t.Fatal("Force kept the old certificate")
	}
}
