package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/pki"
)

// Limits of §17.2.5.
const (
	// HandshakeTimeout bounds TCP connect + TLS + hello, in both directions.
	HandshakeTimeout = 10 * time.Second
	// maxIncomingPerMember: simultaneous incoming links of one node; a
	// replication link, an election link and a catch-up fit with room.
	maxIncomingPerMember = 4
	// minIncomingTotal: the floor of the total, so that a small or
	// unconfigured cluster still takes a few reconnections in flight.
	minIncomingTotal = 16
	// refusalLogInterval: excess connections are a flood; log them at most
	// this often so the log survives it.
	refusalLogInterval = 10 * time.Second
	// defaultCRLPoll: tls_crl is reloaded "about every two seconds"; polling
	// every second keeps a change visible within two.
	defaultCRLPoll = time.Second
	// acceptBackoffMax bounds the pause after a failing Accept (EMFILE…).
	acceptBackoffMax = time.Second
)

// Errors returned by Dial, Conn.Recv and Conn.Send.
var (
	ErrRefused = errors.New("transport: connection refused")
	ErrClosed  = errors.New("transport: link closed")
	// ErrLinksReset and ErrShuttingDown are also ErrClosed.
	ErrLinksReset   = fmt.Errorf("%w: revocation list changed, links are re-established", ErrClosed)
	ErrShuttingDown = fmt.Errorf("%w: node shutting down", ErrClosed)
	errLocalClose   = fmt.Errorf("%w: closed by this node", ErrClosed)
	errRevoked      = errors.New("peer certificate revoked (tls_crl)")
)

// revokedError is returned by the TLS verification for a revoked peer.
type revokedError struct{ id, serial string }

func (e *revokedError) Error() string {
	return fmt.Sprintf("%v (node %q, serial %s)", errRevoked, e.id, e.serial)
}

func (e *revokedError) Unwrap() error { return errRevoked }

// notMemberError is returned by the TLS verification for a peer outside
// members.
type notMemberError struct{ id string }

func (e *notMemberError) Error() string {
	return fmt.Sprintf("node %q not in the member list", e.id)
}

// Options configure a Transport.
type Options struct {
	NodeID      string
	ClusterName string
	ListenAddr  string // host:port; port 0 picks a free one (tests)

	CertFile string
	KeyFile  string
	CAFile   string
	CRLFile  string // "" when there is no revocation list

	// Members are the admitted node ids; nil admits any node of the
	// authority. Compared case-insensitively.
	Members []string
	// KnownMembers sizes the incoming limit (4 per member, 16 at least);
	// 0 means len(Members).
	KnownMembers int

	// Handler runs, in its own goroutine owned by Run, for every incoming
	// link once it is established; the link is closed when it returns.
	Handler func(ctx context.Context, c *Conn)

	Logger *slog.Logger     // nil: slog.Default()
	Now    func() time.Time // nil: time.Now (used for log rate limiting)
	// CRLPollInterval: how often tls_crl is checked; 0 means 1 s.
	CRLPollInterval time.Duration
	// HandshakeTimeout: 0 means HandshakeTimeout (10 s, §17.2.5); tests
	// shorten it.
	HandshakeTimeout time.Duration
	// Isolated, when set and true, cuts the node off (test_hooks, §17.2.1):
	// every link is closed, dials fail and incoming connections are closed
	// at once, until it turns false again.
	Isolated func() bool
}

// isolationPoll is how often Run looks at Options.Isolated: a test that
// creates the marker sees the links cut within this.
const isolationPoll = 100 * time.Millisecond

// ErrIsolated is returned by Dial while the node is isolated by the test hook.
var ErrIsolated = errors.New("transport: node isolated (test hook)")

func (t *Transport) isolated() bool { return t.opts.Isolated != nil && t.opts.Isolated() }

// watchIsolation closes every link while the node is isolated.
func (t *Transport) watchIsolation(ctx context.Context) {
	was := false
	for {
		is := t.isolated()
		if is {
			t.closeAll(ErrIsolated)
		}
		if is != was {
			t.log.Warn(fmt.Sprintf("test hook: node isolation %s", map[bool]string{true: "on (miraj/cluster-isolate present)", false: "off"}[is]))
			was = is
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(isolationPoll):
		}
	}
}

