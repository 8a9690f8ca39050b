package sqlserver

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
)

// TLS on the client port, beneath the connection's other layers.
//
// vitess's listener can switch a connection to TLS itself: it wraps its
// net.Conn, the clientConn, in a tls.Conn. The clientConn would then see
// encrypted bytes, where it picks out the commands vitess does not know
// (admincmd.go), corrects OK packets (okinfo.go), holds writes back and
// counts bytes (clientconn.go). So the listener is told nothing of TLS and
// the clientConn speaks it with the socket under those layers:
//
//  1. The server's greeting, the first packet vitess writes, goes out with
//     CLIENT_SSL set in its capability flags when the server has
//     certificates (the configuration is taken then, for the connection's
//     life).
//  2. A client that wants TLS answers with an SSL request: sequence 1,
//     32 bytes, CLIENT_SSL set. vitess never sees it: the clientConn runs
//     the TLS handshake on the socket, then reads and writes through the
//     TLS connection.
//  3. The client goes on with its handshake response, sequence 2, where
//     vitess, which did not see the request, expects 1. Until the end of
//     authentication (the server's OK or ERR packet), each packet the client
//     sends reaches vitess with its sequence number one lower, and each one
//     vitess writes goes out one higher. At each command both sides count
//     from 0 again: from the first command on nothing is changed.
//
// vitess decides by its own flag whether a connection is encrypted
// (caching_sha2_password takes a clear password only then): loginMethod
// (authorization.go) sets it from the clientConn.
//
// Layouts (MySQL's protocol, connection phase):
//
//	packet header:          [payload length:3 LE] [sequence:1]
//	greeting (HandshakeV10): [0a] [server version] [00] [connection id:4]
//	                         [auth data:8] [00] [capabilities, low 16 bits:2] …
//	SSL request (32 bytes):  [capabilities:4] [max packet:4] [charset:1] [00 × 23]

// connPhase is how far a client connection is, as TLS needs to know. It
// only moves forward.
type connPhase uint8

const (
	phaseGreeting      connPhase = iota // the greeting is not written yet
	phaseFirstResponse                  // the client's first packet is not read yet
	phaseShifted                        // TLS on, authenticating: sequence numbers shifted by one
	phaseCommands                       // bytes pass as they are
)

const (
	// sslRequestSize is the payload size of an SSL request.
	sslRequestSize = 32
	// maxConnPhasePacket bounds a packet of the connection phase, which is
	// read or gathered whole: a handshake response with its connection
	// attributes is a few hundred bytes; MySQL takes attributes up to
	// 64 KiB.
	maxConnPhasePacket = 1 << 20
	// defaultConnectTimeout is MySQL's connect_timeout, the bound of a TLS
	// handshake when the variable cannot be read.
	defaultConnectTimeout = 10 * time.Second
)

// errConnPhase is a connection whose handshake could not be followed.
var errConnPhase = errors.New("sqlserver: client connection phase")

// connTLS is a client connection's TLS and the connection phase it
// follows. Its fields are used from the connection's goroutine only (Read
// and Write), but for state, which SHOW STATUS and logins read.
type connTLS struct {
	server *serverTLS  // nil: the listener offers no TLS, phase starts at phaseCommands
	config *tls.Config // taken at the greeting; nil: TLS not offered
	phase  connPhase
	conn   *tls.Conn // once the handshake is done: reads and writes go through it
	state  atomic.Pointer[tls.ConnectionState]
	in     []byte // a client packet of the connection phase, for the reader
	out    []byte // server bytes of the connection phase, until a packet is whole
	// checked: the client's handshake response was read and checked
	// (handshake.go).
	checked bool
}

// tlsState is the connection's TLS once it is on, or nil.
func (c *clientConn) tlsState() *tls.ConnectionState { return c.tls.state.Load() }

// readWire reads what the client sent, decrypted once TLS is on.
func (c *clientConn) readWire(p []byte) (int, error) {
	if want := c.ln.blocking(); want != c.blocking {
		c.setMode(want)
	}
	var n int
	var err error
	if c.tls.conn != nil {
		n, err = c.tls.conn.Read(p)
	} else {
		n, err = c.sock.Read(p)
	}
	c.received.Add(uint64(n))
	return n, err
}

