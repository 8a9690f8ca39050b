package storage

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
)

// SavePolicy says when a commit reaches the disk.
type SavePolicy int

const (
	// SaveCommit: a commit is acknowledged once its frames are fsync'd.
	SaveCommit SavePolicy = iota
	// SavePeriodic: frames are written at commit and fsync'd every interval;
	// a crash loses at most that interval of acknowledged commits.
	SavePeriodic
	// SaveManual: no journal for writes; the state is saved by a
	// checkpoint at clean shutdown only. A crash loses everything since.
	SaveManual
)

func (p SavePolicy) String() string {
	switch p {
	case SaveCommit:
		return "commit"
	case SavePeriodic:
		return "periodic"
	case SaveManual:
		return "manual"
	}
	return fmt.Sprintf("SavePolicy(%d)", int(p))
}

// ParseSavePolicy reads a --save-policy value.
func ParseSavePolicy(s string) (SavePolicy, error) {
	switch s {
	case "commit":
		return SaveCommit, nil
	case "periodic":
		return SavePeriodic, nil
	case "manual":
		return SaveManual, nil
	}
	return 0, fmt.Errorf("save policy %q: allowed values are commit, periodic, manual", s)
}

// state is a committed catalog and the end of the journal that produced it.
type state struct {
	cat *Catalog
	lsn journal.LSN
}

// DB is one database: its committed catalog and its journal.
// Begin, Snapshot and Commit are safe for concurrent use.
type DB struct {
	name   string
	dir    string
	policy SavePolicy
	bind   Binder
	log    *slog.Logger
	jrnl   *journal.Log
	eng    *Engine // nil for a scratch database

	cur atomic.Pointer[state]
	// commitMu serialises commits: conflict check, append, publish.
	commitMu sync.Mutex
	// ckptMu serialises checkpoints of this database.
	ckptMu  sync.Mutex
	ckptLSN atomic.Uint64 // LSN of the newest checkpoint
	// ckptBytes is the newest checkpoint's size: the next one waits for at
	// least as much journal, so a large database is not rewritten whole
	// for every 64 MiB of log (checkpoint cost stays proportional to writes).
	ckptBytes atomic.Int64
	commits   atomic.Uint64 // commits since the newest checkpoint (manual policy)
	committed atomic.Uint64 // commits since the database was opened
	inPlace   atomic.Uint64 // commits that took the committed catalog over
	// rx: a replica's transactions in reception, by id (guarded by
	// commitMu).
	rx map[uint64]*rxState
	// unapplied: frames a replica wrote to the journal and has not applied
	// yet (WriteReplicated, then ApplyReplicated), in journal order, with
	// the epoch marks they carry. Guarded by commitMu.
	unapplied []unappliedBatch
	// txnSeq is the last transaction id used or seen in the journal.
	txnSeq atomic.Uint64
	// streams: this node's transactions streaming to the journal as they
	// run (stream.go); workers: those of rx applied as they arrive, which
	// every commit is forwarded to. Guarded by commitMu.
	streams map[uint64]*localStream
	workers []*streamWorker
	// streamEnd is the journal's end after the last streamed append of
	// this node (0: none since writes opened): ReadCommitted serves up to
	// it.
	streamEnd   atomic.Uint64
	streamStats streamStats
	// replaying: recovery feeds the journal (no workers).
	replaying bool
}

// NewScratch returns a database that lives in memory only, outside any
// engine: no journal, no checkpoint (session temporary tables).
func NewScratch(name string, bind Binder) *DB {
	db := &DB{name: name, policy: SaveManual, bind: bind, log: slog.Default()}
	db.cur.Store(&state{cat: newCatalog()})
	return db
}

// Name returns the database's name.
func (db *DB) Name() string { return db.name }

// Journal returns the database's journal.
func (db *DB) Journal() *journal.Log { return db.jrnl }

// Snapshot returns the committed catalog, frozen: it and its tables stay
// as they are for as long as anyone holds them.
func (db *DB) Snapshot() *Catalog { return db.frozen().cat }

