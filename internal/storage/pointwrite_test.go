package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"
)

// kv: id (pk), k (a non-unique index), v. Point writes to it stay pending.
var kvDef = &TableDef{Name: "kv", NumCols: 3, AutoCol: -1, PK: []int{0},
	Indexes: []IndexDef{{Name: "k", Cols: []int{1}}}}

// pointSide is one database of TestPointWritesMatchApplied: the same
// random steps run on both, one through the point-write methods (pending
// writes), the other through the methods that apply every write to the
// transaction's view at once.
type pointSide struct {
	db    *DB
	point bool
	tx    *Tx
	sps   []Savepoint
}

func (s *pointSide) table(name string) *Table {
	if s.point {
		t, _ := s.tx.Meta().Table(name)
		return t
	}
	t, _ := s.tx.Table(name)
	return t
}

func (s *pointSide) get(name string, id int64) (*Row, bool) {
	t := s.table(name)
	key := KeyRow([]any{id, int64(0), ""})
	if name == "users" {
		key = KeyRow([]any{id, "", int64(0)})
	}
	if s.point {
		r, ok, err := s.tx.Get(t, key)
		if err != nil {
			panic(err)
		}
		return r, ok
	}
	return t.Get(key)
}

func (s *pointSide) update(name string, id int64, vals []any) (bool, error) {
	old, ok := s.get(name, id)
	if !ok {
		return false, nil
	}
	if s.point {
		return true, s.tx.UpdatePoint(s.table(name), old, vals)
	}
	return true, s.tx.UpdateRow(s.table(name), old, vals)
}

func (s *pointSide) delete(name string, id int64) (bool, error) {
	old, ok := s.get(name, id)
	if !ok {
		return false, nil
	}
	if s.point {
		return true, s.tx.DeletePoint(s.table(name), old)
	}
	return true, s.tx.DeleteRow(s.table(name), old)
}

func (s *pointSide) insert(name string, vals []any) error {
	var err error
	if s.point {
		_, err = s.tx.InsertPoint(s.table(name), vals)
	} else {
		_, err = s.tx.Insert(name, vals)
	}
	return err
}

// view is what the transaction sees of both tables, read as any reader
// other than a point write reads it (which applies the pending writes).
func (s *pointSide) view(t *testing.T) string {
	kv, _ := s.tx.Table("kv")
	users, _ := s.tx.Table("users")
	return names(t, kv) + " | " + names(t, users)
}

func (s *pointSide) committed(t *testing.T) string {
	kv, _ := s.db.Snapshot().Table("kv")
	users, _ := s.db.Snapshot().Table("users")
	return names(t, kv) + " | " + names(t, users)
}

func errKind(err error) string {
	var dup *DuplicateError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &dup):
		return "duplicate " + dup.Index
	case errors.Is(err, ErrConflict):
		return "conflict"
	}
	return err.Error()
}

