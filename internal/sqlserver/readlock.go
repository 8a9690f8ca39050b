package sqlserver

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// The global read lock: FLUSH TABLES WITH READ LOCK, as backup tools take
// it (mysqldump --lock-all-tables, mydumper) to read every table at one
// point while nothing commits. From the statement's OK until
// the session's UNLOCK TABLES (or its end), no other session writes: a
// statement that writes, or that commits a transaction's writes, waits
// before it starts (gatedStatement, protocol.go's admit), and a commit that
// got past that (an event's) waits at the commit (KILL QUERY ends either
// wait); the holding session's own writes fail with 1223. Several sessions
// may hold it at once, as in MySQL. It is granted once every admitted
// statement has ended.
//
// Reads never wait. The lock covers what writes through SQL sessions
// (statements, events); a secondary's replication applies what its primary
// sends, and account statements (CREATE USER, GRANT) do not wait.

// readLockGate is a server's global read lock and the writes it gates.
type readLockGate struct {
	// active counts the writes between enter and exit; holders the
	// sessions holding the lock. A write adds itself to active, then
	// looks at holders; the lock adds a holder, then waits for active to
	// reach 0: one of the two always sees the other.
	active  atomic.Int64
	holders atomic.Int64

	mu      sync.Mutex
	held    map[uint32]bool
	changed chan struct{} // closed and replaced when a holder goes
	// killed has a channel per waiting connection, closed by KILL QUERY
	// (a statement waits here before it enters the process list).
	killed killSwitches
}

func newReadLockGate() *readLockGate {
	return &readLockGate{held: map[uint32]bool{}, changed: make(chan struct{})}
}

// forgetKill drops a KILL QUERY of connection id kept from before its
// statement began (killSwitches).
func (g *readLockGate) forgetKill(id uint32) { g.killed.forget(&g.mu, id) }

// interrupt ends connection id's wait, if it waits (KILL QUERY).
func (g *readLockGate) interrupt(id uint32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.killed.fire(id)
}

// errReadLocked is MySQL's answer to a write by the session that holds the
// global read lock.
func errReadLocked() error {
	return mysql.NewSQLError(mysql.ERCantUpdateWithReadLock, "HY000", "Can't execute the query because you have a conflicting read lock")
}

// admittedKey marks the context of a statement the gate admitted as it
// began: its commits are part of it and need no admission of their own
// (asking for one while a holder waits for the statement to end would
// never end).
type admittedKey struct{}

// admitted returns ctx marked as a statement's the gate admitted.
func admitted(ctx context.Context) context.Context {
	return context.WithValue(ctx, admittedKey{}, true)
}

// enter admits a write or a commit by session id: at once when no session
// holds the lock, once the holders are gone otherwise. It fails with 1223
// when id holds the lock itself, and with 1317 when ctx ends (KILL QUERY).
// It reports whether it admitted anything: not for a nil gate, nor within
// a statement admitted already (admittedKey); exit ends what it admitted.
func (g *readLockGate) enter(ctx context.Context, id uint32) (bool, error) {
	if g == nil || ctx.Value(admittedKey{}) != nil {
		return false, nil
	}
	for {
		g.active.Add(1)
		if g.holders.Load() == 0 {
			return true, nil
		}
		g.active.Add(-1)
		g.mu.Lock()
		if g.held[id] {
			g.mu.Unlock()
			return false, errReadLocked()
		}
		if len(g.held) == 0 {
			g.mu.Unlock()
			continue
		}
		_, err := g.killed.await(ctx, &g.mu, id, g.changed, nil)
		g.mu.Unlock()
		if err != nil {
			return false, err
		}
	}
}

// killSwitches holds a channel per connection waiting at a gate (the
// global read lock, the table locks), which KILL QUERY closes. The gate's
// mutex guards it.
//
// A KILL QUERY of a connection not waiting yet is kept (a nil channel):
// the process list shows a statement waiting before the statement asks
// the gate, and a kill in between was lost, leaving the statement to
// wait out lock_wait_timeout. A kept kill ends the connection's next wait
// at this gate; each statement forgets those of the statement before
// (forget), as MySQL's KILL QUERY ends only the statement it finds.
type killSwitches struct {
	waits map[uint32]chan struct{}
	kept  atomic.Int32 // kills kept, read without the mutex by forget
}

// fire ends connection id's wait, or keeps the kill for it.
func (killed *killSwitches) fire(id uint32) {
	if killed.waits == nil {
		killed.waits = map[uint32]chan struct{}{}
	}
	k, ok := killed.waits[id]
	switch {
	case ok && k != nil:
		close(k)
		delete(killed.waits, id)
	case !ok:
		killed.waits[id] = nil
		killed.kept.Add(1)
	}
}