// OptionsFromConfig fills Options from a loaded cluster.toml.
func OptionsFromConfig(c *config.Cluster) Options {
	return Options{
		NodeID:       c.Node.ID,
		ClusterName:  c.Name,
		ListenAddr:   c.Node.Listen,
		CertFile:     c.TLSCert,
		KeyFile:      c.TLSKey,
		CAFile:       c.TLSCA,
		CRLFile:      c.TLSCRL,
		Members:      c.Members,
		KnownMembers: c.KnownMembers(),
	}
}

// Transport is a node's inter-node endpoint: listener, dialer, and the set
// of live links.
type Transport struct {
	opts   Options
	log    *slog.Logger
	cert   tls.Certificate
	ca     *x509.Certificate
	pool   *x509.CertPool
	limit  int // total simultaneous incoming links
	ln     net.Listener
	lnOnce sync.Once

	mu struct {
		sync.Mutex
		revoked  map[string]bool // serial (decimal) → revoked; from tls_crl
		crlSum   [32]byte        // hash of the CRL in force
		crlBad   [32]byte        // hash of the last unreadable content reported
		crlBadOK bool            // crlBad is set
		conns    map[*Conn]struct{}
		incoming int            // incoming TCP connections held (handshaking or established)
		perPeer  map[string]int // established or handshaken incoming links per lower-case id
		// refused counts connections closed for excess since the last
		// log line; lastRefusalLog is when that line was written.
		refused        int
		lastRefusalLog time.Time
		closing        bool
	}
}

// New loads the node's certificate, the authority and the revocation list.
// It opens nothing and starts nothing: see Listen and Run.
func New(opts Options) (*Transport, error) {
	if err := config.CheckID(opts.NodeID); err != nil {
		return nil, fmt.Errorf("transport: node id %q: %w", opts.NodeID, err)
	}
	if opts.ClusterName == "" {
		return nil, fmt.Errorf("transport: empty cluster name")
	}
	t := &Transport{opts: opts, log: opts.Logger}
	if t.log == nil {
		t.log = slog.Default()
	}
	if t.opts.Now == nil {
		t.opts.Now = time.Now
	}
	if t.opts.HandshakeTimeout <= 0 {
		t.opts.HandshakeTimeout = HandshakeTimeout
	}
	if t.opts.CRLPollInterval <= 0 {
		t.opts.CRLPollInterval = defaultCRLPoll
	}
	cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("transport: node certificate: %w", err)
	}
	t.cert = cert
	caPEM, err := os.ReadFile(opts.CAFile)
	if err != nil {
		return nil, fmt.Errorf("transport: tls_ca: %w", err)
	}
	if t.ca, err = pki.ParseCertificatePEM(caPEM); err != nil {
		return nil, fmt.Errorf("transport: tls_ca %s: %w", opts.CAFile, err)
	}
	t.pool = x509.NewCertPool()
	t.pool.AddCert(t.ca)
	known := opts.KnownMembers
	if known == 0 {
		known = len(opts.Members)
	}
	t.limit = max(minIncomingTotal, maxIncomingPerMember*known)
	t.mu.conns = map[*Conn]struct{}{}
	t.mu.perPeer = map[string]int{}
	t.mu.revoked = map[string]bool{}
	if opts.CRLFile != "" {
		if err := t.loadCRL(); err != nil {
			return nil, fmt.Errorf("transport: tls_crl: %w", err)
		}
	}
	return t, nil
}

// Listen opens the inter-node port. Run calls it if it was not called.
func (t *Transport) Listen() (net.Addr, error) {
	var err error
	t.lnOnce.Do(func() {
		t.ln, err = net.Listen("tcp", t.opts.ListenAddr)
		if err != nil {
			err = fmt.Errorf("transport: listen %s: %w", t.opts.ListenAddr, err)
		}
	})
	if err != nil {
		return nil, err
	}
	if t.ln == nil {
		return nil, fmt.Errorf("transport: listen %s failed earlier", t.opts.ListenAddr)
	}
	return t.ln.Addr(), nil
}

// Addr is the listening address, nil before Listen.
func (t *Transport) Addr() net.Addr {
	if t.ln == nil {
		return nil
	}
	return t.ln.Addr()
}

