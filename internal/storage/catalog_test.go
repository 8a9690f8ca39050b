package storage

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A tableSet answers as a map would, keeps its keys in order, and a clone
// changes apart from the set it was copied from.
func TestTableSetActsAsAMap(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	var s tableSet
	m := map[string]*Table{}
	check := func(s *tableSet, m map[string]*Table) {
		t.Helper()
		if s.len() != len(m) {
			t.Fatalf("len %d, want %d", s.len(), len(m))
		}
		for k, want := range m {
			if got, ok := s.get(k); !ok || got != want {
				t.Fatalf("get(%q) = %p %v, want %p", k, got, ok, want)
			}
		}
		if !slices.IsSortedFunc(s.e, func(a, b tableEntry) int { return strings.Compare(a.key, b.key) }) {
			t.Fatalf("keys out of order: %v", s.e)
		}
	}
	for i := range 2000 {
		k := fmt.Sprintf("t%d", rnd.IntN(60))
		switch rnd.IntN(3) {
		case 0, 1:
			tb := &Table{}
			s.set(k, tb)
			m[k] = tb
		default:
			s.del(k)
			delete(m, k)
		}
		if _, ok := s.get("absent"); ok {
			t.Fatal("found a key never set")
		}
		if i%100 == 0 {
			c := s.clone()
			cm := maps.Clone(m)
			zz := &Table{}
			c.set("zz", zz)
			c.del("t1")
			cm["zz"] = zz
			delete(cm, "t1")
			check(&c, cm)
			check(&s, m)
		}
	}
	check(&s, m)
}

// Objects are shared between catalog versions until one changes them: a
// snapshot keeps the objects it saw, a savepoint the objects before it, and
// the journal replays the ones committed.
func TestObjectsChangeApartFromOlderCatalogs(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	names := func(c *Catalog) string {
		var out []string
		for _, o := range c.Objects("view") {
			out = append(out, o.Name)
		}
		return strings.Join(out, ",")
	}

	before := db.Snapshot()
	tx := db.Begin()
	if err := tx.PutObject("view", "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	sp := tx.Savepoint()
	if err := tx.PutObject("view", "b", []byte("2")); err != nil {
		t.Fatal(err)
	}
	if got := names(tx.Catalog()); got != "a,b" {
		t.Fatalf("transaction sees %q, want a,b", got)
	}
	tx.RollbackTo(sp)
	if got := names(tx.Catalog()); got != "a" {
		t.Fatalf("after the rollback to the savepoint: %q, want a", got)
	}
	if err := tx.PutObject("view", "c", []byte("3")); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
	if got := names(before); got != "" {
		t.Fatalf("snapshot taken before sees %q", got)
	}
	if got := names(db.Snapshot()); got != "a,c" {
		t.Fatalf("committed %q, want a,c", got)
	}

	drop := db.Begin()
	if err := drop.DeleteObject("view", "a"); err != nil {
		t.Fatal(err)
	}
	kept := db.Snapshot()
	mustCommit(t, drop)
	if got := names(kept); got != "a,c" {
		t.Fatalf("snapshot taken before the delete sees %q, want a,c", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, _ := e2.Database("app")
	if got := names(db2.Snapshot()); got != "c" {
		t.Fatalf("after reopening: %q, want c", got)
	}
}

// Defs stays the same while only rows change and changes with every change
// of a definition, also one a commit takes from its transaction's own
// tables (a reindex) without applying an op.
func TestDefsChangeWithDefinitionsOnly(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	seen := map[uint64]string{}
	step := func(what string, change bool, fn func(tx *Tx) error) {
		t.Helper()
		before := db.Latest().Defs()
		tx := db.Begin()
		if err := fn(tx); err != nil {
			t.Fatal(err)
		}
		mustCommit(t, tx)
		after := db.Latest().Defs()
		if change != (after != before) {
			t.Fatalf("%s: Defs %d -> %d, want changed=%v", what, before, after, change)
		}
		if prev, ok := seen[after]; ok && change {
			t.Fatalf("%s: Defs %d given before to %s", what, after, prev)
		}
		seen[after] = what
	}
	step("insert", false, func(tx *Tx) error { _, err := tx.Insert("users", []any{int64(9), "zed", int64(1)}); return err })
	step("update", false, func(tx *Tx) error {
		return tx.Update("users", []any{int64(9), "zed", int64(1)}, []any{int64(9), "zed", int64(2)})
	})
	step("auto-increment", false, func(tx *Tx) error { return tx.SetAutoIncrement("users", 100) })
	step("create", true, func(tx *Tx) error {
		return tx.CreateTable(&TableDef{Name: "other", NumCols: 1, AutoCol: -1, PK: []int{0}})
	})
	step("comment", true, func(tx *Tx) error {
		def := *usersDef
		def.Meta = []byte(`{"comment":"x"}`)
		return tx.SetMeta("users", &def)
	})
	step("reindex", true, func(tx *Tx) error {
		def := *usersDef
		def.Indexes = def.Indexes[:1]
		return tx.Reindex("users", &def)
	})
	step("view", true, func(tx *Tx) error { return tx.PutObject("view", "v", []byte("select 1")) })
	step("rename", true, func(tx *Tx) error { return tx.RenameTable("other", "other2") })
	step("drop", true, func(tx *Tx) error { return tx.DropTable("other2") })
	step("delete", false, func(tx *Tx) error { return tx.Delete("users", []any{int64(9), "zed", int64(2)}) })
}
