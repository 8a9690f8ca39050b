package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/miraj-db/miraj/internal/config"
)

// maxSANs bounds --san: a node has a handful of addresses.
const maxSANs = 64

// NodeOptions are the arguments of issue-node.
type NodeOptions struct {
	ID     string   // node id, the certificate's common name
	SANs   []string // IP addresses or DNS names ("IP:" / "DNS:" prefixes accepted)
	Days   int      // validity; 0 means DefaultNodeDays
	OutDir string   // receives node.pem, node-key.pem and cluster-ca.pem
	Force  bool     // overwrite existing files
}

// IssueNode creates an ECDSA P-256 key and a certificate signed by the
// authority: CN = ID, the SANs, extended key usage serverAuth and
// clientAuth. It writes node.pem, node-key.pem and a copy of cluster-ca.pem
// into OutDir and appends the certificate to the authority's register.
func (ca *CA) IssueNode(o NodeOptions) (*x509.Certificate, error) {
	if err := config.CheckID(o.ID); err != nil {
		return nil, fmt.Errorf("pki: issue-node: --id %q: %w", o.ID, err)
	}
	if len(o.SANs) == 0 {
		return nil, fmt.Errorf("pki: issue-node: at least one --san is required (the node's advertised address)")
	}
	if len(o.SANs) > maxSANs {
		return nil, fmt.Errorf("pki: issue-node: %d --san: at most %d", len(o.SANs), maxSANs)
	}
	ips, dns, err := parseSANs(o.SANs)
	if err != nil {
		return nil, err
	}
	days, err := checkDays(o.Days, DefaultNodeDays)
	if err != nil {
		return nil, err
	}
	if o.OutDir == "" {
		return nil, fmt.Errorf("pki: issue-node: --out is required")
	}
	certPath := filepath.Join(o.OutDir, NodeCertFile)
	keyPath := filepath.Join(o.OutDir, NodeKeyFile)
	caCopy := filepath.Join(o.OutDir, CACertFile)
	if !o.Force {
		if err := refuseExisting(certPath, keyPath); err != nil {
			return nil, err
		}
		if !sameContent(caCopy, ca.CertPEM) {
			if err := refuseExisting(caCopy); err != nil {
				return nil, err
			}
		}
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("pki: issue-node: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: issue-node: generate key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := ca.now()
	notAfter := now.AddDate(0, 0, days)
	if notAfter.After(ca.Cert.NotAfter) {
		// A certificate cannot outlive its authority in any verifier.
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: o.ID},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              notAfter,
		BasicConstraintsValid: true,
		IsCA:                  false,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:           ips,
		DNSNames:              dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, fmt.Errorf("pki: issue-node: sign: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: issue-node: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(keyPath, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	if !sameContent(caCopy, ca.CertPEM) {
		if err := writeAtomic(caCopy, ca.CertPEM, 0o644); err != nil {
			return nil, err
		}
	}
	if err := appendLine(filepath.Join(ca.Dir, RegisterFile), registerHeader,
		Entry{Serial: cert.SerialNumber, Node: o.ID, Time: cert.NotAfter}); err != nil {
		return nil, err
	}
	return cert, nil
}

// parseSANs splits the --san values into IP addresses and DNS names.
func parseSANs(sans []string) ([]net.IP, []string, error) {
	var ips []net.IP
	var dns []string
	for _, s := range sans {
		v := s
		kind := ""
		if k, rest, ok := strings.Cut(s, ":"); ok && (strings.EqualFold(k, "IP") || strings.EqualFold(k, "DNS")) {
			kind, v = strings.ToUpper(k), rest
		}
		if ip := net.ParseIP(v); ip != nil && kind != "DNS" {
			if ip4 := ip.To4(); ip4 != nil {
				ip = ip4
			}
			ips = append(ips, ip)
			continue
		}
		if kind == "IP" {
			return nil, nil, fmt.Errorf("pki: --san %q: not an IP address", s)
		}
		if !validDNSName(v) {
			return nil, nil, fmt.Errorf("pki: --san %q: neither an IP address nor a DNS name", s)
		}
		dns = append(dns, v)
	}
	return ips, dns, nil
}

// maxDNSName is the longest DNS name (RFC 1035).
const maxDNSName = 253

func validDNSName(s string) bool {
	if s == "" || len(s) > maxDNSName {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || (c == '*' && i == 0 && len(label) == 1)) {
				return false
			}
		}
	}
	return true
}
