package storage

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
)

// Streaming a large transaction (see docs/large-transactions.md, and
// docs/replication.md, "Large transactions: streamed while they run"). A transaction whose frames pass Tx.SetStreamBytes's
// threshold writes them to the journal as it runs, under its own id,
// interleaved with other transactions' frames; its commit frame (or abort
// frame) comes at its end. Everyone who reads a journal already applies a
// transaction at its commit frame and never before (feedLocked), so a
// streamed transaction is invisible until then everywhere, and a primary
// serves the streamed frames to its followers at once (ReadCommitted): a
// follower receives a large transaction while it runs rather than after.
//
// A transaction in the journal without its end frame is open. The set of
// open transactions is kept with the committed state: a local stream
// (db.streams) on the node that writes it, a received one (db.rx) on a
// follower and after recovery. Whoever writes to a journal ends every open
// transaction it did not write itself first: a promoted secondary, or a
// server restarted after a crash, appends their abort frames after its
// epoch mark (settleLocked), so no journal keeps a transaction open
// forever and no node applies half of one. A checkpoint or a seed copy
// carries the frames of the transactions open at its LSN after the
// catalog (openSection), so a node restarted from it resumes them.
//
// On a follower a received transaction that grows past workerBytes is
// applied as it arrives, by a worker of its own into a private catalog
// (streamWorker): small transactions of the same database are applied as
// they come, never queued behind it, and its commit frame publishes the
// worker's tables (publishLocked) in time independent of its size.

// DefaultStreamBytes is the threshold of a transaction's frames past which
// it streams, unless the session says otherwise (stream_transaction_mb).
const DefaultStreamBytes = 16 << 20

// A streamed transaction appends its frames in chunks, each paced
// (pace.go): a small commit finds at most one chunk of it ahead on the
// journal's disk, the link and the follower's disk. Chunks are small
// while other transactions of the database commit, larger while it runs
// alone (fewer appends, fsyncs and acknowledgements per byte). A chunk
// holds at least one row: a row larger than a chunk goes alone.
const (
	streamChunk     = 256 << 10 // no other commit since the last chunk
	streamChunkBusy = 32 << 10  // others commit beside it
)

// chunkBytes is the size of the transaction's next chunk:
// streamChunkBusy while other transactions of the database commit (one
// did within streamBusyFor since the stream began, or the stream has no
// chunk yet), else streamChunk; never more than its threshold.
func (tx *Tx) chunkBytes() int {
	ls := tx.stream.ls
	if ls == nil {
		return min(streamChunkBusy, tx.stream.limit)
	}
	now := tx.db.now()
	if lsn := tx.db.cur.Load().lsn; lsn != ls.seenLSN {
		ls.seenLSN, ls.seenAt = lsn, now
	}
	if now.Sub(ls.seenAt) < streamBusyFor {
		return min(streamChunkBusy, tx.stream.limit)
	}
	return min(streamChunk, tx.stream.limit)
}

// streamBusyFor: how long after another commit of its database a streamed
// transaction keeps its chunks small.
const streamBusyFor = 200 * time.Millisecond

// localStream is a transaction of this node whose frames are in the
// journal without their end (guarded by commitMu).
type localStream struct {
	txn      uint64
	start    journal.LSN
	bytes    int64
	rows     int64
	began    time.Time
	end      journal.LSN // the end of its last streamed frames
	orphaned bool        // writes were closed: the transaction can no longer end in the journal
	// The database's applied end when the transaction last looked, and
	// when it saw it change (chunkBytes; owned by the transaction).
	seenLSN journal.LSN
	seenAt  time.Time
}

// txStream is a Tx's streaming state.
type txStream struct {
	limit   int // bytes past which the transaction streams; 0: never
	pending int // size hints of the ops not streamed
	total   int
	sent    int // ops streamed
	ls      *localStream
	unpaced bool // a follower did not keep up: the rest goes unpaced
}

// SetStreamBytes sets the bytes of journal frames past which the
// transaction writes them to the journal as it runs (0: only at commit).
func (tx *Tx) SetStreamBytes(n int) { tx.stream.limit = max(n, 0) }

// Streamed reports the bytes of this transaction already in the journal.
func (tx *Tx) Streamed() int64 {
	if tx.stream.ls == nil {
		return 0
	}
	return tx.stream.ls.bytes
}

