package storage

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/tidwall/btree"

	"github.com/miraj-db/miraj/internal/journal"
)

// ErrConflict is returned by Commit when another transaction committed a
// write to a row (or a definition) this one wrote, after this one's snapshot.
// The transaction is rolled back; nothing of it is visible.
var ErrConflict = errors.New("storage: write conflict with a concurrent transaction")

// ErrTxDone is returned when a committed or rolled back transaction is used.
var ErrTxDone = errors.New("storage: transaction already ended")

// Tx is a transaction on one database with snapshot isolation: it reads the
// catalog as it was when the transaction began, plus its own writes. A Tx is
// used by one goroutine at a time.
type Tx struct {
	db *DB
	// deferSync: the commit does not wait for its frames' fsync
	// (DeferSync).
	deferSync bool
	// base is the snapshot; nil while a deferred transaction has not
	// taken it (deferred.go), when meta has the definitions.
	base *Catalog
	meta *Catalog
	// late: base was taken after the transaction began (deferred.go), so
	// rows it read before may not be the snapshot's.
	late bool
	// doomed: the pending writes of a deferred transaction no longer fit
	// the snapshot it took; its commit returns this error.
	doomed error
	work   *applier // nil until the first write
	ops    []*Op
	// applied counts the ops applied to the view (work): the rest are
	// pending point writes (pointwrite.go).
	applied int
	// touched holds, per table, what this transaction's writes depend on:
	// the row versions (and table definition) it saw. Commit checks them
	// against the committed catalog.
	touched map[string]*tableTouch
	done    bool
	// locks holds the transaction's row locks (nil until the first one);
	// ownLocks says this Tx made it and releases it when it ends (a SQL
	// transaction over several databases shares one owner and releases
	// it itself).
	locks    *LockOwner
	ownLocks bool
	lockSeq  uint64 // the age of a lock owner this Tx makes: its Begin's place

	// fresh lists the rows read under a lock at a newer version than the
	// snapshot's, which the transaction's view holds at that version
	// (lockread.go); kept to be put back after RollbackTo.
	fresh []freshRow
	// baseOwned: base is this transaction's private copy (a locked row
	// was refreshed in it), with the tables in baseTables cloned.
	baseOwned  bool
	baseTables map[*Table]bool
	// latest caches the view LatestTable built last.
	latest latestCache
	// note is for the commit hook (commithook.go).
	note any
	// logged is the journal end after this transaction's commit frame, 0
	// when its commit wrote nothing to the journal.
	logged journal.LSN
	// modified mirrors len(ops) for readers on other goroutines.
	modified atomic.Int64
	// rebases counts the rebases of the snapshot (rebase.go).
	rebases int
	// hint speeds up touchRow's lookups of keys in order (any table's
	// hint is a valid one: it only tells where to start searching).
	hint btree.PathHint
	// stream: the frames written to the journal before the commit
	// (stream.go).
	stream txStream
}

// Logged returns the journal position that ends this transaction's commit,
// and false when the commit wrote no journal frame (nothing written, a
// manual save policy, or not committed): what semi-synchronous commit
// waits for secondaries to hold.
func (tx *Tx) Logged() (journal.LSN, bool) { return tx.logged, tx.logged > 0 }

type tableTouch struct {
	present   bool
	schemaVer uint64
	lastWrite uint64
	ddl       bool
	keys      *btree.BTreeG[*keyTouch]
	// absent lists keys first written where the snapshot had no row: an
	// insert of a new key, the common case of bulk loads, costs an append
	// rather than a tree entry. A key may be listed twice; all say "absent".
	absent []*Row
}

type keyTouch struct {
	key *Row   // the row's key columns (or ID)
	ver uint64 // version seen in the snapshot, 0 if absent
}

// Savepoint is a state of a transaction to return to.
type Savepoint struct {
	cat  *Catalog
	nops int
	// rebases is the transaction's count of rebases when it was taken: a
	// rebase since (rebase.go) makes RollbackTo apply the first nops
	// writes again over the new snapshot.
	rebases int
}

// Catalog returns the catalog as this transaction sees it.
func (tx *Tx) Catalog() *Catalog {
	tx.materialize()
	return tx.Meta()
}

// Table returns the table as this transaction sees it.
func (tx *Tx) Table(name string) (*Table, bool) { return tx.Catalog().Table(name) }

// Writes reports whether the transaction has written anything.
func (tx *Tx) Writes() bool { return len(tx.ops) > 0 }

func (tx *Tx) applier() *applier {
	if tx.work == nil {
		tx.pin()
		tx.work = newApplier(tx.base, pendingVer, tx.db.bind)
	}
	return tx.work
}

