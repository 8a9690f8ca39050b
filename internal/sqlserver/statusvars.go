package sqlserver

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/clienttls"
)

// Status counters that go-mysql-server declares but nothing feeds, worked
// out when they are read (SHOW [GLOBAL] STATUS):
//
//   - Uptime and Uptime_since_flush_status: seconds since the server
//     started (the first server of the process), and since the last FLUSH
//     STATUS (flush.go);
//   - Queries: Questions (MySQL's also counts the statements that stored
//     programs run, which are not counted here);
//   - Bytes_received and Bytes_sent: what the client connections read and
//     wrote, MySQL's packets with their headers (before encryption when the
//     connection is encrypted), per session and for the server;
//   - Ssl_version and Ssl_cipher: the session's TLS protocol and cipher
//     (OpenSSL's name), empty on a connection in the clear.

// derivedStatus are the counters worked out when read.
var derivedStatus = map[string]bool{
	"Uptime": true, "Uptime_since_flush_status": true, "Queries": true,
	"Bytes_received": true, "Bytes_sent": true, "Ssl_version": true, "Ssl_cipher": true,
}

var (
	// startedAt (Unix nanoseconds) and the byte counts at that time are
	// where the derived counters start from: the server's start, or the
	// latest reset of the status variables (go-mysql-server resets them
	// when it makes an engine).
	startedAt              atomic.Int64
	baseReceived, baseSent atomic.Uint64
)

// liveStatus wraps go-mysql-server's registry of status variables
// (sql.StatusVariables) so that reads of the global values see the derived
// counters as they are.
type liveStatus struct{ sql.StatusVariableRegistry }

// installLiveStatus records the server's start and wraps the registry
// (Install: once per process).
func installLiveStatus() {
	startedAt.Store(time.Now().UnixNano())
	sql.StatusVariables = liveStatus{sql.StatusVariables}
}

// SetGlobal sets a global status value; setting Uptime or a byte count to
// 0 (go-mysql-server's reset) starts it again from now.
func (r liveStatus) SetGlobal(name string, val interface{}) error {
	if n, ok := val.(int); ok && n == 0 || val == uint64(0) {
		switch name {
		case "Uptime":
			startedAt.Store(time.Now().UnixNano())
		case "Bytes_received":
			received, _ := clientBytes()
			baseReceived.Store(received)
		case "Bytes_sent":
			_, sent := clientBytes()
			baseSent.Store(sent)
		}
	}
	return r.StatusVariableRegistry.SetGlobal(name, val)
}

func (r liveStatus) refresh() {
	started := startedAt.Load()
	r.StatusVariableRegistry.SetGlobal("Uptime", uint64(time.Since(time.Unix(0, started))/time.Second))
	r.StatusVariableRegistry.SetGlobal("Uptime_since_flush_status", uint64(time.Since(time.Unix(0, max(started, flushedAt.Load())))/time.Second))
	if _, q, ok := r.StatusVariableRegistry.GetGlobal("Questions"); ok {
		r.StatusVariableRegistry.SetGlobal("Queries", q)
	}
	received, sent := clientBytes()
	r.StatusVariableRegistry.SetGlobal("Bytes_received", received-min(received, baseReceived.Load()))
	r.StatusVariableRegistry.SetGlobal("Bytes_sent", sent-min(sent, baseSent.Load()))
}

func (r liveStatus) NewGlobalMap() map[string]sql.StatusVarValue {
	r.refresh()
	return r.StatusVariableRegistry.NewGlobalMap()
}

func (r liveStatus) GetGlobal(name string) (sql.StatusVariable, interface{}, bool) {
	if derivedStatus[name] {
		r.refresh()
	}
	return r.StatusVariableRegistry.GetGlobal(name)
}

// GetAllStatusVariables is the session's status (SHOW SESSION STATUS), with
// its derived counters as they are.
func (s *Session) GetAllStatusVariables(ctx *sql.Context) map[string]sql.StatusVarValue {
	s.refreshStatus(ctx)
	return s.BaseSession.GetAllStatusVariables(ctx)
}

// GetStatusVariable is one counter of the session's status.
func (s *Session) GetStatusVariable(ctx *sql.Context, name string) (interface{}, error) {
	if derivedStatus[name] {
		s.refreshStatus(ctx)
	}
	return s.BaseSession.GetStatusVariable(ctx, name)
}

func (s *Session) refreshStatus(ctx *sql.Context) {
	if q, err := s.BaseSession.GetStatusVariable(ctx, "Questions"); err == nil {
		s.BaseSession.SetStatusVariable(ctx, "Queries", q)
	}
	if c := s.client; c != nil {
		s.BaseSession.SetStatusVariable(ctx, "Bytes_received", c.received.Load()-s.flushedReceived)
		s.BaseSession.SetStatusVariable(ctx, "Bytes_sent", c.sent.Load()-s.flushedSent)
		version, cipher := "", ""
		if st := c.tlsState(); st != nil {
			version, cipher = clienttls.VersionName(st.Version), clienttls.CipherName(st.CipherSuite)
		}
		s.BaseSession.SetStatusVariable(ctx, "Ssl_version", version)
		s.BaseSession.SetStatusVariable(ctx, "Ssl_cipher", cipher)
	}
}

// clientOf returns the clientConn of a connection, nil for another kind.
// vitess never wraps it: TLS is the clientConn's (tlsconn.go).
func clientOf(c net.Conn) *clientConn {
	cc, _ := c.(*clientConn)
	return cc
}

// clients holds the open client connections of the process and the bytes
// of those closed, for the global Bytes_received and Bytes_sent.
var clients struct {
	sync.Mutex
	open                       map[*clientConn]struct{}
	closedReceived, closedSent uint64
}

func trackClient(c *clientConn) {
	clients.Lock()
	defer clients.Unlock()
	if clients.open == nil {
		clients.open = map[*clientConn]struct{}{}
	}
	clients.open[c] = struct{}{}
}

func untrackClient(c *clientConn) {
	clients.Lock()
	defer clients.Unlock()
	delete(clients.open, c)
	clients.closedReceived += c.received.Load()
	clients.closedSent += c.sent.Load()
}

// clientBytes returns the bytes read from and written to clients since the
// process started.
func clientBytes() (received, sent uint64) {
	clients.Lock()
	defer clients.Unlock()
	received, sent = clients.closedReceived, clients.closedSent
	for c := range clients.open {
		received += c.received.Load()
		sent += c.sent.Load()
	}
	return received, sent
}

// countingBytes is what a clientConn counts: written by the connection's
// goroutine, read by SHOW STATUS from any.
type countingBytes struct{ received, sent atomic.Uint64 }