// grew counts op, just added to tx.ops, and streams the ops not in the
// journal yet once they pass the threshold.
func (tx *Tx) grew(op *Op) error {
	s := &tx.stream
	if s.limit == 0 || tx.db.eng == nil || tx.db.policy == SaveManual {
		return nil
	}
	n := op.sizeHint()
	s.pending += n
	s.total += n
	if rebuilds(op.Kind) {
		// A DDL that builds a table or its indexes again streams at its
		// start: followers build alongside.
		return tx.streamOut()
	}
	// (A chunk is never smaller than streamChunkBusy or the threshold:
	// below that, the clock and the committed state need no look.)
	if s.total < s.limit || (s.ls != nil && (s.pending < min(streamChunkBusy, s.limit) || s.pending < tx.chunkBytes())) {
		return nil
	}
	return tx.streamOut()
}

// rebuilds says whether an op of the kind builds a table or its indexes
// again from its rows (ALTER TABLE, CREATE INDEX, OPTIMIZE): it streams
// at once, and a follower applies it in a worker whatever its size.
func rebuilds(k OpKind) bool { return k == OpAlterTable || k == OpReindex }

// streamOut writes the ops not in the journal yet, under the
// transaction's journal id, chunk by chunk.
func (tx *Tx) streamOut() error {
	for tx.stream.sent < len(tx.ops) {
		ops := tx.ops[tx.stream.sent:]
		limit := tx.chunkBytes()
		k, size := 0, 0
		for k < len(ops) && (k == 0 || size < limit) {
			size += ops[k].sizeHint()
			k++
		}
		if err := tx.appendChunk(ops[:k], size); err != nil {
			return err
		}
	}
	return nil
}

// appendChunk writes ops, the next size bytes (by their hints) of the
// transaction's ops not in the journal yet, paced.
func (tx *Tx) appendChunk(ops []*Op, size int) error {
	db := tx.db
	txn := uint64(0)
	if tx.stream.ls != nil {
		txn = tx.stream.ls.txn
	} else {
		txn = db.newTxn()
	}
	if ls := tx.stream.ls; ls != nil && !tx.stream.unpaced {
		// At most one chunk ahead of what a follower has written (pace.go).
		tx.stream.unpaced = !db.paceStream(ls.end)
	}
	buf := make([]byte, 0, size)
	rows := int64(0)
	for _, op := range ops {
		op.Txn = txn
		buf = AppendOp(buf, op)
		if op.Kind.writesRow() {
			rows++
		}
	}
	db.commitMu.Lock()
	if db.eng.ReadOnly() || tx.stream.ls != nil && tx.stream.ls.orphaned {
		db.commitMu.Unlock()
		return ErrReadOnly
	}
	if err := db.settleLocked(); err != nil {
		db.commitMu.Unlock()
		return err
	}
	// Under the commit policy, queued under the lock and written (and
	// fsync'd) after it: the commits that wait for the lock do not wait
	// for the write. (The other policies write through the page cache.)
	appendFrames := db.jrnl.Append
	if db.policy == SaveCommit {
		appendFrames = db.jrnl.AppendQueued
	}
	start, end, err := appendFrames(buf)
	if err != nil {
		db.commitMu.Unlock()
		return err
	}
	ls := tx.stream.ls
	if ls == nil {
		ls = &localStream{txn: txn, start: start, began: db.now(), seenLSN: db.cur.Load().lsn}
		if db.streams == nil {
			db.streams = map[uint64]*localStream{}
		}
		db.streams[txn] = ls
		tx.stream.ls = ls
		db.streamStats.started.Add(1)
	}
	ls.bytes += int64(len(buf))
	ls.rows += rows
	ls.end = end
	db.streamEnd.Store(uint64(end))
	db.commitMu.Unlock()
	db.streamStats.bytes.Add(uint64(len(buf)))
	tx.stream.sent += len(ops)
	tx.stream.pending = max(tx.stream.pending-size, 0)
	db.eng.notify()
	// Written and durable before the statement goes on, by this
	// transaction rather than by a later small commit's fsync (which
	// would write these bytes first), as a commit is before it returns:
	// followers get the frames at once, and a primary that crashed and
	// lost them could write other frames at their positions in the same
	// epoch.
	return db.syncCommit(end, false)
}

