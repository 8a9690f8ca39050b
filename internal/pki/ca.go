package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// File names of §17.2.2 and §17.2.4.
const (
	CACertFile      = "cluster-ca.pem"
	CAKeyFile       = "cluster-ca-key.pem"
	NodeCertFile    = "node.pem"
	NodeKeyFile     = "node-key.pem"
	CRLFile         = "cluster-crl.pem"
	RegisterFile    = "certificats.txt"
	RevocationsFile = "revocations.txt"
)

// Default validity periods, in days (§17.2.2, §17.2.4).
const (
	DefaultCADays   = 3650
	DefaultNodeDays = 825
	DefaultCRLDays  = 365
)

// maxDays bounds every --days: beyond a century the value is a typo, and
// the end date must stay within what X.509 GeneralizedTime encodes.
const maxDays = 36500

// maxPEMBytes bounds what is read from a certificate, key or CRL file; real
// ones are a few KiB (a CRL with many thousands of entries stays far below).
const maxPEMBytes = 16 << 20

// Errors of the package.
var (
	ErrExists      = errors.New("pki: file exists (use --force to overwrite)")
	ErrNotSigned   = errors.New("pki: not signed by this authority")
	ErrNotFound    = errors.New("pki: no certificate of this node in the register")
	ErrBadKey      = errors.New("pki: unusable private key")
	ErrKeyMismatch = errors.New("pki: private key does not match the certificate")
)

// CA is a loaded cluster authority.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	Key     crypto.Signer
	// Dir is the folder of the registers (certificats.txt, revocations.txt)
	// and of the default cluster-crl.pem: the folder of the CA certificate.
	Dir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (ca *CA) now() time.Time {
	if ca.Now != nil {
		return ca.Now()
	}
	return time.Now()
}

// InitOptions are the arguments of init-ca.
type InitOptions struct {
	Name  string // cluster name, put in the authority's common name
	Dir   string // output folder, created if needed
	Days  int    // validity; 0 means DefaultCADays
	Force bool   // overwrite existing files
	Now   func() time.Time
}

// InitCA creates the authority: an ECDSA P-256 key and a self-signed
// certificate (CA:TRUE, keyCertSign and cRLSign), written to
// Dir/cluster-ca.pem and Dir/cluster-ca-key.pem.
func InitCA(o InitOptions) (*CA, error) {
	if o.Name == "" {
		return nil, fmt.Errorf("pki: init-ca: --name is required")
	}
	days, err := checkDays(o.Days, DefaultCADays)
	if err != nil {
		return nil, err
	}
	certPath := filepath.Join(o.Dir, CACertFile)
	keyPath := filepath.Join(o.Dir, CAKeyFile)
	if !o.Force {
		if err := refuseExisting(certPath, keyPath); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("pki: init-ca: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: init-ca: generate key: %w", err)
	}
	ca := &CA{Key: key, Dir: o.Dir, Now: o.Now}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := ca.now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Miraj cluster authority " + o.Name},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.AddDate(0, 0, days),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("pki: init-ca: sign: %w", err)
	}
	ca.Cert, _ = x509.ParseCertificate(der)
	ca.CertPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(keyPath, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeAtomic(certPath, ca.CertPEM, 0o644); err != nil {
		return nil, err
	}
	return ca, nil
}

// clockSkew backdates NotBefore so that a node whose clock is a little
// behind the administration workstation accepts a fresh certificate.
const clockSkew = 5 * time.Minute

// LoadCADir loads the authority of an init-ca folder.
func LoadCADir(dir string) (*CA, error) {
	return LoadCA(filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile))
}

// LoadCA loads an authority from its certificate and key, wherever they
// are (an openssl-made authority works too). The registers live in the
// certificate's folder.
func LoadCA(certPath, keyPath string) (*CA, error) {
	certPEM, err := readLimited(certPath)
	if err != nil {
		return nil, fmt.Errorf("pki: authority certificate: %w", err)
	}
	cert, err := ParseCertificatePEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: authority certificate %s: %w", certPath, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("pki: %s is not an authority certificate (basicConstraints CA:TRUE missing)", certPath)
	}
	keyPEM, err := readLimited(keyPath)
	if err != nil {
		return nil, fmt.Errorf("pki: authority key: %w", err)
	}
	key, err := ParseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("pki: authority key %s: %w", keyPath, err)
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return nil, fmt.Errorf("pki: %s and %s: %w", certPath, keyPath, ErrKeyMismatch)
	}
	return &CA{Cert: cert, CertPEM: certPEM, Key: key, Dir: filepath.Dir(certPath)}, nil
}

// ParseCertificatePEM returns the first CERTIFICATE block of data.
func ParseCertificatePEM(data []byte) (*x509.Certificate, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM CERTIFICATE block")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}

// ParseKeyPEM reads a private key in PKCS#8 ("PRIVATE KEY", what openssl
// genpkey writes), SEC 1 ("EC PRIVATE KEY") or PKCS#1 ("RSA PRIVATE KEY").
func ParseKeyPEM(data []byte) (crypto.Signer, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, fmt.Errorf("%w: no PEM private key block", ErrBadKey)
		}
		var k any
		var err error
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			return nil, fmt.Errorf("%w: encrypted keys are not supported", ErrBadKey)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%w: key type %T cannot sign", ErrBadKey, k)
		}
		return s, nil
	}
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	if e, ok := a.(equaler); ok {
		return e.Equal(b)
	}
	return false
}

func encodeKey(k crypto.Signer) ([]byte, error) {
	switch k.(type) {
	case *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey:
	default:
		return nil, fmt.Errorf("%w: cannot encode %T", ErrBadKey, k)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("pki: encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// newSerial returns a random positive 128-bit serial number (RFC 5280 allows
// up to 20 octets; randomness makes serials unique without a counter).
func newSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 127)
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return nil, fmt.Errorf("pki: serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

func checkDays(days, def int) (int, error) {
	if days == 0 {
		return def, nil
	}
	if days < 1 || days > maxDays {
		return 0, fmt.Errorf("pki: --days %d: allowed 1 to %d", days, maxDays)
	}
	return days, nil
}

// refuseExisting returns ErrExists for the first path that exists.
func refuseExisting(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s: %w", p, ErrExists)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("pki: %w", err)
		}
	}
	return nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPEMBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPEMBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxPEMBytes)
	}
	return data, nil
}

// writeAtomic writes data to a temporary file in path's folder, syncs it and
// renames it over path: readers (a node reloading its CRL) see the old or the
// new content, never a mix.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("pki: write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("pki: write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("pki: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("pki: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pki: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("pki: write %s: %w", path, err)
	}
	ok = true
	return nil
}

// sameContent reports whether path holds exactly data.
func sameContent(path string, data []byte) bool {
	b, err := readLimited(path)
	return err == nil && bytes.Equal(b, data)
}