// Run accepts incoming links and watches tls_crl until ctx is done, then
// closes the listener and every link and returns once all the goroutines it
// started (handlers included) have exited.
func (t *Transport) Run(ctx context.Context) error {
	if _, err := t.Listen(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if t.opts.CRLFile != "" {
		wg.Go(func() { t.watchCRL(ctx) })
	}
	if t.opts.Isolated != nil {
		wg.Go(func() { t.watchIsolation(ctx) })
	}
	stop := context.AfterFunc(ctx, func() { t.ln.Close() })
	defer stop()
	err := t.acceptLoop(ctx, &wg)
	cancel()
	t.ln.Close()
	t.closeAll(ErrShuttingDown)
	wg.Wait()
	return err
}

func (t *Transport) acceptLoop(ctx context.Context, wg *sync.WaitGroup) error {
	backoff := 5 * time.Millisecond
	for {
		nc, err := t.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("transport: accept: %w", err)
			}
			t.log.Error("inter-node accept failed", "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, acceptBackoffMax)
			continue
		}
		backoff = 5 * time.Millisecond
		if t.isolated() {
			nc.Close()
			continue
		}
		if !t.admit() {
			t.refuseExcess(nc.RemoteAddr(), "")
			nc.Close()
			continue
		}
		wg.Go(func() { t.serve(ctx, nc) })
	}
}

// admit reserves one incoming slot.
func (t *Transport) admit() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closing || t.mu.incoming >= t.limit {
		return false
	}
	t.mu.incoming++
	return true
}

func (t *Transport) release(peerKey string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.incoming--
	if peerKey != "" {
		t.mu.perPeer[peerKey]--
		if t.mu.perPeer[peerKey] <= 0 {
			delete(t.mu.perPeer, peerKey)
		}
	}
}

// refuseExcess logs an excess connection, at most every refusalLogInterval.
func (t *Transport) refuseExcess(addr net.Addr, id string) {
	t.mu.Lock()
	t.mu.refused++
	now := t.opts.Now()
	if !t.mu.lastRefusalLog.IsZero() && now.Sub(t.mu.lastRefusalLog) < refusalLogInterval {
		t.mu.Unlock()
		return
	}
	n := t.mu.refused
	t.mu.refused = 0
	t.mu.lastRefusalLog = now
	t.mu.Unlock()
	if id != "" {
		t.log.Warn(fmt.Sprintf("connection from %s refused: too many inter-node connections from node %q (at most %d; %d refused since the last report)",
			addr, id, maxIncomingPerMember, n), "peer_addr", addrString(addr), "peer", id, "reason", "excess_connections", "refused", n)
		return
	}
	t.log.Warn(fmt.Sprintf("connection from %s refused: too many inter-node connections (at most %d; %d refused since the last report)",
		addr, t.limit, n), "peer_addr", addrString(addr), "reason", "excess_connections", "refused", n)
}

// serve runs the listener side of one connection: TLS, limits, hello, then
// the handler.
func (t *Transport) serve(ctx context.Context, nc net.Conn) {
	peerKey := ""
	defer func() { t.release(peerKey) }()
	remote := nc.RemoteAddr()
	hctx, cancel := context.WithTimeout(ctx, t.opts.HandshakeTimeout)
	defer cancel()
	deadline, _ := hctx.Deadline()
	nc.SetDeadline(deadline)
	// Shutdown interrupts the hello exchange too, not only TLS.
	release := armCancel(hctx, nc.SetDeadline)
	defer release()
	tc := tls.Server(nc, t.tlsConfig(""))
	if err := tc.HandshakeContext(hctx); err != nil {
		t.refused(true, remote, "", t.timeoutErr(hctx, err))
		tc.Close()
		return
	}
	leaf := tc.ConnectionState().PeerCertificates[0]
	id := leaf.Subject.CommonName
	key := strings.ToLower(id)
	t.mu.Lock()
	over := t.mu.perPeer[key] >= maxIncomingPerMember
	if !over {
		t.mu.perPeer[key]++
		peerKey = key
	}
	t.mu.Unlock()
	if over {
		t.refuseExcess(remote, id)
		// Closed at once, but with the reason, so the dialler can log it.
		tc.Write(AppendFrame(nil, typeRefuse, refusePayload(RefuseTooMany)))
		tc.Close()
		return
	}
	c := newConn(t, tc, Peer{ID: id, Addr: remote, Cert: leaf, Incoming: true})
	if err := c.acceptHello(hctx); err != nil {
		tc.Close()
		return
	}
	if !t.track(c) {
		c.closeWith(ErrShuttingDown)
		return
	}
	defer c.closeWith(errLocalClose)
	release()
	nc.SetDeadline(time.Time{})
	t.log.Info(fmt.Sprintf("node %s (%s) connected", id, remote), "peer", id, "peer_addr", addrString(remote))
	if t.opts.Handler != nil {
		t.opts.Handler(ctx, c)
	}
}