// endStream ends the transaction's stream with an abort frame (the
// transaction rolled back, or its commit failed), unless writes were
// closed since: the open transaction then stays for the next primary to
// end.
func (tx *Tx) endStream() {
	ls := tx.stream.ls
	tx.stream = txStream{limit: tx.stream.limit}
	if ls == nil {
		return
	}
	db := tx.db
	db.commitMu.Lock()
	if ls.orphaned || db.eng.ReadOnly() {
		db.commitMu.Unlock()
		return
	}
	delete(db.streams, ls.txn)
	_, end, err := db.jrnl.Append(AppendEnd(nil, journal.FrameAbort, ls.txn, db.now()))
	if err != nil {
		// Its frames are in the journal without an end: it stays open
		// there, as another writer's transaction would. The next commit
		// of this database writes its abort frame (appendAbortsLocked);
		// until then checkpoints and copies carry it, the journal keeps
		// its frames, and its id is never given again.
		if db.rx == nil {
			db.rx = map[uint64]*rxState{}
		}
		db.rx[ls.txn] = &rxState{start: ls.start, bytes: int(ls.bytes), rows: ls.rows, began: ls.began}
		db.commitMu.Unlock()
		db.log.Warn("storage: abort frame of a streamed transaction not written: the next commit writes it", "database", db.name, "err", err)
		return
	}
	db.streamStats.aborted.Add(1)
	db.cur.Store(&state{cat: db.cur.Load().cat, lsn: end})
	db.commitMu.Unlock()
	db.eng.notify()
	// Durable before the rollback returns, as a commit frame is before
	// the commit does (see streamOut).
	if err := db.syncCommit(end, false); err != nil {
		db.log.Warn("storage: abort frame of a streamed transaction not made durable", "database", db.name, "err", err)
	}
}

// restartStream forgets what the transaction streamed when a rollback to a
// savepoint takes back ops already in the journal: the stream ends with an
// abort frame and the ops kept stream again, under a new id, when they
// pass the threshold.
func (tx *Tx) restartStream(keep int) {
	if tx.stream.ls == nil || keep >= tx.stream.sent {
		if tx.stream.sent > keep {
			tx.stream.sent = keep
		}
		return
	}
	tx.endStream()
	for _, op := range tx.ops[:keep] {
		n := op.sizeHint()
		tx.stream.pending += n
		tx.stream.total += n
	}
}

// settleLocked prepares the journal for this node's next frames: the
// engine's epoch mark if this primary has not written one yet, then an
// abort frame for every open transaction this node did not write (a
// received one on a secondary promoted since, or one left by a crash).
// Called with commitMu held, on a node whose writes are open.
func (db *DB) settleLocked() error {
	st := db.cur.Load()
	mark, marking := db.pendingMarkLocked(st, 0)
	if !marking && len(db.rx) == 0 {
		return nil
	}
	if marking {
		mark.Txn = db.newTxn() // an id only for a mark written
	}
	var buf []byte
	cat := st.cat
	if marking {
		a := newApplier(st.cat, st.cat.seq+1, db.bind)
		if err := a.apply(mark); err != nil {
			return err
		}
		a.cat.seq = st.cat.seq + 1
		cat = a.cat
		buf = AppendEnd(AppendOp(buf, mark), journal.FrameCommit, mark.Txn, db.now())
	}
	buf = db.appendAbortsLocked(buf)
	_, end, err := db.jrnl.Append(buf)
	if err != nil {
		return err
	}
	db.cur.Store(&state{cat: cat, lsn: end})
	return nil
}

// appendAbortsLocked appends an abort frame for each received open
// transaction, in the order they began, and forgets them.
func (db *DB) appendAbortsLocked(buf []byte) []byte {
	if len(db.rx) == 0 {
		return buf
	}
	txns := make([]uint64, 0, len(db.rx))
	for txn := range db.rx {
		txns = append(txns, txn)
	}
	slices.SortFunc(txns, func(a, b uint64) int { return int(db.rx[a].start) - int(db.rx[b].start) })
	for _, txn := range txns {
		buf = AppendEnd(buf, journal.FrameAbort, txn, db.now())
		db.dropRxLocked(txn)
		db.streamStats.rolledBack.Add(1)
	}
	db.log.Info("storage: open transactions of another writer ended", "database", db.name, "transactions", len(txns))
	return buf
}

