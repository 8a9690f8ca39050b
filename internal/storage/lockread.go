package storage

import (
	"context"
	"fmt"
	"time"
)

// Locking reads. A transaction reads its snapshot, except under a row lock
// (SELECT … FOR UPDATE / FOR SHARE): then, as InnoDB does, it reads the
// latest committed version of the row (with its own writes on top), and
// from then on that version is the one it sees and depends on. The row is
// put into the transaction's view at that version (refresh), so its later
// UPDATE computes from it and conflicts at commit only with changes made
// after the locked read, which the lock keeps out: SELECT … FOR UPDATE then
// UPDATE never fails at commit.
//
// The sequence for each row of a locking read:
//
//  1. LatestTable gives the latest committed table with the transaction's
//     own row writes applied on top; the SQL layer walks it (full scan or
//     index range) and passes each row to LockRow.
//  2. LockRow takes the lock (waiting, skipping or failing per the
//     request). A row the transaction wrote itself is locked already.
//  3. Once granted, the row is read again from the newest committed
//     catalog: while this transaction waited, the holder may have changed
//     or deleted it (a deleted row is skipped).
//  4. That version is put into the transaction's snapshot and view
//     (refresh) and returned.

// freshRow is a row refreshed by a locking read: prev is what the snapshot
// held at its key (nil: nothing), row the locked version.
type freshRow struct {
	table string // lower-case
	prev  *Row
	row   *Row
}

type latestCache struct {
	table string
	seq   uint64
	nops  int
	t     *Table
}

// SetLockOwner makes the transaction take its row locks for o, which its
// caller releases (a SQL transaction spanning databases shares one owner).
func (tx *Tx) SetLockOwner(o *LockOwner) {
	tx.locks, tx.ownLocks = o, false
}

// LockOwner returns the owner of the transaction's row locks: the one
// SetLockOwner gave, or its own, released when it ends.
func (tx *Tx) LockOwner() *LockOwner { return tx.lockOwner() }

func (tx *Tx) lockOwner() *LockOwner {
	if tx.locks == nil {
		tx.locks, tx.ownLocks = &LockOwner{m: tx.db.eng.locks, seq: tx.lockSeq}, true
	}
	return tx.locks
}

func (tx *Tx) releaseLocks() {
	if tx.ownLocks {
		tx.locks.Release()
	}
}

// LatestTable returns table name as a locking read sees it: the latest
// committed version, with this transaction's own row writes applied on top.
// Its rows go to LockRow. A transaction whose own writes no longer apply to
// the latest version (another wrote the same key since) gets ErrConflict.
func (tx *Tx) LatestTable(name string) (*Table, error) {
	if tx.done {
		return nil, ErrTxDone
	}
	cur := tx.db.Snapshot()
	key := lower(name)
	if tt, ok := tx.touched[key]; ok && tt.ddl {
		// Redefined in this transaction: its own view is the latest.
		t, ok := tx.Table(name)
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNoTable, name)
		}
		return t, nil
	}
	lt, ok := cur.Table(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoTable, name)
	}
	if vt, ok := tx.Table(name); !ok || vt.schemaVer != lt.schemaVer {
		// Redefined since the snapshot: the statement was planned on
		// the old definition (its columns, its indexes), and a write
		// of the transaction would conflict at commit anyway.
		return nil, fmt.Errorf("%w: table %s was created, dropped or altered since the snapshot", ErrConflict, name)
	}
	var own []*Op
	for _, op := range tx.ops {
		if lower(op.Table) == key {
			own = append(own, op)
		}
	}
	if len(own) == 0 {
		return lt, nil
	}
	if c := tx.latest; c.t != nil && c.table == key && c.seq == cur.seq && c.nops == len(tx.ops) {
		return c.t, nil
	}
	a := newApplier(cur, pendingVer, tx.db.bind)
	for _, op := range own {
		if err := a.apply(op); err != nil {
			return nil, fmt.Errorf("%w: own writes of %s on its latest version: %v", ErrConflict, name, err)
		}
	}
	t, _ := a.cat.Table(name)
	tx.latest = latestCache{table: key, seq: cur.seq, nops: len(tx.ops), t: t}
	return t, nil
}

// LockRow locks row r of table name, a row of LatestTable, for this
// transaction, and returns the row to read: its newest committed version
// once locked, or the transaction's own version of a row it wrote. It
// returns false when the row is to be left out: locked by another and the
// request skips locked rows, or deleted while this transaction waited.
//
// Errors: ErrLockTimeout, ErrLockNoWait, ErrDeadlock (the transaction must
// be rolled back), ErrConflict (the table was redefined meanwhile), or
// ctx's error.
func (tx *Tx) LockRow(ctx context.Context, name string, r *Row, req LockRequest) (*Row, bool, error) {
	if tx.done {
		return nil, false, ErrTxDone
	}
	if r.version() == pendingVer || tx.db.eng == nil {
		return r, true, nil // the transaction's own write, locked already; or a scratch table
	}
	tx.materialize() // refresh changes the view
	// The definition only: Latest does not freeze the catalog.
	lt, ok := tx.db.Latest().Table(name)
	if !ok {
		return nil, false, nil
	}
	tk := lockTableKey{db: tx.db, table: lower(name), shape: lt.shape}
	granted, err := tx.db.eng.locks.acquire(ctx, tx.lockOwner(), tk, lockKey(lt, r), req)
	if err != nil || !granted {
		return nil, false, err
	}
	// The row is read from the newest committed catalog without freezing
	// it (Read); now is kept for its definition only (refresh).
	var now *Table
	var row *Row
	found := false
	tx.db.Read(func(cat *Catalog) {
		if now, ok = cat.Table(name); ok && now.shape == lt.shape {
			row, found = now.locate(r)
		}
	})
	if !ok {
		return nil, false, nil
	}
	if now.shape != lt.shape {
		return nil, false, fmt.Errorf("%w: table %s was altered", ErrConflict, name)
	}
	if !found {
		return nil, false, nil
	}
	if err := tx.refresh(now, row); err != nil {
		return nil, false, err
	}
	return row, true, nil
}

