package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/pki"
	"github.com/miraj-db/miraj/internal/pki/pkitest"
)

func TestLinkEstablished(t *testing.T) {
	cl := newCluster(t, "n1", "n2")
	n1 := start(t, cl.nodes["n1"], withMembers("n1", "n2"))
	n2 := start(t, cl.nodes["n2"], withMembers("N1", "n2"))
	c := mustDial(t, n2, "n1", n1.addr)
	if c.Peer().ID != "n1" || c.Peer().Incoming {
		t.Fatalf("peer %+v", c.Peer())
	}
	if err := roundTrip(t, c, "hello n1"); err != nil {
		t.Fatal(err)
	}
	in := <-n1.links
	if in.Peer().ID != "n2" || !in.Peer().Incoming {
		t.Fatalf("incoming peer %+v", in.Peer())
	}
	waitLog(t, n1.log, "node n2 (127.0.0.1:")
	if !n2.log.has("connected to node n1") {
		t.Fatalf("dialer log:\n%s", n2.log)
	}
	// Dial without knowing the id (a seed): any member is accepted.
	if err := roundTrip(t, mustDial(t, n2, "", n1.addr), "seed"); err != nil {
		t.Fatal(err)
	}
	if got := len(n1.t.Links()); got < 1 {
		t.Fatalf("Links() = %d", got)
	}
}

// TestOpenSSLCertificates: a cluster whose authority and node certificates
// are made with the openssl commands of §17.2.2, mixed with certificates
// signed by the pki package from that same authority.
func TestOpenSSLCertificates(t *testing.T) {
	caDir := pkitest.OpenSSLCA(t, "c")
	ca, err := pki.LoadCADir(caDir)
	if err != nil {
		t.Fatal(err)
	}
	n1 := start(t, pkitest.OpenSSLNode(t, caDir, "n1", "IP:127.0.0.1", "DNS:localhost"), withMembers("n1", "n2", "n3"))
	n2 := start(t, pkitest.Issue(t, ca, "n2", "127.0.0.1"), withMembers("n1", "n2", "n3"))
	n3 := start(t, pkitest.OpenSSLNode(t, caDir, "n3"), withMembers("n1", "n2", "n3"))
	if err := roundTrip(t, mustDial(t, n2, "n1", n1.addr), "pki → openssl"); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t, mustDial(t, n1, "n2", n2.addr), "openssl → pki"); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t, mustDial(t, n3, "n1", n1.addr), "openssl → openssl"); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(n1.addr)
	if err := roundTrip(t, mustDial(t, n2, "n1", "localhost:"+port), "by DNS name"); err != nil {
		t.Fatal(err)
	}
}

func TestForeignAuthorityRefused(t *testing.T) {
	cl := newCluster(t, "n1", "n2")
	n1 := start(t, cl.nodes["n1"])
	n2 := start(t, cl.nodes["n2"])
	// The intruder holds a certificate of another authority but trusts
	// ours (cluster-ca.pem is public): n1 refuses its certificate.
	intruder := start(t, pkitest.Issue(t, pkitest.NewCA(t, "c"), "n2"), withCA(cl.nodes["n1"].CA))
	refusedDial(t, intruder, "n1", n1.addr)
	waitLog(t, n1.log, "connection from 127.0.0.1:")
	waitLog(t, n1.log, "refused (TLS): peer certificate not signed by the cluster authority (tls_ca)")
	// n1 dials a node of another authority: n1 refuses its server
	// certificate.
	stranger := start(t, pkitest.Issue(t, pkitest.NewCA(t, "c"), "n2"))
	refusedDial(t, n1, "n2", stranger.addr)
	waitLog(t, n1.log, "connection to "+stranger.addr+" refused (TLS): peer certificate not signed by the cluster authority (tls_ca)")
	// The stranger dials n1: it refuses n1 first, and n1 logs that.
	refusedDial(t, stranger, "n1", n1.addr)
	waitLog(t, stranger.log, "refused (TLS): peer certificate not signed by the cluster authority (tls_ca)")
	waitLog(t, n1.log, "refused (TLS): the peer refused our certificate")
	// An openssl-made foreign authority, trusting ours.
	foreign := start(t, pkitest.OpenSSLNode(t, pkitest.OpenSSLCA(t, "c"), "n2"), withCA(cl.nodes["n1"].CA))
	refusedDial(t, foreign, "n1", n1.addr)
	waitFor(t, "two foreign refusals", func() bool {
		return n1.log.count("not signed by the cluster authority (tls_ca)") >= 3
	})
	// The legitimate peer keeps working.
	if err := roundTrip(t, mustDial(t, n2, "n1", n1.addr), "still fine"); err != nil {
		t.Fatal(err)
	}
}

