package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// kvDB makes a database with table kv holding rows 1..n, v = "v0".
func kvDB(t *testing.T, e *Engine, name string, n int64) *DB {
	t.Helper()
	db, err := e.CreateDatabase(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	tx := db.Begin()
	if err := tx.CreateTable(kvDef); err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= n; id++ {
		if _, err := tx.Insert("kv", []any{id, id % 3, "v0"}); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, tx)
	return db
}

func kvKey(id int64) *Row { return KeyRow([]any{id, int64(0), ""}) }

// committedV returns column v of row id of the committed kv table ("" if
// absent).
func committedV(db *DB, id int64) string {
	v := ""
	db.Read(func(cat *Catalog) {
		t, _ := cat.Table("kv")
		if r, ok := t.Get(kvKey(id)); ok {
			v = r.Value(2).(string)
		}
	})
	return v
}

// pointSet updates row id of kv to v through tx's point writes.
func pointSet(t *testing.T, tx *Tx, id int64, v string) error {
	t.Helper()
	kv, _ := tx.Meta().Table("kv")
	old, found, err := tx.Get(kv, kvKey(id))
	if err != nil || !found {
		return fmt.Errorf("get %d: found %v, %v", id, found, err)
	}
	return tx.UpdatePoint(kv, old, []any{id, old.Value(1), v})
}

// otherSet commits v into row id of kv as an autocommit write by key does,
// without freezing the committed catalog.
func otherSet(t *testing.T, db *DB, id int64, v string) {
	t.Helper()
	var kv *Table
	var old *Row
	ok := false
	db.Read(func(cat *Catalog) {
		kv, _ = cat.Table("kv")
		old, ok = kv.Get(kvKey(id))
	})
	c := RowChange{Table: kv, Kind: OpInsert, Vals: []any{id, int64(0), v}}
	if ok {
		c = RowChange{Table: kv, Seen: old, Kind: OpUpdate, Vals: []any{id, old.Value(1), v}}
	}
	if _, err := db.CommitRow(c); err != nil {
		t.Fatal(err)
	}
}

func TestDeferredTransactionHoldsNoSnapshot(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := kvDB(t, e, "d", 6)
	ctx := context.Background()

	// Point writes only: no snapshot, every commit in place, the rows
	// read are the newest, and nothing conflicts.
	tx := db.BeginDeferred()
	otherSet(t, db, 2, "other") // after BeginDeferred, before the read
	if err := pointSet(t, tx, 1, "mine1"); err != nil {
		t.Fatal(err)
	}
	before := db.InPlaceCommits()
	otherSet(t, db, 3, "other")
	if db.InPlaceCommits() != before+1 {
		t.Fatalf("a commit beside a deferred transaction copied: in place %d -> %d", before, db.InPlaceCommits())
	}
	kv, _ := tx.Meta().Table("kv")
	if r, _, err := tx.Get(kv, kvKey(2)); err != nil || r.Value(2) != "other" {
		t.Fatalf("deferred read of row 2: %v, %v; want the newest, other", r, err)
	}
	if err := pointSet(t, tx, 2, "mine2"); err != nil {
		t.Fatal(err)
	}
	if tx.Pinned() {
		t.Fatal("point writes took a snapshot")
	}
	before = db.InPlaceCommits()
	mustCommit(t, tx)
	if db.InPlaceCommits() != before+1 {
		t.Fatal("the deferred transaction's commit copied")
	}
	for id, want := range map[int64]string{1: "mine1", 2: "mine2", 3: "other"} {
		if got := committedV(db, id); got != want {
			t.Fatalf("row %d: %q, want %q", id, got, want)
		}
	}

	// A write worked out on a row another commit replaced since: refused.
	tx = db.BeginDeferred()
	kv, _ = tx.Meta().Table("kv")
	old, _, _ := tx.Get(kv, kvKey(4))
	otherSet(t, db, 4, "other")
	if err := tx.UpdatePoint(kv, old, []any{int64(4), int64(1), "lost"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit over a replaced row: %v, want ErrConflict", err)
	}
	if got := committedV(db, 4); got != "other" {
		t.Fatalf("row 4: %q, want other", got)
	}

	// An insert at a key found free, taken since: refused.
	tx = db.BeginDeferred()
	kv, _ = tx.Meta().Table("kv")
	if _, err := tx.InsertPoint(kv, []any{int64(7), int64(0), "mine"}); err != nil {
		t.Fatal(err)
	}
	otherSet(t, db, 7, "other")
	if err := tx.Commit(ctx); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit of an insert at a key taken since: %v, want ErrConflict", err)
	}

	// The snapshot taken after point writes that still fit: the newest
	// rows with the transaction's own writes on top, and the commit.
	tx = db.BeginDeferred()
	if err := pointSet(t, tx, 5, "mine5"); err != nil {
		t.Fatal(err)
	}
	otherSet(t, db, 6, "other6")
	view, _ := tx.Table("kv")
	if !tx.Pinned() {
		t.Fatal("Table did not take the snapshot")
	}
	r5, _ := view.Get(kvKey(5))
	r6, _ := view.Get(kvKey(6))
	if r5.Value(2) != "mine5" || r6.Value(2) != "other6" {
		t.Fatalf("view after the snapshot: row 5 %v, row 6 %v", r5.Values(), r6.Values())
	}
	otherSet(t, db, 6, "after") // after the snapshot: not seen, no conflict
	if r6, _ := view.Get(kvKey(6)); r6.Value(2) != "other6" {
		t.Fatal("the snapshot moved")
	}
	mustCommit(t, tx)

	// The snapshot taken after a row written was replaced: the view has
	// the transaction's own write over the newest rows, the commit fails.
	tx = db.BeginDeferred()
	if err := pointSet(t, tx, 5, "doomed"); err != nil {
		t.Fatal(err)
	}
	otherSet(t, db, 5, "other5")
	view, _ = tx.Table("kv")
	if r, _ := view.Get(kvKey(5)); r.Value(2) != "doomed" {
		t.Fatalf("doomed view of row 5: %v", r.Values())
	}
	if view.Len() != 7 {
		t.Fatalf("doomed view: %d rows", view.Len())
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrConflict) {
		t.Fatalf("doomed commit: %v, want ErrConflict", err)
	}

	// A table redefined since BeginDeferred: the point read refuses.
	tx = db.BeginDeferred()
	kv, _ = tx.Meta().Table("kv")
	alter := db.Begin()
	if err := alter.AlterTable("kv", kvDef, nil); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, alter)
	if _, _, err := tx.Get(kv, kvKey(1)); !errors.Is(err, ErrConflict) {
		t.Fatalf("read after ALTER: %v, want ErrConflict", err)
	}
	tx.Rollback()
}