// dropRxLocked forgets a received transaction, stopping its worker.
func (db *DB) dropRxLocked(txn uint64) {
	if rx := db.rx[txn]; rx != nil && rx.w != nil {
		rx.w.stop()
		db.workers = slices.DeleteFunc(db.workers, func(w *streamWorker) bool { return w == rx.w })
	}
	delete(db.rx, txn)
}

// stopWorkersLocked stops the workers of the received transactions as the
// database closes (or its engine crashes): nothing will end their
// transactions here. Called with commitMu held.
func (db *DB) stopWorkersLocked() {
	for _, w := range db.workers {
		w.stop()
	}
	db.workers = nil
}

// orphanStreamsLocked makes this node's streams open transactions like
// received ones: writes were closed, so their transactions can no longer
// end here, and whoever writes next ends them.
func (db *DB) orphanStreamsLocked() {
	for txn, ls := range db.streams {
		ls.orphaned = true
		if db.rx == nil {
			db.rx = map[uint64]*rxState{}
		}
		db.rx[txn] = &rxState{start: ls.start, bytes: int(ls.bytes)}
	}
	db.streams = nil
	db.streamEnd.Store(0)
}

// StreamEnd is the end of this primary's last frames of a transaction
// streamed before its commit, 0 when none since writes opened: what it
// serves past LSN.
func (db *DB) StreamEnd() journal.LSN { return journal.LSN(db.streamEnd.Load()) }

// StreamInfo describes an open transaction of a database.
type StreamInfo struct {
	Txn uint64
	// Local: this node's transaction, streaming as it runs; else one
	// received from the primary (or left by a crash), not ended yet.
	Local bool
	Start journal.LSN
	Bytes int64
	Rows  int64
	Began time.Time // a local one's first streamed frame; a received one's arrival
	// Applying: a worker applies it as it arrives (a received one).
	Applying bool
}

// Streams lists the database's open transactions, oldest first.
func (db *DB) Streams() []StreamInfo {
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	var out []StreamInfo
	for _, ls := range db.streams {
		out = append(out, StreamInfo{Txn: ls.txn, Local: true, Start: ls.start, Bytes: ls.bytes, Rows: ls.rows, Began: ls.began})
	}
	for txn, rx := range db.rx {
		out = append(out, StreamInfo{Txn: txn, Start: rx.start, Bytes: int64(rx.bytes), Rows: rx.rows, Began: rx.began, Applying: rx.w != nil})
	}
	slices.SortFunc(out, func(a, b StreamInfo) int { return int(a.Start) - int(b.Start) })
	return out
}

// StreamCounts are a database's counters of streamed transactions.
type StreamCounts struct {
	Started    uint64 // local transactions that streamed
	Bytes      uint64 // bytes they streamed before their end
	Aborted    uint64 // local streamed transactions rolled back
	Workers    uint64 // received transactions applied as they arrived
	Published  uint64 // of those, published at their commit frame from the worker's tables
	Replayed   uint64 // of those, applied again at their commit frame (the worker could not)
	RolledBack uint64 // open transactions of another writer ended by this node
}

// Add adds o's counts to c's (sums over databases).
func (c *StreamCounts) Add(o StreamCounts) {
	c.Started += o.Started
	c.Bytes += o.Bytes
	c.Aborted += o.Aborted
	c.Workers += o.Workers
	c.Published += o.Published
	c.Replayed += o.Replayed
	c.RolledBack += o.RolledBack
}

type streamStats struct {
	started, bytes, aborted, workers, published, replayed, rolledBack atomic.Uint64
}

// StreamCounts returns the database's counters of streamed transactions.
func (db *DB) StreamCounts() StreamCounts {
	s := &db.streamStats
	return StreamCounts{Started: s.started.Load(), Bytes: s.bytes.Load(), Aborted: s.aborted.Load(), Workers: s.workers.Load(),
		Published: s.published.Load(), Replayed: s.replayed.Load(), RolledBack: s.rolledBack.Load()}
}

// workerBytes is how large a received transaction grows before a worker
// applies it as it arrives (a var: tests lower it).
var workerBytes = 1 << 20

// SetWorkerBytes sets the size past which a follower applies a received
// transaction as it arrives; it returns the previous value (simulator and
// tests).
func SetWorkerBytes(n int) int {
	old := workerBytes
	workerBytes = n
	return old
}

