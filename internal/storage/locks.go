package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/btree"
)

// Row locks: what SELECT … FOR UPDATE / FOR SHARE and writes take so that a
// conflicting locking read or write waits, as InnoDB's record locks do.
// They live in memory only: never journaled, never replicated, gone with
// the process (a restart has no open transaction to protect).
//
// A lock belongs to a LockOwner, one per SQL transaction (which may span
// databases: one wait-for graph covers them all). Locks are held until the
// owner is released, at the transaction's end. Deadlocks between waiters
// are found when a wait begins: the wait-for graph is searched from the new
// waiter, and the youngest owner of a cycle (the one whose transaction
// began last) gets ErrDeadlock at once.

// LockMode is a row lock's kind; a holder's locks on a row are a set of
// them (bits).
type LockMode uint8

const (
	// LockShared (FOR SHARE, LOCK IN SHARE MODE): granted with other
	// shared locks; waits for writers and exclusive locks.
	LockShared LockMode = 1 << iota
	// LockWrite is what UPDATE and DELETE take on a row they write. Two
	// writers do not wait for each other: between plain writes the first
	// to commit wins and the other gets ErrConflict at commit, as before
	// locks existed. A writer waits for locking reads of the row, and they
	// wait for it, so a row read under lock has no write pending by
	// another transaction and cannot change until the lock goes.
	LockWrite
	// LockExclusive (FOR UPDATE): every other lock waits.
	LockExclusive
)

// covers reports whether holding held makes a request for m granted already.
func (held LockMode) covers(m LockMode) bool {
	return held&LockExclusive != 0 || held&m == m
}

// LockWait says what a lock request does when the row is locked by another
// transaction.
type LockWait uint8

const (
	// WaitBlock waits up to the timeout.
	WaitBlock LockWait = iota
	// WaitNoWait fails at once with ErrLockNoWait.
	WaitNoWait
	// WaitSkipLocked reports the row as not locked, at once (SKIP LOCKED).
	WaitSkipLocked
)

// LockRequest is how to lock: mode, what to do when the row is taken, and
// how long to wait (WaitBlock).
type LockRequest struct {
	Mode    LockMode
	Wait    LockWait
	Timeout time.Duration
}

// MaxLockWait bounds every lock wait whatever the request says: MySQL's
// largest innodb_lock_wait_timeout (1073741824 s) is too long to hold a
// goroutine for; a day is longer than any transaction we expect to serve.
const MaxLockWait = 24 * time.Hour

// MaxLocksPerOwner bounds the rows one transaction may lock (about 100
// bytes each): a locking read of a huge table fails with ErrTooManyLocks
// instead of exhausting memory, as InnoDB's lock table does (1206).
const MaxLocksPerOwner = 8 << 20

var (
	// ErrLockTimeout: the lock was not granted within the request's
	// timeout (MySQL 1205). The statement fails; the transaction and its
	// locks stay.
	ErrLockTimeout = errors.New("storage: lock wait timeout exceeded")
	// ErrLockNoWait: the row is locked and the request said NOWAIT (MySQL 3572).
	ErrLockNoWait = errors.New("storage: row locked by another transaction and NOWAIT is set")
	// ErrDeadlock: waiting would close a cycle of waiters, and this
	// transaction is the youngest of the cycle (MySQL 1213). The whole
	// transaction must be rolled back.
	ErrDeadlock = errors.New("storage: deadlock found when trying to get lock")
	// ErrTooManyLocks: the transaction holds MaxLocksPerOwner locks
	// already (MySQL 1206).
	ErrTooManyLocks = errors.New("storage: the transaction holds too many row locks")
)

// lockManager holds every row lock of an engine.
type lockManager struct {
	mu struct {
		sync.Mutex
		tables map[lockTableKey]*lockTable
		// probe is the search key of entryLocked, kept here so that a
		// lookup allocates nothing.
		probe lockEntry
	}
	// ownerSeq numbers owners in the order they are made: the larger, the
	// younger.
	ownerSeq atomic.Uint64
	// after is the clock of lock waits (time.After unless a test sets it).
	after func(time.Duration) <-chan time.Time
	// maxHeld is MaxLocksPerOwner (lowered by tests).
	maxHeld int
}