// Begin starts a transaction on the committed catalog as it is now.
func (db *DB) Begin() *Tx {
	tx := db.newTx()
	tx.base = db.frozen().cat
	return tx
}

// newTx returns a transaction on db without its snapshot or definitions.
func (db *DB) newTx() *Tx {
	tx := &Tx{db: db, touched: map[string]*tableTouch{}}
	if db.eng != nil {
		tx.lockSeq = db.eng.locks.ownerSeq.Add(1)
	}
	return tx
}

// Reading the committed catalog. A committed catalog is frozen once
// someone may hold it (Snapshot, Begin, a checkpoint): from then on it never
// changes, and the next commit copies the B-tree nodes it writes
// (copy-on-write). A catalog that no one froze can be taken over by the next
// commit that only writes rows (CommitRow; a transaction of row writes,
// DB.commit), which then changes its trees in place rather than copying
// their paths: the common case of a stream of autocommit writes, whose
// copies were most of their garbage. Catalog.refs says which
// it is, changed with compare-and-swap so that a catalog is never both held
// and taken:
//
//   - refsFrozen and over: frozen, for good;
//   - 0 to refsFrozen-1: that many readers inside Read (none may keep the
//     catalog's tables past it);
//   - below 0: a commit takes it over. It added refsTaken, so that no one
//     enters it, then waits for the readers inside to leave (refs back to
//     refsTaken exactly) before it changes the trees. Whoever finds a
//     catalog so waits for that commit (the commit lock) and reads the
//     catalog it publishes.
//
// Taking over one catalog after readers left it, rather than copying what
// it writes, matters beyond that commit: a copy gives the written trees a
// new identity, and every node of them is then copied at its next write.
//
// Latest gives the committed catalog for its definitions only (tables'
// names, definitions, counters), which a takeover leaves as they are.
const (
	refsFrozen = 1 << 40
	refsTaken  = -1 << 41
)

// frozen returns the committed state, its catalog frozen.
func (db *DB) frozen() *state {
	st, _ := db.enter(true)
	return st
}

// Read calls fn with the committed catalog, which no commit changes while
// fn runs. Rows read from it may be kept (a row never changes); its tables
// may be kept for their definitions only (Table.Def, Name, the counters),
// not read from after fn returns. Cheaper than Snapshot for a short read
// followed by a one-row commit: it leaves the catalog to be taken over.
// fn must be short (a commit may wait for it) and must not call Read,
// Snapshot, Begin or a commit of db.
func (db *DB) Read(fn func(cat *Catalog)) {
	st, counted := db.enter(false)
	if counted {
		defer st.cat.refs.Add(-1)
	}
	fn(st.cat)
}

// enter admits a reader of the committed catalog: for good (freeze), or
// counted until it leaves (counted: it must subtract one from refs then).
// A frozen catalog needs neither. It waits out a takeover.
func (db *DB) enter(freeze bool) (st *state, counted bool) {
	add := int64(1)
	if freeze {
		add = refsFrozen
	}
	for {
		st := db.cur.Load()
		refs := &st.cat.refs
		n := refs.Load()
		switch {
		case n >= refsFrozen:
			return st, false
		case n >= 0:
			if refs.CompareAndSwap(n, n+add) {
				return st, !freeze
			}
		default:
			db.waitTakeover()
		}
	}
}

// waitTakeover waits for the commit that took over the committed catalog:
// it holds the commit lock until it has published the next one.
func (db *DB) waitTakeover() {
	db.commitMu.Lock()
	db.commitMu.Unlock()
}

// Latest returns the committed catalog for its definitions only: its
// tables' names and definitions (Table.Def, Name), their counters
// (TakeAuto, BumpAuto) and the catalog's objects, which no commit changes
// in place. Its rows must be read through Read or Snapshot: a commit may
// be changing its trees.
func (db *DB) Latest() *Catalog { return db.cur.Load().cat }