func TestNotMemberRefused(t *testing.T) {
	cl := newCluster(t, "n1", "n2", "n9")
	n1 := start(t, cl.nodes["n1"], withMembers("n1", "n2"))
	n2 := start(t, cl.nodes["n2"], withMembers("n1", "n2"))
	n9 := start(t, cl.nodes["n9"])
	refusedDial(t, n9, "n1", n1.addr)
	waitLog(t, n1.log, `refused: node "n9" not in the member list`)
	// Joining a non-member is refused too.
	refusedDial(t, n1, "", n9.addr)
	waitLog(t, n1.log, "connection to "+n9.addr+` refused: node "n9" not in the member list`)
	select {
	case c := <-n1.links:
		t.Fatalf("a link reached the handler: %+v", c.Peer())
	default:
	}
	if err := roundTrip(t, mustDial(t, n2, "n1", n1.addr), "member"); err != nil {
		t.Fatal(err)
	}
}

func TestImpersonationRefused(t *testing.T) {
	cl := newCluster(t, "n1", "n2", "n3")
	n1 := start(t, cl.nodes["n1"], withMembers("n1", "n2", "n3"))
	// A node configured as n3 but holding n2's certificate.
	fake := start(t, cl.nodes["n2"], withID("n3"))
	refusedDial(t, fake, "n1", n1.addr)
	waitLog(t, n1.log, `node n2 (127.0.0.1:`)
	waitLog(t, n1.log, `refused: presents itself as "n3" but its certificate is that of node "n2"`)
	if !fake.log.has("refused the link: declared identity differs from the certificate") {
		t.Fatalf("refused side log:\n%s", fake.log)
	}
	// Dialling n3 at an address where n2 answers is refused by the dialler.
	n2 := start(t, cl.nodes["n2"])
	refusedDial(t, n1, "n3", n2.addr)
	waitLog(t, n1.log, `connection to node n3 (`+n2.addr+`) refused: its certificate is that of node "n2"`)
}

func TestClusterNameRefused(t *testing.T) {
	cl := newCluster(t, "n1", "n2")
	n1 := start(t, cl.nodes["n1"])
	other := start(t, cl.nodes["n2"], withCluster("other"))
	refusedDial(t, other, "n1", n1.addr)
	waitLog(t, n1.log, `node n2 (127.0.0.1:`)
	waitLog(t, n1.log, `refused: belongs to cluster "other", not "c"`)
	waitLog(t, other.log, "refused the link: different cluster name")
}

func TestSANMustCarryDialledAddress(t *testing.T) {
	cl := newCluster(t, "n2")
	n1 := start(t, pkitest.Issue(t, cl.ca, "n1", "10.9.9.9", "n1.example"))
	n2 := start(t, cl.nodes["n2"])
	refusedDial(t, n2, "n1", n1.addr)
	waitLog(t, n2.log, "connection to "+n1.addr+" refused (TLS): peer certificate does not carry the dialled address "+n1.addr+" in its SAN")
}

