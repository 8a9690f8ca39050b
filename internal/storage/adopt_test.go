package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sync"
	"testing"
)

// A commit whose tables no other commit changed since its snapshot publishes
// the transaction's own tables (Tx.adoptable). Its rows must then carry the
// commit's sequence like re-applied ones: a later transaction that updates
// one of them must still conflict with a concurrent update.
func TestAdoptedCommitStampsItsRows(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)

	b := db.Begin()
	if _, err := b.Insert("users", []any{int64(10), "dan", int64(40)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Update("users", []any{int64(1), "ann", int64(20)}, []any{int64(1), "ann", int64(21)}); err != nil {
		t.Fatal(err)
	}
	view, _ := b.Table("users")
	mustCommit(t, b)
	now, _ := db.Snapshot().Table("users")
	if now != view {
		t.Fatal("the commit re-applied the transaction: no other commit wrote the table, its view should have been adopted")
	}
	now.Scan(func(r *Row) bool {
		if r.version() == pendingVer {
			t.Errorf("row %v published with the pending version", r.Values())
		}
		return true
	})
	if got := committed(t, db); got != "1 ann 21;2 bob 21;3 cid 22;10 dan 40" {
		t.Fatalf("rows = %s", got)
	}

	a, c := db.Begin(), db.Begin()
	if err := c.Update("users", []any{int64(10), "dan", int64(40)}, []any{int64(10), "dan", int64(41)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, c)
	if err := a.Update("users", []any{int64(10), "dan", int64(40)}, []any{int64(10), "dan", int64(42)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("update of a row a concurrent commit updated: %v, want ErrConflict", err)
	}
	if got := committed(t, db); got != "1 ann 21;2 bob 21;3 cid 22;10 dan 41" {
		t.Fatalf("rows = %s", got)
	}
}

// Two transactions insert the same new key: the first commit is adopted, the
// second must fail although its snapshot had no such row.
func TestConcurrentInsertOfOneNewKeyConflicts(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	t1, t2 := db.Begin(), db.Begin()
	for i := int64(100); i < 200; i++ {
		if _, err := t2.Insert("users", []any{i, "n" + string(rune('a'+i%26)) + string(rune('a'+i/26)), i}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := t1.Insert("users", []any{int64(150), "eve", int64(1)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, t1)
	if err := t2.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit of a key inserted concurrently: %v, want ErrConflict", err)
	}
	if got := committed(t, db); got != "1 ann 20;2 bob 21;3 cid 22;150 eve 1" {
		t.Fatalf("rows = %s", got)
	}
}

// A key the transaction deleted and inserted again conflicts with a
// concurrent change of that row, and commits when there is none.
func TestDeleteThenInsertOfAKey(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	move := func(tx *Tx, age int64) {
		t.Helper()
		if err := tx.Delete("users", []any{int64(2), "bob", int64(21)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Insert("users", []any{int64(2), "bob", age}); err != nil {
			t.Fatal(err)
		}
	}
	t1, t2 := db.Begin(), db.Begin()
	move(t1, 50)
	if err := t2.Update("users", []any{int64(2), "bob", int64(21)}, []any{int64(2), "bob", int64(22)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, t2)
	if err := t1.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("reinsert of a row changed concurrently: %v, want ErrConflict", err)
	}
	// Another row written meanwhile: t3's commit checks its keys.
	t3, t4 := db.Begin(), db.Begin()
	move(t3, 60)
	if err := t4.Update("users", []any{int64(3), "cid", int64(22)}, []any{int64(3), "cid", int64(23)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, t4)
	mustCommit(t, t3)
	if got := committed(t, db); got != "1 ann 20;2 bob 60;3 cid 23" {
		t.Fatalf("rows = %s", got)
	}
}

// Rows keyed by one integer column compare by the integers read in place
// exactly as by the column's comparison, for every Go integer type of
// either kind, boxed or compact.
func TestIntegerKeysOrderAsValues(t *testing.T) {
	def := &TableDef{Name: "k", NumCols: 2, AutoCol: -1, PK: []int{1}}
	signed := func(v any) int64 {
		switch x := v.(type) {
		case int64:
			return x
		case int32:
			return int64(x)
		case int16:
			return int64(x)
		case int8:
			return int64(x)
		case int:
			return int64(x)
		}
		panic("not signed")
	}
	unsigned := func(v any) uint64 {
		switch x := v.(type) {
		case uint64:
			return x
		case uint32:
			return uint64(x)
		case uint16:
			return uint64(x)
		case uint8:
			return uint64(x)
		case uint:
			return uint64(x)
		}
		panic("not unsigned")
	}
	rng := rand.New(rand.NewSource(7))
	signedVal := func() any {
		edges := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64, math.MinInt32, math.MaxInt32}
		v := rng.Int63() - rng.Int63()
		if rng.Intn(4) == 0 {
			v = edges[rng.Intn(len(edges))]
		}
		switch rng.Intn(5) {
		case 0:
			return int32(v)
		case 1:
			return int16(v)
		case 2:
			return int8(v)
		case 3:
			return int(v)
		}
		return v
	}
	unsignedVal := func() any {
		edges := []uint64{0, 1, math.MaxUint64, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint32}
		v := rng.Uint64()
		if rng.Intn(4) == 0 {
			v = edges[rng.Intn(len(edges))]
		}
		switch rng.Intn(5) {
		case 0:
			return uint32(v)
		case 1:
			return uint16(v)
		case 2:
			return uint8(v)
		case 3:
			return uint(v)
		}
		return v
	}
	for _, kind := range []struct {
		name string
		val  func() any
		cmp  Compare
	}{
		{"signed", signedVal, func(a, b any) int { return cmp.Compare(signed(a), signed(b)) }},
		{"unsigned", unsignedVal, func(a, b any) int { return cmp.Compare(unsigned(a), unsigned(b)) }},
	} {
		s := newShape(def, []Compare{nil, kind.cmp})
		plain := newShape(&TableDef{Name: "k", NumCols: 2, AutoCol: -1, PK: []int{1}}, []Compare{nil, kind.cmp})
		for i := 0; i < 20000; i++ {
			a, b := KeyRow([]any{nil, kind.val()}), KeyRow([]any{nil, kind.val()})
			if i%7 == 0 {
				b.boxed()[1] = a.boxed()[1]
			}
			want := kind.cmp(a.Value(1), b.Value(1))
			if got := plain.compareCols(def.PK, a, b); got != want {
				t.Fatalf("%s: %T %v vs %T %v compare %d by values, %d by the column", kind.name, a.Value(1), a.Value(1), b.Value(1), b.Value(1), got, want)
			}
			// Compact rows compare their integers in place, alike.
			ca, cb := rowOf(1, a.Values()), rowOf(2, b.Values())
			if !ca.isCompact() || !cb.isCompact() {
				t.Fatalf("%s: %T, %T not compact", kind.name, a.Value(1), b.Value(1))
			}
			if got, got2 := plain.compareCols(def.PK, ca, cb), plain.compareCols(def.PK, ca, b); got != want || got2 != want {
				t.Fatalf("%s: %T %v vs %T %v compare %d compact, %d compact to boxed, %d by the column", kind.name, a.Value(1), a.Value(1), b.Value(1), b.Value(1), got, got2, want)
			}
			if got, got2 := s.comparePrimary(a, b), s.comparePrimary(ca, cb); got != want || got2 != want {
				t.Fatalf("%s: %v (%T) vs %v (%T): the primary key orders them %d boxed, %d compact, the column %d", kind.name, a.Value(1), a.Value(1), b.Value(1), b.Value(1), got, got2, want)
			}
		}
	}
	// A key of another kind, a string or a NULL goes through the column's
	// comparison; a seek row before or after a key it shares.
	s := newShape(def, []Compare{nil, func(a, b any) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) }})
	seven := KeyRow([]any{nil, int64(7)})
	for _, tc := range []struct {
		a    *Row
		want int
	}{
		{KeyRow([]any{nil, "7"}), 0},
		{KeyRow([]any{nil, "8"}), 1},
		{KeyRow([]any{nil, nil}), -1},
		{Seek([]any{nil, int64(7)}, 1, -1), -1},
		{Seek([]any{nil, int64(7)}, 1, 1), 1},
	} {
		if got := s.comparePrimary(tc.a, seven); got != tc.want {
			t.Errorf("%#v vs 7: %d, want %d", tc.a.Values(), got, tc.want)
		}
	}
}

// Concurrent read-modify-write transactions over two tables, some touching
// both, retried on ErrConflict, among one-row changes committed alone
// (CommitRow, retried on ErrStale): no update is lost whether a commit
// adopts its tables, re-applies its ops or applies one row, and the journal
// replays to the same rows. Each counter ends at the number of committed increments of it.
func TestConcurrentIncrementsLoseNothing(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db, err := e.CreateDatabase("app", nil)
	if err != nil {
		t.Fatal(err)
	}
	def := func(name string) *TableDef {
		return &TableDef{Name: name, NumCols: 2, AutoCol: -1, PK: []int{0}, Indexes: []IndexDef{{Name: "kv", Cols: []int{1}}}}
	}
	tx := db.Begin()
	for _, name := range []string{"a", "b"} {
		if err := tx.CreateTable(def(name)); err != nil {
			t.Fatal(err)
		}
		for k := int64(0); k < 4; k++ {
			if _, err := tx.Insert(name, []any{k, int64(0)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mustCommit(t, tx)

	const workers, rounds = 4, 300
	var mu sync.Mutex
	want := map[string]int64{}
	retries := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < rounds; i++ {
				// One or two rows, of one table or both.
				type target struct {
					table string
					key   int64
				}
				targets := []target{{[]string{"a", "b"}[rng.Intn(2)], rng.Int63n(4)}}
				if rng.Intn(2) == 0 {
					if t2 := (target{[]string{"a", "b"}[rng.Intn(2)], rng.Int63n(4)}); t2 != targets[0] {
						targets = append(targets, t2)
					}
				}
				if len(targets) == 1 && rng.Intn(2) == 0 {
					// A row committed alone (CommitRow), among the
					// transactions: it must conflict with them as they
					// do with each other.
					tg := targets[0]
					for {
						tb, _ := db.Snapshot().Table(tg.table)
						r, _ := tb.Get(KeyRow([]any{tg.key, nil}))
						_, err := db.CommitRow(RowChange{Table: tb, Seen: r, Kind: OpUpdate, Vals: []any{tg.key, r.Value(1).(int64) + 1}})
						if errors.Is(err, ErrStale) {
							mu.Lock()
							retries++
							mu.Unlock()
							continue
						}
						if err != nil {
							t.Error(err)
							return
						}
						break
					}
					mu.Lock()
					want[fmt.Sprintf("%s/%d", tg.table, tg.key)]++
					mu.Unlock()
					continue
				}
				for {
					tx := db.Begin()
					ok := true
					for _, tg := range targets {
						tb, _ := tx.Table(tg.table)
						r, found := tb.Get(KeyRow([]any{tg.key, nil}))
						if !found {
							t.Errorf("row %s/%d missing", tg.table, tg.key)
							return
						}
						if err := tx.Update(tg.table, r.Values(), []any{tg.key, r.Value(1).(int64) + 1}); err != nil {
							t.Error(err)
							return
						}
					}
					err := tx.Commit(context.Background())
					if errors.Is(err, ErrConflict) {
						ok = false
						mu.Lock()
						retries++
						mu.Unlock()
					} else if err != nil {
						t.Error(err)
						return
					}
					if ok {
						mu.Lock()
						for _, tg := range targets {
							want[fmt.Sprintf("%s/%d", tg.table, tg.key)]++
						}
						mu.Unlock()
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	check := func(db *DB, when string) {
		t.Helper()
		for _, name := range []string{"a", "b"} {
			tb, _ := db.Snapshot().Table(name)
			tb.Scan(func(r *Row) bool {
				key := fmt.Sprintf("%s/%d", name, r.Value(0))
				if r.Value(1).(int64) != want[key] {
					t.Errorf("%s: %s is %d, %d increments committed", when, key, r.Value(1), want[key])
				}
				return true
			})
			n := 0
			tb.AscendIndex(0, nil, func(*Row) bool { n++; return true })
			if n != tb.Len() {
				t.Errorf("%s: index of %s has %d entries for %d rows", when, name, n, tb.Len())
			}
		}
	}
	check(db, "committed")
	if retries == 0 {
		t.Fatal("no transaction met a conflict: the commits did not interleave")
	}
	t.Logf("%d transactions committed, %d retried after a conflict", workers*rounds, retries)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, _ := e2.Database("app")
	check(db2, "after reopen")
}
