package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkTxWriteOnly commits transactions shaped like sysbench's
// oltp_write_only (update of the indexed column, update of a
// non-indexed one, delete and re-insert of a row) on random rows of 10
// tables of 10,000 rows, without a journal: the searches and tree copies
// of a multi-statement transaction's view and of its commit.
func BenchmarkTxWriteOnly(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const tables, rows = 10, 10000
	db, names := sysbenchDB(b, rnd, tables, rows)
	key := func() *Row { return KeyRow([]any{int64(rnd.IntN(rows) + 1), nil, nil, nil}) }
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		name := names[i%tables]
		tx := db.Begin()
		t, _ := tx.Table(name)
		if r, ok := t.Get(key()); ok {
			vals := r.Values()
			vals[1] = int64(rnd.IntN(rows))
			if err := tx.UpdateRow(t, r, vals); err != nil {
				b.Fatal(err)
			}
		}
		t, _ = tx.Table(name)
		if r, ok := t.Get(key()); ok {
			vals := r.Values()
			vals[2] = fmt.Sprintf("%0119d", i)
			if err := tx.UpdateRow(t, r, vals); err != nil {
				b.Fatal(err)
			}
		}
		t, _ = tx.Table(name)
		if r, ok := t.Get(key()); ok {
			vals := r.Values()
			if err := tx.DeleteRow(t, r); err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Insert(name, vals); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTxWriteOnlyTables is BenchmarkTxWriteOnly with each statement
// on a table of its own, as sysbench picks them, and another commit to
// each table between two of the transaction's (so that its view is never
// adopted, as under concurrent writers; they are not timed): "applied" writes through the
// view as the planner's statements do, "pending" through the point-write
// methods the compiled statements use (pointwrite.go).
func BenchmarkTxWriteOnlyTables(b *testing.B) {
	for _, pending := range []bool{false, true} {
		name := "applied"
		if pending {
			name = "pending"
		}
		b.Run(name, func(b *testing.B) {
			rnd := rand.New(rand.NewPCG(1, 2))
			const tables, rows = 10, 10000
			db, names := sysbenchDB(b, rnd, tables, rows)
			// Row 1 is the other commits'.
			key := func() *Row { return KeyRow([]any{int64(rnd.IntN(rows-1) + 2), nil, nil, nil}) }
			get := func(tx *Tx, name string) (*Table, *Row, bool) {
				if pending {
					t, _ := tx.Meta().Table(name)
					r, ok, _ := tx.Get(t, key())
					return t, r, ok
				}
				t, _ := tx.Table(name)
				r, ok := t.Get(key())
				return t, r, ok
			}
			update := func(tx *Tx, t *Table, r *Row, vals []any) error {
				if pending {
					return tx.UpdatePoint(t, r, vals)
				}
				return tx.UpdateRow(t, r, vals)
			}
			other := func(name string) {
				tx := db.Begin()
				t, _ := tx.Table(name)
				if r, ok := t.Get(KeyRow([]any{int64(1), nil, nil, nil})); ok {
					if err := tx.UpdateRow(t, r, r.Values()); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				tx := db.Begin()
				if t, r, ok := get(tx, names[rnd.IntN(tables)]); ok {
					vals := r.Values()
					vals[1] = int64(rnd.IntN(rows))
					if err := update(tx, t, r, vals); err != nil {
						b.Fatal(err)
					}
				}
				if t, r, ok := get(tx, names[rnd.IntN(tables)]); ok {
					vals := r.Values()
					vals[2] = fmt.Sprintf("%0119d", i)
					if err := update(tx, t, r, vals); err != nil {
						b.Fatal(err)
					}
				}
				if t, r, ok := get(tx, names[rnd.IntN(tables)]); ok {
					vals := r.Values()
					var err error
					if pending {
						if err = tx.DeletePoint(t, r); err == nil {
							_, err = tx.InsertPoint(t, vals)
						}
					} else if err = tx.DeleteRow(t, r); err == nil {
						_, err = tx.Insert(t.Name(), vals)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				for _, n := range names {
					other(n)
				}
				b.StartTimer()
				if err := tx.Commit(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
