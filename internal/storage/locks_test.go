package storage

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitTimeout bounds the polls of these tests (never reached when they pass).
const waitTimeout = 10 * time.Second

var (
	forUpdate = LockRequest{Mode: LockExclusive, Timeout: waitTimeout}
	forShare  = LockRequest{Mode: LockShared, Timeout: waitTimeout}
)

// waiters counts the lock requests waiting in e.
func (m *lockManager) waiters() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, lt := range m.mu.tables {
		lt.rows.Scan(func(e *lockEntry) bool { n += len(e.queue); return true })
	}
	return n
}

// entries counts the rows with a lock entry in e.
func (m *lockManager) entries() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, lt := range m.mu.tables {
		n += lt.rows.Len()
	}
	return n
}

// awaitWaiters polls until n requests wait.
func awaitWaiters(t *testing.T, e *Engine, n int) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for e.locks.waiters() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d lock requests waiting, want %d", e.locks.waiters(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// lockID takes a lock on the users row with that id through a locking read.
func lockID(tx *Tx, id int64, req LockRequest) (*Row, bool, error) {
	lt, err := tx.LatestTable("users")
	if err != nil {
		return nil, false, err
	}
	r, ok := lt.Get(KeyRow([]any{id, nil, nil}))
	if !ok {
		return nil, false, nil
	}
	return tx.LockRow(context.Background(), "users", r, req)
}

type lockResult struct {
	row *Row
	ok  bool
	err error
}

func goLock(tx *Tx, id int64, req LockRequest) chan lockResult {
	ch := make(chan lockResult, 1)
	go func() {
		r, ok, err := lockID(tx, id, req)
		ch <- lockResult{r, ok, err}
	}()
	return ch
}

func mustLock(t *testing.T, tx *Tx, id int64, req LockRequest) *Row {
	t.Helper()
	r, ok, err := lockID(tx, id, req)
	if err != nil || !ok {
		t.Fatalf("lock of row %d: %v %v", id, ok, err)
	}
	return r
}

// A locking read waits for the holder's commit, then reads the row the
// holder committed; its own update of that row then commits without a
// conflict although its snapshot is older.
func TestLockWaitReadsLatestAndUpdateCommits(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)

	a, b := db.Begin(), db.Begin()
	_ = b.Catalog() // b's snapshot: age 20
	mustLock(t, a, 1, forUpdate)
	got := goLock(b, 1, forUpdate)
	awaitWaiters(t, e, 1)
	if err := a.Update("users", []any{int64(1), "ann", int64(20)}, []any{int64(1), "ann", int64(21)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, a)
	res := <-got
	if res.err != nil || !res.ok {
		t.Fatalf("waiter: %v %v", res.ok, res.err)
	}
	if age := res.row.Value(2); age != int64(21) {
		t.Fatalf("the locking read saw age %v, want the committed 21", age)
	}
	// b's view now holds the locked version: a plain read of it agrees.
	if r, _ := b.Catalog().tables.must("users").Get(KeyRow([]any{int64(1), nil, nil})); r.Value(2) != int64(21) {
		t.Fatalf("b's view of the locked row: age %v", r.Value(2))
	}
	if err := b.Update("users", res.row.Values(), []any{int64(1), "ann", int64(22)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(context.Background()); err != nil {
		t.Fatalf("update of a row read under lock: %v", err)
	}
	r, _ := db.Snapshot().tables.must("users").Get(KeyRow([]any{int64(1), nil, nil}))
	if r.Value(2) != int64(22) {
		t.Fatalf("committed age %v, want 22", r.Value(2))
	}
	if n := e.locks.entries(); n != 0 {
		t.Fatalf("%d lock entries left after both ended", n)
	}
}

func TestLockTimeoutNoWaitSkipLocked(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)

	a, b := db.Begin(), db.Begin()
	mustLock(t, a, 1, forUpdate)

	// The wait's clock: its timeout has passed as soon as it is asked.
	var asked time.Duration
	e.locks.after = func(d time.Duration) <-chan time.Time {
		asked = d
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}
	_, _, err := lockID(b, 1, LockRequest{Mode: LockExclusive, Timeout: 7 * time.Second})
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("wait past the timeout: %v, want ErrLockTimeout", err)
	}
	if asked != 7*time.Second {
		t.Fatalf("waited on a timer of %v, want the request's 7s", asked)
	}
	e.locks.after = time.After
	_, _, err = lockID(b, 1, LockRequest{Mode: LockShared, Wait: WaitNoWait})
	if !errors.Is(err, ErrLockNoWait) {
		t.Fatalf("NOWAIT: %v, want ErrLockNoWait", err)
	}
	r, ok, err := lockID(b, 1, LockRequest{Mode: LockExclusive, Wait: WaitSkipLocked})
	if err != nil || ok || r != nil {
		t.Fatalf("SKIP LOCKED of a locked row: %v %v %v", r, ok, err)
	}
	// Another row is free; the timeout left b usable, its locks kept.
	mustLock(t, b, 2, LockRequest{Mode: LockExclusive, Wait: WaitSkipLocked})
	if n := e.locks.waiters(); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
	a.Rollback()
	mustLock(t, b, 1, LockRequest{Mode: LockExclusive, Wait: WaitNoWait})
	if n := b.locks.Held(); n != 2 {
		t.Fatalf("b holds %d locks, want 2", n)
	}
	b.Rollback()
	if n := e.locks.entries(); n != 0 {
		t.Fatalf("%d lock entries left", n)
	}
}