// Random transactions of point writes, reads, savepoints and commits, with
// other transactions committing in between, give the same results, errors
// and committed rows whether the point writes stay pending or are applied
// to the view at once.
func TestPointWritesMatchApplied(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	for seed := int64(0); seed < 150; seed++ {
		var sides [2]*pointSide
		for i := range sides {
			db, err := e.CreateDatabase(fmt.Sprintf("s%d_%d", seed, i), nil)
			if err != nil {
				t.Fatal(err)
			}
			tx := db.Begin()
			for _, def := range []*TableDef{kvDef, usersDef} {
				if err := tx.CreateTable(def); err != nil {
					t.Fatal(err)
				}
			}
			for id := int64(1); id <= 12; id++ {
				if _, err := tx.Insert("kv", []any{id, id % 3, "v0"}); err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Insert("users", []any{id, fmt.Sprint("u", id), id}); err != nil {
					t.Fatal(err)
				}
			}
			mustCommit(t, tx)
			sides[i] = &pointSide{db: db, point: i == 0, tx: db.Begin()}
		}
		rng := rand.New(rand.NewSource(seed))
		for step := 0; step < 80; step++ {
			what := rng.Intn(100)
			id := int64(1 + rng.Intn(16))
			table := "kv"
			if rng.Intn(5) == 0 {
				table = "users"
			}
			vals := []any{id, int64(rng.Intn(4)), fmt.Sprint("v", step)}
			if table == "users" {
				vals = []any{id, fmt.Sprint("u", rng.Intn(16)), int64(step)}
			}
			var got [2]string
			for i, s := range sides {
				switch {
				case what < 25:
					ok, err := s.update(table, id, vals)
					got[i] = fmt.Sprint("update ", ok, " ", errKind(err))
				case what < 40:
					ok, err := s.delete(table, id)
					got[i] = fmt.Sprint("delete ", ok, " ", errKind(err))
				case what < 60:
					got[i] = "insert " + errKind(s.insert(table, vals))
				case what < 70:
					r, ok := s.get(table, id)
					got[i] = fmt.Sprint("get ", ok)
					if ok {
						got[i] += fmt.Sprint(r.Values())
					}
				case what < 75:
					got[i] = "view " + s.view(t)
				case what < 80:
					s.sps = append(s.sps, s.tx.Savepoint())
				case what < 85:
					if n := len(s.sps); n > 0 {
						s.tx.RollbackTo(s.sps[n-1])
						s.sps = s.sps[:n-1]
					}
				case what < 93:
					// Another transaction writes a row and commits.
					o := s.db.Begin()
					ot, _ := o.Table("kv")
					if old, ok := ot.Get(KeyRow([]any{id, int64(0), ""})); ok {
						if err := o.UpdateRow(ot, old, []any{id, int64(9), fmt.Sprint("o", step)}); err != nil {
							t.Fatal(err)
						}
					} else if _, err := o.Insert("kv", []any{id, int64(9), fmt.Sprint("o", step)}); err != nil {
						t.Fatal(err)
					}
					mustCommit(t, o)
				default:
					err := s.tx.Commit(context.Background())
					got[i] = "commit " + errKind(err) + " " + s.committed(t)
					s.tx, s.sps = s.db.Begin(), nil
				}
			}
			if got[0] != got[1] {
				t.Fatalf("seed %d step %d: pending %q, applied %q", seed, step, got[0], got[1])
			}
		}
		var got [2]string
		for i, s := range sides {
			got[i] = s.view(t) + " / " + errKind(s.tx.Commit(context.Background())) + " " + s.committed(t)
		}
		if got[0] != got[1] {
			t.Fatalf("seed %d at the end: pending %q, applied %q", seed, got[0], got[1])
		}
	}
}

// A transaction's point writes stay pending until something else reads
// the view, and the commit applies them once.
func TestPointWritesStayPending(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db, err := e.CreateDatabase("app", nil)
	if err != nil {
		t.Fatal(err)
	}
	tx := db.Begin()
	if err := tx.CreateTable(kvDef); err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 3; id++ {
		if _, err := tx.Insert("kv", []any{id, id, "a"}); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, tx)

	tx = db.Begin()
	kv, _ := tx.Meta().Table("kv")
	old, _, _ := tx.Get(kv, KeyRow([]any{int64(2), int64(0), ""}))
	if err := tx.UpdatePoint(kv, old, []any{int64(2), int64(2), "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.InsertPoint(kv, []any{int64(4), int64(4), "c"}); err != nil {
		t.Fatal(err)
	}
	if tx.work != nil || tx.applied != 0 || len(tx.ops) != 2 {
		t.Fatalf("view built (%v), %d of %d ops applied: want both pending", tx.work != nil, tx.applied, len(tx.ops))
	}
	if r, ok, _ := tx.Get(kv, KeyRow([]any{int64(2), int64(0), ""})); !ok || r.Value(2) != "b" {
		t.Fatalf("Get of the pending update: %v %v", r, ok)
	}
	committedKV := func() string {
		t, _ := db.Snapshot().Table("kv")
		return names(nil, t)
	}
	if got := committedKV(); got != "1 1 a;2 2 a;3 3 a" {
		t.Fatalf("committed before the commit: %s", got)
	}
	// A duplicate key is refused as by Insert (the view is then built).
	var dup *DuplicateError
	if _, err := tx.InsertPoint(kv, []any{int64(4), int64(4), "d"}); !errors.As(err, &dup) {
		t.Fatalf("a second insert of key 4: %v, want a duplicate", err)
	}
	mustCommit(t, tx)
	if got := committedKV(); got != "1 1 a;2 2 b;3 3 a;4 4 c" {
		t.Fatalf("committed: %s", got)
	}
}
