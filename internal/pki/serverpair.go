package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ServerPairOptions are the arguments of NewServerPair.
type ServerPairOptions struct {
	// Dir receives the four files, named by the fields below.
	Dir                                  string
	CAFile, CAKeyFile, CertFile, KeyFile string
	// CAName and ServerName are the common names of the two certificates.
	CAName, ServerName string
	// Hosts are the server certificate's subject alternative names: IP
	// addresses or DNS names ("IP:" / "DNS:" prefixes accepted).
	Hosts []string
	// Days is the validity of both; 0 means DefaultCADays.
	Days int
	// Force overwrites existing files.
	Force bool
	Now   func() time.Time
}

// NewServerPair creates a self-signed authority and a server certificate
// it signs (ECDSA P-256 both; the server's with extended key usage
// serverAuth and the Hosts as SANs), and writes them to o.Dir: the
// authority's certificate and key, then the server's key and, last, its
// certificate. A reader that finds the server certificate finds the other
// three. Private keys are written with mode 0600.
//
// It is what a server without configured certificates makes at its first
// start, as MySQL 8's auto_generate_certs does: clients can encrypt at
// once, and verify the server once they are given the authority.
func NewServerPair(o ServerPairOptions) error {
	days, err := checkDays(o.Days, DefaultCADays)
	if err != nil {
		return err
	}
	ips, dns, err := parseSANs(o.Hosts)
	if err != nil {
		return err
	}
	paths := []string{filepath.Join(o.Dir, o.CAKeyFile), filepath.Join(o.Dir, o.CAFile),
		filepath.Join(o.Dir, o.KeyFile), filepath.Join(o.Dir, o.CertFile)}
	if !o.Force {
		if err := refuseExisting(paths...); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return fmt.Errorf("pki: server pair: %w", err)
	}
	now := time.Now()
	if o.Now != nil {
		now = o.Now()
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: server pair: generate key: %w", err)
	}
	caSerial, err := newSerial()
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          caSerial,
		Subject:               pkix.Name{CommonName: o.CAName},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.AddDate(0, 0, days),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return fmt.Errorf("pki: server pair: sign authority: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("pki: server pair: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("pki: server pair: generate key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: o.ServerName},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              caCert.NotAfter,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           ips,
		DNSNames:              dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("pki: server pair: sign server certificate: %w", err)
	}
	caKeyPEM, err := encodeKey(caKey)
	if err != nil {
		return err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	contents := [][]byte{caKeyPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		keyPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	modes := []os.FileMode{0o600, 0o644, 0o600, 0o644}
	for i, p := range paths {
		if err := writeAtomic(p, contents[i], modes[i]); err != nil {
			return err
		}
	}
	return nil
}
