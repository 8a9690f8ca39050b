package storage

import (
	"context"
	"errors"
	"testing"
)

// CommitRow writes only when the committed row at its key is still the one
// the change was worked out on; a transaction that saw the row before
// conflicts with it as with any commit; the journal replays its rows.
func TestCommitRowChecksTheRowItRead(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	snap, _ := db.Snapshot().Table("users")
	ann, _ := snap.Get(KeyRow([]any{int64(1), nil, nil}))

	// A transaction that read ann before the row commit.
	before := db.Begin()
	if err := before.Update("users", ann.Values(), []any{int64(1), "ann", int64(99)}); err != nil {
		t.Fatal(err)
	}

	if _, err := db.CommitRow(RowChange{Table: snap, Seen: ann, Kind: OpUpdate, Vals: []any{int64(1), "ann", int64(30)}}); err != nil {
		t.Fatal(err)
	}
	// The same change worked out on the row as it was: stale.
	if _, err := db.CommitRow(RowChange{Table: snap, Seen: ann, Kind: OpUpdate, Vals: []any{int64(1), "ann", int64(31)}}); !errors.Is(err, ErrStale) {
		t.Fatalf("update of a row changed since it was read: %v, want ErrStale", err)
	}
	if _, err := db.CommitRow(RowChange{Table: snap, Seen: ann, Kind: OpDelete}); !errors.Is(err, ErrStale) {
		t.Fatalf("delete of a row changed since it was read: %v, want ErrStale", err)
	}
	// An insert expects no row at its key.
	if _, err := db.CommitRow(RowChange{Table: snap, Kind: OpInsert, Vals: []any{int64(2), "bea", int64(1)}}); !errors.Is(err, ErrStale) {
		t.Fatalf("insert at a key that has a row: %v, want ErrStale", err)
	}
	if err := before.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("commit of a transaction that read the row before: %v, want ErrConflict", err)
	}

	now, _ := db.Snapshot().Table("users")
	bob, _ := now.Get(KeyRow([]any{int64(2), nil, nil}))
	if _, err := db.CommitRow(RowChange{Table: now, Seen: bob, Kind: OpDelete}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CommitRow(RowChange{Table: now, Kind: OpInsert, Vals: []any{int64(7), "eve", int64(50)}}); err != nil {
		t.Fatal(err)
	}
	const want = "1 ann 30;3 cid 22;7 eve 50"
	if got := committed(t, db); got != want {
		t.Fatalf("rows = %s, want %s", got, want)
	}

	// A table redefined since it was read: stale.
	tx := db.Begin()
	if err := tx.SetMeta("users", usersDef); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
	if _, err := db.CommitRow(RowChange{Table: now, Kind: OpInsert, Vals: []any{int64(8), "fay", int64(50)}}); !errors.Is(err, ErrStale) {
		t.Fatalf("insert into a table redefined since it was read: %v, want ErrStale", err)
	}

	if got := committedAfterReopen(t, e, dir); got != want {
		t.Fatalf("rows after the journal's replay = %s, want %s", got, want)
	}
}
