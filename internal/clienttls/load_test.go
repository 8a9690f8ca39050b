package clienttls_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/clienttls"
	"github.com/miraj-db/miraj/internal/pki"
	"github.com/miraj-db/miraj/internal/pki/pkitest"
)

// Each file that cannot serve is refused with its option, its path and
// the reason; a good set loads.
func TestLoadRefuses(t *testing.T) {
	ca := pkitest.NewCA(t, "client")
	good := pkitest.Issue(t, ca, "server")
	other := pkitest.Issue(t, ca, "other")
	stranger := pkitest.NewCA(t, "stranger")
	unsigned := pkitest.Issue(t, stranger, "server")

	past := pkitest.NewCA(t, "past")
	past.Now = func() time.Time { return time.Now().AddDate(0, 0, -30) }
	expiredDir := t.TempDir()
	if _, err := past.IssueNode(pki.NodeOptions{ID: "old", SANs: []string{"127.0.0.1"}, Days: 1, OutDir: expiredDir}); err != nil {
		t.Fatal(err)
	}
	future := pkitest.NewCA(t, "future")
	future.Now = func() time.Time { return time.Now().AddDate(0, 0, 10) }
	futureDir := t.TempDir()
	if _, err := future.IssueNode(pki.NodeOptions{ID: "early", SANs: []string{"127.0.0.1"}, OutDir: futureDir}); err != nil {
		t.Fatal(err)
	}
	// The CA's own certificate was made now, so the future one's
	// authority is valid: only the server certificate is not yet.
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	folder := t.TempDir()

	revokedCA := pkitest.NewCA(t, "revoking")
	revokedServer := pkitest.Issue(t, revokedCA, "revoked")
	if _, err := revokedCA.Revoke(pki.RevokeOptions{ID: "revoked"}); err != nil {
		t.Fatal(err)
	}
	crl := filepath.Join(t.TempDir(), "crl.pem")
	if _, err := revokedCA.WriteCRL(crl, 0); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name  string
		files clienttls.Files
		is    error  // errors.Is
		want  string // in the message
	}{
		{"key of another certificate", clienttls.Files{Cert: good.Cert, Key: other.Key}, clienttls.ErrKeyMismatch, "--ssl-key " + other.Key + ": "},
		{"expired", clienttls.Files{Cert: filepath.Join(expiredDir, pki.NodeCertFile), Key: filepath.Join(expiredDir, pki.NodeKeyFile)}, clienttls.ErrExpired, "--ssl-cert " + filepath.Join(expiredDir, pki.NodeCertFile) + ": clienttls: certificate expired on "},
		{"not yet valid", clienttls.Files{Cert: filepath.Join(futureDir, pki.NodeCertFile), Key: filepath.Join(futureDir, pki.NodeKeyFile)}, clienttls.ErrNotYetValid, "certificate not yet valid before "},
		{"another authority", clienttls.Files{Cert: unsigned.Cert, Key: unsigned.Key, CA: good.CA}, clienttls.ErrNotSigned, "--ssl-cert " + unsigned.Cert + ": clienttls: certificate not signed by the authority " + good.CA},
		{"unreadable certificate", clienttls.Files{Cert: missing, Key: good.Key}, os.ErrNotExist, "--ssl-cert " + missing + ": open: no such file or directory"},
		{"certificate is a folder", clienttls.Files{Cert: folder, Key: good.Key}, nil, "--ssl-cert " + folder + ": read: is a directory"},
		{"unreadable key", clienttls.Files{Cert: good.Cert, Key: missing}, os.ErrNotExist, "--ssl-key " + missing + ": open: no such file or directory"},
		{"unreadable CA", clienttls.Files{Cert: good.Cert, Key: good.Key, CA: missing}, os.ErrNotExist, "--ssl-ca " + missing},
		{"not PEM", clienttls.Files{Cert: garbage, Key: good.Key}, nil, "--ssl-cert " + garbage + ": no PEM CERTIFICATE block"},
		{"key not PEM", clienttls.Files{Cert: good.Cert, Key: garbage}, pki.ErrBadKey, "--ssl-key " + garbage},
		{"CRL of another authority", clienttls.Files{Cert: good.Cert, Key: good.Key, CA: good.CA, CRL: crl}, nil, "--ssl-crl " + crl + ": not signed by an authority of " + good.CA},
		{"server certificate revoked", clienttls.Files{Cert: revokedServer.Cert, Key: revokedServer.Key, CA: revokedServer.CA, CRL: crl}, clienttls.ErrRevoked, "--ssl-cert " + revokedServer.Cert},
		{"CRL without CA", clienttls.Files{Cert: good.Cert, Key: good.Key, CRL: crl}, clienttls.ErrUsage, "--ssl-crl needs --ssl-ca"},
		{"certificate without key", clienttls.Files{Cert: good.Cert}, clienttls.ErrUsage, "--ssl-cert and --ssl-key go together"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := clienttls.Load(c.files, time.Now())
			if err == nil {
				t.Fatal("loaded")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("%v, want errors.Is %v", err, c.is)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q, want one line holding %q", err, c.want)
			}
		})
	}

	m, err := clienttls.Load(clienttls.Files{Cert: good.Cert, Key: good.Key, CA: good.CA}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if m.Leaf.Subject.CommonName != "server" || m.Config().MinVersion != tls.VersionTLS12 || m.Config().ClientAuth != tls.VerifyClientCertIfGiven {
		t.Fatalf("loaded %q, min version %x, client auth %v", m.Leaf.Subject.CommonName, m.Config().MinVersion, m.Config().ClientAuth)
	}
	if m, err := clienttls.Load(clienttls.Files{Cert: good.Cert, Key: good.Key}, time.Now()); err != nil || m.Config().ClientAuth != tls.NoClientCert {
		t.Fatalf("without CA: %v, client auth %v", err, m.Config().ClientAuth)
	}
}