// LockForWrite takes the write lock (LockWrite) on the row of table name
// equal to vals, as seen by the transaction, before it is updated or
// deleted: the write waits for others' locking reads of the row, not for
// their writes. The write itself still conflicts at commit if the row
// changed since the snapshot (first committer wins).
func (tx *Tx) LockForWrite(ctx context.Context, name string, vals []any, timeout time.Duration) error {
	if tx.done {
		return ErrTxDone
	}
	if tx.db.eng == nil {
		return nil
	}
	t, ok := tx.Table(name)
	if !ok {
		return nil // the write reports it
	}
	r, ok := t.FindRow(vals)
	if !ok {
		return nil // missing: the write reports it
	}
	return tx.LockRowForWrite(ctx, t, r, timeout)
}

// LockRowForWrite is LockForWrite of r, a row the transaction read from t
// (as Table returns it), without searching for it again.
func (tx *Tx) LockRowForWrite(ctx context.Context, t *Table, r *Row, timeout time.Duration) error {
	if tx.done {
		return ErrTxDone
	}
	if tx.db.eng == nil || r.version() == pendingVer {
		return nil // no engine (tests), or written and locked already
	}
	if lt, ok := tx.db.Latest().Table(t.Name()); ok && lt.shape != t.shape {
		return nil // redefined since the snapshot: the commit will conflict
	}
	return tx.db.lockRowForWrite(ctx, tx.lockOwner(), t, r, timeout)
}

// LockRowForWrite takes for o the write lock of r, a row of t, a table
// of this database's committed catalog: what an autocommit UPDATE or
// DELETE by primary key takes before CommitRow, without a transaction of
// its own. It waits as LockForWrite does; o.Release gives the lock back.
func (db *DB) LockRowForWrite(ctx context.Context, o *LockOwner, t *Table, r *Row, timeout time.Duration) error {
	if db.eng == nil {
		return nil
	}
	return db.lockRowForWrite(ctx, o, t, r, timeout)
}

func (db *DB) lockRowForWrite(ctx context.Context, o *LockOwner, t *Table, r *Row, timeout time.Duration) error {
	tk := lockTableKey{db: db, table: lower(t.Name()), shape: t.shape}
	_, err := db.eng.locks.acquire(ctx, o, tk, lockKey(t, r), LockRequest{Mode: LockWrite, Wait: WaitBlock, Timeout: timeout})
	return err
}

// refresh puts row, the newest committed version of its key in table now,
// into the transaction's snapshot and view, unless the transaction has a
// write of its own at that key.
func (tx *Tx) refresh(now *Table, row *Row) error {
	key := lower(now.Name())
	bt, ok := tx.base.tables.get(key)
	if !ok || bt.schemaVer != now.schemaVer {
		return fmt.Errorf("%w: table %s was created or altered since the snapshot", ErrConflict, now.Name())
	}
	prev, _ := bt.locate(row)
	if prev == row {
		return nil
	}
	var wt *Table
	own := false
	if tx.work != nil {
		if wt, ok = tx.work.cat.tables.get(key); ok {
			cur, _ := wt.locate(row)
			own = cur != prev
		}
	}
	if !tx.baseOwned {
		tx.base = tx.base.shallowClone()
		tx.baseOwned, tx.baseTables = true, map[*Table]bool{}
	}
	if !tx.baseTables[bt] {
		bt = bt.clone()
		tx.base.tables.set(key, bt)
		tx.baseTables[bt] = true
	}
	replaceRow(bt, prev, row)
	tx.fresh = append(tx.fresh, freshRow{table: key, prev: prev, row: row})
	if tt, ok := tx.touched[key]; ok && tt.keys != nil && !own {
		if k, ok := tt.keys.Get(&keyTouch{key: row}); ok {
			k.ver = row.version()
		}
	}
	if wt != nil && wt != bt && !own {
		tx.refreshWork(key, prev, row)
	}
	return nil
}

// refreshWork puts row into the transaction's view in place of prev.
func (tx *Tx) refreshWork(key string, prev, row *Row) {
	wt, ok := tx.work.cat.tables.get(key)
	if !ok {
		return
	}
	if cur, _ := wt.locate(row); cur != prev || cur == row {
		return
	}
	w, err := tx.work.writable(key)
	if err != nil {
		panic(fmt.Sprintf("storage: refresh of %s: %v", key, err))
	}
	replaceRow(w, prev, row)
}

// refreshAgain puts the refreshed rows back into the view after a rollback
// to a savepoint taken before they were read.
func (tx *Tx) refreshAgain() {
	if tx.work == nil {
		return
	}
	for _, f := range tx.fresh {
		tx.refreshWork(f.table, f.prev, f.row)
	}
}

func replaceRow(t *Table, prev, row *Row) {
	if prev != nil {
		t.updateRow(prev, row, nil)
		return
	}
	t.insertRow(row)
}