// Dial opens a link to the node peerID at addr ("" accepts whichever member
// answers, e.g. a seed whose id is not known yet). The peer's certificate
// must carry the host of addr in its SAN. The whole of TCP connect, TLS and
// hello is bounded by HandshakeTimeout.
func (t *Transport) Dial(ctx context.Context, peerID, addr string) (*Conn, error) {
	if t.isolated() {
		return nil, fmt.Errorf("%w: dial %s", ErrIsolated, addr)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("transport: dial %s: %w", addr, err)
	}
	hctx, cancel := context.WithTimeout(ctx, t.opts.HandshakeTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(hctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("transport: dial %s: %w", addr, err)
	}
	deadline, _ := hctx.Deadline()
	nc.SetDeadline(deadline)
	release := armCancel(hctx, nc.SetDeadline)
	defer release()
	tc := tls.Client(nc, t.tlsConfig(host))
	if err := tc.HandshakeContext(hctx); err != nil {
		err = t.timeoutErr(hctx, err)
		t.refused(false, nc.RemoteAddr(), addr, err)
		tc.Close()
		return nil, fmt.Errorf("%w: %s: %s", ErrRefused, addr, describeTLS(err, addr))
	}
	leaf := tc.ConnectionState().PeerCertificates[0]
	id := leaf.Subject.CommonName
	c := newConn(t, tc, Peer{ID: id, Addr: nc.RemoteAddr(), Cert: leaf})
	if err := c.dialHello(hctx, peerID); err != nil {
		tc.Close()
		return nil, err
	}
	if !t.track(c) {
		c.closeWith(ErrShuttingDown)
		return nil, ErrShuttingDown
	}
	release()
	nc.SetDeadline(time.Time{})
	t.log.Info(fmt.Sprintf("connected to node %s (%s)", id, addr), "peer", id, "peer_addr", addr)
	return c, nil
}

// tlsConfig is the mutual TLS 1.3 configuration; serverName is the dialled
// host ("" on the listener side).
func (t *Transport) tlsConfig(serverName string) *tls.Config {
	cfg := &tls.Config{
		MinVersion:       tls.VersionTLS13,
		MaxVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{t.cert},
		VerifyConnection: t.verifyPeer,
	}
	if serverName == "" {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = t.pool
	} else {
		// Go verifies the chain against RootCAs, the serverAuth usage and
		// that the certificate carries ServerName (IP or DNS) in its SAN.
		cfg.RootCAs = t.pool
		cfg.ServerName = serverName
		// Always present our certificate, even when the listener's list
		// of acceptable authorities does not name its issuer: the
		// listener then logs the precise reason of its refusal.
		cfg.Certificates = nil
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &t.cert, nil
		}
	}
	return cfg
}

// verifyPeer runs after the chain has been verified, on both sides, before
// the handshake completes: revoked certificates and non-members go no
// further.
func (t *Transport) verifyPeer(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("no peer certificate")
	}
	leaf := cs.PeerCertificates[0]
	t.mu.Lock()
	revoked := t.mu.revoked[leaf.SerialNumber.String()]
	t.mu.Unlock()
	if revoked {
		return &revokedError{id: leaf.Subject.CommonName, serial: fmt.Sprintf("%X", leaf.SerialNumber)}
	}
	if !t.isMember(leaf.Subject.CommonName) {
		return &notMemberError{id: leaf.Subject.CommonName}
	}
	return nil
}

func (t *Transport) isMember(id string) bool {
	if t.opts.Members == nil {
		return true
	}
	for _, m := range t.opts.Members {
		if strings.EqualFold(m, id) {
			return true
		}
	}
	return false
}