func (tx *Tx) touchTable(name string, ddl bool) *tableTouch {
	key := lower(name)
	tt, ok := tx.touched[key]
	if !ok {
		t, present := tx.Meta().Table(name)
		tt = &tableTouch{present: present}
		if present {
			tt.schemaVer, tt.lastWrite = t.schemaVer, t.lastWrite
			s := t.shape
			tt.keys = btree.NewBTreeGOptions(func(a, b *keyTouch) bool { return s.comparePrimary(a.key, b.key) < 0 }, btreeOpts)
		}
		tx.touched[key] = tt
	}
	tt.ddl = tt.ddl || ddl
	return tt
}

// touchRow records the version of the row with r's key as the transaction
// sees it now, the first time the transaction writes that key. It returns
// whether it looked the key up in t (not for a table created or redefined
// in this transaction) and whether t has a row with that key.
func (tx *Tx) touchRow(t *Table, r *Row) (looked, found bool) {
	tt := tx.touchTable(t.Name(), false)
	if tt.keys == nil || tt.ddl {
		return false, false // the table is new or redefined in this transaction
	}
	var cur *Row
	if len(t.shape.def.PK) > 0 {
		cur, found = t.primary.GetHint(r, &tx.hint)
	} else {
		cur, found = t.locate(r)
	}
	if found && cur.version() == pendingVer {
		return true, true // written by this transaction, so touched then
	}
	probe := &keyTouch{key: r}
	if tt.keys.Len() > 0 {
		if _, seen := tt.keys.Get(probe); seen {
			return true, found // deleted by this transaction, touched then
		}
	}
	if !found {
		// Never written by this transaction and not in its view, so not in
		// its snapshot either.
		tt.absent = append(tt.absent, r)
		return true, false
	}
	probe.ver = cur.version()
	tt.keys.Set(probe)
	return true, true
}

func (tx *Tx) do(op *Op) error {
	return tx.doWith(op, func(a *applier) error { return a.apply(op) })
}

// doWith records op after apply has applied it to the transaction's view.
func (tx *Tx) doWith(op *Op, apply func(a *applier) error) error {
	if tx.done {
		return ErrTxDone
	}
	if tx.db.eng != nil && tx.db.eng.ReadOnly() {
		return ErrReadOnly
	}
	tx.materialize()
	if err := apply(tx.applier()); err != nil {
		return err
	}
	tx.ops = append(tx.ops, op)
	tx.applied = len(tx.ops)
	tx.modified.Store(int64(len(tx.ops)))
	return tx.grew(op)
}

// Modified returns the number of row changes the transaction holds. Safe
// to call from another goroutine (information_schema.INNODB_TRX).
func (tx *Tx) Modified() int64 { return tx.modified.Load() }

// Insert adds a row and returns it.
func (tx *Tx) Insert(table string, vals []any) (*Row, error) {
	t, ok := tx.Table(table)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoTable, table)
	}
	r := newRow(t.ctr.nextID.Add(1)-1, vals)
	looked, found := tx.touchRow(t, r)
	// A primary key just looked up and not found needs no second look.
	checkPK := !looked || found
	op := &Op{Kind: OpInsert, Table: t.Name(), Row: r}
	if err := tx.doWith(op, func(a *applier) error { return a.insert(op, checkPK) }); err != nil {
		return nil, err
	}
	return r, nil
}

// Update replaces the row equal to oldVals by newVals.
func (tx *Tx) Update(table string, oldVals, newVals []any) error {
	t, ok := tx.Table(table)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoTable, table)
	}
	old, ok := t.FindRow(oldVals)
	if !ok {
		return fmt.Errorf("%w: update in %s", ErrRowMissing, table)
	}
	return tx.UpdateRow(t, old, newVals)
}

// UpdateRow is Update of old, a row the transaction read from t (as Table
// returns it), without searching for it again.
func (tx *Tx) UpdateRow(t *Table, old *Row, newVals []any) error {
	nr := newRow(old.ID, newVals)
	tx.touchRow(t, old)
	if len(t.shape.def.PK) > 0 && t.shape.comparePrimary(old, nr) != 0 {
		tx.touchRow(t, nr)
	}
	return tx.do(&Op{Kind: OpUpdate, Table: t.Name(), Old: old, Row: nr})
}

// Delete removes the row equal to vals.
func (tx *Tx) Delete(table string, vals []any) error {
	t, ok := tx.Table(table)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoTable, table)
	}
	old, ok := t.FindRow(vals)
	if !ok {
		return fmt.Errorf("%w: delete in %s", ErrRowMissing, table)
	}
	return tx.DeleteRow(t, old)
}

// DeleteRow is Delete of old, a row the transaction read from t (as Table
// returns it), without searching for it again.
func (tx *Tx) DeleteRow(t *Table, old *Row) error {
	tx.touchRow(t, old)
	return tx.do(&Op{Kind: OpDelete, Table: t.Name(), Old: old})
}

