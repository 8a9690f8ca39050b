package transport

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/miraj-db/miraj/internal/pki"
)

// maxCRLBytes bounds what is read from tls_crl at each poll; a list of
// tens of thousands of entries stays far below.
const maxCRLBytes = 16 << 20

// readCRL reads and verifies tls_crl, returning the revoked serials.
func (t *Transport) readCRL() ([32]byte, map[string]bool, error) {
	f, err := os.Open(t.opts.CRLFile)
	if err != nil {
		return [32]byte{}, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCRLBytes+1))
	if err != nil {
		return [32]byte{}, nil, err
	}
	sum := sha256.Sum256(data)
	if len(data) > maxCRLBytes {
		return sum, nil, fmt.Errorf("larger than %d bytes", maxCRLBytes)
	}
	crl, err := pki.ParseCRL(data, t.ca)
	if err != nil {
		return sum, nil, err
	}
	revoked := make(map[string]bool, len(crl.RevokedCertificateEntries))
	for _, e := range crl.RevokedCertificateEntries {
		revoked[e.SerialNumber.String()] = true
	}
	return sum, revoked, nil
}

// loadCRL loads tls_crl at start-up; there is no previous list to keep, so
// an unreadable one is an error.
func (t *Transport) loadCRL() error {
	sum, revoked, err := t.readCRL()
	if err != nil {
		return fmt.Errorf("%s: %w", t.opts.CRLFile, err)
	}
	t.mu.Lock()
	t.mu.crlSum, t.mu.revoked = sum, revoked
	t.mu.Unlock()
	return nil
}

// watchCRL polls tls_crl until ctx ends. A new valid list replaces the old
// one and every link is closed so that all peers are verified again (the
// secondaries reconnect at once); an unreadable list is reported once per
// content and the old one stays in force (§17.2.4).
func (t *Transport) watchCRL(ctx context.Context) {
	tick := time.NewTicker(t.opts.CRLPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t.pollCRL()
	}
}

func (t *Transport) pollCRL() {
	sum, revoked, err := t.readCRL()
	t.mu.Lock()
	if err != nil {
		if t.mu.crlBadOK && t.mu.crlBad == sum {
			t.mu.Unlock()
			return
		}
		t.mu.crlBad, t.mu.crlBadOK = sum, true
		t.mu.Unlock()
		t.log.Error(fmt.Sprintf("revocation list %s unreadable: %v; the previous list stays in force", t.opts.CRLFile, err),
			"tls_crl", t.opts.CRLFile, "err", err)
		return
	}
	t.mu.crlBadOK = false
	if sum == t.mu.crlSum {
		t.mu.Unlock()
		return
	}
	t.mu.crlSum, t.mu.revoked = sum, revoked
	n := len(t.mu.conns)
	t.mu.Unlock()
	t.log.Info(fmt.Sprintf("revocation list %s reloaded (%d revoked certificate(s)): re-establishing %d link(s)", t.opts.CRLFile, len(revoked), n),
		"tls_crl", t.opts.CRLFile, "revoked", len(revoked))
	t.closeAll(ErrLinksReset)
}