// refused logs a refused TLS handshake in the spec's terms.
func (t *Transport) refused(incoming bool, remote net.Addr, dialled string, err error) {
	who := "connection to " + dialled
	if incoming {
		who = "connection from " + addrString(remote)
	}
	var nm *notMemberError
	if errors.As(err, &nm) {
		t.log.Warn(fmt.Sprintf("%s refused: node %q not in the member list", who, nm.id),
			"peer_addr", addrString(remote), "peer", nm.id, "reason", "not_member")
		return
	}
	t.log.Warn(fmt.Sprintf("%s refused (TLS): %s", who, describeTLS(err, dialled)),
		"peer_addr", addrString(remote), "reason", tlsReason(err))
}

// describeTLS turns a handshake error into the reason the log gives.
func describeTLS(err error, dialled string) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var rec tls.RecordHeaderError
	var nm *notMemberError
	var slow *slowHandshakeError
	switch {
	case errors.Is(err, errRevoked):
		var re *revokedError
		if errors.As(err, &re) {
			return re.Error()
		}
		return errRevoked.Error()
	case errors.As(err, &nm):
		return nm.Error()
	case errors.As(err, &unknown):
		return "peer certificate not signed by the cluster authority (tls_ca)"
	case errors.As(err, &host):
		return fmt.Sprintf("peer certificate does not carry the dialled address %s in its SAN", dialled)
	case errors.As(err, &invalid):
		switch invalid.Reason {
		case x509.Expired:
			return "peer certificate expired or not yet valid"
		case x509.IncompatibleUsage:
			return "peer certificate lacks the extended key usage serverAuth and clientAuth"
		}
		return "peer certificate invalid: " + invalid.Error()
	case errors.As(err, &rec):
		return "not a TLS connection"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "closed by the peer during the TLS handshake"
	case errors.As(err, &slow):
		return slow.Error()
	case strings.Contains(err.Error(), "certificate required") || strings.Contains(err.Error(), "didn't provide a certificate"):
		return "peer presented no certificate"
	case strings.Contains(err.Error(), "protocol version") || strings.Contains(err.Error(), "unsupported versions"):
		return "TLS 1.3 required"
	case strings.Contains(err.Error(), "remote error"):
		return "the peer refused our certificate (" + err.Error() + ")"
	}
	return err.Error()
}

func tlsReason(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	switch {
	case errors.Is(err, errRevoked):
		return "revoked"
	case errors.As(err, &unknown):
		return "foreign_authority"
	case errors.As(err, &host):
		return "san_mismatch"
	}
	return "tls"
}

// slowHandshakeError: the handshake did not finish in time.
type slowHandshakeError struct{ limit time.Duration }

func (e *slowHandshakeError) Error() string {
	return fmt.Sprintf("handshake not finished within %s", e.limit)
}

// timeoutErr turns err into a slowHandshakeError when hctx's deadline has
// passed (not when the node is shutting down).
func (t *Transport) timeoutErr(hctx context.Context, err error) error {
	// hctx.Err() read once: the connection's deadline is hctx's, so the
	// context may expire between two reads of it, and a timeout would then
	// be reported as a bare I/O error.
	if cerr := hctx.Err(); errors.Is(cerr, context.DeadlineExceeded) || (cerr == nil && isTimeout(err)) {
		return &slowHandshakeError{limit: t.opts.HandshakeTimeout}
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func addrString(a net.Addr) string {
	if a == nil {
		return "?"
	}
	return a.String()
}

// track registers an established link so that CRL changes and shutdown
// reach it.
func (t *Transport) track(c *Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closing {
		return false
	}
	t.mu.conns[c] = struct{}{}
	c.established.Store(true)
	return true
}

func (t *Transport) untrack(c *Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mu.conns, c)
}

// closeAll closes every link with reason; ErrShuttingDown also stops new
// ones.
func (t *Transport) closeAll(reason error) {
	t.mu.Lock()
	if errors.Is(reason, ErrShuttingDown) {
		t.mu.closing = true
	}
	conns := make([]*Conn, 0, len(t.mu.conns))
	for c := range t.mu.conns {
		conns = append(conns, c)
	}
	t.mu.Unlock()
	for _, c := range conns {
		c.closeWith(reason)
	}
}

// Links returns the established links, for status and tests.
func (t *Transport) Links() []Peer {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Peer, 0, len(t.mu.conns))
	for c := range t.mu.conns {
		out = append(out, c.peer)
	}
	return out
}
