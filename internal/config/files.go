package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
)

// checkFiles verifies what Load can check before the transport starts: the
// TLS files exist and parse, the key matches the certificate, the CRL is
// signed by the authority. A certificate naming another node, or lacking the
// advertised address, is a warning: the node starts, its peers refuse it.
func checkFiles(c *Cluster, data []byte) ([]string, error) {
	v := validator{name: c.File, lines: keyLines(data)}
	pair, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		v.fail("cluster.tls_cert", "%s with tls_key %s: %v", c.TLSCert, c.TLSKey, err)
	}
	caPEM, err := os.ReadFile(c.TLSCA)
	var ca *x509.Certificate
	if err != nil {
		v.fail("cluster.tls_ca", "%v", err)
	} else if ca, err = firstCert(caPEM); err != nil {
		v.fail("cluster.tls_ca", "%s: %v", c.TLSCA, err)
	}
	if c.TLSCRL != "" {
		crlPEM, err := os.ReadFile(c.TLSCRL)
		if err != nil {
			v.fail("cluster.tls_crl", "%v (remove the key to run without a revocation list)", err)
		} else if ca != nil {
			if err := checkCRL(crlPEM, ca); err != nil {
				v.fail("cluster.tls_crl", "%s: %v", c.TLSCRL, err)
			}
		}
	}
	if len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, &Error{File: c.File, Key: "cluster.tls_cert", Msg: err.Error()}
	}
	if !strings.EqualFold(leaf.Subject.CommonName, c.Node.ID) {
		v.warn("cluster.tls_cert", "security: the certificate %s names node %q and not %q: peers will refuse this node",
			c.TLSCert, leaf.Subject.CommonName, c.Node.ID)
	}
	if host, _, err := net.SplitHostPort(c.Node.Advertise); err == nil && !certHasHost(leaf, host) {
		v.warn("cluster.tls_cert", "the certificate %s does not carry the advertised address %q in its SAN: peers dialling it will refuse it",
			c.TLSCert, host)
	}
	if ca != nil {
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		_, err := leaf.Verify(x509.VerifyOptions{Roots: pool,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
		if err != nil {
			v.warn("cluster.tls_cert", "the certificate %s does not verify against tls_ca %s: %v", c.TLSCert, c.TLSCA, err)
		}
	}
	return v.warnings, nil
}

func firstCert(data []byte) (*x509.Certificate, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, fmt.Errorf("no PEM CERTIFICATE block")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}

func checkCRL(data []byte, ca *x509.Certificate) error {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "X509 CRL" {
		return fmt.Errorf("no PEM X509 CRL block")
	}
	crl, err := x509.ParseRevocationList(b.Bytes)
	if err != nil {
		return err
	}
	if err := crl.CheckSignatureFrom(ca); err != nil {
		return fmt.Errorf("not signed by the cluster authority: %w", err)
	}
	return nil
}

func certHasHost(cert *x509.Certificate, host string) bool {
	if ip, err := netip.ParseAddr(host); err == nil {
		for _, c := range cert.IPAddresses {
			if a, ok := netip.AddrFromSlice(c); ok && a.Unmap() == ip.Unmap() {
				return true
			}
		}
		return false
	}
	return cert.VerifyHostname(host) == nil
}
