package storage

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/journal"
)

// testBind compares int64 and string columns (case-insensitively, like a
// _ci collation).
func testBind(def *TableDef) ([]Compare, error) {
	out := make([]Compare, def.NumCols)
	for i := range out {
		out[i] = func(a, b any) int {
			switch x := a.(type) {
			case int64:
				return cmp.Compare(x, b.(int64))
			case string:
				return strings.Compare(strings.ToLower(x), strings.ToLower(b.(string)))
			}
			panic(fmt.Sprintf("type %T", a))
		}
	}
	return out, nil
}

// users: id (pk), name (unique), age (index)
var usersDef = &TableDef{Name: "users", NumCols: 3, AutoCol: 0, PK: []int{0},
	Indexes: []IndexDef{{Name: "uname", Cols: []int{1}, Unique: true}, {Name: "iage", Cols: []int{2}}}}

func openEngine(t *testing.T, dir string, pol SavePolicy) (*Engine, *bytes.Buffer) {
	t.Helper()
	var lb bytes.Buffer
	e, err := Open(Options{Root: dir, Policy: pol, Bind: testBind, SegmentBytes: 4096, Logger: slog.New(slog.NewTextHandler(&lb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return e, &lb
}

func mustCommit(t *testing.T, tx *Tx) {
	t.Helper()
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func setup(t *testing.T, e *Engine) *DB {
	t.Helper()
	db, err := e.CreateDatabase("app", []byte("opts"))
	if err != nil {
		t.Fatal(err)
	}
	tx := db.Begin()
	if err := tx.CreateTable(usersDef); err != nil {
		t.Fatal(err)
	}
	for i, n := range []string{"ann", "bob", "cid"} {
		if _, err := tx.Insert("users", []any{int64(i + 1), n, int64(20 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, tx)
	return db
}

func names(t *testing.T, tb *Table) string {
	var out []string
	tb.Scan(func(r *Row) bool { out = append(out, strings.Trim(fmt.Sprint(r.Values()), "[]")); return true })
	return strings.Join(out, ";")
}

func committed(t *testing.T, db *DB) string {
	t.Helper()
	tb, ok := db.Snapshot().Table("users")
	if !ok {
		t.Fatal("no table users")
	}
	return names(t, tb)
}

func TestUniqueKeys(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	tx := db.Begin()
	_, err := tx.Insert("users", []any{int64(9), "BOB", int64(1)})
	var dup *DuplicateError
	if !errors.As(err, &dup) || dup.Index != "uname" || dup.Existing.Value(1) != "bob" {
		t.Fatalf("insert of a duplicate name: %v", err)
	}
	_, err = tx.Insert("users", []any{int64(1), "zed", int64(1)})
	if !errors.As(err, &dup) || dup.Index != "PRIMARY" {
		t.Fatalf("insert of a duplicate id: %v", err)
	}
	mustCommit(t, tx)
	if got := committed(t, db); got != "1 ann 20;2 bob 21;3 cid 22" {
		t.Fatalf("rows = %s", got)
	}
}

func TestSnapshotIsolationAndConflict(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)

	t1, t2 := db.Begin(), db.Begin()
	if err := t1.Update("users", []any{int64(1), "ann", int64(20)}, []any{int64(1), "ann", int64(30)}); err != nil {
		t.Fatal(err)
	}
	if err := t2.Update("users", []any{int64(1), "ann", int64(20)}, []any{int64(1), "ann", int64(40)}); err != nil {
		t.Fatal(err)
	}
	if _, err := t2.Insert("users", []any{int64(4), "dan", int64(1)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, t1)
	// t2 still reads its snapshot plus its own writes.
	tb, _ := t2.Table("users")
	if got := names(t, tb); got != "1 ann 40;2 bob 21;3 cid 22;4 dan 1" {
		t.Fatalf("t2 sees %s", got)
	}
	if err := t2.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("second commit: %v, want ErrConflict", err)
	}
	if got := committed(t, db); got != "1 ann 30;2 bob 21;3 cid 22" {
		t.Fatalf("after conflict rows = %s (nothing of t2 may be visible)", got)
	}
	// Writes to different rows do not conflict.
	t3, t4 := db.Begin(), db.Begin()
	t3.Delete("users", []any{int64(2), "bob", int64(21)})
	t4.Update("users", []any{int64(3), "cid", int64(22)}, []any{int64(3), "cid", int64(23)})
	mustCommit(t, t3)
	mustCommit(t, t4)
	if got := committed(t, db); got != "1 ann 30;3 cid 23" {
		t.Fatalf("rows = %s", got)
	}
}

func TestConcurrentUniqueInsertFailsAtCommit(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	t1, t2 := db.Begin(), db.Begin()
	t1.Insert("users", []any{int64(10), "eve", int64(1)})
	t2.Insert("users", []any{int64(11), "EVE", int64(1)})
	mustCommit(t, t1)
	var dup *DuplicateError
	if err := t2.Commit(context.Background()); !errors.As(err, &dup) {
		t.Fatalf("commit of a concurrent duplicate: %v", err)
	}
}

func TestSavepoints(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	tx := db.Begin()
	tx.Insert("users", []any{int64(4), "dan", int64(1)})
	sp := tx.Savepoint()
	tx.Insert("users", []any{int64(5), "eve", int64(1)})
	tx.Delete("users", []any{int64(1), "ann", int64(20)})
	tx.RollbackTo(sp)
	tx.Insert("users", []any{int64(6), "fay", int64(1)})
	mustCommit(t, tx)
	if got := committed(t, db); got != "1 ann 20;2 bob 21;3 cid 22;4 dan 1;6 fay 1" {
		t.Fatalf("rows = %s", got)
	}
}

func TestRecoveryReplaysJournal(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	tx := db.Begin()
	tx.Update("users", []any{int64(2), "bob", int64(21)}, []any{int64(2), "bob", int64(99)})
	tx.Delete("users", []any{int64(3), "cid", int64(22)})
	mustCommit(t, tx)
	tx = db.Begin()
	tx.Insert("users", []any{int64(7), "rolled back", int64(0)})
	tx.Rollback()
	want := committed(t, db)
	// No Close: as after a crash, only the journal is on disk.
	e2, lb := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, ok := e2.Database("APP")
	if !ok {
		t.Fatal("database lost")
	}
	if got := committed(t, db2); got != want {
		t.Fatalf("after recovery %s, want %s", got, want)
	}
	if string(db2.Snapshot().Options()) != "opts" {
		t.Fatalf("options = %q", db2.Snapshot().Options())
	}
	if !strings.Contains(lb.String(), "database opened") {
		t.Fatal(lb.String())
	}
}

func TestCheckpointThenJournal(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	for i := 0; i < 200; i++ {
		tx := db.Begin()
		tx.Insert("users", []any{int64(100 + i), fmt.Sprintf("user%03d", i), int64(i)})
		mustCommit(t, tx)
	}
	if err := e.Checkpoint(db); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		tx := db.Begin()
		tx.Delete("users", []any{int64(100 + i), fmt.Sprintf("user%03d", i), int64(i)})
		tx.Insert("users", []any{int64(1000 + i), fmt.Sprintf("user%03d", i), int64(i)})
		mustCommit(t, tx)
	}
	if err := e.Checkpoint(db); err != nil {
		t.Fatal(err)
	}
	if db.Journal().Start() == 0 {
		t.Fatal("no journal segment was removed after two checkpoints")
	}
	tx := db.Begin()
	tx.Insert("users", []any{int64(5000), "after", int64(0)})
	mustCommit(t, tx)
	want := committed(t, db)
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, _ := e2.Database("app")
	if got := committed(t, db2); got != want {
		t.Fatalf("recovered rows differ")
	}
	// AUTO_INCREMENT and row numbers continue where they were.
	tb, _ := db2.Snapshot().Table("users")
	if tb.NextAuto() <= 5000 {
		t.Fatalf("next auto = %d", tb.NextAuto())
	}
}

func TestCorruptJournalNamesFileAndOffset(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	for i := 0; i < 5; i++ {
		tx := db.Begin()
		tx.Insert("users", []any{int64(100 + i), fmt.Sprintf("u%d", i), int64(i)})
		mustCommit(t, tx)
	}
	seg := filepath.Join(dir, "app", fmt.Sprintf("%020d.journal", 0))
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	data[int(db.LSN())/2] ^= 0x5a // in the middle of the log (the file may hold zeros after it)
	os.WriteFile(seg, data, 0o644)
	_, err = Open(Options{Root: dir, Bind: testBind, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	if !errors.Is(err, journal.ErrCorrupt) || !strings.Contains(err.Error(), seg) || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("open error = %v", err)
	}
}

func TestManualPolicySavesAtClose(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveManual)
	db := setup(t, e)
	if db.Journal().End() > 200 {
		t.Fatalf("manual policy wrote %d journal bytes", db.Journal().End())
	}
	want := committed(t, db)
	if got := committedAfterReopen(t, e, dir); got != want {
		t.Fatalf("rows = %s, want %s", got, want)
	}
}

// committedAfterReopen closes e and returns the rows of app.users once the
// engine in dir is opened again.
func committedAfterReopen(t *testing.T, e *Engine, dir string) string {
	t.Helper()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, _ := e2.Database("app")
	return committed(t, db2)
}

func TestAlterRenameTruncateDrop(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	tx := db.Begin()
	def := &TableDef{Name: "users", NumCols: 4, AutoCol: 0, PK: []int{0}}
	if err := tx.AlterTable("users", def, func(v []any) ([]any, error) { return append(v[:3:3], "x"), nil }); err != nil {
		t.Fatal(err)
	}
	if err := tx.RenameTable("users", "people"); err != nil {
		t.Fatal(err)
	}
	tx.CreateTable(&TableDef{Name: "tmp", NumCols: 1, AutoCol: -1})
	tx.Insert("tmp", []any{int64(1)})
	tx.Insert("tmp", []any{int64(1)}) // no primary key: duplicates allowed
	mustCommit(t, tx)
	tx = db.Begin()
	tx.Truncate("people")
	tx.DropTable("tmp")
	mustCommit(t, tx)
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, _ := e2.Database("app")
	cat := db2.Snapshot()
	if got := strings.Join(cat.TableNames(), ","); got != "people" {
		t.Fatalf("tables = %s", got)
	}
	p, _ := cat.Table("people")
	if p.Len() != 0 || p.Def().NumCols != 4 {
		t.Fatalf("people: %d rows, %d columns", p.Len(), p.Def().NumCols)
	}
}

func TestValueCodecRoundTrip(t *testing.T) {
	vals := []any{nil, int8(-3), int16(4), int32(-5), int64(1 << 40), uint8(7), uint16(8), uint32(9), uint64(1 << 63),
		float32(1.5), float64(-2.25), "héllo", []byte{0, 1, 2}, true, time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		decimal.RequireFromString("-12.3400")}
	b := appendRow(nil, vals)
	d := &decoder{b: b}
	got := d.row()
	if d.err != nil || len(d.b) != 0 {
		t.Fatalf("decode: %v, %d left", d.err, len(d.b))
	}
	for i := range vals {
		if g, w := fmt.Sprintf("%T %v", got[i], got[i]), fmt.Sprintf("%T %v", vals[i], vals[i]); g != w {
			t.Errorf("value %d: got %s, want %s", i, g, w)
		}
	}
}

func TestConcurrentCommitsAreAllDurable(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				tx := db.Begin()
				if _, err := tx.Insert("users", []any{int64(1000*(w+1) + i), fmt.Sprintf("w%d-%d", w, i), int64(i)}); err != nil {
					t.Error(err)
					return
				}
				if err := tx.Commit(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, _ := e2.Database("app")
	tb, _ := db2.Snapshot().Table("users")
	if tb.Len() != 3+200 {
		t.Fatalf("%d rows after reopen, want 203", tb.Len())
	}
}

func TestReindexKeepsRowsAndJournalsNoRow(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	tx := db.Begin()
	tx.Insert("users", []any{int64(4), "dan", int64(20)}) // same age as ann
	mustCommit(t, tx)
	before := db.Journal().End()

	unique := *usersDef
	unique.Indexes = append([]IndexDef{}, usersDef.Indexes...)
	unique.Indexes[1].Unique = true // iage unique: ann and dan collide
	tx = db.Begin()
	var dup *DuplicateError
	if err := tx.Reindex("users", &unique); !errors.As(err, &dup) {
		t.Fatalf("unique index over duplicates: %v", err)
	}
	plain := *usersDef
	plain.Indexes = usersDef.Indexes[:1] // drop iage
	if err := tx.Reindex("users", &plain); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
	if grown := db.Journal().End() - before; grown > 300 {
		t.Fatalf("a reindex wrote %d journal bytes: rows were written again", grown)
	}
	want := committed(t, db)
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, _ := e2.Database("app")
	tb, _ := db2.Snapshot().Table("users")
	if got := names(t, tb); got != want || tb.IndexCount() != 1 {
		t.Fatalf("after recovery: %s (%d indexes), want %s", got, tb.IndexCount(), want)
	}
}

// TestReindexAddingAnIndexKeepsTheOthers: a reindex that keeps the primary
// key keeps the trees it can (copy-on-write) and builds the new index only.
// The new version finds every row through every index, later writes reach
// all of its trees, and the version before the reindex, still read by a
// snapshot, does not change.
func TestReindexAddingAnIndexKeepsTheOthers(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	tx := db.Begin()
	for i := 4; i <= 300; i++ {
		if _, err := tx.Insert("users", []any{int64(i), fmt.Sprintf("u%03d", 1000-i), int64(i % 7)}); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, tx)
	before, _ := db.Snapshot().Table("users")
	wantBefore := names(t, before)

	// An index on (age, name), and a unique one on name that collides.
	added := *usersDef
	added.Indexes = append(append([]IndexDef{}, usersDef.Indexes...), IndexDef{Name: "iagename", Cols: []int{2, 1}})
	tx = db.Begin()
	if err := tx.Reindex("users", &added); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
	collide := added
	collide.Indexes = append(append([]IndexDef{}, added.Indexes...), IndexDef{Name: "uage", Cols: []int{2}, Unique: true})
	tx = db.Begin()
	var dup *DuplicateError
	if err := tx.Reindex("users", &collide); !errors.As(err, &dup) || dup.Index != "uage" {
		t.Fatalf("a unique index over duplicate ages: %v", err)
	}
	tx.Rollback()

	tx = db.Begin()
	if _, err := tx.Insert("users", []any{int64(301), "new", int64(3)}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete("users", []any{int64(2), "bob", int64(21)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)

	after, _ := db.Snapshot().Table("users")
	if got := names(t, before); got != wantBefore {
		t.Fatal("the version before the reindex changed under its snapshot")
	}
	if after.IndexCount() != 3 || after.Len() != before.Len() {
		t.Fatalf("after: %d indexes, %d rows; want 3 and %d", after.IndexCount(), after.Len(), before.Len())
	}
	for ix := -1; ix < after.IndexCount(); ix++ {
		var prev *Row
		n := 0
		after.AscendIndex(ix, nil, func(r *Row) bool {
			if ix == 2 && prev != nil {
				pa, ra := prev.Value(2).(int64), r.Value(2).(int64)
				if pa > ra || pa == ra && prev.Value(1).(string) >= r.Value(1).(string) {
					t.Fatalf("index iagename out of order: %v before %v", prev.Values(), r.Values())
				}
			}
			if r.Value(0).(int64) == 2 {
				t.Fatalf("tree %d still holds the deleted row", ix)
			}
			prev = r
			n++
			return true
		})
		if n != after.Len() {
			t.Fatalf("tree %d holds %d rows, the table %d", ix, n, after.Len())
		}
	}
	if r, ok := after.FindRow([]any{int64(301), "new", int64(3)}); !ok || r.Value(1) != "new" {
		t.Fatal("the row inserted after the reindex is not found")
	}
}

// TestCheckpointIsNeverAheadOfTheJournal: a checkpoint taken while commits
// are written but not fsync'd (the periodic policy between its fsyncs, or a
// commit between its append and its fsync) makes the journal durable up to
// the checkpoint first, so a power loss just after leaves a database that
// opens, with those commits.
func TestCheckpointIsNeverAheadOfTheJournal(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SavePeriodic) // no Run: nothing fsyncs on its own
	db := setup(t, e)
	tx := db.Begin()
	tx.Insert("users", []any{int64(9), "late", int64(1)})
	mustCommit(t, tx)
	if db.Journal().Durable() >= db.LSN() {
		t.Fatal("the periodic policy's commit is durable already: the test shows nothing")
	}
	if err := e.Checkpoint(db); err != nil {
		t.Fatal(err)
	}
	want := committed(t, db)
	e.Crash()
	e2, err := Open(Options{Root: dir, Policy: SaveCommit, Bind: testBind, SegmentBytes: 4096,
		Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	if err != nil {
		t.Fatalf("reopen after a power loss that followed a checkpoint: %v", err)
	}
	defer e2.Close()
	db2, _ := e2.Database("app")
	if got := committed(t, db2); got != want {
		t.Fatalf("after the power loss %s, want %s", got, want)
	}
}

// TestDatabaseLookupFollowsCreateAndDrop: Database, which reads the set of
// databases without the engine's lock, sees a database from its creation
// (under any letter case) to its drop, and again after a reopen.
func TestDatabaseLookupFollowsCreateAndDrop(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	if _, ok := e.Database("Shop"); ok {
		t.Fatal("a database found before it was created")
	}
	created, err := e.CreateDatabase("Shop", nil)
	if err != nil {
		t.Fatal(err)
	}
	if db, ok := e.Database("sHOP"); !ok || db != created {
		t.Fatal("the created database is not found")
	}
	if err := e.DropDatabase("shop"); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Database("Shop"); ok {
		t.Fatal("a dropped database is still found")
	}
	if _, err := e.CreateDatabase("Shop", nil); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	if _, ok := e2.Database("shop"); !ok {
		t.Fatal("the database is not found after a reopen")
	}
}

// A reindex's commit takes the table the transaction built, unless another
// commit wrote the table since the transaction's snapshot: then the reindex
// fails with a conflict, as every DDL over a table written since does.
func TestReindexCommitTakesTheTransactionsTable(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	added := *usersDef
	added.Indexes = append(append([]IndexDef{}, usersDef.Indexes...), IndexDef{Name: "iname", Cols: []int{1}})

	tx := db.Begin()
	if err := tx.Reindex("users", &added); err != nil {
		t.Fatal(err)
	}
	built := tx.work.cat.tables.must("users")
	mustCommit(t, tx)
	if got, _ := db.Snapshot().Table("users"); got != built || got.IndexCount() != 3 {
		t.Fatalf("the commit did not take the table the transaction built (%d indexes)", got.IndexCount())
	}

	tx = db.Begin()
	if err := tx.Reindex("users", usersDef); err != nil {
		t.Fatal(err)
	}
	w := db.Begin()
	if _, err := w.Insert("users", []any{int64(9), "ivy", int64(30)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, w)
	if err := tx.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("a reindex over a table written since its snapshot: %v", err)
	}
	if got, _ := db.Snapshot().Table("users"); got.IndexCount() != 3 || got.Len() != 4 {
		t.Fatalf("after the conflict: %d indexes, %d rows", got.IndexCount(), got.Len())
	}
}

// Rows appended in key order, many to a transaction, make the writer copy
// its primary tree's tail (Table.unshareTail) every few rows: the table
// holds every row in key order through it, with inserts before its first
// row and updates in between, and a snapshot taken before the writes does
// not change; recovery finds the same rows.
func TestAppendsInKeyOrderKeepRowsAndSnapshots(t *testing.T) {
	defer func(n int) { tailRows = n }(tailRows)
	tailRows = 3
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	before := committed(t, db)
	snap := db.Snapshot()
	want := map[int64]string{1: "ann", 2: "bob", 3: "cid"}
	tx := db.Begin()
	for i := int64(10); i < 400; i++ {
		name := fmt.Sprintf("u%d", i)
		if _, err := tx.Insert("users", []any{i, name, i % 9}); err != nil {
			t.Fatal(err)
		}
		want[i] = name
		switch {
		case i%50 == 0: // before every row: not an append
			if _, err := tx.Insert("users", []any{-i, "neg" + name, int64(0)}); err != nil {
				t.Fatal(err)
			}
			want[-i] = "neg" + name
		case i%37 == 0:
			if err := tx.Update("users", []any{i - 5, fmt.Sprintf("u%d", i-5), (i - 5) % 9}, []any{i - 5, "moved" + name, int64(1)}); err != nil {
				t.Fatal(err)
			}
			want[i-5] = "moved" + name
		}
	}
	mustCommit(t, tx)
	check := func(tb *Table, when string) {
		t.Helper()
		var prev *int64
		n := 0
		tb.Scan(func(r *Row) bool {
			id := r.Value(0).(int64)
			if prev != nil && id <= *prev {
				t.Fatalf("%s: row %d after row %d", when, id, *prev)
			}
			if r.Value(1) != want[id] {
				t.Fatalf("%s: row %d holds %v, want %s", when, id, r.Value(1), want[id])
			}
			if got, ok := tb.Get(KeyRow([]any{id, nil, nil})); !ok || got != r {
				t.Fatalf("%s: row %d not found by its key", when, id)
			}
			prev, n = &id, n+1
			return true
		})
		if n != len(want) || tb.Len() != len(want) {
			t.Fatalf("%s: %d rows (Len %d), want %d", when, n, tb.Len(), len(want))
		}
	}
	tb, _ := db.Snapshot().Table("users")
	check(tb, "committed")
	if old, _ := snap.Table("users"); names(t, old) != before {
		t.Fatal("the snapshot taken before the appends changed")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2, _ := openEngine(t, dir, SaveCommit)
	defer e2.Close()
	db2, _ := e2.Database("app")
	tb2, _ := db2.Snapshot().Table("users")
	check(tb2, "after recovery")
}

// must returns the table under key; nil when there is none.
func (s *tableSet) must(key string) *Table {
	t, _ := s.get(key)
	return t
}

// TestPeriodicPolicyWritesThroughThePageCache: under the periodic policy a
// commit is acknowledged once written to the OS, so its frames go through
// the page cache, not with direct I/O, which makes each commit wait for
// the device; the commit policy uses direct I/O where the file system
// takes it.
func TestPeriodicPolicyWritesThroughThePageCache(t *testing.T) {
	probe, err := journal.Open(journal.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	direct := probe.InBlocks() // the file system takes O_DIRECT
	probe.Close()
	for _, c := range []struct {
		policy SavePolicy
		blocks bool
	}{{SaveCommit, direct}, {SavePeriodic, false}} {
		e, _ := openEngine(t, t.TempDir(), c.policy)
		db := setup(t, e)
		if got := db.Journal().InBlocks(); got != c.blocks {
			t.Errorf("%v: the journal written in blocks (direct I/O) %v, want %v", c.policy, got, c.blocks)
		}
	}
}

// TestDeferSync: a commit made with DeferSync returns with its frames
// written but not fsync'd, visible as any commit; the next commit that
// waits makes both durable.
func TestDeferSync(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	if db.Journal().Durable() < db.LSN() {
		t.Fatalf("a commit returned before its fsync: durable %d, end %d", db.Journal().Durable(), db.LSN())
	}
	tx := db.Begin()
	tx.DeferSync()
	if _, err := tx.Insert("users", []any{int64(9), "late", int64(1)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
	deferred := db.LSN()
	if db.Journal().Durable() >= deferred {
		t.Fatalf("a deferred commit waited for its fsync: durable %d, end %d", db.Journal().Durable(), deferred)
	}
	if _, ok := db.Snapshot().Table("users"); !ok {
		t.Fatal("no table")
	}
	tx = db.Begin()
	if _, err := tx.Insert("users", []any{int64(10), "next", int64(2)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
	if d := db.Journal().Durable(); d < deferred || d < db.LSN() {
		t.Fatalf("durable %d after a commit that waits, deferred commit ended at %d, journal at %d", d, deferred, db.LSN())
	}
}
