package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Peer is the proven identity of the node at the other end of a link.
type Peer struct {
	ID       string // the certificate's common name
	Addr     net.Addr
	Cert     *x509.Certificate
	Incoming bool // it connected to us
}

// Conn is an established link. Send and Recv may be called concurrently
// with each other and with Close; concurrent Sends are serialized, and so
// are concurrent Recvs.
type Conn struct {
	t        *Transport
	tc       *tls.Conn
	br       *bufio.Reader
	peer     Peer
	maxFrame atomic.Int64

	rmu sync.Mutex // serializes readers
	wmu sync.Mutex // serializes writers

	established atomic.Bool // tracked by the transport: closing is logged
	closeOnce   sync.Once
	done        chan struct{}
	err         error // why the link closed; set before done is closed
}

// readBufferBytes sizes the read buffer: frames are mostly small, and a
// larger frame is read straight through.
const readBufferBytes = 32 << 10

func newConn(t *Transport, tc *tls.Conn, p Peer) *Conn {
	c := &Conn{t: t, tc: tc, br: bufio.NewReaderSize(tc, readBufferBytes), peer: p, done: make(chan struct{})}
	c.maxFrame.Store(DefaultMaxFrameBytes)
	return c
}

// Peer returns the peer's identity.
func (c *Conn) Peer() Peer { return c.peer }

// Done is closed when the link is closed, for whatever reason.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the link closed (nil while it is open).
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// SetMaxFrame sets the limit of this link's frames, both ways, between
// 4 KiB and MaxStreamFrameBytes: a secondary's link with its primary and a
// catch-up the node initiated use up to 256 MiB; every other link keeps
// DefaultMaxFrameBytes.
func (c *Conn) SetMaxFrame(n int) error {
	if n < minMaxFrameBytes || n > MaxStreamFrameBytes {
		return fmt.Errorf("transport: SetMaxFrame(%d): allowed %d to %d", n, minMaxFrameBytes, MaxStreamFrameBytes)
	}
	c.maxFrame.Store(int64(n))
	return nil
}

// Close closes the link.
func (c *Conn) Close() error {
	c.closeWith(errLocalClose)
	return nil
}

// closeWith closes the link once, recording reason; the closing of an
// established link is logged (info: a peer's disconnection).
func (c *Conn) closeWith(reason error) {
	c.closeLogged(reason, slog.LevelInfo, strings.TrimPrefix(reason.Error(), ErrClosed.Error()+": "))
}

func (c *Conn) closeLogged(reason error, level slog.Level, why string) {
	c.closeOnce.Do(func() {
		c.err = reason
		close(c.done)
		c.tc.Close()
		c.t.untrack(c)
		if c.established.Load() {
			c.t.log.Log(context.Background(), level,
				fmt.Sprintf("link with node %s (%s) closed: %s", c.peer.ID, addrString(c.peer.Addr), why),
				"peer", c.peer.ID, "peer_addr", addrString(c.peer.Addr))
		}
	})
}

// fail closes the link because of something the peer sent; logged as a
// warning with the reason.
func (c *Conn) fail(reason string, err error) error {
	e := fmt.Errorf("%w: %s", ErrClosed, reason)
	if err != nil {
		e = fmt.Errorf("%w: %s: %w", ErrClosed, reason, err)
	}
	c.closeLogged(e, slog.LevelWarn, reason)
	return e
}

// Send writes one frame of a type ≥ FirstUserType. A payload over the
// link's limit is refused without closing the link (the caller's bug, not
// the peer's). If ctx ends in the middle of a frame the link is closed,
// since the peer could not resynchronize.
func (c *Conn) Send(ctx context.Context, typ Type, payload []byte) error {
	if typ < FirstUserType {
		return fmt.Errorf("%w: 0x%02x is reserved by the transport", ErrFrameType, byte(typ))
	}
	if int64(len(payload)) > c.maxFrame.Load() {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, len(payload), c.maxFrame.Load())
	}
	return c.send(ctx, typ, payload)
}

// smallFrameBytes: frames up to this size are copied into one buffer so
// that they leave in a single TLS record.
const smallFrameBytes = 64 << 10