// takeOver takes the committed catalog over for a commit that changes its
// trees in place, unless it is frozen; it waits for the readers inside
// Read to leave, up to maxTakeoverYields yields of its processor (a
// reader may be descheduled: the commit then copies what it writes).
// Called with the commit lock held.
func (c *Catalog) takeOver() bool {
	for {
		n := c.refs.Load()
		if n < 0 || n >= refsFrozen {
			return false
		}
		if c.refs.CompareAndSwap(n, n+refsTaken) {
			break
		}
	}
	for i := 0; c.refs.Load() != refsTaken; i++ {
		if i == maxTakeoverYields {
			c.refs.Add(-refsTaken) // the readers inside stay; others may enter
			return false
		}
		runtime.Gosched()
	}
	return true
}

const maxTakeoverYields = 64

// InPlaceCommits returns how many commits of this database since it was
// opened took the committed catalog over (changed its trees in place).
func (db *DB) InPlaceCommits() uint64 { return db.inPlace.Load() }

// Committed returns how many transactions this database committed since it
// was opened.
func (db *DB) Committed() uint64 { return db.committed.Load() }

// LSN returns the end of the journal as applied to the committed catalog.
func (db *DB) LSN() journal.LSN { return db.cur.Load().lsn }

func (db *DB) commit(ctx context.Context, tx *Tx) error {
	// A transaction that only wrote rows may take the committed catalog
	// over as a one-row commit does: its ops are applied in place, or
	// undone should the commit fail.
	takeover := true
	for _, op := range tx.ops {
		if !op.Kind.writesRow() && op.Kind != OpSetCounters {
			takeover = false
			break
		}
	}
	// A streamed transaction's frames so far are in the journal: the
	// commit writes the rest and its commit frame, under its id.
	logged, err := db.commitWith(tx.ops, tx.stream.sent, tx.stream.ls, takeover, tx.note, func(cur *Catalog, a *applier) error {
		adopted := tx.adoptable(cur)
		if err := tx.checkLocked(cur, adopted); err != nil {
			return err
		}
		for _, op := range tx.ops {
			if adopted != nil && op.Kind.adoptable() && adopted[lower(op.Table)] != nil {
				continue
			}
			if err := a.apply(op); err != nil {
				return err
			}
		}
		if adopted != nil {
			// The transaction's own versions of these tables become the
			// committed ones: its rows get the commit's sequence.
			for _, r := range tx.work.made {
				if r.version() == pendingVer {
					r.setVersion(a.ver)
				}
			}
			for _, t := range adopted {
				t.lastWrite = a.ver
				a.put(t)
			}
		}
		return nil
	})
	if err != nil {
		tx.endStream()
		return err
	}
	tx.stream = txStream{limit: tx.stream.limit}
	tx.logged = logged
	if tx.deferSync {
		return nil
	}
	return db.syncCommit(logged, false)
}