// forget drops a kill kept for connection id; mu is the gate's mutex, not
// held.
func (killed *killSwitches) forget(mu *sync.Mutex, id uint32) {
	if killed.kept.Load() == 0 {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if k, ok := killed.waits[id]; ok && k == nil {
		delete(killed.waits, id)
		killed.kept.Add(-1)
	}
}

// await waits, mu held (and held again on return), until ch is closed,
// ctx ends or KILL QUERY of connection id fires (both 1317), or timeout
// fires (nil: none), which it reports. A kill that fires once ch has
// woken the wait, before it has mu back, still ends it: the caller would
// otherwise wait again, with the kill spent.
func (killed *killSwitches) await(ctx context.Context, mu *sync.Mutex, id uint32, ch <-chan struct{}, timeout <-chan time.Time) (bool, error) {
	if killed.waits == nil {
		killed.waits = map[uint32]chan struct{}{}
	}
	if k, ok := killed.waits[id]; ok && k == nil {
		delete(killed.waits, id) // killed before it waited
		killed.kept.Add(-1)
		return false, errInterrupted()
	}
	kill := make(chan struct{})
	killed.waits[id] = kill
	mu.Unlock()
	var err error
	timedOut := false
	select {
	case <-ch:
	case <-kill:
		err = errInterrupted()
	case <-ctx.Done():
		err = errInterrupted()
	case <-timeout:
		timedOut = true
	}
	mu.Lock()
	if killed.waits[id] == kill {
		delete(killed.waits, id)
	}
	select {
	case <-kill: // fired meanwhile (fire closes it under mu)
		return false, errInterrupted()
	default:
	}
	return timedOut, err
}

// errInterrupted is MySQL's answer to a statement whose wait KILL QUERY
// ended.
func errInterrupted() error {
	return mysql.NewSQLError(mysql.ERQueryInterrupted, "70100", "Query execution was interrupted")
}

// exit ends what enter admitted.
func (g *readLockGate) exit() { g.active.Add(-1) }

// heldBy reports whether session id holds the lock.
func (g *readLockGate) heldBy(id uint32) bool {
	if g.holders.Load() == 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held[id]
}

// gatedStatement reports whether text statement q of session s (nil before
// its first statement) waits for the global read lock as it begins: a
// statement that writes (DML, DDL, CALL, EXECUTE), and one that commits
// the session's transaction of writes (COMMIT, BEGIN, SET autocommit, LOCK
// TABLES), as MySQL's wait before they start. Reads never wait.
func gatedStatement(q string, s *Session) bool {
	w := sqltext.NewReader(q)
	switch first := w.Next(); {
	case sqltext.IsKeyword(first, "INSERT"), sqltext.IsKeyword(first, "UPDATE"), sqltext.IsKeyword(first, "DELETE"),
		sqltext.IsKeyword(first, "REPLACE"), sqltext.IsKeyword(first, "LOAD"), sqltext.IsKeyword(first, "CREATE"),
		sqltext.IsKeyword(first, "DROP"), sqltext.IsKeyword(first, "ALTER"), sqltext.IsKeyword(first, "RENAME"),
		sqltext.IsKeyword(first, "TRUNCATE"), sqltext.IsKeyword(first, "CALL"), sqltext.IsKeyword(first, "EXECUTE"):
		return true
	case sqltext.IsKeyword(first, "COMMIT"), sqltext.IsKeyword(first, "BEGIN"), sqltext.IsKeyword(first, "START"),
		sqltext.IsKeyword(first, "LOCK"), sqltext.IsKeyword(first, "SET") && strings.Contains(strings.ToLower(q), "autocommit"):
		return s != nil && s.txn != nil && s.txn.wrote()
	}
	return false
}

// lock takes the global read lock for session id, once the commits in
// progress have ended (new ones wait from the start of the call).
func (g *readLockGate) lock(ctx context.Context, id uint32) error {
	g.mu.Lock()
	if g.held[id] {
		g.mu.Unlock()
		return nil
	}
	g.held[id] = true
	g.holders.Add(1)
	g.mu.Unlock()
	for g.active.Load() > 0 {
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			g.unlock(id)
			return errInterrupted()
		}
	}
	return nil
}

// unlock gives session id's lock back, if it holds it.
func (g *readLockGate) unlock(id uint32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.held[id] {
		return
	}
	delete(g.held, id)
	g.holders.Add(-1)
	close(g.changed)
	g.changed = make(chan struct{})
}

var (
	// flushReadLockRE matches FLUSH TABLES WITH READ LOCK at the start of a
	// text, with or without a list of tables (the lock is taken for all of
	// them) and the binary log options, up to its ';' or the end.
	flushReadLockRE = regexp.MustCompile(`(?is)^flush\s+(?:(?:local|no_write_to_binlog)\s+)?tables?\b[^;]*?\bwith\s+read\s+lock\s*(?:;|$)`)
	// unlockTablesRE matches UNLOCK TABLES at the start of a text.
	unlockTablesRE = regexp.MustCompile(`(?is)^unlock\s+tables?\s*(?:;|$)`)
)

// readLockCommand finds FLUSH TABLES WITH READ LOCK or UNLOCK TABLES at
// the start of text q (after white space and comments). It returns which
// (lock, unlock) and the length of q up to the statement's end (its ';'
// included). LOCK TABLES is tablelock.go's.
func readLockCommand(q string) (lock, unlock bool, end int) {
	w := sqltext.NewReader(q)
	w.SkipSpace()
	body := w.Rest
	first := w.Next()
	var re *regexp.Regexp
	switch {
	case sqltext.IsKeyword(first, "FLUSH"):
		re = flushReadLockRE
	case sqltext.IsKeyword(first, "UNLOCK"):
		re = unlockTablesRE
	default:
		return false, false, 0
	}
	m := re.FindStringIndex(body)
	if m == nil {
		return false, false, 0
	}
	return re != unlockTablesRE, re == unlockTablesRE, len(q) - len(body) + m[1]
}