// CreateTable creates a table.
func (tx *Tx) CreateTable(def *TableDef) error {
	tx.touchTable(def.Name, true)
	return tx.do(&Op{Kind: OpCreateTable, Def: def, NextID: 1, NextAuto: 1})
}

// DropTable drops a table.
func (tx *Tx) DropTable(name string) error {
	tx.touchTable(name, true)
	return tx.do(&Op{Kind: OpDropTable, Table: name})
}

// RenameTable renames a table.
func (tx *Tx) RenameTable(from, to string) error {
	tx.touchTable(from, true)
	tx.touchTable(to, true)
	return tx.do(&Op{Kind: OpRenameTable, Table: from, NewName: to})
}

// Truncate removes every row and resets AUTO_INCREMENT.
func (tx *Tx) Truncate(name string) error {
	tx.touchTable(name, true)
	return tx.do(&Op{Kind: OpTruncate, Table: name})
}

// AlterTable gives a table a new definition. convert maps each old row to
// the new columns (nil: the rows are kept as they are). Every row is written
// again under the new definition, so replicas replay the same change.
func (tx *Tx) AlterTable(name string, def *TableDef, convert func(old []any) ([]any, error)) error {
	t, ok := tx.Table(name)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoTable, name)
	}
	var rows []*Row
	t.Scan(func(r *Row) bool { rows = append(rows, r); return true })
	tx.touchTable(name, true)
	if err := tx.do(&Op{Kind: OpAlterTable, Table: name, Def: def}); err != nil {
		return err
	}
	for _, r := range rows {
		nr := copyRow(r.ID, r)
		if convert != nil {
			vals, err := convert(r.Values())
			if err != nil {
				return err
			}
			nr = newRow(r.ID, vals)
		}
		if err := tx.do(&Op{Kind: OpInsert, Table: def.Name, Row: nr}); err != nil {
			return err
		}
	}
	return nil
}

// SetMeta changes what a table's definition says beyond its columns, keys
// and indexes (constraints, comments, index names), without rewriting rows.
func (tx *Tx) SetMeta(name string, def *TableDef) error {
	tx.touchTable(name, true)
	return tx.do(&Op{Kind: OpSetMeta, Table: name, Def: def})
}

// Reindex gives a table another primary key or other indexes over the same
// columns, built from its rows where they are (no row is written again).
func (tx *Tx) Reindex(name string, def *TableDef) error {
	tx.touchTable(name, true)
	return tx.do(&Op{Kind: OpReindex, Table: name, Def: def})
}

// SetAutoIncrement sets the next AUTO_INCREMENT value of a table.
func (tx *Tx) SetAutoIncrement(name string, next uint64) error {
	tx.touchTable(name, true)
	return tx.do(&Op{Kind: OpSetCounters, Table: name, NextAuto: next})
}

// SetOptions replaces the database options recorded at creation.
func (tx *Tx) SetOptions(data []byte) error {
	return tx.do(&Op{Kind: OpDatabase, BaseID: tx.Catalog().baseID, Data: data})
}

// PutObject stores a view, trigger, procedure or event definition.
func (tx *Tx) PutObject(kind, name string, data []byte) error {
	return tx.do(&Op{Kind: OpPutObject, ObjKind: kind, ObjName: name, Data: data})
}

// DeleteObject removes a stored object.
func (tx *Tx) DeleteObject(kind, name string) error {
	return tx.do(&Op{Kind: OpDeleteObject, ObjKind: kind, ObjName: name})
}

// Savepoint records the current state of the transaction.
func (tx *Tx) Savepoint() Savepoint {
	tx.materialize()
	if tx.work == nil {
		return Savepoint{cat: tx.base, nops: 0, rebases: tx.rebases}
	}
	tx.work.release()
	return Savepoint{cat: tx.work.cat.shallowClone(), nops: len(tx.ops), rebases: tx.rebases}
}

// Initial is the savepoint of the transaction before any write.
func (tx *Tx) Initial() Savepoint {
	tx.pin()
	return Savepoint{cat: tx.base, nops: 0, rebases: tx.rebases}
}

// RollbackTo returns the transaction to a savepoint.
func (tx *Tx) RollbackTo(sp Savepoint) {
	tx.materialize()
	if tx.work == nil || sp.cat == nil {
		return
	}
	tx.restartStream(sp.nops)
	if sp.nops == 0 {
		tx.work, tx.ops, tx.applied = nil, tx.ops[:0], 0
		tx.modified.Store(0)
		return
	}
	if sp.rebases != tx.rebases {
		// Rebased since the savepoint: its view holds an older snapshot,
		// which the commit could adopt as the committed tables. The
		// writes up to it are applied again over the current snapshot.
		a := newApplier(tx.base, pendingVer, tx.db.bind)
		for _, op := range tx.ops[:sp.nops] {
			if err := a.apply(op); err != nil {
				panic(fmt.Sprintf("storage: writes to a savepoint over the rebased snapshot: %v", err))
			}
		}
		tx.work = a
	} else {
		tx.work.cat = sp.cat.shallowClone()
	}
	tx.work.release()
	tx.ops, tx.applied = tx.ops[:sp.nops], sp.nops
	tx.modified.Store(int64(sp.nops))
	tx.refreshAgain()
}