// lockTableKey names the locks of one table. The shape is part of the key:
// the entries are ordered by its comparators, and a table redefined since
// has other ones (the transactions that locked the old one will conflict at
// commit anyway, as its definition changed).
type lockTableKey struct {
	db    *DB
	table string // lower-case
	shape *shape
}

type lockTable struct {
	rows *btree.BTreeG[*lockEntry]
}

// lockEntry is one locked row: its holders and the requests waiting for it.
// Invariant: an entry with no holder and no waiter is removed.
type lockEntry struct {
	tk  lockTableKey
	key *Row // key columns (or row number)
	// holders are the owners holding the row, each once, with their
	// modes. Mostly one: it lives in one, without an allocation of its own
	// (a statement that writes a million rows locks a million).
	holders []lockHold
	one     [1]lockHold
	queue   []*lockWaiter // FIFO
}

type lockHold struct {
	owner *LockOwner
	mode  LockMode
}

// holding returns the modes o holds on e, and whether it holds any.
func (e *lockEntry) holding(o *LockOwner) (LockMode, bool) {
	for _, h := range e.holders {
		if h.owner == o {
			return h.mode, true
		}
	}
	return 0, false
}

// unhold removes o from e's holders.
func (e *lockEntry) unhold(o *LockOwner) {
	for i, h := range e.holders {
		if h.owner == o {
			e.holders = append(e.holders[:i], e.holders[i+1:]...)
			return
		}
	}
}

type lockWaiter struct {
	owner   *LockOwner
	entry   *lockEntry
	mode    LockMode
	ch      chan struct{} // closed when granted or refused
	granted bool
	err     error     // set when refused (ErrDeadlock)
	since   time.Time // when the wait began
}

// LockOwner holds the row locks of one transaction. It is used by one
// goroutine at a time, like the transaction.
type LockOwner struct {
	m   *lockManager
	seq uint64
	// held and waiting are guarded by m.mu.
	held    []*lockEntry
	waiting *lockWaiter
	// onWait, if set, is called by the owner's goroutine when a request
	// of its starts to wait (SetOnWait).
	onWait func()
}

// SetOnWait makes f be called, on the requesting goroutine and without
// the lock manager's mutex, each time a lock request of o starts to wait:
// what a statement that runs without a transaction of its session does to
// show itself as waiting. Set it before o's first request.
func (o *LockOwner) SetOnWait(f func()) { o.onWait = f }

func newLockManager() *lockManager {
	m := &lockManager{after: time.After, maxHeld: MaxLocksPerOwner}
	m.mu.tables = map[lockTableKey]*lockTable{}
	return m
}

// NewLockOwner returns the owner of a new transaction's row locks. Owners
// made later are younger.
func (e *Engine) NewLockOwner() *LockOwner { return e.locks.newOwner() }

func (m *lockManager) newOwner() *LockOwner {
	return &LockOwner{m: m, seq: m.ownerSeq.Add(1)}
}

// Held returns the number of rows the owner has locked.
func (o *LockOwner) Held() int {
	if o == nil {
		return 0
	}
	o.m.mu.Lock()
	defer o.m.mu.Unlock()
	return len(o.held)
}

// WaitingSince reports whether the owner waits for a row lock, and since
// when.
func (o *LockOwner) WaitingSince() (time.Time, bool) {
	if o == nil {
		return time.Time{}, false
	}
	o.m.mu.Lock()
	defer o.m.mu.Unlock()
	if o.waiting == nil {
		return time.Time{}, false
	}
	return o.waiting.since, true
}

