package sqlserver

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// How a client connection waits for its next command.
//
// Go's network poller parks the goroutine: the read finds no data (EAGAIN),
// the goroutine parks, and a thread blocked in epoll_wait wakes it when the
// packet arrives. For a client that sends a statement and waits for the
// answer, that is three system calls and a hand-off between threads per
// statement, where a thread-per-connection server makes one blocking read.
// On loopback this is a third of the CPU a point select costs.
//
// A blocking read has its own cost: the thread keeps its scheduler slot (P)
// while it sleeps in the kernel, until the runtime takes the slot back
// (tens of microseconds to 10 ms later). With more active connections than
// slots, the others wait for that. So a connection reads in blocking mode
// only while few are open, fewer than GOMAXPROCS, which always leaves one
// slot to everything else; past that, all read through the poller. Each
// connection changes mode, if it must, when it next reads, which is between
// commands or within one; the bytes on the socket are the same either way.

// clientListener hands out clientConns and counts the open ones.
type clientListener struct {
	net.Listener
	maxBlocking int64
	open        atomic.Int64
	// mysql: the clients speak MySQL's protocol, and the commands vitess
	// does not know are answered (admincmd.go).
	mysql bool
	// tls: the server's certificates, for the clients of a mysql listener
	// that ask for TLS (tlsconn.go); nil: none is offered.
	tls *serverTLS
}

func newClientListener(l net.Listener, mysql bool, tls *serverTLS) *clientListener {
	return &clientListener{Listener: l, maxBlocking: int64(runtime.GOMAXPROCS(0) - 1), mysql: mysql, tls: tls}
}

func (l *clientListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	for err == nil && l.mysql {
		// Past max_connections and the one more an administrator may
		// have: refused before the handshake (maxconn.go).
		if limit := maxConnections(); limit <= 0 || l.open.Load() <= limit {
			break
		}
		refuseConnection(c)
		c, err = l.Listener.Accept()
	}
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	l.open.Add(1)
	cc := &clientConn{ln: l, local: tc.LocalAddr(), peer: tc.RemoteAddr(), sock: tc}
	cc.tls.phase = phaseCommands
	if l.mysql && l.tls != nil {
		cc.tls.server, cc.tls.phase = l.tls, phaseGreeting
	}
	trackClient(cc)
	return cc, nil
}

// blocking reports whether connections should read in blocking mode now.
func (l *clientListener) blocking() bool { return l.open.Load() <= l.maxBlocking }

// socket is what a clientConn reads and writes through: the accepted
// *net.TCPConn, or an *os.File holding a duplicate of its descriptor, in
// blocking mode (outside the poller) or not (registered with it).
type socket interface {
	io.ReadWriteCloser
	SyscallConn() (syscall.RawConn, error)
}

// clientConn is a client's TCP connection, in the poller or in blocking
// mode. Read, Write and mode changes come from the connection's own
// goroutine, so Read and Write use sock without the lock (only that
// goroutine replaces it); Close may come from any, and takes the lock
// against a mode change. A socket closed under a read or write makes it
// return an error.
type clientConn struct {
	ln          *clientListener
	local, peer net.Addr

	mu       sync.Mutex // held by setMode and Close
	sock     socket
	blocking bool
	closed   bool

	countingBytes             // Bytes_received, Bytes_sent (statusvars.go)
	admin         adminFilter // commands vitess does not know (admincmd.go)
	// idleSince is when Read began to wait for the client (Unix
	// nanoseconds; 0: not waiting); waitTimeout is the session's
	// wait_timeout in seconds (0: the default). waittimeout.go.
	idleSince, waitTimeout atomic.Int64
	okFixes                okInfoFixes // OK packets whose info length Write puts in (okinfo.go)
	tls                    connTLS     // the connection phase and TLS (tlsconn.go)
	// afterWrite, when set, runs once after the next write: SHUTDOWN's
	// stop, once its OK packet is on its way (shutdown.go).
	afterWrite atomic.Pointer[func()]
	// holding: the writes up to the connection's next read are kept in
	// held and sent as one (holdWrites).
	holding bool
	held    []byte
}