// streamWorker applies a received transaction as it arrives into a private
// catalog: the committed catalog when it started, then in journal order the
// transaction's own changes and those of every transaction committed since
// (forwarded at their commit frames), so that at the transaction's commit
// frame it holds what the committed catalog will: the committed one plus
// the transaction.
type streamWorker struct {
	txn uint64
	a   *applier

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []workItem
	busy    bool
	stopped bool
	err     error // the first change that did not apply: the commit applies the transaction again
	// touched: the tables (lower case) and objects the transaction changed.
	touched map[string]bool
	objects map[string]bool
	defs    bool // it changed a definition
}

type workItem struct {
	ops []*Op
	ver uint64 // pendingVer for the transaction's own changes, the commit's sequence for another's
}

func (db *DB) startWorkerLocked(txn uint64, rx *rxState) {
	st, _ := db.enter(true)
	w := &streamWorker{txn: txn, a: newApplier(st.cat, pendingVer, db.bind), touched: map[string]bool{}, objects: map[string]bool{}}
	w.cond = sync.NewCond(&w.mu)
	rx.w = w
	db.workers = append(db.workers, w)
	db.streamStats.workers.Add(1)
	w.send(rx.ops, pendingVer)
	rx.ops = nil
	go w.run()
}

// send queues changes for the worker.
func (w *streamWorker) send(ops []*Op, ver uint64) {
	if len(ops) == 0 {
		return
	}
	if ver == pendingVer {
		for _, op := range ops {
			w.note(op)
		}
	}
	w.mu.Lock()
	if w.err == nil && !w.stopped {
		w.queue = append(w.queue, workItem{ops: ops, ver: ver})
	}
	w.mu.Unlock()
	w.cond.Signal()
}

// note records what op of the transaction changes (read at its commit).
func (w *streamWorker) note(op *Op) {
	if op.Kind.changesDefs() {
		w.defs = true
	}
	for _, n := range []string{op.Table, op.NewName} {
		if n != "" {
			w.touched[lower(n)] = true
		}
	}
	if op.Def != nil {
		w.touched[lower(op.Def.Name)] = true
	}
	if op.ObjKind != "" {
		w.objects[objectKey(op.ObjKind, op.ObjName)] = true
	}
}

func (w *streamWorker) run() {
	w.mu.Lock()
	for {
		for len(w.queue) == 0 && !w.stopped {
			w.cond.Wait()
		}
		if w.stopped {
			w.mu.Unlock()
			return
		}
		items := w.queue
		w.queue = nil
		w.busy = true
		failed := w.err != nil
		w.mu.Unlock()
		var err error
		if !failed {
			for _, it := range items {
				if err = w.apply(it); err != nil {
					break
				}
			}
		}
		w.mu.Lock()
		w.busy = false
		if err != nil && w.err == nil {
			w.err = err
		}
		w.cond.Broadcast()
	}
}

func (w *streamWorker) apply(it workItem) error {
	w.a.ver = it.ver
	defer func() { w.a.ver = pendingVer }()
	for _, op := range it.ops {
		if op.Kind == OpEpoch || op.Kind == OpDatabase {
			continue // the committed catalog's, not the worker's to publish
		}
		if err := w.a.apply(op); err != nil {
			return err
		}
	}
	return nil
}

// finish waits for the worker to apply what it was sent and stops it; it
// returns the first change that did not apply.
func (w *streamWorker) finish() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for (len(w.queue) > 0 || w.busy) && w.err == nil {
		w.cond.Wait()
	}
	w.stopped = true
	w.cond.Broadcast()
	return w.err
}

// fail makes the worker stop applying: its transaction is applied again at
// its commit frame (a commit it was not forwarded came in between).
func (w *streamWorker) fail(reason error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = reason
	}
	w.queue = nil
	w.mu.Unlock()
	w.cond.Broadcast()
}

// stop stops the worker, dropping what it built.
func (w *streamWorker) stop() {
	w.mu.Lock()
	w.stopped = true
	w.queue = nil
	w.mu.Unlock()
	w.cond.Broadcast()
}