// Release gives up every lock of the owner: waiters that can go are
// granted. Called at the transaction's end (commit, rollback, connection
// closed), after a commit is published, so that they read it.
func (o *LockOwner) Release() {
	if o == nil {
		return
	}
	m := o.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := o.waiting; w != nil {
		// Not expected (a wait ends before its transaction does), but
		// a waiter left behind would block its row forever.
		m.dequeueLocked(w)
		o.waiting = nil
	}
	for _, e := range o.held {
		e.unhold(o)
		m.grantLocked(e)
		m.dropIfIdleLocked(e)
	}
	o.held = nil
}

// compatible reports whether a holder's locks held let another owner have m.
func compatible(held, m LockMode) bool {
	switch m {
	case LockShared:
		return held&(LockWrite|LockExclusive) == 0
	case LockWrite:
		return held&(LockShared|LockExclusive) == 0
	}
	return held == 0
}

// grantableLocked reports whether owner may hold mode on e given its holders.
func grantableLocked(e *lockEntry, owner *LockOwner, mode LockMode) bool {
	for _, h := range e.holders {
		if h.owner != owner && !compatible(h.mode, mode) {
			return false
		}
	}
	return true
}

func (m *lockManager) entryLocked(tk lockTableKey, key *Row) *lockEntry {
	lt, ok := m.mu.tables[tk]
	if !ok {
		s := tk.shape
		lt = &lockTable{rows: btree.NewBTreeGOptions(func(a, b *lockEntry) bool { return s.comparePrimary(a.key, b.key) < 0 }, btreeOpts)}
		m.mu.tables[tk] = lt
	}
	m.mu.probe.key = key
	e, ok := lt.rows.Get(&m.mu.probe)
	m.mu.probe.key = nil
	if ok {
		return e
	}
	e = &lockEntry{tk: tk, key: key}
	e.holders = e.one[:0]
	lt.rows.Set(e)
	return e
}

func (m *lockManager) dropIfIdleLocked(e *lockEntry) {
	if len(e.holders) > 0 || len(e.queue) > 0 {
		return
	}
	lt := m.mu.tables[e.tk]
	if lt == nil {
		return
	}
	lt.rows.Delete(e)
	if lt.rows.Len() == 0 {
		delete(m.mu.tables, e.tk)
	}
}

func (m *lockManager) holdLocked(e *lockEntry, o *LockOwner, mode LockMode) {
	for i := range e.holders {
		if e.holders[i].owner == o {
			e.holders[i].mode |= mode
			return
		}
	}
	e.holders = append(e.holders, lockHold{owner: o, mode: mode})
	o.held = append(o.held, e)
}

// grantLocked grants the waiters at the head of e's queue that can go, in
// order; the first that cannot stops the others (no overtaking, so an
// exclusive request is not starved by a stream of shared ones).
func (m *lockManager) grantLocked(e *lockEntry) {
	for len(e.queue) > 0 {
		w := e.queue[0]
		if !grantableLocked(e, w.owner, w.mode) {
			return
		}
		e.queue = e.queue[1:]
		m.holdLocked(e, w.owner, w.mode)
		w.granted = true
		w.owner.waiting = nil
		close(w.ch)
	}
}

func (m *lockManager) dequeueLocked(w *lockWaiter) {
	e := w.entry
	for i, x := range e.queue {
		if x == w {
			e.queue = append(e.queue[:i:i], e.queue[i+1:]...)
			break
		}
	}
	// Those behind it may go now.
	m.grantLocked(e)
	m.dropIfIdleLocked(e)
}

// blockersLocked returns the owners w waits for: the holders it is not
// compatible with and the incompatible waiters ahead of it.
func blockersLocked(w *lockWaiter) []*LockOwner {
	var out []*LockOwner
	e := w.entry
	for _, h := range e.holders {
		if h.owner != w.owner && !compatible(h.mode, w.mode) {
			out = append(out, h.owner)
		}
	}
	for _, x := range e.queue {
		if x == w {
			break
		}
		if x.owner != w.owner && !(compatible(x.mode, w.mode) && compatible(w.mode, x.mode)) {
			out = append(out, x.owner)
		}
	}
	return out
}