// maxHeld bounds the bytes holdWrites keeps back.
const maxHeld = 64 << 10

// holdWrites has the writes up to the connection's next read go out in one
// write(2), when the read begins: vitess writes each packet of a
// COM_STMT_PREPARE response (the statement's OK, a definition per
// parameter and per column, their EOFs) on its own, which costs a system
// call and a wake-up of the client each. Called from the connection's
// goroutine, as Write and Read are.
func (c *clientConn) holdWrites() { c.holding = true }

// sendHeld writes what holdWrites kept and ends the holding.
func (c *clientConn) sendHeld() error {
	c.holding = false
	if len(c.held) == 0 {
		return nil
	}
	_, err := c.writeWire(c.held)
	if cap(c.held) > maxHeld {
		c.held = nil
	} else {
		c.held = c.held[:0]
	}
	return err
}

// readSocket reads what the client sent (Read, admincmd.go, looks at it):
// in the clear, whether the connection is encrypted or not (tlsconn.go).
func (c *clientConn) readSocket(p []byte) (int, error) {
	if c.tls.phase != phaseCommands || len(c.tls.in) > 0 {
		return c.readConnPhase(p)
	}
	return c.readWire(p)
}

func (c *clientConn) Write(p []byte) (int, error) {
	p = c.okFixes.apply(p)
	if c.holding {
		if len(c.held)+len(p) <= maxHeld && c.afterWrite.Load() == nil {
			c.held = append(c.held, p...)
			c.sent.Add(uint64(len(p)))
			return len(p), nil
		}
		if err := c.sendHeld(); err != nil {
			return 0, err
		}
	}
	n, err := c.writeWire(p)
	c.sent.Add(uint64(n))
	if c.afterWrite.Load() != nil {
		if f := c.afterWrite.Swap(nil); f != nil {
			(*f)()
		}
	}
	return n, err
}

// setMode moves the socket into blocking mode or back into the poller. It
// duplicates the descriptor, sets the mode on it (the mode belongs to the
// socket, so the old descriptor has it too, unused from here on) and closes
// the old one, which removes it from the poller if it was there. On error
// the connection stays as it was: both modes work, one is only faster.
func (c *clientConn) setMode(blocking bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	rc, err := c.sock.SyscallConn()
	if err != nil {
		return
	}
	dup := -1
	var opErr error
	if err := rc.Control(func(fd uintptr) {
		if dup, opErr = syscall.Dup(int(fd)); opErr != nil {
			return
		}
		syscall.CloseOnExec(dup)
		if opErr = syscall.SetNonblock(dup, !blocking); opErr != nil {
			syscall.Close(dup)
		}
	}); err != nil || opErr != nil {
		return
	}
	// NewFile registers a non-blocking descriptor with the poller and
	// leaves a blocking one out of it.
	f := os.NewFile(uintptr(dup), "tcp "+c.peer.String())
	old := c.sock
	c.sock, c.blocking = f, blocking
	old.Close()
}

// Close shuts the socket down before closing it: a read blocked in the
// kernel does not return when its descriptor is closed, but does when the
// socket is shut.
func (c *clientConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.ln.open.Add(-1)
	untrackClient(c)
	if c.blocking {
		if rc, err := c.sock.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
		}
	}
	return c.sock.Close()
}

func (c *clientConn) LocalAddr() net.Addr  { return c.local }
func (c *clientConn) RemoteAddr() net.Addr { return c.peer }

// errNoDeadline: nothing on the client port sets deadlines, and a socket in
// blocking mode cannot keep them; a caller that tries learns it did not
// take.
var errNoDeadline = errors.New("client connection: deadlines are not supported")

func (c *clientConn) SetDeadline(time.Time) error      { return errNoDeadline }
func (c *clientConn) SetReadDeadline(time.Time) error  { return errNoDeadline }
func (c *clientConn) SetWriteDeadline(time.Time) error { return errNoDeadline }