// writeWire writes p to the client, encrypted once TLS is on, with the
// connection phase's changes (greeting, sequence numbers) until it ends.
func (c *clientConn) writeWire(p []byte) (int, error) {
	t := &c.tls
	if t.phase != phaseGreeting && t.phase != phaseShifted {
		return c.writeRaw(p)
	}
	if len(t.out)+len(p) > 4+maxConnPhasePacket {
		return 0, fmt.Errorf("%w: server packet of more than %d bytes", errConnPhase, maxConnPhasePacket)
	}
	t.out = append(t.out, p...)
	for t.phase == phaseGreeting || t.phase == phaseShifted {
		size := packetSize(t.out)
		if size < 0 || len(t.out) < 4+size {
			return len(p), nil // the rest of the packet comes in the next write
		}
		pkt := t.out[:4+size]
		switch t.phase {
		case phaseGreeting:
			if err := t.offer(pkt); err != nil {
				return 0, err
			}
			t.phase = phaseFirstResponse
		case phaseShifted:
			pkt[3]++
			if size > 0 && (pkt[4] == mysql.OKPacket || pkt[4] == mysql.ErrPacket) {
				t.phase = phaseCommands
			}
		}
		if _, err := c.writeRaw(pkt); err != nil {
			return 0, err
		}
		t.out = t.out[4+size:]
	}
	rest := t.out
	t.out = nil
	if len(rest) > 0 {
		if _, err := c.writeRaw(rest); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (c *clientConn) writeRaw(p []byte) (int, error) {
	if c.tls.conn != nil {
		return c.tls.conn.Write(p)
	}
	return c.sock.Write(p)
}

// offer sets CLIENT_SSL in the greeting pkt when the server has
// certificates now.
func (t *connTLS) offer(pkt []byte) error {
	t.config = t.server.config()
	if t.config == nil {
		return nil
	}
	payload := pkt[4:]
	end := bytes.IndexByte(payload, 0) // the server version's end
	at := end + 1 + 4 + 8 + 1          // connection id, auth data, filler
	if len(payload) == 0 || payload[0] != 10 || end < 0 || len(payload) < at+2 {
		return fmt.Errorf("%w: greeting of %d bytes not in HandshakeV10's layout", errConnPhase, len(payload))
	}
	payload[at+1] |= byte(mysql.CapabilityClientSSL >> 8)
	return nil
}

// readConnPhase hands vitess the client's packets of the connection
// phase, each read whole and changed as the phase needs: an SSL request
// starts TLS and is not handed on.
func (c *clientConn) readConnPhase(p []byte) (int, error) {
	t := &c.tls
	for len(t.in) == 0 {
		pkt, err := c.readPacket()
		if err != nil {
			return 0, err
		}
		switch t.phase {
		case phaseGreeting, phaseFirstResponse:
			if t.config != nil && isSSLRequest(pkt) {
				if err := c.startTLS(); err != nil {
					// Logged by startTLS, once a minute per host; EOF
					// keeps vitess from logging it at each attempt.
					return 0, io.EOF
				}
				t.phase = phaseShifted
				continue
			}
			t.phase = phaseCommands
			if err := c.checkHandshake(pkt); err != nil {
				return 0, err
			}
			if t.server.refusesPlain(c.peer, pkt) {
				// Answered as MySQL answers it, after the handshake
				// response; EOF keeps vitess from logging a broken
				// client.
				if _, err := c.writeRaw(errPacketAt(pkt[3]+1, mysqlerr.ErrInsecureTransport())); err != nil {
					return 0, err
				}
				return 0, io.EOF
			}
		case phaseShifted:
			if err := c.checkHandshake(pkt); err != nil {
				return 0, err
			}
			pkt[3]--
		}
		t.in = pkt
	}
	n := copy(p, t.in)
	if t.in = t.in[n:]; len(t.in) == 0 {
		t.in = nil
	}
	return n, nil
}

// checkHandshake checks the client's handshake response, pkt, the first
// time it is called: one that cannot be read is answered with error 1043
// and the connection ends (io.EOF, which vitess does not log).
func (c *clientConn) checkHandshake(pkt []byte) error {
	t := &c.tls
	if t.checked {
		return nil
	}
	t.checked = true
	err := checkHandshakeResponse(pkt[4:])
	if err == nil {
		return nil
	}
	if t.server != nil {
		t.server.badHandshake(c.peer, err)
	}
	c.writeRaw(errPacketAt(pkt[3]+1, errBadHandshake()))
	return io.EOF
}

// readPacket reads one packet whole, and not a byte more: after an SSL
// request the socket carries the TLS handshake.
func (c *clientConn) readPacket() ([]byte, error) {
	r := readerFunc(c.readWire)
	head := make([]byte, 4, 4+sslRequestSize)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	size := packetSize(head)
	if size > maxConnPhasePacket {
		return nil, fmt.Errorf("%w: client packet of %d bytes", errConnPhase, size)
	}
	pkt := append(head, make([]byte, size)...)
	if _, err := io.ReadFull(r, pkt[4:]); err != nil {
		return nil, err
	}
	return pkt, nil
}

// isSSLRequest reports whether pkt is the client's SSL request.
func isSSLRequest(pkt []byte) bool {
	if packetSize(pkt) != sslRequestSize || pkt[3] != 1 || len(pkt) < 4+sslRequestSize {
		return false
	}
	flags := uint32(pkt[4]) | uint32(pkt[5])<<8 | uint32(pkt[6])<<16 | uint32(pkt[7])<<24
	return flags&mysql.CapabilityClientSSL != 0
}

// startTLS runs the TLS handshake on the socket, within connect_timeout;
// a failure is logged (once a minute per client host).
func (c *clientConn) startTLS() error {
	conn := tls.Server(rawSocket{c}, c.tls.config)
	timeout := c.tls.server.handshakeTimeout()
	var timedOut atomic.Bool
	timer := time.AfterFunc(timeout, func() { timedOut.Store(true); c.Close() })
	err := conn.Handshake()
	timer.Stop()
	if timedOut.Load() {
		err = fmt.Errorf("not done within connect_timeout (%v)", timeout)
	}
	if err != nil {
		c.tls.server.handshakeFailed(c.peer, err)
		return fmt.Errorf("TLS handshake: %w", err)
	}
	st := conn.ConnectionState()
	c.tls.state.Store(&st)
	c.tls.conn = conn
	return nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// rawSocket is the socket under a connection's TLS: whichever c.sock is
// (setMode replaces it, from the connection's goroutine, which is the
// one that reads and writes).
type rawSocket struct{ c *clientConn }

func (r rawSocket) Read(p []byte) (int, error)       { return r.c.sock.Read(p) }
func (r rawSocket) Write(p []byte) (int, error)      { return r.c.sock.Write(p) }
func (r rawSocket) Close() error                     { return r.c.Close() }
func (r rawSocket) LocalAddr() net.Addr              { return r.c.local }
func (r rawSocket) RemoteAddr() net.Addr             { return r.c.peer }
func (r rawSocket) SetDeadline(time.Time) error      { return errNoDeadline }
func (r rawSocket) SetReadDeadline(time.Time) error  { return errNoDeadline }
func (r rawSocket) SetWriteDeadline(time.Time) error { return errNoDeadline }