// cycleLocked returns the owners of a wait-for cycle through start, if
// there is one (depth-first search; every owner waits for one row at most).
func cycleLocked(start *LockOwner) []*LockOwner {
	visited := map[*LockOwner]bool{}
	var path []*LockOwner
	var dfs func(o *LockOwner) bool
	dfs = func(o *LockOwner) bool {
		if o.waiting == nil {
			return false
		}
		path = append(path, o)
		for _, b := range blockersLocked(o.waiting) {
			if b == start {
				return true
			}
			if visited[b] {
				continue
			}
			visited[b] = true
			if dfs(b) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	visited[start] = true
	if dfs(start) {
		return path
	}
	return nil
}

// acquire locks key of table tk for o. It reports false without error when
// the row is locked by another and the request says SKIP LOCKED.
func (m *lockManager) acquire(ctx context.Context, o *LockOwner, tk lockTableKey, key *Row, req LockRequest) (bool, error) {
	if req.Mode != LockShared && req.Mode != LockWrite && req.Mode != LockExclusive {
		panic(fmt.Sprintf("storage: lock request of mode %d", req.Mode))
	}
	m.mu.Lock()
	e := m.entryLocked(tk, key)
	if cur, ok := e.holding(o); ok && cur.covers(req.Mode) {
		m.mu.Unlock()
		return true, nil
	}
	_, holds := e.holding(o)
	if !holds && len(o.held) >= m.maxHeld {
		m.dropIfIdleLocked(e)
		m.mu.Unlock()
		return false, ErrTooManyLocks
	}
	// A new request waits behind queued ones, except an owner that holds
	// the row already (an upgrade from shared): queueing it behind a
	// request that waits for it would deadlock needlessly.
	if grantableLocked(e, o, req.Mode) && (len(e.queue) == 0 || holds) {
		m.holdLocked(e, o, req.Mode)
		m.mu.Unlock()
		return true, nil
	}
	switch req.Wait {
	case WaitSkipLocked:
		m.dropIfIdleLocked(e)
		m.mu.Unlock()
		return false, nil
	case WaitNoWait:
		m.dropIfIdleLocked(e)
		m.mu.Unlock()
		return false, ErrLockNoWait
	}
	w := &lockWaiter{owner: o, entry: e, mode: req.Mode, ch: make(chan struct{}), since: time.Now()}
	if holds {
		// An upgrade goes first among the waiters.
		e.queue = append([]*lockWaiter{w}, e.queue...)
	} else {
		e.queue = append(e.queue, w)
	}
	o.waiting = w
	for {
		cycle := cycleLocked(o)
		if cycle == nil {
			break
		}
		victim := cycle[0]
		for _, c := range cycle[1:] {
			if c.seq > victim.seq {
				victim = c
			}
		}
		vw := victim.waiting
		victim.waiting = nil
		vw.err = ErrDeadlock
		m.dequeueLocked(vw)
		close(vw.ch)
		if victim == o {
			m.mu.Unlock()
			return false, ErrDeadlock
		}
	}
	m.mu.Unlock()
	if o.onWait != nil {
		o.onWait()
	}

	var why error
	select {
	case <-w.ch:
	case <-m.after(min(req.Timeout, MaxLockWait)):
		why = ErrLockTimeout
	case <-ctx.Done():
		why = ctx.Err()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case w.granted:
		return true, nil
	case w.err != nil:
		return false, w.err
	}
	o.waiting = nil
	m.dequeueLocked(w)
	return false, why
}

// lockKey returns the key under which row r of t is locked: its primary
// key columns, or its row number.
func lockKey(t *Table, r *Row) *Row {
	if len(t.shape.def.PK) == 0 {
		return &Row{ID: r.ID}
	}
	return r.keyCopy()
}
