package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
)

// A primary's first write of an epoch is preceded by its mark; the marks
// survive a restart (journal replay) and a checkpoint, and travel in a copy.
func TestEpochMarks(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	e.OpenWrites(&Writer{Epoch: 3, Node: "n1"})
	db := setup(t, e)
	if h := db.History(); len(h) != 1 || h[0].Epoch != 3 || h[0].Node != "n1" || h[0].LSN != 0 {
		t.Fatalf("history of a database created at epoch 3: %v", h)
	}
	// A transaction that wrote before the gate closed does not commit
	// after: the gate is checked at commit, not only per statement.
	tx := db.Begin()
	if _, err := tx.Insert("users", []any{int64(7), "dan", int64(1)}); err != nil {
		t.Fatal(err)
	}
	e.CloseWrites()
	if err := tx.Commit(context.Background()); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("commit through a closed gate: %v, want ErrReadOnly", err)
	}
	if _, err := e.CreateDatabase("other", nil); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("CREATE DATABASE through a closed gate: %v", err)
	}
	e.OpenWrites(&Writer{Epoch: 5, Node: "n2"})
	at := db.LSN()
	tx = db.Begin()
	tx.Insert("users", []any{int64(7), "dan", int64(1)})
	mustCommit(t, tx)
	if h := db.History(); len(h) != 2 || h[1].Epoch != 5 || h[1].LSN != at {
		t.Fatalf("history after the first write of epoch 5: %v (write at %d)", h, at)
	}
	if err := db.MarkEpoch(context.Background()); err != nil || len(db.History()) != 2 {
		t.Fatalf("MarkEpoch of an epoch already marked: %v %v", err, db.History())
	}
	var copyBuf bytes.Buffer
	if _, err := db.WriteSnapshot(&copyBuf); err != nil {
		t.Fatal(err)
	}
	want := db.History()
	e.Crash()
	e, _ = openEngine(t, dir, SaveCommit)
	db, _ = e.Database("app")
	if got := db.History(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("history after replay %v, want %v", got, want)
	}
	if err := e.Close(); err != nil { // with a checkpoint
		t.Fatal(err)
	}
	e, _ = openEngine(t, dir, SaveCommit)
	db, _ = e.Database("app")
	if got := db.History(); len(got) != 2 || got[1] != want[1] {
		t.Fatalf("history after a checkpoint %v, want %v", got, want)
	}
	e2, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e2.Close()
	cp, err := e2.InstallSeed("app", &copyBuf)
	if err != nil {
		t.Fatal(err)
	}
	if got := cp.History(); len(got) != 2 || got[1] != want[1] {
		t.Fatalf("history of a copy %v, want %v", got, want)
	}
	e.Close()
}