// commitStreamedLocked applies the commit of txn, received and applied so
// far by worker w: the committed catalog with the tables and objects the
// transaction changed taken from the worker's, or, if the worker could not
// apply a change, the transaction applied again from the journal. Called
// with commitMu held.
func (db *DB) commitStreamedLocked(txn uint64, rx *rxState, at, end journal.LSN) error {
	w := rx.w
	db.workers = slices.DeleteFunc(db.workers, func(x *streamWorker) bool { return x == w })
	st := db.cur.Load()
	a := newApplier(st.cat, st.cat.seq+1, db.bind)
	if werr := w.finish(); werr != nil {
		db.streamStats.replayed.Add(1)
		db.log.Info("storage: streamed transaction applied again at its commit", "database", db.name, "lsn", rx.start, "reason", werr.Error())
		ops, err := db.rxOps(txn, rx, at)
		if err != nil {
			return err
		}
		for _, op := range ops {
			if err := a.apply(op); err != nil {
				return fmt.Errorf("database %s: replay of the transaction at LSN %d: %w", db.name, rx.start, err)
			}
		}
	} else {
		db.streamStats.published.Add(1)
		for _, r := range w.a.made {
			if r.version() == pendingVer {
				r.setVersion(a.ver)
			}
		}
		for name := range w.touched {
			if t, ok := w.a.cat.tables.get(name); ok {
				t.lastWrite = a.ver
				a.put(t)
			} else {
				a.cat.tables.del(name)
			}
		}
		if len(w.objects) > 0 {
			a.ownObjects()
			for key := range w.objects {
				if o, ok := w.a.cat.objects[key]; ok {
					a.cat.objects[key] = o
				} else {
					delete(a.cat.objects, key)
				}
			}
		}
		if w.defs {
			a.cat.defs = defsSeq.Add(1)
		}
	}
	a.cat.seq = st.cat.seq + 1
	db.cur.Store(&state{cat: a.cat, lsn: end})
	// The other workers were not given this transaction's changes: they
	// apply theirs again at their commit.
	for _, o := range db.workers {
		o.fail(fmt.Errorf("streamed transaction %d committed at LSN %d while this one was applied", txn, at))
	}
	return nil
}

// rxOps reads back the changes of received transaction txn before LSN
// to: those a checkpoint or copy carried (restoreOpen), then its frames in
// the journal.
func (db *DB) rxOps(txn uint64, rx *rxState, to journal.LSN) ([]*Op, error) {
	from := rx.start
	var ops []*Op
	if len(rx.carried) > 0 {
		ops, from = append(ops, rx.carried...), rx.carriedTo
	}
	more, err := db.journalOps(txn, from, to)
	return append(ops, more...), err
}

// journalOps reads back the changes of transaction txn from the journal
// between its first frame and at.
func (db *DB) journalOps(txn uint64, from, at journal.LSN) ([]*Op, error) {
	var ops []*Op
	err := db.jrnl.Read(from, func(lsn journal.LSN, typ journal.FrameType, payload []byte) error {
		if lsn >= at {
			return errStopRead
		}
		if typ.Ends() {
			return nil
		}
		op, err := DecodeOp(OpKind(typ), payload)
		if err != nil {
			return fmt.Errorf("database %s: frame at LSN %d: %w", db.name, lsn, err)
		}
		if op.Txn == txn {
			ops = append(ops, op)
		}
		return nil
	})
	if err == errStopRead {
		err = nil
	}
	return ops, err
}

var errStopRead = errors.New("stop")

// forwardLocked sends a commit's changes to every worker, which applies
// them after what it holds so far.
func (db *DB) forwardLocked(ops []*Op, ver uint64) {
	for _, w := range db.workers {
		w.send(ops, ver)
	}
}

// openTxn is a transaction open at a checkpoint's LSN: its id, first LSN
// and changes so far (openSection).
type openTxn struct {
	txn   uint64
	start journal.LSN
	ops   []*Op
}

// openAt is a transaction open at a checkpoint's LSN: its first LSN and,
// if a checkpoint or copy carried its first changes (restoreOpen), those
// and the LSN they end at.
type openAt struct {
	start     journal.LSN
	carried   []*Op
	carriedTo journal.LSN
}

// from is where the journal holds the rest of the transaction's frames.
func (o openAt) from() journal.LSN {
	if len(o.carried) > 0 {
		return o.carriedTo
	}
	return o.start
}