func TestLockReleasedAtRollbackAndCommit(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	for _, end := range []string{"rollback", "commit"} {
		a, b := db.Begin(), db.Begin()
		mustLock(t, a, 3, forUpdate)
		got := goLock(b, 3, forUpdate)
		awaitWaiters(t, e, 1)
		if end == "rollback" {
			a.Rollback()
		} else {
			mustCommit(t, a) // nothing written: the locks go all the same
		}
		if res := <-got; res.err != nil || !res.ok {
			t.Fatalf("%s: waiter got %v %v", end, res.ok, res.err)
		}
		b.Rollback()
	}
}

// WaitingSince tells another goroutine that an owner waits, and since when,
// until its wait ends (information_schema.INNODB_TRX reads it).
func TestWaitingSince(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	a, b := db.Begin(), db.Begin()
	mustLock(t, a, 3, forUpdate)
	if _, waiting := a.locks.WaitingSince(); waiting {
		t.Fatal("the holder reported waiting")
	}
	before := time.Now()
	got := goLock(b, 3, forUpdate)
	awaitWaiters(t, e, 1)
	since, waiting := b.locks.WaitingSince()
	if !waiting || since.Before(before) || since.After(time.Now()) {
		t.Fatalf("the waiter: waiting %v since %v (asked at %v)", waiting, since, before)
	}
	a.Rollback()
	if res := <-got; res.err != nil || !res.ok {
		t.Fatalf("waiter got %v %v", res.ok, res.err)
	}
	if _, waiting := b.locks.WaitingSince(); waiting {
		t.Fatal("the waiter still reported waiting once granted")
	}
	b.Rollback()
	var none *LockOwner
	if _, waiting := none.WaitingSince(); waiting {
		t.Fatal("a nil owner reported waiting")
	}
}

// Shared locks are granted together; an exclusive request waits for all of
// them; a sole shared holder upgrades at once.
func TestSharedLocks(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	a, b, c := db.Begin(), db.Begin(), db.Begin()
	mustLock(t, a, 1, forShare)
	mustLock(t, b, 1, forShare)
	got := goLock(c, 1, forUpdate)
	awaitWaiters(t, e, 1)
	a.Rollback()
	awaitWaiters(t, e, 1)
	b.Rollback()
	if res := <-got; res.err != nil || !res.ok {
		t.Fatalf("exclusive after the shared ones: %v %v", res.ok, res.err)
	}
	c.Rollback()

	d := db.Begin()
	mustLock(t, d, 2, forShare)
	mustLock(t, d, 2, LockRequest{Mode: LockExclusive, Wait: WaitNoWait})
	other := db.Begin()
	if _, _, err := lockID(other, 2, LockRequest{Mode: LockShared, Wait: WaitNoWait}); !errors.Is(err, ErrLockNoWait) {
		t.Fatalf("shared request against an upgraded lock: %v", err)
	}
	d.Rollback()
	other.Rollback()
}

