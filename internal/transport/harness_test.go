package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/pki"
	"github.com/miraj-db/miraj/internal/pki/pkitest"
)

// waitTimeout bounds every poll: generous, since only a failure waits it out.
const waitTimeout = 20 * time.Second

// recorder is a slog.Handler that keeps the messages, so tests can assert
// on log lines.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	return nil
}

func (r *recorder) has(sub string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.msgs {
		if strings.Contains(m, sub) {
			return true
		}
	}
	return false
}

func (r *recorder) count(sub string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.msgs {
		if strings.Contains(m, sub) {
			n++
		}
	}
	return n
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "\n")
}

// waitFor polls cond until it holds or waitTimeout passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLog waits for a log line containing sub.
func waitLog(t *testing.T, r *recorder, sub string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !r.has(sub) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line containing %q; log:\n%s", sub, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeClock is an injectable clock for the refusal-log rate limit.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// node is a transport under test.
type node struct {
	t     *Transport
	log   *recorder
	addr  string
	files pkitest.Node
	clock *fakeClock
	// links receives every incoming link; the default handler echoes
	// frames until the link closes.
	links chan *Conn
}

type nodeOpt func(*Options)

func withMembers(m ...string) nodeOpt { return func(o *Options) { o.Members = m } }
func withCluster(name string) nodeOpt { return func(o *Options) { o.ClusterName = name } }
func withID(id string) nodeOpt        { return func(o *Options) { o.NodeID = id } }
func withCRL(path string) nodeOpt     { return func(o *Options) { o.CRLFile = path } }
func withCA(path string) nodeOpt      { return func(o *Options) { o.CAFile = path } }
func withHandshakeTimeout(d time.Duration) nodeOpt {
	return func(o *Options) { o.HandshakeTimeout = d }
}

// start runs a transport for files (its id is files.ID unless withID says
// otherwise) on 127.0.0.1:0 until the test ends.
func start(t *testing.T, files pkitest.Node, opts ...nodeOpt) *node {
	t.Helper()
	n := newNode(t, files, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.t.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return n
}

// newNode builds and listens, without running (for dial-only nodes).
func newNode(t *testing.T, files pkitest.Node, opts ...nodeOpt) *node {
	t.Helper()
	n := &node{log: &recorder{}, files: files, links: make(chan *Conn, 64),
		clock: &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}
	o := Options{
		NodeID:          files.ID,
		ClusterName:     "c",
		ListenAddr:      "127.0.0.1:0",
		CertFile:        files.Cert,
		KeyFile:         files.Key,
		CAFile:          files.CA,
		Logger:          slog.New(n.log),
		Now:             n.clock.Now,
		CRLPollInterval: 20 * time.Millisecond,
		Handler: func(ctx context.Context, c *Conn) {
			n.links <- c
			echo(ctx, c)
		},
	}
	for _, f := range opts {
		f(&o)
	}
	tr, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := tr.Listen()
	if err != nil {
		t.Fatal(err)
	}
	n.t, n.addr = tr, addr.String()
	return n
}

func echo(ctx context.Context, c *Conn) {
	for {
		f, err := c.Recv(ctx)
		if err != nil {
			return
		}
		if err := c.Send(ctx, f.Type, f.Payload); err != nil {
			return
		}
	}
}

// roundTrip sends a frame and expects it echoed.
func roundTrip(t *testing.T, c *Conn, payload string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := c.Send(ctx, FirstUserType, []byte(payload)); err != nil {
		return err
	}
	f, err := c.Recv(ctx)
	if err != nil {
		return err
	}
	if f.Type != FirstUserType || string(f.Payload) != payload {
		return fmt.Errorf("echo: got type %x %q", f.Type, f.Payload)
	}
	return nil
}

func dial(t *testing.T, from *node, peerID string, to string) (*Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, err := from.t.Dial(ctx, peerID, to)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func mustDial(t *testing.T, from *node, peerID, to string) *Conn {
	t.Helper()
	c, err := dial(t, from, peerID, to)
	if err != nil {
		t.Fatalf("dial %s: %v\nlog of dialer:\n%s", to, err, from.log)
	}
	return c
}

// refusedDial asserts that a dial fails with ErrRefused or a closed link:
// with TLS 1.3 the listener's verdict on our certificate may arrive at our
// first read, so the failure can also show at the first round trip.
func refusedDial(t *testing.T, from *node, peerID, to string) {
	t.Helper()
	c, err := dial(t, from, peerID, to)
	if err == nil {
		err = roundTrip(t, c, "should not pass")
		if err == nil {
			t.Fatalf("link from %s to %s was established", from.files.ID, to)
		}
	}
	if !errors.Is(err, ErrRefused) && !errors.Is(err, ErrClosed) {
		t.Fatalf("dial error %v, want ErrRefused", err)
	}
}

// cluster is an authority with certificates for n1…n3 (SAN 127.0.0.1).
type cluster struct {
	ca    *pki.CA
	nodes map[string]pkitest.Node
}

func newCluster(t *testing.T, ids ...string) *cluster {
	t.Helper()
	c := &cluster{ca: pkitest.NewCA(t, "c"), nodes: map[string]pkitest.Node{}}
	for _, id := range ids {
		c.nodes[id] = pkitest.Issue(t, c.ca, id)
	}
	return c
}
