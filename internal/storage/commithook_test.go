package storage

import (
	"bytes"
	"context"
	"sync"
	"testing"
)

type hookRecorder struct {
	mu    sync.Mutex
	calls []hookCall
}

type hookCall struct {
	db    string
	kinds []OpKind
	note  any
}

func (h *hookRecorder) Committed(db *DB, ops []*Op, cat *Catalog, note any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := hookCall{db: db.Name(), note: note}
	for _, op := range ops {
		c.kinds = append(c.kinds, op.Kind)
		if op.Kind.writesRow() {
			if _, ok := cat.Table(op.Table); !ok {
				panic("hook: the catalog lacks the op's table")
			}
		}
	}
	h.calls = append(h.calls, c)
}

// The commit hook sees each commit once, with its full images and the
// committer's note; a secondary's applying of its primary's frames is not
// a commit of its own (the binary log of §17.13 leaves it out).
func TestCommitHook(t *testing.T) {
	src, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer src.Close()
	sdb := setup(t, src)
	var seed bytes.Buffer
	if _, err := sdb.WriteSnapshot(&seed); err != nil {
		t.Fatal(err)
	}
	from := sdb.LSN()
	rec := &hookRecorder{}
	src.SetCommitHook(rec)

	tx := sdb.Begin()
	tx.SetNote("tx-note")
	if _, err := tx.Insert("users", []any{int64(100), "hook", int64(1)}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tx)
	snap := sdb.Snapshot()
	users, _ := snap.Table("users")
	seen, ok := users.Get(KeyRow([]any{int64(100)}))
	if !ok {
		t.Fatal("inserted row not found")
	}
	if _, err := sdb.CommitRow(RowChange{Table: users, Seen: seen, Kind: OpUpdate, Vals: []any{int64(100), "hook2", int64(2)}, Note: "row-note"}); err != nil {
		t.Fatal(err)
	}
	empty := sdb.Begin()
	empty.SetNote("nothing")
	mustCommit(t, empty) // no writes: no commit, no call

	if len(rec.calls) != 2 || rec.calls[0].note != "tx-note" || rec.calls[1].note != "row-note" ||
		len(rec.calls[0].kinds) != 1 || rec.calls[0].kinds[0] != OpInsert || rec.calls[1].kinds[0] != OpUpdate {
		t.Fatalf("hook calls %+v", rec.calls)
	}

	// A secondary with a hook applies the same frames: no call.
	all, err := sdb.Journal().ReadBytes(from, sdb.LSN())
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer dst.Close()
	other := &hookRecorder{}
	dst.SetCommitHook(other)
	ddb, err := dst.InstallSeed("app", &seed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ddb.AppendReplicated(context.Background(), from, all, true); err != nil {
		t.Fatal(err)
	}
	dusers, _ := ddb.Snapshot().Table("users")
	if _, ok := dusers.Get(KeyRow([]any{int64(100)})); !ok {
		t.Fatal("the secondary lacks the replicated row")
	}
	if len(other.calls) != 0 {
		t.Fatalf("the secondary's hook was called for received frames: %+v", other.calls)
	}
	src.SetCommitHook(nil)
	tx = sdb.Begin()
	tx.Insert("users", []any{int64(101), "off", int64(1)})
	mustCommit(t, tx)
	if len(rec.calls) != 2 {
		t.Fatal("a removed hook was called")
	}
}