// primaryTransaction makes a primary's database (setup), a copy of it, and
// then one transaction of 50 rows named by name, and returns the database,
// the copy, and the journal's bytes of the transaction from its LSN.
func primaryTransaction(t *testing.T, name func(i int) string) (*DB, []byte, journal.LSN, []byte) {
	t.Helper()
	src, _ := openEngine(t, t.TempDir(), SaveCommit)
	t.Cleanup(func() { src.Close() })
	sdb := setup(t, src)
	var copyBuf bytes.Buffer
	if _, err := sdb.WriteSnapshot(&copyBuf); err != nil {
		t.Fatal(err)
	}
	from := sdb.LSN()
	tx := sdb.Begin()
	for i := 10; i < 60; i++ {
		if _, err := tx.Insert("users", []any{int64(i), name(i), int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, tx)
	all, err := sdb.Journal().ReadBytes(from, sdb.LSN())
	if err != nil {
		t.Fatal(err)
	}
	return sdb, copyBuf.Bytes(), from, all
}

// A replica applies a transaction received in many pieces once, when its
// commit frame arrives; a promotion's CutTail keeps the frames of one
// whose commit has not come.
func TestReplicaPiecesAndTailKept(t *testing.T) {
	sdb, seedCopy, from, all := primaryTransaction(t, func(i int) string { return "u" + strings.Repeat("x", i) })
	var frames [][]byte
	for pos := 0; pos < len(all); {
		_, _, size, _ := journal.DecodeFrame(all[pos:])
		frames = append(frames, all[pos:pos+size])
		pos += size
	}

	dst, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer dst.Close()
	ddb, err := dst.InstallSeed("app", bytes.NewReader(seedCopy))
	if err != nil {
		t.Fatal(err)
	}
	lsn := from
	for i, f := range frames[:len(frames)-1] { // everything but the commit frame, one frame at a time
		end, err := ddb.AppendReplicated(context.Background(), lsn, f, false)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		lsn = end
		if ddb.LSN() != from {
			t.Fatalf("an unterminated transaction is visible (applied LSN %d)", ddb.LSN())
		}
	}
	// A promotion keeps the frames (CutTail cuts nothing): they are the
	// other primary's, and its epoch mark follows them
	// (TestStreamedRollbackAtPromotion).
	cut, err := ddb.CutTail(func(at journal.LSN, tail []byte) error {
		t.Errorf("tail of %d bytes handed over at %d", len(tail), at)
		return nil
	})
	if err != nil || cut != 0 || ddb.Journal().End() != lsn {
		t.Fatalf("CutTail = %d, %v; journal ends at %d, want %d", cut, err, ddb.Journal().End(), lsn)
	}
	// The commit frame comes: applied.
	if _, err := ddb.AppendReplicated(context.Background(), lsn, frames[len(frames)-1], true); err != nil {
		t.Fatal(err)
	}
	if a, b := committed(t, sdb), committed(t, ddb); a != b || ddb.LSN() != sdb.LSN() {
		t.Fatalf("replica %q at %d, primary %q at %d", b, ddb.LSN(), a, sdb.LSN())
	}
}

// A replica that received a transaction across segments, but not its
// commit frame, and lost power comes back with those frames kept (the
// transaction may still commit: the primary resumes sending after them)
// and the transaction open. Should it be the writer instead (a primary
// restarting after a promotion), its epoch mark follows those frames and
// an abort frame ends the transaction: it is never applied.
func TestReplicaTailAcrossSegmentsKeptAtRestart(t *testing.T) {
	_, seedCopy, from, all := primaryTransaction(t, func(i int) string { return fmt.Sprintf("u%d %s", i, strings.Repeat("x", 300)) })
	dir := t.TempDir()
	dst, _ := openEngine(t, dir, SaveCommit)
	ddb, err := dst.InstallSeed("app", bytes.NewReader(seedCopy))
	if err != nil {
		t.Fatal(err)
	}
	lsn := from
	for pos := 0; pos < len(all); { // every frame but the commit, one at a time, durably
		_, _, size, _ := journal.DecodeFrame(all[pos:])
		if pos+size == len(all) {
			break
		}
		if lsn, err = ddb.AppendReplicated(context.Background(), lsn, all[pos:pos+size], true); err != nil {
			t.Fatal(err)
		}
		pos += size
	}
	if segs, _ := listSegmentStarts(filepath.Join(dir, "app")); len(segs) < 3 || segs[len(segs)-2] <= uint64(from) {
		t.Fatalf("the received frames are in segments %v: want them across several after LSN %d", segs, from)
	}
	dst.Crash()

	dst, lb := openEngine(t, dir, SaveCommit)
	defer dst.Close()
	ddb, _ = dst.Database("app")
	if ddb.LSN() != from || ddb.Journal().End() <= from {
		t.Fatalf("after the restart: applied to %d, journal ends at %d; want applied to the last commit %d and the received frames kept", ddb.LSN(), ddb.Journal().End(), from)
	}
	if !strings.Contains(lb.String(), "frames of open transactions kept") {
		t.Fatalf("the open transaction is not logged: %s", lb.String())
	}
	if s := ddb.Streams(); len(s) != 1 || s[0].Local || s[0].Start != from {
		t.Fatalf("open transactions after the restart: %+v", s)
	}
	end := ddb.Journal().End()
	dst.OpenWrites(&Writer{Epoch: 2, Node: "n2"})
	tx := ddb.Begin()
	tx.Insert("users", []any{int64(70), "after", int64(1)})
	mustCommit(t, tx)
	if got := committed(t, ddb); got != "1 ann 20;2 bob 21;3 cid 22;70 after 1" {
		t.Fatalf("after the first write as writer: %q", got)
	}
	if h := ddb.History(); h[len(h)-1].Epoch != 2 || h[len(h)-1].LSN != end {
		t.Fatalf("history %v: want epoch 2 marked at %d, after the open transaction's frames", h, end)
	}
	if s := ddb.Streams(); len(s) != 0 {
		t.Fatalf("open transactions after the first write: %+v", s)
	}
	// Recovery again: the same rows, the open transaction aborted.
	dst.Crash()
	dst, _ = openEngine(t, dir, SaveCommit)
	defer dst.Close()
	ddb, _ = dst.Database("app")
	if got := committed(t, ddb); got != "1 ann 20;2 bob 21;3 cid 22;70 after 1" {
		t.Fatalf("after a second restart: %q", got)
	}
	if s := ddb.Streams(); len(s) != 0 {
		t.Fatalf("open transactions after a second restart: %+v", s)
	}
}

// A replica refuses an epoch mark older than its journal's last one.
func TestReplicaRefusesStaleEpochMark(t *testing.T) {
	e, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer e.Close()
	e.OpenWrites(&Writer{Epoch: 4, Node: "n1"})
	db := setup(t, e)
	e.CloseWrites()
	stale := journal.AppendFrame(AppendOp(nil, &Op{Kind: OpEpoch, Mark: markAt(3, "n9", db.LSN())}), journal.FrameCommit, nil)
	if _, err := db.AppendReplicated(context.Background(), db.LSN(), stale, false); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("a mark of epoch 3 after epoch 4: %v, want ErrStaleEpoch", err)
	}
}

// A database folder of another format stops the start-up, naming the
// folder and the version, and is left as it is; a folder moved elsewhere
// (quarantine) opens there, since it carries its format.
func TestFormatVersion(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "shop"), 0o755)
	os.WriteFile(filepath.Join(dir, "shop", "00000000000000000000.journal"), []byte("v1 frames"), 0o644)
	_, err := Open(Options{Root: dir, Bind: testBind})
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "format version 1") || !strings.Contains(err.Error(), filepath.Join(dir, "shop")) {
		t.Fatalf("a format 1 database: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "shop", "00000000000000000000.journal")); string(b) != "v1 frames" {
		t.Fatal("the refused database was changed")
	}
	fresh := t.TempDir()
	e, _ := openEngine(t, fresh, SaveCommit)
	setup(t, e)
	e.Close()
	moved := t.TempDir()
	if err := os.Rename(filepath.Join(fresh, "app"), filepath.Join(moved, "app")); err != nil {
		t.Fatal(err)
	}
	e, _ = openEngine(t, moved, SaveCommit)
	db, ok := e.Database("app")
	if !ok || committed(t, db) != "1 ann 20;2 bob 21;3 cid 22" {
		t.Fatal("a database folder moved to another data directory does not open there")
	}
	e.Close()
	os.WriteFile(filepath.Join(moved, "app", formatFile), []byte("miraj data format 9\n"), 0o644)
	_, err = Open(Options{Root: moved, Bind: testBind})
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "format version 9") {
		t.Fatalf("a format 9 database: %v", err)
	}
}

