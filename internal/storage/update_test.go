package storage

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Updates that keep a tree's key (replaced in place) and updates that
// change it (moved), mixed at random in transactions with deletes and
// inserts: after every commit each tree holds exactly the model's rows in
// its order, and the journal replays to the same trees.
func TestUpdatesKeepEveryTreeInOrder(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db, err := e.CreateDatabase("app", nil)
	if err != nil {
		t.Fatal(err)
	}
	// id (pk), name (case-insensitive, unique index), age (index), note
	def := &TableDef{Name: "t", NumCols: 4, AutoCol: -1, PK: []int{0},
		Indexes: []IndexDef{{Name: "uname", Cols: []int{1}, Unique: true}, {Name: "iage", Cols: []int{2, 1}}}}
	tx := db.Begin()
	if err := tx.CreateTable(def); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
	model := map[int64][]any{}
	rng := rand.New(rand.NewPCG(5, 6))
	name := func(id int64) string {
		n := fmt.Sprintf("n%d", id)
		if rng.IntN(2) == 0 {
			n = strings.ToUpper(n) // the same key under the comparison
		}
		return n
	}
	for round := 0; round < 300; round++ {
		tx := db.Begin()
		next := map[int64][]any{}
		for k, v := range model {
			next[k] = v
		}
		for range 1 + rng.IntN(6) {
			id := int64(rng.IntN(40))
			old, ok := next[id]
			switch {
			case !ok:
				vals := []any{id, name(id), int64(rng.IntN(5)), "x"}
				if _, err := tx.Insert("t", vals); err != nil {
					t.Fatal(err)
				}
				next[id] = vals
			case rng.IntN(5) == 0:
				if err := tx.Delete("t", old); err != nil {
					t.Fatal(err)
				}
				delete(next, id)
			default:
				vals := slices.Clone(old)
				switch rng.IntN(4) {
				case 0:
					vals[3] = fmt.Sprint("note", round) // no key changes
				case 1:
					vals[1] = name(id) // the same name key, maybe another case
				case 2:
					vals[2] = int64(rng.IntN(5)) // the age index moves
				default:
					vals[1], vals[2] = name(id), int64(rng.IntN(5))
				}
				if err := tx.Update("t", old, vals); err != nil {
					t.Fatal(err)
				}
				next[id] = vals
			}
		}
		mustCommit(t, tx)
		model = next
		tb, _ := db.Snapshot().Table("t")
		checkTrees(t, tb, model, fmt.Sprint("after commit ", round))
	}
	e.Close()
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, ok := e2.Database("app")
	if !ok {
		t.Fatal("database app missing after reopening")
	}
	tb, _ := db2.Snapshot().Table("t")
	checkTrees(t, tb, model, "after recovery")
}

// checkTrees compares every tree of tb with the model: the same rows, in
// the order of the tree's key.
func checkTrees(t *testing.T, tb *Table, model map[int64][]any, when string) {
	t.Helper()
	var want []*Row
	for _, v := range model {
		want = append(want, KeyRow(v))
	}
	for ix := -1; ix < tb.IndexCount(); ix++ {
		order := tb.shape.comparePrimary
		if ix >= 0 {
			cols := tb.shape.def.Indexes[ix].Cols
			order = func(a, b *Row) int { return tb.shape.compareIndex(cols, a, b) }
		}
		slices.SortFunc(want, order)
		var got []string
		tb.AscendIndex(ix, nil, func(r *Row) bool { got = append(got, fmt.Sprint(r.Values())); return true })
		var exp []string
		for _, r := range want {
			exp = append(exp, fmt.Sprint(r.Values()))
		}
		if !slices.Equal(got, exp) {
			t.Fatalf("%s: tree %d holds\n%v\nwant\n%v", when, ix, got, exp)
		}
	}
}
