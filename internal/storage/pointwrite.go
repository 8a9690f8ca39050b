package storage

import "fmt"

// Point writes. An UPDATE, DELETE or INSERT of one row by its primary key
// in a transaction (the SQL layer's compiled statements) is recorded
// without being applied to the transaction's view: applying it there
// copies the path to the row in each of the table's trees, and the commit
// applies it again to the committed catalog whenever another commit
// changed the table in between, which under concurrent writers is nearly
// always. A pending write is applied to the view (materialize) as soon as
// the transaction reads or writes in any other way (Catalog, Table, a
// savepoint, a locking read, a write that is not a point write), so every
// other reader sees the view as before; the point-write methods read
// through it with Get. At commit, pending writes are applied once, to the
// committed catalog, as the writes of a table that cannot be adopted are.
//
// The pending writes are always the last ones of tx.ops: tx.ops[tx.applied:].
// Only tables with a primary key and no other unique key take them (their
// only uniqueness check is the primary key's, done here), and only up to
// maxPending of them, then the view is brought up to date.

// maxPending bounds a transaction's pending point writes: Get and the
// checks scan them.
const maxPending = 32

// Meta returns the catalog the transaction sees, for its definitions,
// objects and counters only: its tables' rows may lack the transaction's
// pending point writes (read rows with Get).
func (tx *Tx) Meta() *Catalog {
	if tx.work != nil {
		return tx.work.cat
	}
	return tx.base
}

// materialize applies the pending point writes to the view.
func (tx *Tx) materialize() {
	if tx.applied == len(tx.ops) {
		return
	}
	a := tx.applier()
	for _, op := range tx.ops[tx.applied:] {
		var err error
		if op.Kind == OpInsert {
			err = a.insert(op, false) // its key was checked when written
		} else {
			err = a.apply(op)
		}
		if err != nil {
			panic(fmt.Sprintf("storage: pending write to %s: %v", op.Table, err))
		}
	}
	tx.applied = len(tx.ops)
}

// pendingAt returns the newest pending write of table t (lower-case name)
// at r's primary key.
func (tx *Tx) pendingAt(t *Table, name string, r *Row) (*Op, bool) {
	for i := len(tx.ops) - 1; i >= tx.applied; i-- {
		op := tx.ops[i]
		if lower(op.Table) != name {
			continue
		}
		k := op.Row
		if op.Kind == OpDelete {
			k = op.Old
		}
		if t.shape.comparePrimary(k, r) == 0 {
			return op, true
		}
	}
	return nil, false
}

// Get returns the row with key's primary key as the transaction sees it,
// its pending point writes included; t is the table as Meta has it.
func (tx *Tx) Get(t *Table, key *Row) (*Row, bool) {
	if tx.applied < len(tx.ops) {
		if op, ok := tx.pendingAt(t, lower(t.Name()), key); ok {
			return op.Row, op.Kind != OpDelete
		}
	}
	return t.Get(key)
}

// pointable reports whether a point write to t may stay pending.
func (tx *Tx) pointable(t *Table) bool {
	if tx.done || len(tx.ops)-tx.applied >= maxPending || len(t.shape.def.PK) == 0 {
		return false
	}
	if tx.db.eng != nil && tx.db.eng.ReadOnly() {
		return false // the write reports it
	}
	if tt, ok := tx.touched[lower(t.Name())]; ok && (tt.keys == nil || tt.ddl) {
		return false // created or redefined in this transaction
	}
	for _, ix := range t.shape.def.Indexes {
		if ix.Unique {
			return false
		}
	}
	return true
}

// touchPoint is touchRow for a point write: the pending writes at r's key
// count as the transaction's own.
func (tx *Tx) touchPoint(t *Table, r *Row) (found bool) {
	if op, ok := tx.pendingAt(t, lower(t.Name()), r); ok {
		return op.Kind != OpDelete // written by this transaction, touched then
	}
	_, found = tx.touchRow(t, r)
	return found
}

// record adds op, a point write, to the pending ones.
func (tx *Tx) record(op *Op) {
	if op.Row != nil {
		op.Row.setVersion(pendingVer)
	}
	tx.ops = append(tx.ops, op)
	tx.modified.Store(int64(len(tx.ops)))
}

// UpdatePoint is UpdateRow of old, a row Get returned from t (as Meta has
// it), which may stay pending.
func (tx *Tx) UpdatePoint(t *Table, old *Row, newVals []any) error {
	nr := newRow(old.ID, newVals)
	if !tx.pointable(t) || t.shape.comparePrimary(old, nr) != 0 || nr.NumValues() != t.shape.def.NumCols {
		return tx.UpdateRow(tx.sameTable(t), old, newVals)
	}
	tx.touchPoint(t, old)
	tx.record(&Op{Kind: OpUpdate, Table: t.Name(), Old: old, Row: nr})
	return nil
}

// DeletePoint is DeleteRow of old, a row Get returned from t (as Meta has
// it), which may stay pending.
func (tx *Tx) DeletePoint(t *Table, old *Row) error {
	if !tx.pointable(t) {
		return tx.DeleteRow(tx.sameTable(t), old)
	}
	tx.touchPoint(t, old)
	tx.record(&Op{Kind: OpDelete, Table: t.Name(), Old: old})
	return nil
}

// InsertPoint is Insert into t (as Meta has it), which may stay pending.
func (tx *Tx) InsertPoint(t *Table, vals []any) (*Row, error) {
	if !tx.pointable(t) {
		return tx.Insert(t.Name(), vals)
	}
	r := newRow(t.ctr.nextID.Add(1)-1, vals)
	if r.NumValues() != t.shape.def.NumCols {
		return tx.Insert(t.Name(), vals)
	}
	if _, exists := tx.Get(t, r); exists {
		return tx.Insert(t.Name(), vals) // a duplicate: reported as usual
	}
	tx.touchPoint(t, r)
	tx.record(&Op{Kind: OpInsert, Table: t.Name(), Row: r})
	return r, nil
}

// sameTable returns the view's version of t once the pending writes are
// applied.
func (tx *Tx) sameTable(t *Table) *Table {
	if v, ok := tx.Table(t.Name()); ok {
		return v
	}
	return t
}