// A deadlock is found when the wait that closes the cycle begins, and the
// younger transaction (begun later) is the one refused, whether it is the
// one asking or one already waiting.
func TestDeadlockPicksYounger(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)

	t.Run("younger asks last", func(t *testing.T) {
		older, younger := db.Begin(), db.Begin()
		mustLock(t, older, 1, forUpdate)
		mustLock(t, younger, 2, forUpdate)
		got := goLock(older, 2, forUpdate)
		awaitWaiters(t, e, 1)
		if _, _, err := lockID(younger, 1, forUpdate); !errors.Is(err, ErrDeadlock) {
			t.Fatalf("younger closing the cycle: %v, want ErrDeadlock", err)
		}
		younger.Rollback()
		if res := <-got; res.err != nil || !res.ok {
			t.Fatalf("older after the victim's rollback: %v %v", res.ok, res.err)
		}
		older.Rollback()
	})
	t.Run("older asks last", func(t *testing.T) {
		older, younger := db.Begin(), db.Begin()
		mustLock(t, older, 1, forUpdate)
		mustLock(t, younger, 2, forUpdate)
		victim := goLock(younger, 1, forUpdate)
		awaitWaiters(t, e, 1)
		got := goLock(older, 2, forUpdate)
		res := <-victim
		if !errors.Is(res.err, ErrDeadlock) {
			t.Fatalf("younger waiter: %v %v, want ErrDeadlock", res.ok, res.err)
		}
		younger.Rollback()
		if res := <-got; res.err != nil || !res.ok {
			t.Fatalf("older after the victim's rollback: %v %v", res.ok, res.err)
		}
		older.Rollback()
	})
	t.Run("three transactions", func(t *testing.T) {
		t1, t2, t3 := db.Begin(), db.Begin(), db.Begin()
		mustLock(t, t1, 1, forUpdate)
		mustLock(t, t2, 2, forUpdate)
		mustLock(t, t3, 3, forUpdate)
		w1 := goLock(t1, 2, forUpdate) // t1 → t2
		awaitWaiters(t, e, 1)
		w3 := goLock(t3, 1, forUpdate) // t3 → t1
		awaitWaiters(t, e, 2)
		w2 := goLock(t2, 3, forUpdate) // t2 → t3: the cycle; t3 is youngest
		res := <-w3
		if !errors.Is(res.err, ErrDeadlock) {
			t.Fatalf("t3: %v %v, want ErrDeadlock", res.ok, res.err)
		}
		t3.Rollback()
		if res := <-w2; res.err != nil || !res.ok {
			t.Fatalf("t2: %v %v", res.ok, res.err)
		}
		t2.Rollback()
		if res := <-w1; res.err != nil || !res.ok {
			t.Fatalf("t1: %v %v", res.ok, res.err)
		}
		t1.Rollback()
	})
	if n := e.locks.entries(); n != 0 {
		t.Fatalf("%d lock entries left", n)
	}
}

