package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
)

// streamPair is a primary's database and a replica of it, fed by pump.
type streamPair struct {
	src, dst *Engine
	sdb, ddb *DB
	dstDir   string
	sent     int64
}

func newStreamPair(t *testing.T) *streamPair {
	t.Helper()
	src, _ := openEngine(t, t.TempDir(), SaveCommit)
	t.Cleanup(func() { src.Close() })
	sdb := setup(t, src)
	var seed bytes.Buffer
	if _, err := sdb.WriteSnapshot(&seed); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dst, _ := openEngine(t, dir, SaveCommit)
	dst.CloseWrites()
	ddb, err := dst.InstallSeed("app", &seed)
	if err != nil {
		t.Fatal(err)
	}
	p := &streamPair{src: src, dst: dst, sdb: sdb, ddb: ddb, dstDir: dir}
	t.Cleanup(func() { p.dst.Close() })
	return p
}

// pump sends the replica what the primary serves past the replica's
// journal end, as a follower's link does.
func (p *streamPair) pump(t *testing.T) {
	t.Helper()
	for {
		from := p.ddb.Journal().End()
		frames, err := p.sdb.ReadCommitted(from, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		if len(frames) == 0 {
			return
		}
		p.sent += int64(len(frames))
		if _, err := p.ddb.AppendReplicated(context.Background(), from, frames, true); err != nil {
			t.Fatal(err)
		}
	}
}

func lowWorkerBytes(t *testing.T) {
	old := SetWorkerBytes(2 << 10)
	t.Cleanup(func() { SetWorkerBytes(old) })
}

func insertRange(t *testing.T, tx *Tx, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if _, err := tx.Insert("users", []any{int64(i), fmt.Sprintf("u%d %s", i, strings.Repeat("x", 100)), int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// A transaction past its threshold is in the journal and served to
// followers before its commit, invisible until then on both nodes; a
// follower applies it as it arrives, small commits of the same table
// interleaved with it, and its commit publishes the same rows as the
// primary's.
func TestStreamedTransaction(t *testing.T) {
	lowWorkerBytes(t)
	p := newStreamPair(t)
	before := committed(t, p.sdb)
	lsn := p.sdb.LSN()
	tx := p.sdb.Begin()
	tx.SetStreamBytes(8 << 10)
	insertRange(t, tx, 100, 300)
	if tx.Streamed() == 0 || p.sdb.Journal().End() <= lsn || p.sdb.LSN() != lsn {
		t.Fatalf("streamed %d bytes; journal end %d, committed end %d (was %d)", tx.Streamed(), p.sdb.Journal().End(), p.sdb.LSN(), lsn)
	}
	if s := p.sdb.Streams(); len(s) != 1 || !s[0].Local || s[0].Rows == 0 {
		t.Fatalf("primary's open transactions: %+v", s)
	}
	// A small commit to the same table while the large one runs.
	small := p.sdb.Begin()
	insertRange(t, small, 5, 6)
	mustCommit(t, small)
	p.pump(t)
	if got := committed(t, p.ddb); got != committed(t, p.sdb) {
		t.Fatalf("replica %q, primary %q before the large commit", got, committed(t, p.sdb))
	}
	if s := p.ddb.Streams(); len(s) != 1 || s[0].Local || !s[0].Applying {
		t.Fatalf("replica's open transactions: %+v", s)
	}
	insertRange(t, tx, 300, 400)
	small = p.sdb.Begin()
	insertRange(t, small, 6, 7)
	mustCommit(t, small)
	p.pump(t)
	mustCommit(t, tx)
	p.pump(t)
	want := committed(t, p.sdb)
	if want == before || committed(t, p.ddb) != want {
		t.Fatalf("after the commit: replica and primary differ (%d and %d bytes)", len(committed(t, p.ddb)), len(want))
	}
	if c := p.ddb.StreamCounts(); c.Workers != 1 || c.Published != 1 || c.Replayed != 0 {
		t.Fatalf("replica's stream counts: %+v", c)
	}
	if c := p.sdb.StreamCounts(); c.Started != 1 || c.Bytes == 0 {
		t.Fatalf("primary's stream counts: %+v", c)
	}
	// Both recover the same rows from their journals.
	for _, e := range []*Engine{p.src, p.dst} {
		e.Crash()
	}
	src, _ := openEngine(t, p.src.opts.Root, SaveCommit)
	defer src.Close()
	sdb, _ := src.Database("app")
	dst, _ := openEngine(t, p.dstDir, SaveCommit)
	p.dst = dst
	ddb, _ := dst.Database("app")
	if committed(t, sdb) != want || committed(t, ddb) != want {
		t.Fatal("the rows after recovery differ")
	}
}

// A rolled back streamed transaction ends with an abort frame: nothing of
// it anywhere, and the replica's worker and what it built are gone.
func TestStreamedRollback(t *testing.T) {
	lowWorkerBytes(t)
	p := newStreamPair(t)
	want := committed(t, p.sdb)
	tx := p.sdb.Begin()
	tx.SetStreamBytes(8 << 10)
	insertRange(t, tx, 100, 300)
	p.pump(t)
	if s := p.ddb.Streams(); len(s) != 1 || !s[0].Applying {
		t.Fatalf("replica's open transactions: %+v", s)
	}
	tx.Rollback()
	p.pump(t)
	if committed(t, p.sdb) != want || committed(t, p.ddb) != want {
		t.Fatal("rows of the rolled back transaction are visible")
	}
	if s := p.ddb.Streams(); len(s) != 0 {
		t.Fatalf("replica's open transactions after the abort: %+v", s)
	}
	if len(p.ddb.workers) != 0 {
		t.Fatal("the replica's worker is still there")
	}
	if c := p.sdb.StreamCounts(); c.Aborted != 1 {
		t.Fatalf("primary's counts: %+v", c)
	}
	if p.ddb.LSN() != p.sdb.LSN() || p.ddb.Journal().End() != p.sdb.Journal().End() {
		t.Fatalf("replica at %d/%d, primary at %d/%d", p.ddb.LSN(), p.ddb.Journal().End(), p.sdb.LSN(), p.sdb.Journal().End())
	}
}

// A rollback to a savepoint before what was streamed ends that stream; the
// transaction streams again under a new id and commits what it kept.
func TestStreamedSavepoint(t *testing.T) {
	lowWorkerBytes(t)
	p := newStreamPair(t)
	tx := p.sdb.Begin()
	tx.SetStreamBytes(8 << 10)
	insertRange(t, tx, 100, 110)
	sp := tx.Savepoint()
	insertRange(t, tx, 110, 300)
	first := p.sdb.Streams()
	tx.RollbackTo(sp)
	insertRange(t, tx, 400, 600)
	second := p.sdb.Streams()
	if len(first) != 1 || len(second) != 1 || first[0].Txn == second[0].Txn {
		t.Fatalf("streams before and after the rollback to the savepoint: %+v, %+v", first, second)
	}
	p.pump(t)
	mustCommit(t, tx)
	p.pump(t)
	got := committed(t, p.ddb)
	if got != committed(t, p.sdb) || strings.Contains(got, "u110 ") || !strings.Contains(got, "u109 ") || !strings.Contains(got, "u599 ") {
		t.Fatal("the replica's rows are not the primary's, or hold what was rolled back")
	}
}

// A replica restarted in the middle of a streamed transaction, from a
// checkpoint taken then, resumes it: the primary sends what follows the
// replica's journal, not the transaction again.
func TestStreamedResumeAfterRestart(t *testing.T) {
	lowWorkerBytes(t)
	p := newStreamPair(t)
	tx := p.sdb.Begin()
	tx.SetStreamBytes(8 << 10)
	insertRange(t, tx, 100, 300)
	small := p.sdb.Begin()
	insertRange(t, small, 5, 6)
	mustCommit(t, small)
	insertRange(t, tx, 300, 350)
	p.pump(t)
	if err := p.dst.Checkpoint(p.ddb); err != nil {
		t.Fatal(err)
	}
	received := p.sent
	p.dst.Crash()
	dst, _ := openEngine(t, p.dstDir, SaveCommit)
	dst.CloseWrites()
	p.dst = dst
	p.ddb, _ = dst.Database("app")
	if s, ps := p.ddb.Streams(), p.sdb.Streams(); len(s) != 1 || len(ps) != 1 || s[0].Rows != ps[0].Rows || s[0].Txn != ps[0].Txn {
		t.Fatalf("open transactions after the restart: %+v; the primary's: %+v", s, ps)
	}
	insertRange(t, tx, 350, 400)
	mustCommit(t, tx)
	p.pump(t)
	if committed(t, p.ddb) != committed(t, p.sdb) {
		t.Fatal("the replica's rows differ from the primary's")
	}
	total := int64(p.sdb.Journal().End()) - int64(p.sdb.Journal().Start())
	if p.sent-received > total/2 {
		t.Fatalf("%d bytes sent again after the restart, of %d", p.sent-received, total)
	}
}

// A secondary promoted while a streamed transaction is open drops it at
// once: the abort frame follows its epoch mark, and none of its rows is
// visible, then or after a restart.
func TestStreamedRollbackAtPromotion(t *testing.T) {
	lowWorkerBytes(t)
	p := newStreamPair(t)
	want := committed(t, p.sdb)
	tx := p.sdb.Begin()
	tx.SetStreamBytes(8 << 10)
	insertRange(t, tx, 100, 300)
	p.pump(t)
	p.dst.OpenWrites(&Writer{Epoch: 2, Node: "n2"})
	if err := p.ddb.MarkEpoch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.ddb.Streams(); len(s) != 0 || len(p.ddb.workers) != 0 {
		t.Fatalf("open transactions after the promotion: %+v", s)
	}
	if committed(t, p.ddb) != want {
		t.Fatal("rows of the open transaction are visible on the promoted node")
	}
	w := p.ddb.Begin()
	insertRange(t, w, 150, 151) // a key the open transaction wrote: no lock, no conflict
	mustCommit(t, w)
	if c := p.ddb.StreamCounts(); c.RolledBack != 1 {
		t.Fatalf("counts: %+v", c)
	}
	// The old primary's transaction cannot end in its journal once
	// writes closed there.
	p.src.CloseWrites()
	if err := tx.Commit(context.Background()); err == nil {
		t.Fatal("a streamed transaction committed after writes closed")
	}
	if s := p.sdb.Streams(); len(s) != 1 || s[0].Local {
		t.Fatalf("the old primary's open transactions: %+v", s)
	}
	p.dst.Crash()
	dst, _ := openEngine(t, p.dstDir, SaveCommit)
	p.dst = dst
	ddb, _ := dst.Database("app")
	if got := committed(t, ddb); !strings.Contains(got, "u150 ") || strings.Contains(got, "u151 ") || strings.Contains(got, "u100 ") {
		t.Fatalf("rows after a restart of the promoted node: %d bytes", len(got))
	}
	if s := ddb.Streams(); len(s) != 0 {
		t.Fatalf("open transactions after a restart: %+v", s)
	}
}

// A checkpoint taken while a streamed transaction is open carries its
// frames; a seed copy too: a node installed from it applies the
// transaction at its commit frame.
func TestStreamedSeedCopy(t *testing.T) {
	p := newStreamPair(t)
	tx := p.sdb.Begin()
	tx.SetStreamBytes(8 << 10)
	insertRange(t, tx, 100, 300)
	var seed bytes.Buffer
	lsn, err := p.sdb.WriteSnapshot(&seed)
	if err != nil {
		t.Fatal(err)
	}
	dst, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer dst.Close()
	dst.CloseWrites()
	ddb, err := dst.InstallSeed("app", &seed)
	if err != nil {
		t.Fatal(err)
	}
	if ddb.LSN() != lsn {
		t.Fatalf("copy at %d, want %d", ddb.LSN(), lsn)
	}
	if s := ddb.Streams(); len(s) != 0 {
		// The transaction's frames are all after the committed LSN
		// (no commit since it began): the follower receives them.
		t.Fatalf("open transactions in the copy: %+v", s)
	}
	small := p.sdb.Begin()
	insertRange(t, small, 5, 6)
	mustCommit(t, small)
	var seed2 bytes.Buffer
	if _, err := p.sdb.WriteSnapshot(&seed2); err != nil {
		t.Fatal(err)
	}
	ddb, err = dst.InstallSeed("app", &seed2)
	if err != nil {
		t.Fatal(err)
	}
	if s, ps := ddb.Streams(), p.sdb.Streams(); len(s) != 1 || len(ps) != 1 || s[0].Rows != ps[0].Rows {
		t.Fatalf("open transactions in the second copy: %+v; the primary's: %+v", s, ps)
	}
	mustCommit(t, tx)
	for {
		from := ddb.Journal().End()
		frames, err := p.sdb.ReadCommitted(from, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		if len(frames) == 0 {
			break
		}
		if _, err := ddb.AppendReplicated(context.Background(), from, frames, true); err != nil {
			t.Fatal(err)
		}
	}
	if committed(t, ddb) != committed(t, p.sdb) {
		t.Fatal("the copy's rows differ from the primary's")
	}
}

// An ALTER TABLE streams like any large transaction; the follower builds
// the new table as it arrives and swaps it in at the commit frame.
func TestStreamedAlter(t *testing.T) {
	lowWorkerBytes(t)
	p := newStreamPair(t)
	load := p.sdb.Begin()
	insertRange(t, load, 100, 600)
	mustCommit(t, load)
	p.pump(t)
	workers := p.ddb.StreamCounts().Workers
	tx := p.sdb.Begin()
	tx.SetStreamBytes(8 << 10)
	def := &TableDef{Name: "users", NumCols: 4, AutoCol: 0, PK: []int{0}}
	if err := tx.AlterTable("users", def, func(v []any) ([]any, error) { return append(v[:3:3], "x"), nil }); err != nil {
		t.Fatal(err)
	}
	p.pump(t)
	if s := p.ddb.Streams(); len(s) != 1 || !s[0].Applying {
		t.Fatalf("replica's open transactions during the ALTER: %+v", s)
	}
	mustCommit(t, tx)
	p.pump(t)
	if got := committed(t, p.ddb); got != committed(t, p.sdb) || !strings.HasSuffix(got, " x") {
		t.Fatal("the replica's table is not the altered one")
	}
	if c := p.ddb.StreamCounts(); c.Workers != workers+1 || c.Published != c.Workers || c.Replayed != 0 {
		t.Fatalf("replica's counts: %+v", c)
	}
}

// Two transactions stream at once: the second's worker was not given the
// first's changes, so at its commit the follower applies it again from
// its frames (after a restart of the follower in between, from a
// checkpoint, part of them from the checkpoint): the rows are the
// primary's either way.
func TestStreamedConcurrent(t *testing.T) {
	lowWorkerBytes(t)
	p := newStreamPair(t)
	t1, t2 := p.sdb.Begin(), p.sdb.Begin()
	t1.SetStreamBytes(8 << 10)
	t2.SetStreamBytes(8 << 10)
	insertRange(t, t1, 100, 200)
	insertRange(t, t2, 1000, 1100)
	p.pump(t)
	insertRange(t, t1, 200, 250)
	mustCommit(t, t1)
	p.pump(t)
	if err := p.dst.Checkpoint(p.ddb); err != nil {
		t.Fatal(err)
	}
	p.dst.Crash()
	dst, _ := openEngine(t, p.dstDir, SaveCommit)
	dst.CloseWrites()
	p.dst = dst
	p.ddb, _ = dst.Database("app")
	insertRange(t, t2, 1100, 1300)
	p.pump(t)
	small := p.sdb.Begin()
	insertRange(t, small, 5, 6)
	mustCommit(t, small)
	t3 := p.sdb.Begin()
	t3.SetStreamBytes(8 << 10)
	insertRange(t, t3, 2000, 2100)
	p.pump(t)
	mustCommit(t, t2)
	p.pump(t)
	mustCommit(t, t3)
	p.pump(t)
	if committed(t, p.ddb) != committed(t, p.sdb) {
		t.Fatal("the replica's rows differ from the primary's")
	}
	if c := p.ddb.StreamCounts(); c.Replayed == 0 {
		t.Fatalf("no transaction was applied again: %+v", c)
	}
}

// A replica installed from a copy that carried an open transaction (its
// first frames before the copy's LSN, so not in the replica's journal)
// checkpoints, and is copied again, while the transaction is still open:
// the frames before its journal come from what the copy carried.
func TestStreamedCheckpointAfterSeedCopy(t *testing.T) {
	lowWorkerBytes(t)
	p := newStreamPair(t)
	tx := p.sdb.Begin()
	tx.SetStreamBytes(8 << 10)
	insertRange(t, tx, 100, 300)
	small := p.sdb.Begin()
	insertRange(t, small, 5, 6)
	mustCommit(t, small)
	var seed bytes.Buffer
	if _, err := p.sdb.WriteSnapshot(&seed); err != nil {
		t.Fatal(err)
	}
	ddb, err := p.dst.InstallSeed("app", &seed)
	if err != nil {
		t.Fatal(err)
	}
	p.ddb = ddb
	insertRange(t, tx, 300, 350)
	small = p.sdb.Begin()
	insertRange(t, small, 6, 7)
	mustCommit(t, small)
	p.pump(t)
	if err := p.dst.Checkpoint(p.ddb); err != nil {
		t.Fatalf("checkpoint of the replica: %v", err)
	}
	var again bytes.Buffer
	if _, err := p.ddb.WriteSnapshot(&again); err != nil {
		t.Fatalf("copy of the replica: %v", err)
	}
	third, _ := openEngine(t, t.TempDir(), SaveCommit)
	defer third.Close()
	third.CloseWrites()
	tdb, err := third.InstallSeed("app", &again)
	if err != nil {
		t.Fatal(err)
	}
	insertRange(t, tx, 350, 400)
	mustCommit(t, tx)
	p.pump(t)
	for {
		from := tdb.Journal().End()
		frames, err := p.sdb.ReadCommitted(from, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		if len(frames) == 0 {
			break
		}
		if _, err := tdb.AppendReplicated(context.Background(), from, frames, true); err != nil {
			t.Fatal(err)
		}
	}
	want := committed(t, p.sdb)
	if committed(t, p.ddb) != want || committed(t, tdb) != want {
		t.Fatal("the copies' rows differ from the primary's")
	}
	// The replica restarted from its checkpoint has them too.
	p.dst.Crash()
	dst, _ := openEngine(t, p.dstDir, SaveCommit)
	p.dst = dst
	ddb, _ = dst.Database("app")
	if committed(t, ddb) != want {
		t.Fatal("the replica's rows after a restart differ from the primary's")
	}
}

// Checkpoints keep the journal from the first frame of a transaction still
// open: the next checkpoint, or a copy, carries its frames from there.
func TestStreamedCheckpointsKeepOpenFrames(t *testing.T) {
	p := newStreamPair(t)
	tx := p.sdb.Begin()
	tx.SetStreamBytes(2 << 10)
	insertRange(t, tx, 100, 200)
	for i := 0; i < 3; i++ {
		small := p.sdb.Begin()
		insertRange(t, small, 1000+i*100, 1000+i*100+60)
		mustCommit(t, small)
		if err := p.src.Checkpoint(p.sdb); err != nil {
			t.Fatalf("checkpoint %d: %v", i, err)
		}
	}
	var seed bytes.Buffer
	if _, err := p.sdb.WriteSnapshot(&seed); err != nil {
		t.Fatalf("copy: %v", err)
	}
	ddb, err := p.dst.InstallSeed("app", &seed)
	if err != nil {
		t.Fatal(err)
	}
	p.ddb = ddb
	mustCommit(t, tx)
	p.pump(t)
	if committed(t, p.ddb) != committed(t, p.sdb) {
		t.Fatal("the copy's rows differ from the primary's")
	}
}

// A replica that crashes, or whose database is replaced by a copy, while
// a worker applies a received transaction stops that worker.
func TestStreamedWorkerStopsAtClose(t *testing.T) {
	lowWorkerBytes(t)
	p := newStreamPair(t)
	tx := p.sdb.Begin()
	tx.SetStreamBytes(8 << 10)
	insertRange(t, tx, 100, 300)
	p.pump(t)
	if len(p.ddb.workers) != 1 {
		t.Fatalf("replica's workers: %d", len(p.ddb.workers))
	}
	w := p.ddb.workers[0]
	var seed bytes.Buffer
	if _, err := p.sdb.WriteSnapshot(&seed); err != nil {
		t.Fatal(err)
	}
	ddb, err := p.dst.InstallSeed("app", &seed)
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	stopped := w.stopped
	w.mu.Unlock()
	if !stopped || len(p.ddb.workers) != 0 {
		t.Fatal("the worker of the replaced database still runs")
	}
	p.ddb = ddb
	insertRange(t, tx, 300, 400)
	small := p.sdb.Begin()
	insertRange(t, small, 5, 6)
	mustCommit(t, small)
	p.pump(t)
	if len(p.ddb.workers) != 1 {
		t.Fatalf("replica's workers after the copy: %d", len(p.ddb.workers))
	}
	w = p.ddb.workers[0]
	p.dst.Crash()
	w.mu.Lock()
	stopped = w.stopped
	w.mu.Unlock()
	if !stopped {
		t.Fatal("the worker still runs after a crash")
	}
}

// A streamed transaction appends in chunks, each paced: large ones while
// it runs alone, small ones while other transactions of its database
// commit (within streamBusyFor), so a small commit finds little of it
// ahead; a row larger than a chunk goes alone.
func TestStreamedChunks(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e, err := Open(Options{Root: t.TempDir(), Policy: SaveCommit, Bind: testBind, Logger: slog.New(slog.DiscardHandler), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := setup(t, e)
	// The pace sees the end of each chunk before the next one goes: the
	// sizes of a phase are those of its chunks but the last, and the
	// previous phase's last one first.
	var ends []journal.LSN
	e.SetStreamPace(func(_ *DB, upto journal.LSN) bool { ends = append(ends, upto); return true })
	chunks := func() []int {
		var sizes []int
		for i := 1; i < len(ends); i++ {
			sizes = append(sizes, int(ends[i]-ends[i-1]))
		}
		ends = ends[len(ends)-1:]
		return sizes
	}
	row := strings.Repeat("x", 1000)
	insert := func(tx *Tx, from, n int) {
		for i := from; i < from+n; i++ {
			if _, err := tx.Insert("users", []any{int64(i), fmt.Sprint(i, row), int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tx := db.Begin()
	tx.SetStreamBytes(1 << 20)
	insert(tx, 1000, 2000) // about 2 MiB, alone
	alone := chunks()
	if len(alone) == 0 || slices.Max(alone) < streamChunk*9/10 || slices.Max(alone) > streamChunk+2<<10 {
		t.Fatalf("chunks while the transaction runs alone: %v", alone)
	}
	small := db.Begin()
	insert(small, 10, 1)
	mustCommit(t, small)
	insert(tx, 4000, 500)
	busy := chunks()[1:]
	if len(busy) < 10 || slices.Max(busy) > streamChunkBusy+2<<10 {
		t.Fatalf("chunks after another commit: %v", busy)
	}
	advance(streamBusyFor)
	insert(tx, 5000, 1000)
	if again := chunks()[1:]; slices.Max(again) < streamChunk*9/10 {
		t.Fatalf("chunks %v after %v without another commit", again, streamBusyFor)
	}
	// A row of 100 KiB while others commit: one row per chunk.
	small = db.Begin()
	insert(small, 11, 1)
	mustCommit(t, small)
	big := strings.Repeat("y", 100<<10)
	for i := 7000; i < 7005; i++ {
		if _, err := tx.Insert("users", []any{int64(i), fmt.Sprint(i, big), int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// (The first holds the rows left from before and the first large one.)
	if rows := chunks()[2:]; len(rows) < 3 || slices.Min(rows) < 100<<10-1<<10 || slices.Max(rows) > 101<<10 {
		t.Fatalf("chunks of 100 KiB rows: %v", rows)
	}
	mustCommit(t, tx)
}

// A streamed transaction whose abort frame cannot be written (a disk
// error) stays open in the journal, as another writer's would: it is
// listed, carried by checkpoints, its rows never appear, its id is never
// given again, and the next commit (here after a restart) ends it.
func TestStreamedAbortNotWritten(t *testing.T) {
	dir := t.TempDir()
	var failing atomic.Bool
	open := func() *Engine {
		e, err := Open(Options{Root: dir, Policy: SaveCommit, Bind: testBind, SegmentBytes: 4096, Logger: slog.New(slog.DiscardHandler),
			JournalFaults: func(journal.FaultOp) error {
				if failing.Load() {
					return errors.New("injected")
				}
				return nil
			}})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return e
	}
	e := open()
	db := setup(t, e)
	want := committed(t, db)
	tx := db.Begin()
	tx.SetStreamBytes(8 << 10)
	insertRange(t, tx, 100, 300)
	if tx.Streamed() == 0 {
		t.Fatal("the transaction did not stream")
	}
	streamed := db.Streams()[0].Txn
	failing.Store(true)
	tx.Rollback()
	failing.Store(false)
	if s := db.Streams(); len(s) != 1 || s[0].Local || s[0].Txn != streamed {
		t.Fatalf("open transactions after an abort frame that failed: %+v", s)
	}
	e.Crash()
	e = open()
	defer e.Close()
	db, _ = e.Database("app")
	if s := db.Streams(); len(s) != 1 || s[0].Txn != streamed {
		t.Fatalf("open transactions after a restart: %+v", s)
	}
	if got := committed(t, db); got != want {
		t.Fatal("rows of the rolled back transaction are visible")
	}
	// The next commit ends it; a new transaction gets another id.
	small := db.Begin()
	insertRange(t, small, 5, 6)
	mustCommit(t, small)
	if s := db.Streams(); len(s) != 0 {
		t.Fatalf("open transactions after the next commit: %+v", s)
	}
	next := db.Begin()
	next.SetStreamBytes(8 << 10)
	insertRange(t, next, 400, 500)
	if s := db.Streams(); len(s) != 1 || s[0].Txn <= streamed {
		t.Fatalf("a new stream after the restart: %+v (the failed one was %d)", s, streamed)
	}
	next.Rollback()
	if got := committed(t, db); strings.Contains(got, "u100 ") || strings.Contains(got, "u400 ") {
		t.Fatal("rows of rolled back transactions are visible")
	}
}
