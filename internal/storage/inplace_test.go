package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
)

// The table of the in-place tests: id (pk), v (index of integers), s
// (index of strings).
var inPlaceDef = &TableDef{Name: "t", NumCols: 3, AutoCol: -1, PK: []int{0},
	Indexes: []IndexDef{{Name: "iv", Cols: []int{1}}, {Name: "is", Cols: []int{2}}}}

type inPlaceRow struct {
	v int64
	s string
}

// dumpTable renders a table's rows as its primary key orders them, then as
// each index does.
func dumpTable(tb *Table) string {
	var b strings.Builder
	for ix := -1; ix < tb.IndexCount(); ix++ {
		fmt.Fprintf(&b, "%d:", ix)
		tb.AscendIndex(ix, nil, func(r *Row) bool {
			fmt.Fprintf(&b, " %v/%v/%v", r.Value(0), r.Value(1), r.Value(2))
			return true
		})
		b.WriteString("\n")
	}
	return b.String()
}

// dumpModel renders the rows of m as dumpTable renders a table holding them.
func dumpModel(m map[int64]inPlaceRow) string {
	type row struct {
		id int64
		inPlaceRow
	}
	var rows []row
	for id, r := range m {
		rows = append(rows, row{id, r})
	}
	orders := []func(a, b row) int{
		func(a, b row) int { return int(a.id - b.id) },
		func(a, b row) int {
			if a.v != b.v {
				return int(a.v - b.v)
			}
			return int(a.id - b.id)
		},
		func(a, b row) int {
			if c := strings.Compare(strings.ToLower(a.s), strings.ToLower(b.s)); c != 0 {
				return c
			}
			return int(a.id - b.id)
		},
	}
	var b strings.Builder
	for i, order := range orders {
		slices.SortFunc(rows, order)
		fmt.Fprintf(&b, "%d:", i-1)
		for _, r := range rows {
			fmt.Fprintf(&b, " %v/%v/%v", r.id, r.v, r.s)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// newInPlaceTable creates database app in e with table t (inPlaceDef) of
// rows rows, row id holding row(id), and returns the rows as a model.
func newInPlaceTable(t *testing.T, e *Engine, rows int64, row func(id int64) inPlaceRow) (*DB, map[int64]inPlaceRow) {
	t.Helper()
	db, err := e.CreateDatabase("app", nil)
	if err != nil {
		t.Fatal(err)
	}
	tx := db.Begin()
	if err := tx.CreateTable(inPlaceDef); err != nil {
		t.Fatal(err)
	}
	m := map[int64]inPlaceRow{}
	for id := int64(0); id < rows; id++ {
		m[id] = row(id)
		if _, err := tx.Insert("t", []any{id, m[id].v, m[id].s}); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, tx)
	return db, m
}

// commitRandomRow commits one random row change alone (CommitRow), reading
// the row as a compiled statement does (DB.Read, without freezing the
// catalog), and applies it to m.
func commitRandomRow(t *testing.T, db *DB, rng *rand.Rand, table string, m map[int64]inPlaceRow, nextID *int64) {
	t.Helper()
	id := rng.Int63n(*nextID)
	var tb *Table
	var seen *Row
	found := false
	db.Read(func(cat *Catalog) {
		tb, _ = cat.Table(table)
		seen, found = tb.Get(KeyRow([]any{id, nil, nil}))
	})
	nr := inPlaceRow{v: rng.Int63n(50), s: fmt.Sprintf("s%03d", rng.Intn(300))}
	var c RowChange
	switch {
	case !found || rng.Intn(8) == 0:
		id = *nextID
		*nextID++
		c = RowChange{Table: tb, Kind: OpInsert, Vals: []any{id, nr.v, nr.s}}
	case rng.Intn(4) == 0:
		c = RowChange{Table: tb, Seen: seen, Kind: OpDelete}
	default:
		c = RowChange{Table: tb, Seen: seen, Kind: OpUpdate, Vals: []any{id, nr.v, nr.s}}
	}
	if _, err := db.CommitRow(c); err != nil {
		t.Fatalf("%v of row %d: %v", c.Kind, id, err)
	}
	if c.Kind == OpDelete {
		delete(m, id)
	} else {
		m[id] = nr
	}
}

// One-row commits change the committed trees in place when no one holds
// the catalog, and never a catalog someone froze, nor a table that a
// frozen catalog shares with the latest one (written by no commit since):
// each snapshot taken along the way keeps its rows and index entries while
// thousands of in-place commits to its two tables follow, the latest
// catalog holds the model's rows, and the journal replays to them.
func TestInPlaceCommitsLeaveFrozenCatalogsAlone(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db, err := e.CreateDatabase("app", nil)
	if err != nil {
		t.Fatal(err)
	}
	tables := []string{"t", "u"}
	models := map[string]map[int64]inPlaceRow{}
	nextIDs := map[string]*int64{}
	rng := rand.New(rand.NewSource(1))
	tx := db.Begin()
	for _, name := range tables {
		def := *inPlaceDef
		def.Name = name
		if err := tx.CreateTable(&def); err != nil {
			t.Fatal(err)
		}
		m := map[int64]inPlaceRow{}
		next := int64(400)
		for id := int64(0); id < next; id++ {
			m[id] = inPlaceRow{v: rng.Int63n(50), s: fmt.Sprintf("s%03d", rng.Intn(300))}
			if _, err := tx.Insert(name, []any{id, m[id].v, m[id].s}); err != nil {
				t.Fatal(err)
			}
		}
		models[name], nextIDs[name] = m, &next
	}
	mustCommit(t, tx)

	type frozen struct {
		tb   *Table
		want string
	}
	var snaps []frozen
	const commits = 4000
	for i := 0; i < commits; i++ {
		if i%97 == 0 {
			// A reader freezes the catalog: a transaction's snapshot or
			// a plain one.
			for _, name := range tables {
				var tb *Table
				if i%2 == 0 {
					tb, _ = db.Snapshot().Table(name)
				} else {
					tb, _ = db.Begin().Table(name)
				}
				snaps = append(snaps, frozen{tb, dumpModel(models[name])})
			}
		}
		// Runs of commits to one table, so that the other is shared
		// between catalogs.
		name := tables[(i/5)%2]
		commitRandomRow(t, db, rng, name, models[name], nextIDs[name])
	}
	for i, s := range snaps {
		if got := dumpTable(s.tb); got != s.want {
			t.Fatalf("snapshot %d of %s changed after it was taken:\n got %.300s\nwant %.300s", i/2, s.tb.Name(), got, s.want)
		}
	}
	for _, name := range tables {
		latest, _ := db.Snapshot().Table(name)
		if got, want := dumpTable(latest), dumpModel(models[name]); got != want {
			t.Fatalf("latest %s:\n got %.300s\nwant %.300s", name, got, want)
		}
	}
	// Most commits found the catalog unfrozen: all but the first to
	// each table after a snapshot, which copies what it writes.
	if n := db.InPlaceCommits(); n < commits-2*uint64(len(snaps)) {
		t.Fatalf("%d of %d commits in place, want at least %d", n, commits, commits-2*len(snaps))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, _ := e2.Database("app")
	for _, name := range tables {
		replayed, _ := db2.Snapshot().Table(name)
		if got, want := dumpTable(replayed), dumpModel(models[name]); got != want {
			t.Fatalf("%s after a restart:\n got %.300s\nwant %.300s", name, got, want)
		}
	}
}

// A one-row commit that changed the trees in place and then fails (here:
// the journal refuses the append, having failed an fsync before) is undone:
// the committed catalog shows none of it, and it is not counted.
func TestFailedInPlaceCommitIsUndone(t *testing.T) {
	var failSync atomic.Bool
	e, err := Open(Options{Root: t.TempDir(), Policy: SaveCommit, Bind: testBind, SegmentBytes: 1 << 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		JournalFaults: func(op journal.FaultOp) error {
			if op == journal.FaultSync && failSync.Load() {
				return errors.New("injected fsync failure")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, m := newInPlaceTable(t, e, 100, func(id int64) inPlaceRow { return inPlaceRow{v: id % 7, s: fmt.Sprintf("s%03d", id)} })
	rng := rand.New(rand.NewSource(2))
	nextID := int64(100)
	for i := 0; i < 20; i++ {
		commitRandomRow(t, db, rng, "t", m, &nextID)
	}
	// A commit whose fsync fails: appended and applied, then the journal
	// fails. (That its row stays visible is the rule for any commit.)
	var ids []int64
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	failSync.Store(true)
	var tb *Table
	var seen *Row
	db.Read(func(cat *Catalog) { tb, _ = cat.Table("t"); seen, _ = tb.Get(KeyRow([]any{ids[0], nil, nil})) })
	if _, err := db.CommitRow(RowChange{Table: tb, Seen: seen, Kind: OpUpdate, Vals: []any{ids[0], int64(99), "fsync"}}); err == nil {
		t.Fatal("commit with a failed fsync succeeded")
	}
	m[ids[0]] = inPlaceRow{v: 99, s: "fsync"}
	before := db.InPlaceCommits()
	// Each kind of change, in place, refused by the journal's append.
	for _, c := range []struct {
		kind OpKind
		id   int64
	}{{OpUpdate, ids[1]}, {OpDelete, ids[2]}, {OpInsert, 1000}} {
		var tb *Table
		var seen *Row
		db.Read(func(cat *Catalog) { tb, _ = cat.Table("t"); seen, _ = tb.Get(KeyRow([]any{c.id, nil, nil})) })
		ch := RowChange{Table: tb, Seen: seen, Kind: c.kind, Vals: []any{c.id, int64(42), "undone"}}
		if c.kind == OpDelete {
			ch.Vals = nil
		}
		if _, err := db.CommitRow(ch); !errors.Is(err, journal.ErrFailed) {
			t.Fatalf("%v after the journal failed: %v, want %v", c.kind, err, journal.ErrFailed)
		}
		latest, _ := db.Snapshot().Table("t")
		if got, want := dumpTable(latest), dumpModel(m); got != want {
			t.Fatalf("after a failed %v:\n got %.400s\nwant %.400s", c.kind, got, want)
		}
	}
	if n := db.InPlaceCommits(); n != before {
		t.Fatalf("failed commits counted in place: %d, was %d", n, before)
	}
}

// Under the race detector: one-row commits (reading through Read) beside
// readers through Read, frozen snapshots read again and again, and
// transactions; the snapshots never change under their readers.
func TestInPlaceCommitsBesideReaders(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db, _ := newInPlaceTable(t, e, 200, func(id int64) inPlaceRow { return inPlaceRow{v: id % 9, s: fmt.Sprintf("s%03d", id)} })

	var wg sync.WaitGroup
	stop := make(chan struct{})
	// loop runs step in a goroutine until stop is closed or step fails.
	loop := func(step func() bool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if !step() {
					return
				}
			}
		}()
	}
	var writes atomic.Int64
	for w := 0; w < 3; w++ {
		rng := rand.New(rand.NewSource(int64(w)))
		loop(func() bool {
			id := rng.Int63n(200)
			var tb *Table
			var seen *Row
			found := false
			db.Read(func(cat *Catalog) { tb, _ = cat.Table("t"); seen, found = tb.Get(KeyRow([]any{id, nil, nil})) })
			if !found {
				t.Errorf("row %d missing", id)
				return false
			}
			v := seen.Value(1).(int64)
			_, err := db.CommitRow(RowChange{Table: tb, Seen: seen, Kind: OpUpdate, Vals: []any{id, v + 1, seen.Value(2)}})
			if err != nil && !errors.Is(err, ErrStale) {
				t.Error(err)
				return false
			}
			writes.Add(1)
			return true
		})
	}
	for r := 0; r < 2; r++ {
		loop(func() bool {
			n := 0
			db.Read(func(cat *Catalog) {
				tb, _ := cat.Table("t")
				tb.AscendIndex(0, nil, func(*Row) bool { n++; return true })
			})
			if n != 200 {
				t.Errorf("index read %d rows, want 200", n)
				return false
			}
			tb, _ := db.Snapshot().Table("t")
			first := dumpTable(tb)
			time.Sleep(time.Millisecond)
			if again := dumpTable(tb); again != first {
				t.Error("a snapshot changed under its reader")
				return false
			}
			return true
		})
	}
	loop(func() bool {
		tx := db.Begin()
		tb, _ := tx.Table("t")
		r, _ := tb.Get(KeyRow([]any{int64(0), nil, nil}))
		if err := tx.UpdateRow(tb, r, []any{int64(0), r.Value(1).(int64) + 1, "tx"}); err != nil {
			t.Error(err)
			return false
		}
		if err := tx.Commit(context.Background()); err != nil && !errors.Is(err, ErrConflict) {
			t.Error(err)
			return false
		}
		return true
	})
	time.Sleep(700 * time.Millisecond)
	close(stop)
	wg.Wait()
	if writes.Load() == 0 || db.InPlaceCommits() == 0 {
		t.Fatalf("%d one-row commits, %d in place", writes.Load(), db.InPlaceCommits())
	}
}

// A transaction's row lock looks at the latest definitions without
// freezing the committed catalog: the one-row commits after it still
// change the trees in place, and its own commit conflicts with them as
// ever.
func TestRowLocksLeaveCommitsInPlace(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db, m := newInPlaceTable(t, e, 20, func(id int64) inPlaceRow { return inPlaceRow{v: id, s: "s"} })
	rng := rand.New(rand.NewSource(5))
	next := int64(20)
	tx := db.Begin()
	tb, _ := tx.Table("t")
	for range 10 {
		commitRandomRow(t, db, rng, "t", m, &next)
	}
	before := db.InPlaceCommits()
	for id := int64(0); id < 5; id++ {
		r, ok := tb.Get(KeyRow([]any{id, nil, nil}))
		if !ok {
			t.Fatalf("row %d missing from the snapshot", id)
		}
		if err := tx.LockRowForWrite(context.Background(), tb, r, time.Second); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tx.LockRow(context.Background(), "t", r, LockRequest{Mode: LockShared, Wait: WaitNoWait}); err != nil && !errors.Is(err, ErrConflict) {
			t.Fatal(err)
		}
		commitRandomRow(t, db, rng, "t", m, &next)
	}
	if got := db.InPlaceCommits() - before; got < 4 {
		t.Fatalf("%d of the 5 commits between row locks were in place, want at least 4", got)
	}
	tx.Rollback()
	if got, want := dumpTable(mustLatest(t, db)), dumpModel(m); got != want {
		t.Fatalf("rows:\n%s\nwant:\n%s", got, want)
	}
}

func mustLatest(t *testing.T, db *DB) *Table {
	t.Helper()
	tb, ok := db.Snapshot().Table("t")
	if !ok {
		t.Fatal("no table t")
	}
	return tb
}

// A transaction that only wrote rows commits in place when no one froze the
// committed catalog since the last commit. One whose commit fails while it
// applies its writes (here: its insert takes a unique name that a commit
// after its snapshot took) is undone: the changes it applied before in
// place are put back, and the next transaction commits in place on the
// rows as they were. The journal replays the rows committed.
func TestTransactionCommitsInPlaceAndFailedOneIsUndone(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	read := func() string {
		var s string
		db.Read(func(cat *Catalog) { tb, _ := cat.Table("users"); s = names(t, tb) })
		return s
	}
	commitRow := func(kind OpKind, id int64, vals []any) {
		t.Helper()
		var c RowChange
		db.Read(func(cat *Catalog) {
			tb, _ := cat.Table("users")
			seen, _ := tb.Get(KeyRow([]any{id, nil, nil}))
			c = RowChange{Table: tb, Seen: seen, Kind: kind, Vals: vals}
		})
		if _, err := db.CommitRow(c); err != nil {
			t.Fatal(err)
		}
	}

	tx := db.Begin()
	if err := tx.Update("users", []any{int64(1), "ann", int64(20)}, []any{int64(1), "ann", int64(99)}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete("users", []any{int64(2), "bob", int64(21)}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Insert("users", []any{int64(10), "dan", int64(40)}); err != nil {
		t.Fatal(err)
	}
	// After the snapshot, a one-row commit takes the name (and leaves a
	// catalog no one froze).
	commitRow(OpInsert, 11, []any{int64(11), "dan", int64(41)})
	const want = "1 ann 20;2 bob 21;3 cid 22;11 dan 41"
	if got := read(); got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	before := db.InPlaceCommits()
	var dup *DuplicateError
	if err := tx.Commit(context.Background()); !errors.As(err, &dup) {
		t.Fatalf("commit of a transaction inserting a name taken since: %v, want a duplicate", err)
	}
	if got := read(); got != want {
		t.Fatalf("after the failed commit: rows %s, want %s", got, want)
	}
	if n := db.InPlaceCommits(); n != before {
		t.Fatalf("the failed commit counted in place (%d, was %d)", n, before)
	}

	commitRow(OpUpdate, 3, []any{int64(3), "cid", int64(23)})
	ok := db.Begin()
	if err := ok.Update("users", []any{int64(1), "ann", int64(20)}, []any{int64(1), "ann", int64(50)}); err != nil {
		t.Fatal(err)
	}
	if err := ok.Delete("users", []any{int64(2), "bob", int64(21)}); err != nil {
		t.Fatal(err)
	}
	commitRow(OpUpdate, 11, []any{int64(11), "dan", int64(42)})
	before = db.InPlaceCommits()
	mustCommit(t, ok)
	if n := db.InPlaceCommits(); n != before+1 {
		t.Fatalf("a transaction of row writes on a catalog no one froze: %d commits in place, want 1", n-before)
	}
	const after = "1 ann 50;3 cid 23;11 dan 42"
	if got := read(); got != after {
		t.Fatalf("rows %s, want %s", got, after)
	}
	if got := committedAfterReopen(t, e, dir); got != after {
		t.Fatalf("after reopening: %s, want %s", got, after)
	}
}