func (c *Conn) send(ctx context.Context, typ Type, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.Err(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	release := armCancel(ctx, c.tc.SetWriteDeadline)
	var err error
	if len(payload) <= smallFrameBytes {
		_, err = c.tc.Write(AppendFrame(make([]byte, 0, HeaderBytes+len(payload)), typ, payload))
	} else {
		hdr := AppendFrame(make([]byte, 0, HeaderBytes), typ, nil)
		putLen(hdr, len(payload))
		if _, err = c.tc.Write(hdr); err == nil {
			_, err = c.tc.Write(payload)
		}
	}
	release()
	if err != nil {
		switch {
		case c.Err() != nil:
			return c.Err()
		case ctx.Err() != nil:
			err = fmt.Errorf("%w: send interrupted: %w", ErrClosed, ctx.Err())
		default:
			err = fmt.Errorf("%w: send: %w", ErrClosed, err)
		}
		c.closeWith(err)
		return err
	}
	return nil
}

// armCancel makes ctx's end interrupt a blocking read or write through its
// deadline (set is SetReadDeadline or SetWriteDeadline). The returned
// release must be called when the operation ends (calling it again does
// nothing): after it, a late cancel does nothing, and a deadline the cancel
// had set is cleared.
func armCancel(ctx context.Context, set func(time.Time) error) (release func()) {
	var mu sync.Mutex
	active := true
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if active {
			set(time.Unix(1, 0))
		}
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if !active {
			return // released already
		}
		active = false
		if !stop() {
			set(time.Time{})
		}
	}
}