// commitWith commits ops as one transaction. Under the commit lock, body
// checks them against the committed catalog cur and applies them to a, an
// applier on cur (an error from body commits nothing); the result is
// journaled and published as the new committed catalog. It returns the
// journal position after the commit frame, 0 when nothing was journaled
// (manual save policy). The caller makes it durable (syncCommit).
//
// With takeover, and when no one holds the committed catalog (see Read),
// the applier changes its trees in place (applier.inPlace); should the
// commit fail after that, the changes are undone.
//
// ls is the transaction's stream when its first frames are in the journal
// already (stream.go): those of ops[:sent]; the frames carry its id.
func (db *DB) commitWith(ops []*Op, sent int, ls *localStream, takeover bool, note any, body func(cur *Catalog, a *applier) error) (journal.LSN, error) {
	var buf []byte
	var txn uint64
	if ls != nil {
		txn = ls.txn
	} else {
		txn = db.newTxn()
	}
	if db.policy != SaveManual {
		size := 64 // the commit frame
		for _, op := range ops[sent:] {
			size += op.sizeHint()
		}
		buf = frameBuf(size)
		for _, op := range ops[sent:] {
			op.Txn = txn
			buf = AppendOp(buf, op)
		}
		buf = AppendEnd(buf, journal.FrameCommit, txn, db.now())
	}

	db.commitMu.Lock()
	// The commit gate: checked under the commit lock, which closing the
	// gate takes too, so no transaction commits on a node that has stopped
	// being primary, whenever its statements ran.
	if db.eng != nil && db.eng.ReadOnly() || ls != nil && ls.orphaned {
		db.commitMu.Unlock()
		return 0, ErrReadOnly
	}
	st := db.cur.Load()
	a := commitApplier(st.cat, st.cat.seq+1, db.bind)
	defer endCommitApplier(a)
	a.inPlace = takeover && st.cat.takeOver()
	if a.inPlace {
		// The next catalog continues this one, which no one will read
		// again: the tables made for it are made for the next one too.
		a.cat.id = st.cat.id
	}
	// fail undoes what the commit changed in place, gives the catalog
	// back and unlocks.
	fail := func(err error) (journal.LSN, error) {
		if a.inPlace {
			a.undoInPlace()
			st.cat.refs.Store(0)
		}
		db.commitMu.Unlock()
		return 0, err
	}
	if buf != nil {
		if mark, ok := db.pendingMarkLocked(st, txn); ok {
			// First write of this primary's epoch in this database: the
			// epoch mark goes first, in the same transaction.
			if err := a.apply(mark); err != nil {
				return fail(err)
			}
			buf = append(AppendOp(make([]byte, 0, 64+len(buf)), mark), buf...)
		}
		// Transactions another writer left open end here, after the
		// mark (stream.go).
		buf = db.appendAbortsLocked(buf)
	}
	if err := body(st.cat, a); err != nil {
		return fail(err)
	}
	a.cat.seq = st.cat.seq + 1
	end, logged := st.lsn, journal.LSN(0)
	if buf != nil {
		// Under the commit policy the caller's syncCommit follows: the
		// frames are written with the group's fsync, outside this lock.
		appendFrames := db.jrnl.Append
		if db.policy == SaveCommit {
			appendFrames = db.jrnl.AppendDeferred
		}
		var err error
		_, end, err = appendFrames(buf)
		putFrameBuf(buf)
		if err != nil {
			return fail(err)
		}
		logged = end
		if ls != nil {
			delete(db.streams, ls.txn)
		}
	}
	db.hookLocked(ops, a.cat, note)
	db.cur.Store(&state{cat: a.cat, lsn: end})
	db.commitMu.Unlock()
	if a.inPlace {
		db.inPlace.Add(1)
	}
	db.commits.Add(1)
	db.committed.Add(1)
	if db.eng != nil {
		db.eng.notify()
	}
	return logged, nil
}

// frameBufs holds the buffers commits encode their frames into: the journal
// copies what it is given (journal.Log.Append), so a buffer serves again
// once its append returns.
var frameBufs sync.Pool

// maxPooledFrames bounds the buffers kept in frameBufs: a large
// transaction's is left to the collector.
const maxPooledFrames = 64 << 10

func frameBuf(size int) []byte {
	if p, ok := frameBufs.Get().(*[]byte); ok && cap(*p) >= size {
		return (*p)[:0]
	}
	return make([]byte, 0, max(size, 1024))
}

func putFrameBuf(b []byte) {
	if cap(b) <= maxPooledFrames {
		b = b[:0]
		frameBufs.Put(&b)
	}
}

// syncCommit makes a commit that ended the journal at logged durable, as
// the save policy asks.
//
// With gather (a one-row commit, CommitRow: an autocommit write whose client
// commits again as soon as it is answered) its group commit gathers
// (journal.Log.SyncToGathering).
func (db *DB) syncCommit(logged journal.LSN, gather bool) error {
	if db.policy != SaveCommit || logged == 0 {
		return nil
	}
	// Not the statement's context: once appended, the commit is decided;
	// the client's acknowledgement waits for the fsync, which is bounded.
	if gather {
		return db.jrnl.SyncToGathering(context.Background(), logged)
	}
	return db.jrnl.SyncTo(context.Background(), logged)
}