// handshake runs a TLS handshake between a client of cfg and a server of
// m over an in-memory pipe, and returns the client's error and the
// server's view.
func handshake(t *testing.T, m *clienttls.Material, cfg *tls.Config) (error, tls.ConnectionState, error) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	srv := tls.Server(b, m.Config())
	done := make(chan error, 1)
	go func() { done <- srv.Handshake(); b.Close() }()
	cl := tls.Client(a, cfg)
	cerr := cl.Handshake()
	a.Close()
	serr := <-done
	return cerr, srv.ConnectionState(), serr
}

// The server speaks TLS 1.2 and 1.3 only; a client certificate is
// verified against the CA, and one the CRL lists is refused.
func TestServedConnections(t *testing.T) {
	ca := pkitest.NewCA(t, "client")
	server := pkitest.Issue(t, ca, "server")
	alice := pkitest.Issue(t, ca, "alice")
	bob := pkitest.Issue(t, ca, "bob")
	if _, err := ca.Revoke(pki.RevokeOptions{ID: "bob"}); err != nil {
		t.Fatal(err)
	}
	crl := filepath.Join(t.TempDir(), "crl.pem")
	if _, err := ca.WriteCRL(crl, 0); err != nil {
		t.Fatal(err)
	}
	m, err := clienttls.Load(clienttls.Files{Cert: server.Cert, Key: server.Key, CA: server.CA, CRL: crl}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	pair := func(n pkitest.Node) tls.Certificate {
		c, err := tls.LoadX509KeyPair(n.Cert, n.Key)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		cerr, _, serr := handshake(t, m, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: v, MaxVersion: v})
		if cerr == nil || serr == nil || !strings.Contains(serr.Error(), "unsupported versions") {
			t.Fatalf("client of %s only: client %v, server %v; want refused", clienttls.VersionName(v), cerr, serr)
		}
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cerr, st, serr := handshake(t, m, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: v, MaxVersion: v})
		if cerr != nil || serr != nil || st.Version != v {
			t.Fatalf("client of %s: client %v, server %v, version %x", clienttls.VersionName(v), cerr, serr, st.Version)
		}
		if name := clienttls.CipherName(st.CipherSuite); strings.HasPrefix(name, "TLS_ECDHE") || name == "" {
			t.Fatalf("cipher %q: want OpenSSL's name", name)
		}
	}
	cerr, st, serr := handshake(t, m, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", Certificates: []tls.Certificate{pair(alice)}})
	if cerr != nil || serr != nil || len(st.PeerCertificates) == 0 || st.PeerCertificates[0].Subject.CommonName != "alice" {
		t.Fatalf("alice's certificate: client %v, server %v, peer %v", cerr, serr, st.PeerCertificates)
	}
	if _, _, serr := handshake(t, m, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", Certificates: []tls.Certificate{pair(bob)}}); serr == nil || !strings.Contains(serr.Error(), "revoked") {
		t.Fatalf("bob's revoked certificate: server %v, want refused", serr)
	}
	// Go's client sends no certificate of an authority the server does
	// not name; this one sends it all the same.
	carol := pair(pkitest.Issue(t, pkitest.NewCA(t, "stranger"), "carol"))
	if _, _, serr := handshake(t, m, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1",
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &carol, nil }}); serr == nil {
		t.Fatal("a certificate of another authority was taken")
	}
	if cerr, st, serr := handshake(t, m, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}); cerr != nil || serr != nil || len(st.PeerCertificates) != 0 {
		t.Fatalf("no client certificate: client %v, server %v", cerr, serr)
	}
}