// A plain write waits for a row locked by another transaction; once it
// gets the lock, a write based on an older snapshot still loses at commit
// (first committer wins).
func TestWriteWaitsForLockThenConflicts(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	a, b := db.Begin(), db.Begin()
	_ = b.Catalog()
	mustLock(t, a, 2, forUpdate)
	done := make(chan error, 1)
	go func() {
		done <- b.LockForWrite(context.Background(), "users", []any{int64(2), "bob", int64(21)}, waitTimeout)
	}()
	awaitWaiters(t, e, 1)
	if err := a.Update("users", []any{int64(2), "bob", int64(21)}, []any{int64(2), "bob", int64(30)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, a)
	if err := <-done; err != nil {
		t.Fatalf("write lock after the holder's commit: %v", err)
	}
	if err := b.Update("users", []any{int64(2), "bob", int64(21)}, []any{int64(2), "bob", int64(40)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale write: %v, want ErrConflict", err)
	}
	// A locking read waits for a writer's lock too.
	c, d := db.Begin(), db.Begin()
	if err := c.LockForWrite(context.Background(), "users", []any{int64(2), "bob", int64(30)}, waitTimeout); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("users", []any{int64(2), "bob", int64(30)}); err != nil {
		t.Fatal(err)
	}
	got := goLock(d, 2, forShare)
	awaitWaiters(t, e, 1)
	mustCommit(t, c)
	if res := <-got; res.err != nil || res.ok {
		t.Fatalf("locking read of a row deleted while it waited: %v %v, want skipped", res.ok, res.err)
	}
	d.Rollback()
}

// A locking read sees the transaction's own writes on the latest version,
// and a rollback to a savepoint keeps the rows read under lock.
func TestLockingReadOwnWritesAndSavepoint(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	a := db.Begin()
	_ = a.Catalog()
	other := db.Begin()
	if _, err := other.Insert("users", []any{int64(9), "zed", int64(50)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, other)
	if _, err := a.Insert("users", []any{int64(7), "eve", int64(40)}); err != nil {
		t.Fatal(err)
	}
	sp := a.Savepoint()
	lt, err := a.LatestTable("users")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, lt); got != "1 ann 20;2 bob 21;3 cid 22;7 eve 40;9 zed 50" {
		t.Fatalf("latest with own writes: %s", got)
	}
	mustLock(t, a, 9, forUpdate)
	mustLock(t, a, 7, forUpdate)
	if got := names(t, a.Catalog().tables.must("users")); got != "1 ann 20;2 bob 21;3 cid 22;7 eve 40;9 zed 50" {
		t.Fatalf("view after the locking read: %s", got)
	}
	a.RollbackTo(sp)
	if got := names(t, a.Catalog().tables.must("users")); got != "1 ann 20;2 bob 21;3 cid 22;7 eve 40;9 zed 50" {
		t.Fatalf("view after rollback to a savepoint before the locking read: %s", got)
	}
	if err := a.Update("users", []any{int64(9), "zed", int64(50)}, []any{int64(9), "zed", int64(51)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(context.Background()); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if got := names(t, db.Snapshot().tables.must("users")); got != "1 ann 20;2 bob 21;3 cid 22;7 eve 40;9 zed 51" {
		t.Fatalf("committed: %s", got)
	}
}

// Plain writers do not wait for each other (the first to commit wins, the
// other gets ErrConflict), but a locking read waits for a pending writer
// and then reads what it committed.
func TestWritersDoNotBlockEachOther(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	a, b, c := db.Begin(), db.Begin(), db.Begin()
	row := []any{int64(3), "cid", int64(22)}
	for _, tx := range []*Tx{a, b} {
		if err := tx.LockForWrite(context.Background(), "users", row, waitTimeout); err != nil {
			t.Fatalf("second writer's lock: %v", err)
		}
	}
	if err := a.Update("users", row, []any{int64(3), "cid", int64(23)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Update("users", row, []any{int64(3), "cid", int64(24)}); err != nil {
		t.Fatal(err)
	}
	got := goLock(c, 3, forUpdate)
	awaitWaiters(t, e, 1)
	mustCommit(t, a)
	awaitWaiters(t, e, 1) // b still writes it
	if err := b.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("second committer: %v, want ErrConflict", err)
	}
	res := <-got
	if res.err != nil || !res.ok || res.row.Value(2) != int64(23) {
		t.Fatalf("locking read after the writers: %v %v %v", res.row, res.ok, res.err)
	}
	c.Rollback()
}

// A transaction that would hold more than maxHeld locks gets
// ErrTooManyLocks; its locks so far are kept, and released at its end.
func TestTooManyLocks(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	e.locks.maxHeld = 2
	a := db.Begin()
	mustLock(t, a, 1, forUpdate)
	mustLock(t, a, 2, forShare)
	mustLock(t, a, 2, forUpdate) // an upgrade of a held row is not a new lock
	if _, _, err := lockID(a, 3, forUpdate); !errors.Is(err, ErrTooManyLocks) {
		t.Fatalf("third lock: %v, want ErrTooManyLocks", err)
	}
	if n := e.locks.entries(); n != 2 {
		t.Fatalf("%d lock entries, want the 2 held", n)
	}
	a.Rollback()
	if n := e.locks.entries(); n != 0 {
		t.Fatalf("%d lock entries left", n)
	}
}

// A locking read of a table redefined since the snapshot is refused with
// ErrConflict: the statement was planned on the old definition.
func TestLockingReadOfAlteredTable(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	a := db.Begin()
	_ = a.Catalog()
	ddl := db.Begin()
	def := *usersDef
	def.Indexes = def.Indexes[:1]
	if err := ddl.Reindex("users", &def); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, ddl)
	if _, err := a.LatestTable("users"); !errors.Is(err, ErrConflict) {
		t.Fatalf("locking read after ALTER: %v, want ErrConflict", err)
	}
	a.Rollback()
	if _, err := db.Begin().LatestTable("users"); err != nil {
		t.Fatalf("a transaction begun after the ALTER: %v", err)
	}
}