// Frames of different transactions may interleave in a journal: each
// takes effect at its own commit frame, and an abort frame voids one —
// on a replica as it receives them and at recovery alike.
func TestInterleavedTransactions(t *testing.T) {
	dir := t.TempDir()
	e, _ := openEngine(t, dir, SaveCommit)
	db := setup(t, e)
	at := db.LSN()
	ins := func(txn uint64, id int64, name string) *Op {
		return &Op{Kind: OpInsert, Txn: txn, Table: "users", Row: rowOf(uint64(id), []any{id, name, int64(1)})}
	}
	var f []byte
	f = AppendOp(f, ins(900, 50, "in-aborted"))
	f = AppendOp(f, ins(901, 51, "in-committed"))
	f = AppendEnd(f, journal.FrameCommit, 901, time.Now())
	f = AppendOp(f, ins(900, 52, "in-aborted-too"))
	f = AppendEnd(f, journal.FrameAbort, 900, time.Now())
	if _, err := db.AppendReplicated(context.Background(), at, f, true); err != nil {
		t.Fatal(err)
	}
	want := "1 ann 20;2 bob 21;3 cid 22;51 in-committed 1"
	if got := committed(t, db); got != want || db.LSN() != db.Journal().End() {
		t.Fatalf("after the frames: %q at %d (journal end %d)", got, db.LSN(), db.Journal().End())
	}
	// A commit here gets an id above every one seen.
	tx := db.Begin()
	tx.Insert("users", []any{int64(60), "later", int64(1)})
	mustCommit(t, tx)
	if db.txnSeq.Load() <= 901 {
		t.Fatalf("next transaction id %d reuses the replicated ones", db.txnSeq.Load())
	}
	e.Crash()
	e, _ = openEngine(t, dir, SaveCommit)
	defer e.Close()
	db, _ = e.Database("app")
	if got := committed(t, db); got != want+";60 later 1" {
		t.Fatalf("after recovery: %q", got)
	}
}

func markAt(e uint64, node string, lsn journal.LSN) history.Mark {
	return history.Mark{Epoch: epoch.Epoch(e), Node: node, LSN: lsn}
}
