package storage

import (
	"fmt"
)

// Deferred snapshots. A transaction begun with BeginDeferred holds no
// snapshot while all it does is point writes (pointwrite.go): it reads the
// newest committed version of each row it writes (Get, through DB.Read,
// which does not freeze the catalog), records the version it read, and
// leaves the write pending. Its commit checks those versions against the
// committed catalog, as every commit does, so a write worked out on a row
// that another commit replaced since is refused (ErrConflict): first
// committer wins, as with a snapshot. What it gains: no snapshot freezes
// the committed catalog, so the commits of other transactions meanwhile,
// and its own, may change the committed trees in place (DB.commitWith)
// instead of copying the paths they write.
//
// The transaction takes its snapshot (pin) the first time it needs one:
// any read of its catalog (Catalog, Table), a savepoint, a locking read, a
// write that is not a point write. The snapshot is the committed catalog
// as it is then, and the pending writes are applied to it. They were
// worked out on the rows they read; if a commit since replaced one of those
// rows, inserted at a key one of them found free, or redefined one of
// their tables, they no longer fit the snapshot: the transaction is doomed
// (its commit returns ErrConflict, which it would have met anyway) and its
// view holds its own writes over the newest rows, as InnoDB shows a
// transaction's own changes over a read view taken after them. A row read
// before the snapshot (Get) and written after it is checked the same way
// when it is written (pointTable): if the snapshot holds another version
// of it, the write is refused (ErrConflict).
//
// Until then, Meta gives the definitions of the committed catalog as it
// was at BeginDeferred: a commit since that changed a definition the
// transaction then uses makes its point reads fail (ErrConflict), as its
// commit would.

// BeginDeferred starts a transaction that takes its snapshot only when it
// first needs one (see above).
func (db *DB) BeginDeferred() *Tx {
	tx := db.newTx()
	tx.meta = db.Latest()
	return tx
}

// Pinned reports whether the transaction holds its snapshot.
func (tx *Tx) Pinned() bool { return tx.base != nil }

// pin gives a deferred transaction its snapshot: the committed catalog as
// it is now, with the pending writes checked against it.
func (tx *Tx) pin() {
	if tx.base != nil {
		return
	}
	tx.base, tx.meta, tx.late = tx.db.frozen().cat, nil, true
	if tx.applied < len(tx.ops) {
		// What the pending writes read must be what the snapshot holds:
		// the commit's own check, against the snapshot.
		if err := tx.checkLocked(tx.base, nil); err != nil {
			tx.doomed = err
		}
	}
}

// getLatest is Get for a deferred transaction: the newest committed row
// with key's primary key in t (as Meta has it, the definitions at
// BeginDeferred), read without freezing the committed catalog.
func (tx *Tx) getLatest(t *Table, key *Row) (row *Row, found bool, err error) {
	name := lower(t.Name())
	same := false
	tx.db.Read(func(cat *Catalog) {
		ct, ok := cat.tables.get(name)
		if same = ok && ct.schemaVer == t.schemaVer; same {
			row, found = ct.Get(key)
		}
	})
	if !same {
		return nil, false, fmt.Errorf("%w: table %s was dropped or altered since the transaction began", ErrConflict, t.Name())
	}
	return row, found, nil
}

// touchSeen is touchRow for a point write of a deferred transaction: the
// version recorded is that of seen, the committed row the write was worked
// out on (nil: the key was free), not one read again, which may be newer.
func (tx *Tx) touchSeen(t *Table, r, seen *Row) {
	tt := tx.touchTable(t.Name(), false)
	if tt.keys == nil || tt.ddl {
		return
	}
	if seen == nil {
		tt.absent = append(tt.absent, r)
		return
	}
	probe := &keyTouch{key: r}
	if _, ok := tt.keys.Get(probe); ok {
		return
	}
	probe.ver = seen.version()
	tt.keys.Set(probe)
}

// applyDoomed applies a pending write of a doomed transaction to its view:
// over whatever the newest committed catalog holds at its key, inserting,
// replacing or leaving out as needed; a write to a table redefined since
// is left out.
func (tx *Tx) applyDoomed(a *applier, op *Op) {
	name := lower(op.Table)
	t, ok := a.cat.tables.get(name)
	tt := tx.touched[name]
	if !ok || tt == nil || t.schemaVer != tt.schemaVer {
		return
	}
	key := op.Row
	if op.Kind == OpDelete {
		key = op.Old
	}
	cur, exists := t.locate(key)
	var err error
	switch {
	case op.Kind == OpDelete && !exists:
	case op.Kind == OpDelete:
		err = a.apply(&Op{Kind: OpDelete, Table: op.Table, Old: cur})
	case exists:
		err = a.apply(&Op{Kind: OpUpdate, Table: op.Table, Old: cur, Row: op.Row})
	default:
		err = a.insert(&Op{Kind: OpInsert, Table: op.Table, Row: op.Row}, false)
	}
	if err != nil {
		panic(fmt.Sprintf("storage: own write to %s over the newest rows: %v", op.Table, err))
	}
}
