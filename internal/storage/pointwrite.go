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
	if tx.base == nil {
		return tx.meta // deferred.go
	}
	return tx.base
}

// materialize applies the pending point writes to the view, taking the
// snapshot first if the transaction is deferred.
func (tx *Tx) materialize() {
	tx.pin()
	if tx.applied == len(tx.ops) {
		return
	}
	a := tx.applier()
	for _, op := range tx.ops[tx.applied:] {
		if tx.doomed != nil {
			tx.applyDoomed(a, op)
			continue
		}
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
// its pending point writes included; t is the table as Meta has it. A
// deferred transaction without its snapshot reads the newest committed
// row; ErrConflict says the table changed definition since it began.
func (tx *Tx) Get(t *Table, key *Row) (*Row, bool, error) {
	if tx.applied < len(tx.ops) {
		if op, ok := tx.pendingAt(t, lower(t.Name()), key); ok {
			return op.Row, op.Kind != OpDelete, nil
		}
	}
	if tx.base == nil {
		return tx.getLatest(t, key)
	}
	if tx.late {
		// t may be of the definitions the transaction had before its
		// snapshot, whose trees commits change in place.
		name := t.Name()
		if t, _ = tx.Meta().Table(name); t == nil {
			return nil, false, fmt.Errorf("%w: table %s was dropped since the transaction began", ErrConflict, name)
		}
	}
	r, found := t.Get(key)
	return r, found, nil
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

// touchPoint is touchRow for a point write of r, worked out on seen (nil:
// the key was free): the pending writes at r's key count as the
// transaction's own.
func (tx *Tx) touchPoint(t *Table, r, seen *Row) {
	if _, ok := tx.pendingAt(t, lower(t.Name()), r); ok {
		return // written by this transaction, touched then
	}
	if tx.base == nil {
		tx.touchSeen(t, r, seen)
		return
	}
	tx.touchRow(t, r)
}

// record adds op, a point write, to the pending ones.
func (tx *Tx) record(op *Op) error {
	if op.Row != nil {
		op.Row.setVersion(pendingVer)
	}
	tx.ops = append(tx.ops, op)
	tx.modified.Store(int64(len(tx.ops)))
	return tx.grew(op)
}

// UpdatePoint is UpdateRow of old, a row Get returned from t (as Meta has
// it), which may stay pending.
func (tx *Tx) UpdatePoint(t *Table, old *Row, newVals []any) error {
	nr := newRow(old.ID, newVals)
	if !tx.pointable(t) || t.shape.comparePrimary(old, nr) != 0 || nr.NumValues() != t.shape.def.NumCols {
		vt, err := tx.pointTable(t, old, true)
		if err != nil {
			return err
		}
		return tx.UpdateRow(vt, old, newVals)
	}
	vt, err := tx.pointTable(t, old, false)
	if err != nil {
		return err
	}
	tx.touchPoint(vt, old, old)
	return tx.record(&Op{Kind: OpUpdate, Table: t.Name(), Old: old, Row: nr})
}

// DeletePoint is DeleteRow of old, a row Get returned from t (as Meta has
// it), which may stay pending.
func (tx *Tx) DeletePoint(t *Table, old *Row) error {
	if !tx.pointable(t) {
		vt, err := tx.pointTable(t, old, true)
		if err != nil {
			return err
		}
		return tx.DeleteRow(vt, old)
	}
	vt, err := tx.pointTable(t, old, false)
	if err != nil {
		return err
	}
	tx.touchPoint(vt, old, old)
	return tx.record(&Op{Kind: OpDelete, Table: t.Name(), Old: old})
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
	if _, exists, err := tx.Get(t, r); err != nil {
		return nil, err
	} else if exists {
		return tx.Insert(t.Name(), vals) // a duplicate: reported as usual
	}
	vt, err := tx.pointTable(t, nil, false)
	if err != nil {
		return nil, err
	}
	tx.touchPoint(vt, r, nil)
	if err := tx.record(&Op{Kind: OpInsert, Table: t.Name(), Row: r}); err != nil {
		return nil, err
	}
	return r, nil
}

// pointTable returns the table a point write of old (nil: an insert) to
// t (as Meta has it) goes to: t itself while the transaction is deferred,
// else the version of t that Meta has now, or with view the one the
// transaction's view has (its pending writes applied; the snapshot taken
// if not yet). A deferred transaction that took its snapshot may have read
// old before: if its snapshot holds another version of the row, the write
// is refused (ErrConflict), as its commit would be.
func (tx *Tx) pointTable(t *Table, old *Row, view bool) (*Table, error) {
	if !view && !tx.late {
		return t, nil // deferred (no snapshot yet), or not deferred
	}
	var vt *Table
	var ok bool
	if view {
		vt, ok = tx.Table(t.Name())
	} else {
		vt, ok = tx.Meta().Table(t.Name())
	}
	switch {
	case !ok && tx.late:
		return nil, fmt.Errorf("%w: table %s was dropped since the transaction began", ErrConflict, t.Name())
	case !ok:
		return t, nil
	}
	if tx.late && old != nil && old.version() != pendingVer {
		if cur, found := vt.locate(old); !found || cur.version() != old.version() && cur.version() != pendingVer {
			return nil, fmt.Errorf("%w: a row of %s changed since it was read", ErrConflict, t.Name())
		}
	}
	return vt, nil
}
