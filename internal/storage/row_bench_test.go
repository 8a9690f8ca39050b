package storage

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
)

// BenchmarkIndexRangeScan reads the rows of a secondary index range as a
// compiled range query does (NULL check, bound check), over 10 tables of
// 10,000 sysbench-shaped rows stored compactly or boxed, one row at a time
// or in batches warmed first (Warm). On this 2-core VM: boxed 420 ns a
// row, compact 300, compact and warmed 115.
func BenchmarkIndexRangeScan(b *testing.B) {
	for _, kind := range []string{"compact", "boxed", "compact-warm"} {
		b.Run(kind, func(b *testing.B) {
			def := &TableDef{Name: "t", NumCols: 4, AutoCol: -1, PK: []int{0}, Indexes: []IndexDef{{Name: "k", Cols: []int{1}}}}
			var tables []*Table
			rnd := rand.New(rand.NewPCG(1, 2))
			for range 10 {
				t, err := newTable(def, testBind)
				if err != nil {
					b.Fatal(err)
				}
				for i := range 10000 {
					vals := []any{int32(i + 1), int32(4000 + rnd.IntN(2000)), fmt.Sprintf("%0119d", rnd.Int64()), fmt.Sprintf("%059d", i)}
					var r *Row
					if kind != "boxed" {
						r = newRow(uint64(i+1), vals)
					} else {
						r = boxedRow(uint64(i+1), vals)
					}
					t.insertRow(r)
				}
				tables = append(tables, t)
			}
			b.ResetTimer()
			rows := 0
			for i := range b.N {
				t := tables[i%len(tables)]
				lo := int64(4000 + rnd.IntN(2000))
				hi := lo + 50
				if kind == "compact-warm" {
					var batch []*Row
					done := false
					work := func() {
						Warm(batch)
						for _, r := range batch {
							if r.IsNull(1) {
								continue
							}
							if t.CompareAt(r, 1, hi) > 0 {
								done = true
								return
							}
							rows++
						}
						batch = batch[:0]
					}
					t.AscendIndex(0, Seek([]any{nil, lo, nil, nil}, 1, -1), func(r *Row) bool {
						batch = append(batch, r)
						if len(batch) == 16 {
							work()
						}
						return !done
					})
					if !done {
						work()
					}
					continue
				}
				t.AscendIndex(0, Seek([]any{nil, lo, nil, nil}, 1, -1), func(r *Row) bool {
					if r.IsNull(1) {
						return true
					}
					if t.CompareAt(r, 1, hi) > 0 {
						return false
					}
					rows++
					return true
				})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(rows, 1)), "ns/row")
		})
	}
}

// BenchmarkGet looks rows up by primary key (one integer column), at
// random, over 10 tables of 10,000 sysbench-shaped compact rows: mostly
// cache misses. The key is read from each row's encoding; on this 2-core
// VM 0.6–1.4 µs a lookup (runs vary that much), against 0.34–0.37 µs when
// a 48-byte row header kept a copy of the key (16 more bytes a row).
func BenchmarkGet(b *testing.B) {
	def := &TableDef{Name: "t", NumCols: 4, AutoCol: -1, PK: []int{0}, Indexes: []IndexDef{{Name: "k", Cols: []int{1}}}}
	rnd := rand.New(rand.NewPCG(1, 2))
	var tables []*Table
	for range 10 {
		t, err := newTable(def, testBind)
		if err != nil {
			b.Fatal(err)
		}
		for i := range 10000 {
			t.insertRow(newRow(uint64(i+1), []any{int32(i + 1), int32(rnd.IntN(10000)), fmt.Sprintf("%0119d", rnd.Int64()), fmt.Sprintf("%059d", i)}))
		}
		tables = append(tables, t)
	}
	keys := make([]*Row, 1024)
	for i := range keys {
		keys[i] = KeyRow([]any{int32(rnd.IntN(10000) + 1), nil, nil, nil})
	}
	b.ResetTimer()
	for i := range b.N {
		if _, ok := tables[i%len(tables)].Get(keys[i%len(keys)]); !ok {
			b.Fatal("missing")
		}
	}
}

// sysbenchDB opens a database without a journal holding tables sbtest1..n
// of rows sysbench-shaped rows (id, k indexed, c, pad).
func sysbenchDB(b *testing.B, rnd *rand.Rand, n, rows int) (*DB, []string) {
	e, err := Open(Options{Root: b.TempDir(), Policy: SaveManual, Bind: testBind, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	db, err := e.CreateDatabase("sb", nil)
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("sbtest%d", i+1)
		tx := db.Begin()
		if err := tx.CreateTable(&TableDef{Name: names[i], NumCols: 4, AutoCol: -1, PK: []int{0}, Indexes: []IndexDef{{Name: "k", Cols: []int{1}}}}); err != nil {
			b.Fatal(err)
		}
		for id := range rows {
			if _, err := tx.Insert(names[i], []any{int64(id + 1), int64(rnd.IntN(rows)), fmt.Sprintf("%0119d", rnd.Int64()), fmt.Sprintf("%059d", id)}); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	return db, names
}

// BenchmarkCommitRowUpdate commits autocommit updates by primary key as a
// compiled UPDATE does (read the row from the committed table, CommitRow
// the new row), of a non-indexed column of random rows of 10 tables of
// 10,000 rows, without a journal: the searches and tree copies of one row
// commit. On this 2-core VM about 14 µs an update.
func BenchmarkCommitRowUpdate(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const tables, rows = 10, 10000
	db, names := sysbenchDB(b, rnd, tables, rows)
	b.ResetTimer()
	for i := range b.N {
		t, _ := db.Snapshot().Table(names[i%tables])
		seen, ok := t.Get(KeyRow([]any{int64(rnd.IntN(rows) + 1), nil, nil, nil}))
		if !ok {
			b.Fatal("missing")
		}
		vals := seen.Values()
		vals[2] = fmt.Sprintf("%0119d", i)
		if _, err := db.CommitRow(RowChange{Table: t, Seen: seen, Kind: OpUpdate, Vals: vals}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitRowTables commits autocommit updates as the compiled
// UPDATE does (the row read through Read, CommitRow in place) in databases
// of 10 and 200 tables: what a one-row commit costs beyond its row as the
// database holds more tables (each commit copies the catalog's set of
// tables).
func BenchmarkCommitRowTables(b *testing.B) {
	for _, tables := range []int{10, 200} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) {
			rnd := rand.New(rand.NewPCG(1, 2))
			const rows = 1000
			db, names := sysbenchDB(b, rnd, tables, rows)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				var c RowChange
				db.Read(func(cat *Catalog) {
					t, _ := cat.Table(names[i%tables])
					seen, ok := t.Get(KeyRow([]any{int64(rnd.IntN(rows) + 1), nil, nil, nil}))
					if !ok {
						b.Fatal("missing")
					}
					vals := seen.Values()
					vals[2] = fmt.Sprintf("%0119d", i)
					c = RowChange{Table: t, Seen: seen, Kind: OpUpdate, Vals: vals}
				})
				if _, err := db.CommitRow(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