// pendingMarkLocked returns the epoch mark this database needs before the
// next write, if the engine writes for an epoch newer than the journal's
// last mark. Called with commitMu held.
func (db *DB) pendingMarkLocked(st *state, txn uint64) (*Op, bool) {
	if db.eng == nil {
		return nil, false
	}
	w := db.eng.writer.Load()
	if w == nil || w.Epoch <= st.cat.history.Last().Epoch {
		return nil, false
	}
	// The mark goes at the journal's end: after the last commit, or
	// after frames of transactions another writer left open, which are
	// that writer's (its epoch's) and end with abort frames right after
	// the mark (stream.go).
	return &Op{Kind: OpEpoch, Txn: txn, Mark: history.Mark{Epoch: w.Epoch, Node: w.Node, LSN: db.jrnl.End()}}, true
}

// MarkEpoch writes the engine's epoch mark into this database's journal now
// if it is not there yet (a new primary marks every database at once, so
// that followers see the new epoch in their history before any write).
func (db *DB) MarkEpoch(ctx context.Context) error {
	if db.policy == SaveManual {
		return nil
	}
	txn := db.newTxn()
	db.commitMu.Lock()
	st := db.cur.Load()
	mark, ok := db.pendingMarkLocked(st, txn)
	if !ok {
		db.commitMu.Unlock()
		return nil
	}
	a := newApplier(st.cat, st.cat.seq+1, db.bind)
	if err := a.apply(mark); err != nil {
		db.commitMu.Unlock()
		return err
	}
	a.cat.seq = st.cat.seq + 1
	buf := AppendEnd(AppendOp(nil, mark), journal.FrameCommit, txn, db.now())
	// Transactions the former primary left open end at once, after the
	// mark: a promoted secondary drops them (stream.go).
	buf = db.appendAbortsLocked(buf)
	_, end, err := db.jrnl.Append(buf)
	if err != nil {
		db.commitMu.Unlock()
		return err
	}
	db.cur.Store(&state{cat: a.cat, lsn: end})
	db.commitMu.Unlock()
	if db.eng != nil {
		db.eng.notify()
	}
	return db.jrnl.SyncTo(ctx, end)
}

// History returns the epoch marks of the database's committed journal.
func (db *DB) History() history.History { return db.cur.Load().cat.history }

// ReceivedHistory returns the epoch marks of the whole journal, those of a
// transaction still in reception included, with the journal's end: the
// position a replica subscribes with.
func (db *DB) ReceivedHistory() (history.History, journal.LSN) {
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	h := db.cur.Load().cat.history
	if m, ok := db.receivingMarkLocked(); ok {
		h, _ = h.Append(m) // checked when the frame arrived
	}
	for _, b := range db.unapplied {
		for _, m := range b.marks {
			h, _ = h.Append(m) // checked when the frames were written
		}
	}
	return h, db.jrnl.End()
}

// rxState is a transaction whose frames are in the journal but whose end
// frame is not yet (a replica in the middle of receiving one): decoded once
// as its frames arrive, applied whole when its commit frame does, dropped at
// its abort frame. Guarded by commitMu.
type rxState struct {
	ops   []*Op
	start journal.LSN
	bytes int   // size of its changes so far
	rows  int64 // row changes so far
	began time.Time
	mark  bool // it carries an epoch mark: never given to a worker
	// w applies it as it arrives (stream.go); ops is then empty.
	w *streamWorker
	// carried: its changes before carriedTo, the LSN of the checkpoint or
	// copy that carried them (restoreOpen): the journal may not hold
	// those frames, so the next checkpoint takes them from here.
	carried   []*Op
	carriedTo journal.LSN
}

// now is the engine's clock (the end time of commit frames).
func (db *DB) now() time.Time {
	if db.eng != nil && db.eng.opts.Now != nil {
		return db.eng.opts.Now()
	}
	return time.Now()
}

// newTxn returns a transaction id never used in this database's journal:
// above every id replayed or received (feedLocked raises the counter).
func (db *DB) newTxn() uint64 { return db.txnSeq.Add(1) }

