package storage

import (
	"errors"
	"fmt"

	"github.com/miraj-db/miraj/internal/journal"
)

// ErrStale is returned by CommitRow when the committed row at the change's
// key is no longer the one the change was worked out on (or the table was
// redefined): nothing was written, and the caller works the change out
// again on the row as it is now.
var ErrStale = errors.New("storage: row changed since it was read")

// RowChange is one row written by a statement that is a transaction of its
// own (an autocommit INSERT, UPDATE or DELETE by primary key).
type RowChange struct {
	// Table is the table as the change was worked out on it: a committed
	// snapshot's (Snapshot), keyed by a primary key.
	Table *Table
	// Seen is the committed row at the change's key as read from Table
	// (nil for an insert, which expects no row at its key).
	Seen *Row
	Kind OpKind // OpInsert, OpUpdate or OpDelete
	Vals []any  // the new row of an insert or update
	// Note is for the commit hook (commithook.go).
	Note any
}

// CommitRow commits one row change without a working copy: under the
// commit lock, the key's committed row must still be c.Seen and the table's
// definition c.Table's, else ErrStale; the change is then applied once to
// the committed catalog, journaled as any one-row transaction is (so
// secondaries and recovery see no difference), and made durable per the
// save policy. It returns the journal position after the commit (0 when
// not journaled).
//
// Unlike Tx.Commit it never fails with ErrConflict: what other commits did
// to other rows in between does not matter, and a commit that wrote this
// row makes the caller read it again, as MySQL's UPDATE reads the newest
// committed row. The caller holds the row's write lock (Tx.LockForWrite)
// when other transactions may hold it.
func (db *DB) CommitRow(c RowChange) (journal.LSN, error) {
	name := c.Table.Name()
	if len(c.Table.shape.def.PK) == 0 {
		return 0, fmt.Errorf("storage: CommitRow on %s, a table without a primary key", name)
	}
	var op *Op
	switch c.Kind {
	case OpInsert:
		r := newRow(c.Table.ctr.nextID.Add(1)-1, c.Vals)
		op = &Op{Kind: OpInsert, Table: name, Row: r}
	case OpUpdate:
		nr := newRow(c.Seen.ID, c.Vals)
		if c.Table.shape.comparePrimary(c.Seen, nr) != 0 {
			return 0, fmt.Errorf("storage: CommitRow on %s changes the primary key", name)
		}
		op = &Op{Kind: OpUpdate, Table: name, Old: c.Seen, Row: nr}
	case OpDelete:
		op = &Op{Kind: OpDelete, Table: name, Old: c.Seen}
	default:
		return 0, fmt.Errorf("storage: CommitRow of a %d change", c.Kind)
	}
	key := op.Old
	if key == nil {
		key = op.Row
	}
	logged, err := db.commitWith([]*Op{op}, 0, nil, true, c.Note, func(cur *Catalog, a *applier) error {
		a.adopt = op.Row // made above for this commit alone
		t, ok := cur.tables.get(lower(name))
		if !ok || t.shape != c.Table.shape || t.schemaVer != c.Table.schemaVer {
			return ErrStale
		}
		if op.Kind == OpInsert {
			// The search for the key leaves its path in the hint
			// that the insert then follows.
			w, err := a.writable(name)
			if err != nil {
				return err
			}
			if _, found := w.primary.GetHint(key, &a.hintsFor(w)[0]); found {
				return ErrStale
			}
			return a.insert(op, false)
		}
		// The committed table is the version the change was worked out
		// on (a commit that writes a table publishes a new version):
		// the row seen is the key's row now, no search needed.
		if t != c.Table {
			if now, found := t.primary.Get(key); !found || now != c.Seen {
				return ErrStale
			}
		}
		return a.apply(op)
	})
	if err != nil {
		return 0, err
	}
	return logged, db.syncCommit(logged, true)
}
