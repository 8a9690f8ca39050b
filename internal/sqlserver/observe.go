package sqlserver

import (
	"time"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/repl"
)

// Observer receives the timings of client statements and commits, for the
// metrics (internal/metrics). Its methods are called from the sessions'
// goroutines, concurrently.
type Observer interface {
	// Statement: a client statement counted in Com_<kind> took d.
	Statement(kind string, d time.Duration)
	// Commit: a writing transaction's commit of kind ("autocommit" or
	// "transaction") took d, journal and semi-synchronous wait included.
	Commit(kind string, d time.Duration)
}

// statementStart is when a statement began, for the Observer; the zero
// time when there is none (no clock read for nothing).
func (s *Server) statementStart() time.Time {
	if s.cfg.Observer == nil {
		return time.Time{}
	}
	return time.Now()
}

// observeStatement reports statement q, counted in the Com_ counter
// named counter ("" for none), that began at start.
func (s *Server) observeStatement(q, counter string, start time.Time) {
	if s.cfg.Observer == nil || start.IsZero() {
		return
	}
	if kind := statementKind(q, counter); kind != "" {
		s.cfg.Observer.Statement(kind, time.Since(start))
	}
}

// commitTimer starts timing a commit that wrote; the function it returns
// reports it. A commit that wrote nothing is not timed.
func (s *Session) commitTimer(wrote, implicit bool) func() {
	if s == nil || s.observer == nil || !wrote {
		return func() {}
	}
	start := time.Now()
	kind := "transaction"
	if implicit {
		kind = "autocommit"
	}
	return func() { s.observer.Commit(kind, time.Since(start)) }
}

// exportedStatus are the MySQL status variables the metrics export beside
// the Miraj_* ones.
var exportedStatus = []string{"Threads_connected", "Connections", "Max_used_connections", "Aborted_connects",
	"Questions", "Slow_queries", "Uptime", "Bytes_received", "Bytes_sent"}

// StatusValues returns the status variables the metrics export: every
// Miraj_* counter SHOW GLOBAL STATUS shows, and exportedStatus.
func (s *Server) StatusValues() []repl.SyncStatusVar {
	out := mirajStatusValues()
	for _, name := range exportedStatus {
		if _, v, ok := sql.StatusVariables.GetGlobal(name); ok {
			out = append(out, repl.SyncStatusVar{Name: name, Value: v})
		}
	}
	return out
}

// ReadOnly reports @@global.read_only.
func (s *Server) ReadOnly() bool { return boolValue(globalValue("read_only")) }
