package storage

import (
	"context"
	"errors"
	"testing"
)

func viewOf(t *testing.T, tx *Tx) string {
	t.Helper()
	tb, ok := tx.Table("users")
	if !ok {
		t.Fatal("no table users")
	}
	return names(t, tb)
}

// A rebase shows what others committed since the snapshot, keeps the
// transaction's own writes on top, and leaves its conflict check as it was.
func TestRebaseSeesNewCommitsAndKeepsOwnWrites(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)

	tx := db.Begin()
	if _, err := tx.Insert("users", []any{int64(4), "dan", int64(1)}); err != nil {
		t.Fatal(err)
	}
	other := db.Begin()
	if _, err := other.Insert("users", []any{int64(5), "eve", int64(2)}); err != nil {
		t.Fatal(err)
	}
	if err := other.Update("users", []any{int64(2), "bob", int64(21)}, []any{int64(2), "bob", int64(99)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, other)

	if got := viewOf(t, tx); got != "1 ann 20;2 bob 21;3 cid 22;4 dan 1" {
		t.Fatalf("before the rebase the snapshot holds: %s", got)
	}
	if !tx.Rebase() {
		t.Fatal("Rebase refused with no conflicting write")
	}
	if got := viewOf(t, tx); got != "1 ann 20;2 bob 99;3 cid 22;4 dan 1;5 eve 2" {
		t.Fatalf("after the rebase: %s", got)
	}
	// A write after the rebase computes from the newest row and commits.
	if err := tx.Update("users", []any{int64(2), "bob", int64(99)}, []any{int64(2), "bob", int64(100)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
	if got := committed(t, db); got != "1 ann 20;2 bob 100;3 cid 22;4 dan 1;5 eve 2" {
		t.Fatalf("committed: %s", got)
	}
}

// A row the transaction wrote and another commit changed afterwards is
// still a conflict: the rebase is refused and the commit fails.
func TestRebaseKeepsFirstCommitterWins(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)

	tx := db.Begin()
	if err := tx.Update("users", []any{int64(1), "ann", int64(20)}, []any{int64(1), "ann", int64(30)}); err != nil {
		t.Fatal(err)
	}
	other := db.Begin()
	if err := other.Update("users", []any{int64(1), "ann", int64(20)}, []any{int64(1), "ann", int64(40)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, other)
	if tx.Rebase() {
		t.Fatal("Rebase over a conflicting commit")
	}
	if got := viewOf(t, tx); got != "1 ann 30;2 bob 21;3 cid 22" {
		t.Fatalf("view after a refused rebase: %s", got)
	}
	if err := tx.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit: %v, want ErrConflict", err)
	}
	if got := committed(t, db); got != "1 ann 40;2 bob 21;3 cid 22" {
		t.Fatalf("committed: %s", got)
	}
}

// A rollback to a savepoint taken before a rebase keeps the newer
// snapshot: the commit that follows must not bring back the older rows.
func TestRollbackToSavepointAfterRebase(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)

	tx := db.Begin()
	if _, err := tx.Insert("users", []any{int64(4), "dan", int64(1)}); err != nil {
		t.Fatal(err)
	}
	sp := tx.Savepoint()
	if _, err := tx.Insert("users", []any{int64(6), "fay", int64(1)}); err != nil {
		t.Fatal(err)
	}
	other := db.Begin()
	if err := other.Update("users", []any{int64(3), "cid", int64(22)}, []any{int64(3), "cid", int64(77)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, other)
	if !tx.Rebase() {
		t.Fatal("Rebase refused")
	}
	tx.RollbackTo(sp)
	if got := viewOf(t, tx); got != "1 ann 20;2 bob 21;3 cid 77;4 dan 1" {
		t.Fatalf("after the rollback to the savepoint: %s", got)
	}
	mustCommit(t, tx)
	if got := committed(t, db); got != "1 ann 20;2 bob 21;3 cid 77;4 dan 1" {
		t.Fatalf("committed: %s", got)
	}
}

// A transaction that changed a definition keeps its snapshot.
func TestRebaseSkipsAfterDDL(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	db := setup(t, e)
	tx := db.Begin()
	if err := tx.Truncate("users"); err != nil {
		t.Fatal(err)
	}
	other := db.Begin()
	if _, err := other.Insert("users", []any{int64(5), "eve", int64(2)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, other)
	if tx.Rebase() {
		t.Fatal("Rebase after a TRUNCATE in the transaction")
	}
}
