package clienttls

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/miraj-db/miraj/internal/pki"
)

// Files names the PEM files of the client port. Cert and Key go together;
// CA and CRL are optional, and CRL needs CA.
type Files struct {
	Cert string // the server's certificate, then any intermediates
	Key  string // its private key (PKCS#8, SEC 1 or PKCS#1; not encrypted)
	CA   string // authorities: the server's must be among them; client certificates are verified against them
	CRL  string // revocation list of the authority: client certificates it lists are refused
}

// FileError is a file that cannot serve: which option named it, the file
// and why.
type FileError struct {
	Option string // the command-line option: "--ssl-cert"
	Var    string // the system variable: "ssl_cert"
	Path   string
	Err    error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s %s: %v", e.Option, e.Path, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

// Errors of the checks, wrapped in a *FileError.
var (
	ErrExpired     = errors.New("clienttls: certificate expired")
	ErrNotYetValid = errors.New("clienttls: certificate not yet valid")
	ErrKeyMismatch = errors.New("clienttls: private key does not match the certificate")
	ErrNotSigned   = errors.New("clienttls: certificate not signed by the authority")
	ErrRevoked     = errors.New("clienttls: certificate revoked")
	ErrUsage       = errors.New("clienttls: options missing")
)

// maxPEMBytes bounds what is read from one file: certificates and keys
// are a few KiB, a revocation list of many thousands of entries stays far
// below.
const maxPEMBytes = 16 << 20

// Material is a checked set of files, ready to serve. Immutable.
type Material struct {
	Files Files
	// Leaf is the server's certificate.
	Leaf *x509.Certificate
	// Revoked holds the serial numbers (decimal) the CRL lists.
	Revoked map[string]bool
	config  *tls.Config
}

// Load reads and checks files as of now: each file readable and in PEM;
// the key that of the certificate; the certificate valid now; signed
// (through any intermediates in the certificate file) by an authority of
// CA when one is given; the CRL signed by one of those authorities and
// not listing the server's certificate. The first problem found is
// returned as a *FileError naming the file.
func Load(files Files, now time.Time) (*Material, error) {
	switch {
	case files.Cert == "" || files.Key == "":
		return nil, fmt.Errorf("%w: --ssl-cert and --ssl-key go together", ErrUsage)
	case files.CRL != "" && files.CA == "":
		return nil, fmt.Errorf("%w: --ssl-crl needs --ssl-ca, the authority that signs the list", ErrUsage)
	}
	certErr := func(err error) error {
		return &FileError{Option: "--ssl-cert", Var: "ssl_cert", Path: files.Cert, Err: err}
	}
	keyErr := func(err error) error {
		return &FileError{Option: "--ssl-key", Var: "ssl_key", Path: files.Key, Err: err}
	}
	caErr := func(err error) error { return &FileError{Option: "--ssl-ca", Var: "ssl_ca", Path: files.CA, Err: err} }
	crlErr := func(err error) error {
		return &FileError{Option: "--ssl-crl", Var: "ssl_crl", Path: files.CRL, Err: err}
	}

	certPEM, err := readPEMFile(files.Cert)
	if err != nil {
		return nil, certErr(err)
	}
	chain, err := certificates(certPEM)
	if err != nil {
		return nil, certErr(err)
	}
	leaf := chain[0]
	if err := checkValidity(leaf, now); err != nil {
		return nil, certErr(err)
	}
	keyPEM, err := readPEMFile(files.Key)
	if err != nil {
		return nil, keyErr(err)
	}
	key, err := pki.ParseKeyPEM(keyPEM)
	if err != nil {
		return nil, keyErr(err)
	}
	if !samePublicKey(leaf.PublicKey, key.Public()) {
		return nil, keyErr(fmt.Errorf("%w %s", ErrKeyMismatch, files.Cert))
	}
	m := &Material{Files: files, Leaf: leaf}
	var pool *x509.CertPool
	if files.CA != "" {
		caPEM, err := readPEMFile(files.CA)
		if err != nil {
			return nil, caErr(err)
		}
		cas, err := certificates(caPEM)
		if err != nil {
			return nil, caErr(err)
		}
		pool = x509.NewCertPool()
		for _, c := range cas {
			pool.AddCert(c)
		}
		inter := x509.NewCertPool()
		for _, c := range chain[1:] {
			inter.AddCert(c)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			return nil, certErr(fmt.Errorf("%w %s: %v", ErrNotSigned, files.CA, err))
		}
		if files.CRL != "" {
			crlPEM, err := readPEMFile(files.CRL)
			if err != nil {
				return nil, crlErr(err)
			}
			var crl *x509.RevocationList
			for _, ca := range cas {
				if crl, err = pki.ParseCRL(crlPEM, ca); err == nil {
					break
				}
			}
			if crl == nil {
				return nil, crlErr(fmt.Errorf("not signed by an authority of %s: %v", files.CA, err))
			}
			m.Revoked = make(map[string]bool, len(crl.RevokedCertificateEntries))
			for _, e := range crl.RevokedCertificateEntries {
				m.Revoked[e.SerialNumber.String()] = true
			}
			if m.Revoked[leaf.SerialNumber.String()] {
				return nil, certErr(fmt.Errorf("%w by %s", ErrRevoked, files.CRL))
			}
		}
	}
	der := make([][]byte, len(chain))
	for i, c := range chain {
		der[i] = c.Raw
	}
	m.config = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		MaxVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{{Certificate: der, PrivateKey: key, Leaf: leaf}},
	}
	if pool != nil {
		// As MySQL with --ssl-ca: a client certificate is asked for and,
		// when one is sent, verified; REQUIRE X509 (and SUBJECT, ISSUER)
		// then decides whether an account needs one.
		m.config.ClientCAs = pool
		m.config.ClientAuth = tls.VerifyClientCertIfGiven
		if len(m.Revoked) > 0 {
			revoked := m.Revoked
			m.config.VerifyConnection = func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) > 0 && revoked[cs.PeerCertificates[0].SerialNumber.String()] {
					return fmt.Errorf("client certificate %s revoked by %s", cs.PeerCertificates[0].SerialNumber, files.CRL)
				}
				return nil
			}
		}
	}
	return m, nil
}

// Config is the TLS configuration of the connections served with m.
// Callers must not change it.
func (m *Material) Config() *tls.Config { return m.config }

// readPEMFile reads a file of at most maxPEMBytes.
func readPEMFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPEMBytes+1))
	if err != nil {
		return nil, unwrapPath(err)
	}
	if len(data) > maxPEMBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxPEMBytes)
	}
	return data, nil
}

// unwrapPath drops the path from an *os.PathError: the *FileError names
// the file already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// certificates returns the CERTIFICATE blocks of data, in order.
func certificates(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	return out, nil
}

// dateLayout is how errors write a certificate's dates.
const dateLayout = "2006-01-02 15:04:05 MST"

func checkValidity(c *x509.Certificate, now time.Time) error {
	switch {
	case now.After(c.NotAfter):
		return fmt.Errorf("%w on %s", ErrExpired, c.NotAfter.UTC().Format(dateLayout))
	case now.Before(c.NotBefore):
		return fmt.Errorf("%w before %s", ErrNotYetValid, c.NotBefore.UTC().Format(dateLayout))
	}
	return nil
}

func samePublicKey(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	e, ok := a.(equaler)
	return ok && e.Equal(b)
}
