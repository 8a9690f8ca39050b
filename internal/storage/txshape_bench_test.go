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