// Auto makes the pair once and finds it again; a set cut short (no server
// certificate) is made again.
func TestAuto(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "miraj")
	names := clienttls.NamesFor("8.0.40-test")
	files, made, err := clienttls.Auto(dir, names, []string{"localhost", "127.0.0.1"})
	if err != nil || !made {
		t.Fatalf("first start: made %v, %v", made, err)
	}
	m, err := clienttls.Load(files, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if cn := m.Leaf.Subject.CommonName; cn != "Miraj_Server_8.0.40-test_Auto_Generated_Server_Certificate" {
		t.Fatalf("CN %q", cn)
	}
	if err := m.Leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(files.Key)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %v, %v", st.Mode().Perm(), err)
	}
	again, made, err := clienttls.Auto(dir, names, []string{"localhost"})
	if err != nil || made || again != files {
		t.Fatalf("second start: %+v made %v, %v", again, made, err)
	}
	m2, err := clienttls.Load(again, time.Now())
	if err != nil || !m2.Leaf.Equal(m.Leaf) {
		t.Fatalf("second start loads another certificate (%v)", err)
	}
	if err := os.Remove(files.Cert); err != nil {
		t.Fatal(err)
	}
	if _, made, err := clienttls.Auto(dir, names, nil); err != nil || !made {
		t.Fatalf("without server-cert.pem: made %v, %v", made, err)
	}
}

// OneLine writes names as OpenSSL's X509_NAME_oneline, in the
// certificate's order.
func TestOneLine(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	subject := pkix.Name{Country: []string{"SE"}, Province: []string{"Stockholm"}, Locality: []string{"Stockholm"},
		Organization: []string{"MySQL demo client certificate"}, CommonName: "client",
		ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, Value: "client@example.com"}}}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: subject, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	want := "/C=SE/ST=Stockholm/L=Stockholm/O=MySQL demo client certificate/CN=client/emailAddress=client@example.com"
	if got, err := clienttls.OneLine(c.RawSubject); err != nil || got != want {
		t.Fatalf("subject %q, %v; want %q", got, err, want)
	}
	if _, err := clienttls.OneLine([]byte{0x30, 0x03, 0x01}); err == nil {
		t.Fatal("a malformed name was written")
	}
}