// openAtLocked returns the transactions open at the committed state's
// LSN. Called with commitMu held.
func (db *DB) openAtLocked() map[uint64]openAt {
	if len(db.rx) == 0 && len(db.streams) == 0 {
		return nil
	}
	lsn := db.cur.Load().lsn
	out := map[uint64]openAt{}
	for txn, rx := range db.rx {
		if rx.start < lsn {
			out[txn] = openAt{start: rx.start, carried: rx.carried, carriedTo: rx.carriedTo}
		}
	}
	for txn, ls := range db.streams {
		if ls.start < lsn {
			out[txn] = openAt{start: ls.start}
		}
	}
	return out
}

// openFloor is the journal a checkpoint must keep for the open
// transactions' frames (the next checkpoint, or a copy, carries them from
// there); false when none is open.
func (db *DB) openFloor() (journal.LSN, bool) {
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	floor, ok := journal.LSN(0), false
	for _, ls := range db.streams {
		floor, ok = minFloor(floor, ok, ls.start)
	}
	for _, rx := range db.rx {
		floor, ok = minFloor(floor, ok, openAt{start: rx.start, carried: rx.carried, carriedTo: rx.carriedTo}.from())
	}
	return floor, ok
}

func minFloor(floor journal.LSN, ok bool, lsn journal.LSN) (journal.LSN, bool) {
	if !ok || lsn < floor {
		return lsn, true
	}
	return floor, true
}

// frozenOpen returns the committed state, its catalog frozen, and the
// section of a checkpoint of it that carries the transactions open at its
// LSN: their carried changes, then their frames from the journal.
func (db *DB) frozenOpen() (*state, openWriter) {
	db.commitMu.Lock()
	st, _ := db.enter(true) // no takeover runs under the commit lock
	open := db.openAtLocked()
	db.commitMu.Unlock()
	if len(open) == 0 {
		return st, openWriter{}
	}
	from := st.lsn
	txns := make([]uint64, 0, len(open))
	for txn, o := range open {
		from = min(from, o.from())
		txns = append(txns, txn)
	}
	slices.SortFunc(txns, func(a, b uint64) int { return int(open[a].start) - int(open[b].start) })
	return st, openWriter{n: len(open), write: func(w io.Writer) error {
		var buf []byte
		header := func(txn uint64) {
			var p []byte
			p = appendUvarint(p, txn)
			p = appendUvarint(p, uint64(open[txn].start))
			buf = journal.AppendFrame(buf, ckptOpen, p)
		}
		for _, txn := range txns {
			if o := open[txn]; len(o.carried) > 0 {
				header(txn)
				for _, op := range o.carried {
					buf = AppendOp(buf, op)
				}
			}
		}
		last := uint64(0)
		err := db.jrnl.Read(from, func(at journal.LSN, typ journal.FrameType, payload []byte) error {
			if at >= st.lsn {
				return errStopRead
			}
			if typ.Ends() {
				return nil
			}
			txn, ok := payloadTxn(payload)
			o, isOpen := open[txn]
			if !ok || !isOpen || at < o.from() {
				return nil
			}
			if txn != last {
				header(txn)
				last = txn
			}
			buf = journal.AppendFrame(buf, typ, payload)
			if len(buf) >= 1<<20 {
				_, err := w.Write(buf)
				buf = buf[:0]
				return err
			}
			return nil
		})
		if err != nil && err != errStopRead {
			return fmt.Errorf("database %s: frames of open transactions: %w", db.name, err)
		}
		_, err = w.Write(buf)
		return err
	}}
}

// payloadTxn reads the transaction id every change frame's payload starts
// with.
func payloadTxn(payload []byte) (uint64, bool) {
	d := &decoder{b: payload}
	txn := d.uvarint()
	return txn, d.err == nil
}

// restoreOpen makes the transactions a checkpoint carried open again
// (received ones: whoever writes next ends them, or their end frames
// follow in the journal).
func (db *DB) restoreOpen(open []openTxn) {
	for _, o := range open {
		if db.rx == nil {
			db.rx = map[uint64]*rxState{}
		}
		rx := &rxState{start: o.start, ops: o.ops, began: db.now(),
			carried: o.ops[:len(o.ops):len(o.ops)], carriedTo: db.cur.Load().lsn}
		for _, op := range o.ops {
			rx.bytes += op.sizeHint()
			if op.Kind.writesRow() {
				rx.rows++
			}
		}
		db.rx[o.txn] = rx
		db.sawTxn(o.txn)
	}
}