func putLen(hdr []byte, n int) {
	hdr[0], hdr[1], hdr[2], hdr[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
}

// Recv reads the next frame. A malformed or oversized frame closes the
// link (logged with the reason) and returns an ErrClosed error. If ctx ends
// before the first byte of a frame, Recv returns ctx.Err() and the link
// stays usable; in the middle of a frame the link is closed.
func (c *Conn) Recv(ctx context.Context) (Frame, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if err := c.Err(); err != nil {
		return Frame{}, err
	}
	if err := ctx.Err(); err != nil {
		return Frame{}, err
	}
	release := armCancel(ctx, c.tc.SetReadDeadline)
	f, started, err := c.readFrame()
	release()
	if err == nil {
		switch {
		case f.Type >= FirstUserType:
			return f, nil
		case f.Type == typeRefuse:
			e := fmt.Errorf("%w: peer closed the link: %s", ErrClosed, decodeRefuse(f.Payload))
			c.closeWith(e)
			return Frame{}, e
		default:
			return Frame{}, c.fail(fmt.Sprintf("unexpected frame type 0x%02x", byte(f.Type)), nil)
		}
	}
	if ctx.Err() != nil && !started {
		return Frame{}, ctx.Err()
	}
	if cerr := c.Err(); cerr != nil {
		return Frame{}, cerr
	}
	switch {
	case errors.Is(err, ErrFrameTooLarge):
		return Frame{}, c.fail(fmt.Sprintf("frame of type 0x%02x exceeds the limit (%v)", byte(f.Type), err), err)
	case errors.Is(err, ErrFrameType):
		return Frame{}, c.fail(fmt.Sprintf("malformed frame (%v)", err), err)
	case errors.Is(err, io.EOF):
		e := fmt.Errorf("%w: closed by the peer", ErrClosed)
		c.closeWith(e)
		return Frame{}, e
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Frame{}, c.fail("truncated frame", err)
	case ctx.Err() != nil:
		e := fmt.Errorf("%w: receive interrupted in the middle of a frame: %w", ErrClosed, ctx.Err())
		c.closeWith(e)
		return Frame{}, e
	}
	e := fmt.Errorf("%w: %w", ErrClosed, err)
	c.closeWith(e)
	return Frame{}, e
}

// readFrame reads one frame and reports whether any byte of it was read.
func (c *Conn) readFrame() (Frame, bool, error) {
	if _, err := c.br.Peek(1); err != nil {
		return Frame{}, false, err
	}
	f, err := ReadFrame(c.br, int(c.maxFrame.Load()))
	return f, true, err
}

// readHandshake reads one transport frame during the hello exchange.
func (c *Conn) readHandshake() (Frame, error) {
	return ReadFrame(c.br, maxHelloBytes)
}

func (c *Conn) writeRaw(typ Type, payload []byte) error {
	_, err := c.tc.Write(AppendFrame(nil, typ, payload))
	return err
}

func (c *Conn) hello() Hello {
	return Hello{Version: protocolVersion, Cluster: c.t.opts.ClusterName, NodeID: c.t.opts.NodeID}
}

// checkHello validates what the peer declared; it logs and returns the
// refusal code, or 0.
func (c *Conn) checkHello(h Hello) RefuseCode {
	t := c.t
	who := fmt.Sprintf("node %s (%s)", c.peer.ID, addrString(c.peer.Addr))
	switch {
	case h.Version != protocolVersion:
		t.log.Warn(fmt.Sprintf("%s refused: protocol version %d, this node speaks %d", who, h.Version, protocolVersion),
			"peer", c.peer.ID, "reason", "version")
		return RefuseVersion
	case h.Cluster != t.opts.ClusterName:
		t.log.Warn(fmt.Sprintf("%s refused: belongs to cluster %q, not %q", who, h.Cluster, t.opts.ClusterName),
			"peer", c.peer.ID, "reason", "cluster_name")
		return RefuseClusterName
	case !strings.EqualFold(h.NodeID, c.peer.ID):
		t.log.Warn(fmt.Sprintf("%s refused: presents itself as %q but its certificate is that of node %q", who, h.NodeID, c.peer.ID),
			"peer", c.peer.ID, "declared", h.NodeID, "reason", "identity")
		return RefuseIdentity
	}
	return 0
}

// acceptHello is the listener side: read the dialer's hello, answer with
// ours or a refusal, then wait for ready.
func (c *Conn) acceptHello(ctx context.Context) error {
	f, err := c.readHandshake()
	if err != nil {
		c.handshakeFailed(err)
		return err
	}
	if f.Type != typeHello {
		c.handshakeFailed(fmt.Errorf("expected hello, got frame type 0x%02x", byte(f.Type)))
		c.writeRaw(typeRefuse, refusePayload(RefuseMalformed))
		return ErrRefused
	}
	h, err := DecodeHello(f.Payload)
	if err != nil {
		c.handshakeFailed(err)
		c.writeRaw(typeRefuse, refusePayload(RefuseMalformed))
		return err
	}
	if code := c.checkHello(h); code != 0 {
		c.writeRaw(typeRefuse, refusePayload(code))
		return fmt.Errorf("%w: %s", ErrRefused, code)
	}
	if err := c.writeRaw(typeHello, c.hello().encode()); err != nil {
		c.handshakeFailed(err)
		return err
	}
	f, err = c.readHandshake()
	switch {
	case err != nil:
		c.handshakeFailed(err)
		return err
	case f.Type == typeRefuse:
		c.t.log.Warn(fmt.Sprintf("node %s (%s) refused the link: %s", c.peer.ID, addrString(c.peer.Addr), decodeRefuse(f.Payload)),
			"peer", c.peer.ID, "reason", "refused_by_peer")
		return ErrRefused
	case f.Type != typeReady:
		c.handshakeFailed(fmt.Errorf("expected ready, got frame type 0x%02x", byte(f.Type)))
		return ErrRefused
	}
	return nil
}

// dialHello is the dialer side: check the node is the one we dialled, send
// our hello, check the answer, confirm.
func (c *Conn) dialHello(ctx context.Context, want string) error {
	t := c.t
	if want != "" && !strings.EqualFold(want, c.peer.ID) {
		t.log.Warn(fmt.Sprintf("connection to node %s (%s) refused: its certificate is that of node %q", want, addrString(c.peer.Addr), c.peer.ID),
			"peer", c.peer.ID, "expected", want, "reason", "identity")
		c.writeRaw(typeRefuse, refusePayload(RefuseWrongNode))
		return fmt.Errorf("%w: dialled node %s, certificate of node %q", ErrRefused, want, c.peer.ID)
	}
	if err := c.writeRaw(typeHello, c.hello().encode()); err != nil {
		c.handshakeFailed(err)
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	f, err := c.readHandshake()
	if err != nil {
		c.handshakeFailed(err)
		return fmt.Errorf("%w: %s: %s", ErrRefused, addrString(c.peer.Addr), describeRemote(err))
	}
	switch f.Type {
	case typeRefuse:
		code := decodeRefuse(f.Payload)
		t.log.Warn(fmt.Sprintf("node %s (%s) refused the link: %s", c.peer.ID, addrString(c.peer.Addr), code),
			"peer", c.peer.ID, "reason", "refused_by_peer")
		return fmt.Errorf("%w: by node %s: %s", ErrRefused, c.peer.ID, code)
	case typeHello:
	default:
		c.handshakeFailed(fmt.Errorf("expected hello, got frame type 0x%02x", byte(f.Type)))
		return fmt.Errorf("%w: malformed handshake", ErrRefused)
	}
	h, err := DecodeHello(f.Payload)
	if err != nil {
		c.handshakeFailed(err)
		c.writeRaw(typeRefuse, refusePayload(RefuseMalformed))
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if code := c.checkHello(h); code != 0 {
		c.writeRaw(typeRefuse, refusePayload(code))
		return fmt.Errorf("%w: %s", ErrRefused, code)
	}
	if err := c.writeRaw(typeReady, nil); err != nil {
		c.handshakeFailed(err)
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return nil
}

// handshakeFailed logs a hello exchange that broke off.
func (c *Conn) handshakeFailed(err error) {
	c.t.log.Warn(fmt.Sprintf("link with node %s (%s) not established: %s", c.peer.ID, addrString(c.peer.Addr), describeRemote(err)),
		"peer", c.peer.ID, "reason", "handshake")
}

// describeRemote explains a read error during the hello exchange; with
// TLS 1.3 a refusal of our certificate by the listener arrives here, as an
// alert, after our side of the TLS handshake has completed.
func describeRemote(err error) string {
	var alert tls.AlertError
	switch {
	case errors.As(err, &alert) || strings.Contains(err.Error(), "remote error"):
		return "the peer refused our certificate (" + err.Error() + ")"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "closed by the peer during the handshake"
	case isTimeout(err):
		return "handshake not finished in time (" + err.Error() + ")"
	}
	return err.Error()
}