// A write that cannot stay pending (a table with a second unique key) of
// a row read before the snapshot: refused when the snapshot holds another
// version of it.
func TestDeferredWriteOutsidePendingChecksWhatItRead(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	for _, replaced := range []bool{false, true} {
		tx := db.BeginDeferred()
		users, _ := tx.Meta().Table("users")
		old, found, err := tx.Get(users, KeyRow([]any{int64(2), "", int64(0)}))
		if err != nil || !found {
			t.Fatal(found, err)
		}
		if replaced {
			o := db.Begin()
			ot, _ := o.Table("users")
			cur, _ := ot.Get(old)
			if err := o.UpdateRow(ot, cur, []any{int64(2), "bob", int64(99)}); err != nil {
				t.Fatal(err)
			}
			mustCommit(t, o)
		}
		err = tx.UpdatePoint(users, old, []any{int64(2), "bob", int64(50)})
		if replaced != errors.Is(err, ErrConflict) {
			t.Fatalf("replaced %v: UpdatePoint %v", replaced, err)
		}
		if !tx.Pinned() {
			t.Fatal("a write outside the pending ones took no snapshot")
		}
		if replaced {
			tx.Rollback()
			continue
		}
		mustCommit(t, tx)
	}
	if got := committed(t, db); got != "1 ann 20;2 bob 99;3 cid 22" {
		t.Fatalf("committed %q", got)
	}
}