// sawTxn raises the id counter to at least txn.
func (db *DB) sawTxn(txn uint64) {
	for {
		cur := db.txnSeq.Load()
		if cur >= txn || db.txnSeq.CompareAndSwap(cur, txn) {
			return
		}
	}
}

// receivingMarkLocked returns the newest epoch mark among the transactions
// in reception, if any. Called with commitMu held.
func (db *DB) receivingMarkLocked() (history.Mark, bool) {
	var best history.Mark
	found := false
	for _, rx := range db.rx {
		for _, op := range rx.ops {
			if op.Kind == OpEpoch && (!found || op.Mark.Epoch > best.Epoch) {
				best, found = op.Mark, true
			}
		}
	}
	return best, found
}

// feedLocked takes the frame at LSN at, in journal order after the
// committed state: a change is decoded and kept with its transaction's, a
// commit frame applies that transaction's changes as one, an abort frame
// drops them. The one path of recovery and of a replica's apply, so
// applying costs time linear in the bytes received.
func (db *DB) feedLocked(at journal.LSN, typ journal.FrameType, payload []byte) error {
	if !typ.Ends() {
		op, err := DecodeOp(OpKind(typ), payload)
		if err != nil {
			return fmt.Errorf("database %s: frame at LSN %d: %w", db.name, at, err)
		}
		if op.Kind == OpEpoch && op.Mark.LSN != at {
			return fmt.Errorf("database %s: %w: epoch mark at LSN %d says %d", db.name, ErrDecode, at, op.Mark.LSN)
		}
		db.sawTxn(op.Txn)
		rx := db.rx[op.Txn]
		if rx == nil {
			if db.rx == nil {
				db.rx = map[uint64]*rxState{}
			}
			rx = &rxState{start: at, began: db.now()}
			db.rx[op.Txn] = rx
		}
		rx.bytes += len(payload) + journal.HeaderBytes
		if op.Kind.writesRow() {
			rx.rows++
		}
		if op.Kind == OpEpoch || op.Kind == OpDatabase {
			rx.mark = true
		}
		if rx.w != nil {
			rx.w.send([]*Op{op}, pendingVer)
			return nil
		}
		rx.ops = append(rx.ops, op)
		if (rx.bytes >= workerBytes || rebuilds(op.Kind)) && !rx.mark && !db.replaying && db.eng != nil {
			db.startWorkerLocked(op.Txn, rx)
		}
		return nil
	}
	txn, _, err := DecodeEnd(payload)
	if err != nil {
		return fmt.Errorf("database %s: frame at LSN %d: %w", db.name, at, err)
	}
	db.sawTxn(txn)
	rx := db.rx[txn]
	end := at + journal.HeaderBytes + journal.LSN(len(payload))
	if typ == journal.FrameAbort || rx == nil {
		// Void, or a transaction with no change: the position moves on.
		db.dropRxLocked(txn)
		db.cur.Store(&state{cat: db.cur.Load().cat, lsn: end})
		return nil
	}
	delete(db.rx, txn)
	if rx.w != nil {
		return db.commitStreamedLocked(txn, rx, at, end)
	}
	st := db.cur.Load()
	a := newApplier(st.cat, st.cat.seq+1, db.bind)
	for _, op := range rx.ops {
		if err := a.apply(op); err != nil {
			return fmt.Errorf("database %s: replay of the transaction at LSN %d: %w", db.name, rx.start, err)
		}
	}
	a.cat.seq = st.cat.seq + 1
	db.cur.Store(&state{cat: a.cat, lsn: end})
	if len(db.workers) > 0 {
		db.forwardLocked(rx.ops, a.ver)
	}
	return nil
}

// replay applies the journal from the committed state's LSN on: the
// recovery path, through the same apply function as commits.
func (db *DB) replay() error {
	db.replaying = true
	defer func() { db.replaying = false }()
	return db.jrnl.Read(db.cur.Load().lsn, db.feedLocked)
}