func TestOversizedFrameClosesLink(t *testing.T) {
	cl := newCluster(t, "n1", "n2", "n3")
	n1 := start(t, cl.nodes["n1"])
	n2 := start(t, cl.nodes["n2"])
	n3 := start(t, cl.nodes["n3"])
	c := mustDial(t, n2, "n1", n1.addr)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	// Over our own limit: refused locally, the link stays.
	if err := c.Send(ctx, FirstUserType, make([]byte, DefaultMaxFrameBytes+1)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Send over the limit: %v", err)
	}
	if err := roundTrip(t, c, "still open"); err != nil {
		t.Fatal(err)
	}
	// Raise our limit (as a replication stream would) and send more than
	// the peer accepts on this link: the peer closes it.
	if err := c.SetMaxFrame(MaxStreamFrameBytes); err != nil {
		t.Fatal(err)
	}
	if err := c.SetMaxFrame(MaxStreamFrameBytes + 1); err == nil {
		t.Fatal("SetMaxFrame above 256 MiB accepted")
	}
	// The peer may close while the frame is still being written.
	if err := c.Send(ctx, FirstUserType, make([]byte, DefaultMaxFrameBytes+1)); err != nil && !errors.Is(err, ErrClosed) {
		t.Fatalf("Send: %v", err)
	}
	waitLog(t, n1.log, "link with node n2 (127.0.0.1:")
	waitLog(t, n1.log, "closed: frame of type 0x10 exceeds the limit")
	if c.Err() == nil {
		if _, err := c.Recv(ctx); !errors.Is(err, ErrClosed) {
			t.Fatalf("Recv after the peer closed: %v", err)
		}
	}
	if err := roundTrip(t, mustDial(t, n3, "n1", n1.addr), "other link"); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedFrameClosesLink(t *testing.T) {
	cl := newCluster(t, "n1", "n2")
	n1 := start(t, cl.nodes["n1"])
	n2 := start(t, cl.nodes["n2"])
	for _, tc := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"type zero", AppendFrame(nil, 0x00, []byte("x")), "malformed frame (transport: invalid frame type: 0x00)"},
		{"reserved type", AppendFrame(nil, 0x07, nil), "unexpected frame type 0x07"},
		{"hello after handshake", AppendFrame(nil, typeHello, nil), "unexpected frame type 0x01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustDial(t, n2, "n1", n1.addr)
			if err := roundTrip(t, c, "ok"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.tc.Write(tc.raw); err != nil {
				t.Fatal(err)
			}
			waitLog(t, n1.log, tc.want)
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			if _, err := c.Recv(ctx); !errors.Is(err, ErrClosed) {
				t.Fatalf("Recv: %v", err)
			}
		})
	}
	// A truncated frame: header announces more than arrives.
	c := mustDial(t, n2, "n1", n1.addr)
	c.tc.Write(AppendFrame(nil, FirstUserType, make([]byte, 10))[:HeaderBytes+3])
	c.tc.CloseWrite()
	waitLog(t, n1.log, "closed: truncated frame")
}

func TestSendReservedTypeRefused(t *testing.T) {
	cl := newCluster(t, "n1", "n2")
	n1 := start(t, cl.nodes["n1"])
	n2 := start(t, cl.nodes["n2"])
	c := mustDial(t, n2, "n1", n1.addr)
	if err := c.Send(context.Background(), typeHello, nil); !errors.Is(err, ErrFrameType) {
		t.Fatalf("Send(typeHello) = %v", err)
	}
}

func TestRecvCancelKeepsLink(t *testing.T) {
	cl := newCluster(t, "n1", "n2")
	n1 := start(t, cl.nodes["n1"])
	n2 := start(t, cl.nodes["n2"])
	c := mustDial(t, n2, "n1", n1.addr)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Recv(ctx)
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Recv after cancel: %v", err)
	}
	if err := roundTrip(t, c, "after cancel"); err != nil {
		t.Fatal(err)
	}
}