// Rollback ends the transaction without keeping anything.
func (tx *Tx) Rollback() {
	if !tx.done {
		tx.endStream()
	}
	tx.done = true
	tx.work, tx.ops, tx.applied = nil, nil, 0
	tx.releaseLocks()
}

// Commit makes the transaction's writes durable per the save policy and
// visible to transactions that begin afterwards. On ErrConflict, or any
// error, nothing of the transaction is kept.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.done {
		return ErrTxDone
	}
	tx.done = true
	defer tx.releaseLocks()
	if len(tx.ops) == 0 {
		tx.endStream()
		return nil
	}
	if tx.doomed != nil {
		tx.endStream()
		return tx.doomed
	}
	if tx.work != nil {
		// Tables of the view may be adopted: they must hold every write.
		tx.materialize()
	}
	return tx.db.commit(ctx, tx)
}

// DeferSync makes the transaction's commit return once its frames are in
// the journal, without waiting for their fsync: a later fsync makes them
// durable (the next commit of the database that waits for one, a
// checkpoint, or the engine's periodic fsync of journals written past
// their durable end). A crash may lose such a commit, never one after it
// that waited. For a commit whose loss something else that is durable
// makes good (a binary-log replica's position, whose record in the
// databases it wrote says the same).
func (tx *Tx) DeferSync() { tx.deferSync = true }

// onlyReindexed reports whether every DDL of the transaction on table name
// (lower case) is a reindex.
func (tx *Tx) onlyReindexed(name string) bool {
	for _, op := range tx.ops {
		if op.Kind.adoptable() {
			continue
		}
		if lower(op.Table) == name || lower(op.NewName) == name || op.Def != nil && lower(op.Def.Name) == name {
			return false
		}
	}
	return true
}

// checkLocked compares what the transaction saw with the committed catalog.
// Tables in adopted are left out: no commit changed them since the snapshot.
func (tx *Tx) checkLocked(cur *Catalog, adopted map[string]*Table) error {
	for name, tt := range tx.touched {
		if adopted[name] != nil {
			continue
		}
		t, present := cur.tables.get(name)
		if present != tt.present {
			return fmt.Errorf("%w: table %s was created or dropped", ErrConflict, name)
		}
		if !present {
			continue
		}
		if t.schemaVer != tt.schemaVer {
			return fmt.Errorf("%w: table %s was altered", ErrConflict, t.Name())
		}
		if tt.ddl {
			if t.lastWrite != tt.lastWrite {
				return fmt.Errorf("%w: table %s was written", ErrConflict, t.Name())
			}
			continue
		}
		if t.lastWrite == tt.lastWrite {
			continue // not written since the snapshot
		}
		for _, k := range tt.absent {
			if _, ok := t.locate(k); ok {
				return fmt.Errorf("%w: a row of %s", ErrConflict, t.Name())
			}
		}
		var err error
		tt.keys.Scan(func(k *keyTouch) bool {
			var ver uint64
			if r, ok := t.locate(k.key); ok {
				ver = r.version()
			}
			if ver != k.ver {
				err = fmt.Errorf("%w: a row of %s", ErrConflict, t.Name())
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// adoptable returns the tables whose version in the transaction's view can
// become the committed one as it is: tables the transaction wrote rows of
// or reindexed (no other DDL) and that no commit has changed since its
// snapshot, so that its writes need neither a conflict check nor a second
// apply (a reindex builds its indexes once). Called with the commit lock
// held.
func (tx *Tx) adoptable(cur *Catalog) map[string]*Table {
	if tx.work == nil {
		return nil
	}
	var out map[string]*Table
	for name, tt := range tx.touched {
		if !tt.present || tt.ddl && !tx.onlyReindexed(name) {
			continue
		}
		bt, ok := tx.base.tables.get(name)
		if cur, _ := cur.tables.get(name); !ok || cur != bt {
			continue // changed since the snapshot, or refreshed by a locking read
		}
		wt, ok := tx.work.cat.tables.get(name)
		if !ok || wt == bt || wt.shape != bt.shape && !tt.ddl {
			continue
		}
		if out == nil {
			out = map[string]*Table{}
		}
		out[name] = wt
	}
	return out
}