// Counters incremented by random interleavings of deferred transactions,
// transactions with a snapshot, and autocommit writes, with snapshots
// taken and savepoints rolled back to in between: every committed
// increment is in the final counts (no lost update), no transaction's
// view misses its own increments or moves, and a deferred transaction
// whose rows no one else wrote commits.
func TestDeferredNoLostUpdates(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	ctx := context.Background()
	const rows = 5
	type open struct {
		tx       *Tx
		deferred bool
		incs     map[int64]int
		// others: another commit wrote a row after this one read it.
		others bool
		read   map[int64]bool
		// got: a row read, to be incremented at a later step (a
		// statement reads, then waits for the row's lock, then writes).
		got *Row
	}
	for seed := int64(0); seed < 200; seed++ {
		db := kvDB(t, e, fmt.Sprintf("c%d", seed), rows)
		rng := rand.New(rand.NewSource(seed))
		want := map[int64]int{}
		var txs []*open
		count := func(r *Row) int {
			var n int
			fmt.Sscanf(r.Value(2).(string), "v%d", &n)
			return n
		}
		// wrote notes a commit of row id: the open transactions that
		// read it before may not commit.
		wrote := func(id int64, except *open) {
			for _, o := range txs {
				if o != except && o.read[id] {
					o.others = true
				}
			}
		}
		for step := 0; step < 60; step++ {
			id := int64(1 + rng.Intn(rows))
			switch what := rng.Intn(10); {
			case what < 2 || len(txs) == 0:
				o := &open{deferred: rng.Intn(3) > 0, incs: map[int64]int{}, read: map[int64]bool{}}
				if o.deferred {
					o.tx = db.BeginDeferred()
				} else {
					o.tx = db.Begin()
				}
				txs = append(txs, o)
			case what < 6:
				o := txs[rng.Intn(len(txs))]
				kv, _ := o.tx.Meta().Table("kv")
				if o.got == nil {
					old, found, err := o.tx.Get(kv, kvKey(id))
					if err != nil || !found {
						t.Fatalf("seed %d step %d: get %d: %v %v", seed, step, id, found, err)
					}
					o.read[id], o.got = true, old
					if rng.Intn(2) == 0 {
						continue // written at a later step
					}
				}
				old := o.got
				o.got = nil
				id := old.Value(0).(int64)
				err := o.tx.UpdatePoint(kv, old, []any{id, old.Value(1), fmt.Sprintf("v%d", count(old)+1)})
				switch {
				case errors.Is(err, ErrConflict) && o.others && o.tx.late:
					// Read before the snapshot, replaced since: refused
					// at once; the SQL layer rolls the transaction back.
					o.tx.Rollback()
					txs = slices.DeleteFunc(txs, func(x *open) bool { return x == o })
					continue
				case err != nil:
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
				o.incs[id]++
			case what < 7:
				// Autocommit increment.
				kv, _ := db.Snapshot().Table("kv")
				old, _ := kv.Get(kvKey(id))
				if _, err := db.CommitRow(RowChange{Table: kv, Seen: old, Kind: OpUpdate, Vals: []any{id, old.Value(1), fmt.Sprintf("v%d", count(old)+1)}}); err != nil {
					t.Fatal(err)
				}
				want[id]++
				wrote(id, nil)
			case what < 8:
				// A read of the whole view: the snapshot (taken now if
				// not yet) with the transaction's own increments.
				o := txs[rng.Intn(len(txs))]
				pinnedBefore := o.tx.Pinned()
				var snap *Table
				if !pinnedBefore {
					snap, _ = db.Snapshot().Table("kv")
				}
				view, _ := o.tx.Table("kv")
				if !pinnedBefore && o.tx.doomed == nil {
					for i := int64(1); i <= rows; i++ {
						v, _ := view.Get(kvKey(i))
						s, _ := snap.Get(kvKey(i))
						if count(v) != count(s)+o.incs[i] {
							t.Fatalf("seed %d step %d: row %d in a fresh snapshot %d, committed %d and %d of its own", seed, step, i, count(v), count(s), o.incs[i])
						}
					}
				}
				if o.tx.doomed != nil && !o.others {
					t.Fatalf("seed %d step %d: doomed (%v) though no one wrote its rows", seed, step, o.tx.doomed)
				}
			default:
				k := rng.Intn(len(txs))
				o := txs[k]
				txs = append(txs[:k], txs[k+1:]...)
				if rng.Intn(6) == 0 {
					o.tx.Rollback()
					continue
				}
				err := o.tx.Commit(ctx)
				switch {
				case err == nil:
					for i, n := range o.incs {
						want[i] += n
						wrote(i, o)
					}
				case errors.Is(err, ErrConflict):
					if o.deferred && !o.tx.Pinned() && !o.others {
						t.Fatalf("seed %d step %d: deferred commit conflicts though no one wrote its rows", seed, step)
					}
				default:
					t.Fatal(err)
				}
			}
		}
		for _, o := range txs {
			o.tx.Rollback()
		}
		kv, _ := db.Snapshot().Table("kv")
		for id := int64(1); id <= rows; id++ {
			r, _ := kv.Get(kvKey(id))
			if got := count(r); got != want[id] {
				t.Fatalf("seed %d: row %d counts %d increments, %d were committed", seed, id, got, want[id])
			}
		}
	}
}