func TestNotTLSRefused(t *testing.T) {
	cl := newCluster(t, "n1")
	n1 := start(t, cl.nodes["n1"])
	nc, err := net.Dial("tcp", n1.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	waitLog(t, n1.log, "refused (TLS): not a TLS connection")
	// A TLS client without a certificate.
	tc, err := tls.Dial("tcp", n1.addr, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	if err == nil {
		tc.Read(make([]byte, 1))
		tc.Close()
	}
	waitLog(t, n1.log, "refused (TLS): peer presented no certificate")
	// TLS 1.2 is not spoken.
	tc, err = tls.Dial("tcp", n1.addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12})
	if err == nil {
		tc.Close()
		t.Fatal("TLS 1.2 handshake succeeded")
	}
	waitLog(t, n1.log, "refused (TLS): TLS 1.3 required")
}

func TestConnectionFlood(t *testing.T) {
	cl := newCluster(t, "n1", "n2", "n3")
	n1 := start(t, cl.nodes["n1"], withMembers("n1", "n2", "n3"))
	n2 := start(t, cl.nodes["n2"])
	n3 := start(t, cl.nodes["n3"])
	// Four links from n2 are allowed, a fifth is closed at once.
	for i := 0; i < maxIncomingPerMember; i++ {
		if err := roundTrip(t, mustDial(t, n2, "n1", n1.addr), "link"); err != nil {
			t.Fatal(err)
		}
	}
	refusedDial(t, n2, "n1", n1.addr)
	waitLog(t, n1.log, `refused: too many inter-node connections from node "n2" (at most 4; 1 refused since the last report)`)
	waitLog(t, n2.log, "refused the link: too many inter-node connections")
	// More excess within ten seconds: closed, not logged again.
	refusedDial(t, n2, "n1", n1.addr)
	refusedDial(t, n2, "n1", n1.addr)
	if n := n1.log.count("too many inter-node connections"); n != 1 {
		t.Fatalf("%d refusal lines within 10 s, want 1:\n%s", n, n1.log)
	}
	// n3 is not affected.
	if err := roundTrip(t, mustDial(t, n3, "n1", n1.addr), "n3"); err != nil {
		t.Fatal(err)
	}

	// A flood of raw TCP connections beyond the total (16 for 3 members:
	// 4*3 = 12 < 16) is closed at once; after the rate-limit window the
	// next report counts what was refused meanwhile.
	n1.clock.Advance(refusalLogInterval)
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for i := 0; i < 2*minIncomingTotal; i++ {
		c, err := net.Dial("tcp", n1.addr)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
	}
	waitLog(t, n1.log, "refused: too many inter-node connections (at most 16;")
	for _, c := range flood {
		c.Close()
	}
	flood = nil
	// Once the flood is gone, legitimate peers connect again.
	waitFor(t, "n3 to reconnect after the flood", func() bool {
		c, err := dial(t, n3, "n1", n1.addr)
		if err != nil {
			return false
		}
		defer c.Close()
		return roundTrip(t, c, "after flood") == nil
	})
}

func TestRevocationWhileConnected(t *testing.T) {
	cl := newCluster(t, "n1", "n2", "n3")
	crlPath := filepath.Join(t.TempDir(), "cluster-crl.pem")
	if _, err := cl.ca.WriteCRL(crlPath, 0); err != nil {
		t.Fatal(err)
	}
	n1 := start(t, cl.nodes["n1"], withCRL(crlPath))
	n2 := start(t, cl.nodes["n2"])
	n3 := start(t, cl.nodes["n3"])
	c2 := mustDial(t, n2, "n1", n1.addr)
	c3 := mustDial(t, n3, "n1", n1.addr)
	for _, c := range []*Conn{c2, c3} {
		if err := roundTrip(t, c, "before"); err != nil {
			t.Fatal(err)
		}
	}
	// Revoke n3 and install the new list where n1 reads it.
	if _, err := cl.ca.Revoke(pki.RevokeOptions{ID: "n3", Out: crlPath}); err != nil {
		t.Fatal(err)
	}
	waitLog(t, n1.log, "revocation list "+crlPath+" reloaded (1 revoked certificate(s))")
	// The existing link with n3 drops.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := c3.Recv(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("revoked link still open: %v", err)
	}
	waitLog(t, n1.log, "link with node n3")
	// n3 is refused from now on, both ways; n2 reconnects and works.
	refusedDial(t, n3, "n1", n1.addr)
	waitLog(t, n1.log, "connection from 127.0.0.1")
	waitLog(t, n1.log, "refused (TLS): peer certificate revoked (tls_crl)")
	refusedDial(t, n1, "n3", n3.addr)
	waitLog(t, n1.log, "connection to "+n3.addr+" refused (TLS): peer certificate revoked (tls_crl)")
	waitFor(t, "n2's link to be re-established", func() bool {
		c, err := dial(t, n2, "n1", n1.addr)
		return err == nil && roundTrip(t, c, "after") == nil
	})

	// An unreadable list is reported, and the old one stays in force. It
	// is put in place at once, as WriteCRL does: written where it is, the
	// file could be read empty, then again once written, two reports.
	if err := os.WriteFile(crlPath+".new", []byte("not a CRL"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(crlPath+".new", crlPath); err != nil {
		t.Fatal(err)
	}
	waitLog(t, n1.log, "revocation list "+crlPath+" unreadable")
	waitLog(t, n1.log, "the previous list stays in force")
	refusedDial(t, n3, "n1", n1.addr)
	if err := roundTrip(t, mustDial(t, n2, "n1", n1.addr), "old list kept"); err != nil {
		t.Fatal(err)
	}
	if n := n1.log.count("unreadable"); n != 1 {
		t.Fatalf("unreadable list reported %d times, want once", n)
	}
	// A list from another authority is unreadable too.
	if _, err := pkitest.NewCA(t, "x").WriteCRL(crlPath, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the foreign list to be reported", func() bool {
		return n1.log.count("unreadable") == 2
	})
	if !strings.Contains(n1.log.String(), "not signed by this authority") {
		t.Fatalf("log:\n%s", n1.log)
	}
}

func TestNewErrors(t *testing.T) {
	cl := newCluster(t, "n1")
	f := cl.nodes["n1"]
	base := Options{NodeID: "n1", ClusterName: "c", ListenAddr: "127.0.0.1:0", CertFile: f.Cert, KeyFile: f.Key, CAFile: f.CA}
	cases := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"bad id", func(o *Options) { o.NodeID = "a b" }, "node id"},
		{"no cluster", func(o *Options) { o.ClusterName = "" }, "empty cluster name"},
		{"missing cert", func(o *Options) { o.CertFile = f.Cert + ".none" }, "node certificate"},
		{"missing ca", func(o *Options) { o.CAFile = f.CA + ".none" }, "tls_ca"},
		{"missing crl", func(o *Options) { o.CRLFile = f.CA + ".none" }, "tls_crl"},
		{"crl not a crl", func(o *Options) { o.CRLFile = f.CA }, "tls_crl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			if _, err := New(o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRunStopsEverything(t *testing.T) {
	cl := newCluster(t, "n1", "n2")
	n1 := newNode(t, cl.nodes["n1"])
	n2 := start(t, cl.nodes["n2"])
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n1.t.Run(ctx) }()
	c := mustDial(t, n2, "n1", n1.addr)
	if err := roundTrip(t, c, "x"); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return")
	}
	rctx, rcancel := context.WithTimeout(context.Background(), waitTimeout)
	defer rcancel()
	if _, err := c.Recv(rctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("link after shutdown: %v", err)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	cl := newCluster(t, "n1", "n2")
	n1 := start(t, cl.nodes["n1"], withHandshakeTimeout(200*time.Millisecond))
	n2 := start(t, cl.nodes["n2"])
	// A connection that never speaks is closed when the handshake is due.
	nc, err := net.Dial("tcp", n1.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	waitLog(t, n1.log, "refused (TLS): handshake not finished within 200ms")
	nc.SetReadDeadline(time.Now().Add(waitTimeout))
	if _, err := nc.Read(make([]byte, 1)); err == nil {
		t.Fatal("silent connection still open")
	}
	if err := roundTrip(t, mustDial(t, n2, "n1", n1.addr), "ok"); err != nil {
		t.Fatal(err)
	}
}

// TestFromConfig: a cluster.toml loaded by config.Load is all a transport
// needs.
func TestFromConfig(t *testing.T) {
	ca := pkitest.NewCA(t, "gestium-prod")
	var nodes []*node
	for _, id := range []string{"n1", "n2"} {
		files := pkitest.Issue(t, ca, id, "127.0.0.1")
		doc := `[node]
id = "` + id + `"
listen = "127.0.0.1:7107"
[cluster]
name = "gestium-prod"
tls_cert = "node.pem"
tls_key = "node-key.pem"
tls_ca = "cluster-ca.pem"
members = ["n1", "n2"]
`
		path := filepath.Join(files.Dir, config.FileName)
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		c, warnings, err := config.Load(path, config.DefaultClientPort)
		if err != nil || len(warnings) != 0 {
			t.Fatalf("Load: %v %q", err, warnings)
		}
		opts := OptionsFromConfig(c)
		opts.ListenAddr = "127.0.0.1:0" // never a fixed port in tests
		rec := &recorder{}
		opts.Logger = slog.New(rec)
		opts.Handler = func(ctx context.Context, c *Conn) { echo(ctx, c) }
		tr, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		addr, err := tr.Listen()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- tr.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		nodes = append(nodes, &node{t: tr, log: rec, addr: addr.String(), files: files})
	}
	if err := roundTrip(t, mustDial(t, nodes[1], "n1", nodes[0].addr), "from config"); err != nil {
		t.Fatal(err)
	}
}

// TestOpenSSLRevocation: an openssl-made node certificate, revoked with
// this package's CRL of an openssl-made authority, is refused.
func TestOpenSSLRevocation(t *testing.T) {
	caDir := pkitest.OpenSSLCA(t, "c")
	ca, err := pki.LoadCADir(caDir)
	if err != nil {
		t.Fatal(err)
	}
	crlPath := filepath.Join(t.TempDir(), "cluster-crl.pem")
	if _, err := ca.WriteCRL(crlPath, 0); err != nil {
		t.Fatal(err)
	}
	n1 := start(t, pkitest.OpenSSLNode(t, caDir, "n1"), withCRL(crlPath))
	n3files := pkitest.OpenSSLNode(t, caDir, "n3")
	n3 := start(t, n3files)
	if err := roundTrip(t, mustDial(t, n3, "n1", n1.addr), "before"); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Revoke(pki.RevokeOptions{CertPath: n3files.Cert, Out: crlPath}); err != nil {
		t.Fatal(err)
	}
	waitLog(t, n1.log, "reloaded (1 revoked certificate(s))")
	waitFor(t, "n3 to be refused", func() bool {
		refusedDial(t, n3, "n1", n1.addr)
		return n1.log.has(`peer certificate revoked (tls_crl) (node "n3"`)
	})
}
