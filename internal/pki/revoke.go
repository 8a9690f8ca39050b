package pki

import (
	"bufio"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Entry is one line of a register: certificats.txt (Time = end of validity)
// or revocations.txt (Time = revocation time).
type Entry struct {
	Serial *big.Int
	Node   string
	Time   time.Time
}

// Register lines are tab-separated: serial in hexadecimal (as openssl
// prints it), node id, RFC 3339 UTC time. Lines starting with # are comments.
const (
	registerHeader    = "# serial\tnode\tnot_after"
	revocationsHeader = "# serial\tnode\trevoked_at"
)

func (e Entry) line() string {
	return fmt.Sprintf("%X\t%s\t%s", e.Serial, e.Node, e.Time.UTC().Format(time.RFC3339))
}

// maxRegisterLines bounds what is read from a register: one line per
// certificate ever signed; a million is far beyond any cluster.
const maxRegisterLines = 1_000_000

// ReadRegister reads a register file; a missing file is an empty register.
func ReadRegister(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pki: register: %w", err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		if n > maxRegisterLines {
			return nil, fmt.Errorf("pki: register %s: more than %d lines", path, maxRegisterLines)
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("pki: register %s:%d: expected serial, node and time separated by tabs", path, n)
		}
		serial, ok := new(big.Int).SetString(f[0], 16)
		if !ok || serial.Sign() < 0 {
			return nil, fmt.Errorf("pki: register %s:%d: bad serial %q", path, n, f[0])
		}
		t, err := time.Parse(time.RFC3339, f[2])
		if err != nil {
			return nil, fmt.Errorf("pki: register %s:%d: bad time %q", path, n, f[2])
		}
		out = append(out, Entry{Serial: serial, Node: f[1], Time: t})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("pki: register %s: %w", path, err)
	}
	return out, nil
}

// appendLine appends entries to a register, writing the header first when
// the file is new.
func appendLine(path, header string, entries ...Entry) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("pki: register: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("pki: register: %w", err)
	}
	var b strings.Builder
	if st.Size() == 0 {
		b.WriteString(header + "\n")
	}
	for _, e := range entries {
		b.WriteString(e.line() + "\n")
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("pki: register %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("pki: register %s: %w", path, err)
	}
	return f.Close()
}

// RevokeOptions are the arguments of revoke: either ID (every certificate
// of that node in certificats.txt) or CertPath (one certificate).
type RevokeOptions struct {
	ID       string
	CertPath string
	Out      string // CRL path; "" means <CA folder>/cluster-crl.pem
	Days     int    // next-update date; 0 means DefaultCRLDays
}

// Revoke records the certificates in revocations.txt and regenerates the
// CRL. It returns the entries newly revoked (already revoked ones are not
// repeated).
func (ca *CA) Revoke(o RevokeOptions) ([]Entry, error) {
	if (o.ID == "") == (o.CertPath == "") {
		return nil, fmt.Errorf("pki: revoke: give either a node id or --cert")
	}
	revPath := filepath.Join(ca.Dir, RevocationsFile)
	revoked, err := ReadRegister(revPath)
	if err != nil {
		return nil, err
	}
	isRevoked := func(s *big.Int) bool {
		for _, r := range revoked {
			if r.Serial.Cmp(s) == 0 {
				return true
			}
		}
		return false
	}
	now := ca.now().UTC().Truncate(time.Second)
	var fresh []Entry
	if o.CertPath != "" {
		data, err := readLimited(o.CertPath)
		if err != nil {
			return nil, fmt.Errorf("pki: revoke: %w", err)
		}
		cert, err := ParseCertificatePEM(data)
		if err != nil {
			return nil, fmt.Errorf("pki: revoke %s: %w", o.CertPath, err)
		}
		if err := cert.CheckSignatureFrom(ca.Cert); err != nil {
			return nil, fmt.Errorf("pki: revoke %s: %w: %v", o.CertPath, ErrNotSigned, err)
		}
		if !isRevoked(cert.SerialNumber) {
			fresh = append(fresh, Entry{Serial: cert.SerialNumber, Node: cert.Subject.CommonName, Time: now})
		}
	} else {
		issued, err := ReadRegister(filepath.Join(ca.Dir, RegisterFile))
		if err != nil {
			return nil, err
		}
		found := false
		for _, e := range issued {
			if !strings.EqualFold(e.Node, o.ID) {
				continue
			}
			found = true
			if !isRevoked(e.Serial) {
				fresh = append(fresh, Entry{Serial: e.Serial, Node: e.Node, Time: now})
			}
		}
		if !found {
			return nil, fmt.Errorf("pki: revoke %q (%s): %w", o.ID, filepath.Join(ca.Dir, RegisterFile), ErrNotFound)
		}
	}
	if len(fresh) > 0 {
		if err := appendLine(revPath, revocationsHeader, fresh...); err != nil {
			return nil, err
		}
	}
	if _, err := ca.WriteCRL(o.Out, o.Days); err != nil {
		return fresh, err
	}
	return fresh, nil
}

// WriteCRL signs a revocation list of every entry of revocations.txt and
// replaces out (default <CA folder>/cluster-crl.pem) as a whole. Its number
// is one more than the list it replaces (and never below the current Unix
// time, so that lists written to different paths still increase).
func (ca *CA) WriteCRL(out string, days int) (*x509.RevocationList, error) {
	days, err := checkDays(days, DefaultCRLDays)
	if err != nil {
		return nil, err
	}
	if out == "" {
		out = filepath.Join(ca.Dir, CRLFile)
	}
	revoked, err := ReadRegister(filepath.Join(ca.Dir, RevocationsFile))
	if err != nil {
		return nil, err
	}
	now := ca.now()
	number := big.NewInt(now.Unix())
	if old, err := readLimited(out); err == nil {
		if prev, err := ParseCRL(old, ca.Cert); err == nil && prev.Number != nil && prev.Number.Cmp(number) >= 0 {
			number = new(big.Int).Add(prev.Number, big.NewInt(1))
		}
	}
	tmpl := &x509.RevocationList{
		Number:     number,
		ThisUpdate: now.Add(-clockSkew),
		NextUpdate: now.AddDate(0, 0, days),
	}
	for _, r := range revoked {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries,
			x509.RevocationListEntry{SerialNumber: r.Serial, RevocationTime: r.Time})
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.Cert, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("pki: crl: sign: %w", err)
	}
	if err := writeAtomic(out, pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	return x509.ParseRevocationList(der)
}

// ParseCRL parses a PEM X509 CRL and checks that the authority signed it.
func ParseCRL(data []byte, ca *x509.Certificate) (*x509.RevocationList, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("pki: no PEM X509 CRL block")
		}
		if b.Type != "X509 CRL" {
			continue
		}
		crl, err := x509.ParseRevocationList(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("pki: crl: %w", err)
		}
		if err := crl.CheckSignatureFrom(ca); err != nil {
			return nil, fmt.Errorf("%w (crl): %v", ErrNotSigned, err)
		}
		return crl, nil
	}
}
