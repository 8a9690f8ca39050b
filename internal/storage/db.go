package storage

import (
	"context"
	"fmt"
	"log/slog"
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
	// rx: a replica's transactions in reception, by id (guarded by
	// commitMu).
	rx map[uint64]*rxState
	// txnSeq is the last transaction id used or seen in the journal.
	txnSeq atomic.Uint64
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

// Snapshot returns the committed catalog.
func (db *DB) Snapshot() *Catalog { return db.cur.Load().cat }

// Begin starts a transaction on the committed catalog as it is now.
func (db *DB) Begin() *Tx {
	tx := &Tx{db: db, base: db.cur.Load().cat, touched: map[string]*tableTouch{}}
	if db.eng != nil {
		tx.lockSeq = db.eng.locks.ownerSeq.Add(1)
	}
	return tx
}

// Committed returns how many transactions this database committed since it
// was opened.
func (db *DB) Committed() uint64 { return db.committed.Load() }

// LSN returns the end of the journal as applied to the committed catalog.
func (db *DB) LSN() journal.LSN { return db.cur.Load().lsn }

func (db *DB) commit(ctx context.Context, tx *Tx) error {
	logged, err := db.commitWith(tx.ops, func(cur *Catalog, a *applier) error {
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
		return err
	}
	tx.logged = logged
	return db.syncCommit(logged)
}

// commitWith commits ops as one transaction. Under the commit lock, body
// checks them against the committed catalog cur and applies them to a, an
// applier on cur (an error from body commits nothing); the result is
// journaled and published as the new committed catalog. It returns the
// journal position after the commit frame, 0 when nothing was journaled
// (manual save policy). The caller makes it durable (syncCommit).
func (db *DB) commitWith(ops []*Op, body func(cur *Catalog, a *applier) error) (journal.LSN, error) {
	var buf []byte
	txn := db.newTxn()
	if db.policy != SaveManual {
		size := 64 // the commit frame
		for _, op := range ops {
			size += op.sizeHint()
		}
		buf = make([]byte, 0, size)
		for _, op := range ops {
			op.Txn = txn
			buf = AppendOp(buf, op)
		}
		buf = AppendEnd(buf, journal.FrameCommit, txn, db.now())
	}

	db.commitMu.Lock()
	// The commit gate: checked under the commit lock, which closing the
	// gate takes too, so no transaction commits on a node that has stopped
	// being primary, whenever its statements ran.
	if db.eng != nil && db.eng.ReadOnly() {
		db.commitMu.Unlock()
		return 0, ErrReadOnly
	}
	st := db.cur.Load()
	a := newApplier(st.cat, st.cat.seq+1, db.bind)
	if buf != nil {
		if mark, ok := db.pendingMarkLocked(st, txn); ok {
			// First write of this primary's epoch in this database: the
			// epoch mark goes first, in the same transaction.
			if err := a.apply(mark); err != nil {
				db.commitMu.Unlock()
				return 0, err
			}
			buf = append(AppendOp(make([]byte, 0, 64+len(buf)), mark), buf...)
		}
	}
	if err := body(st.cat, a); err != nil {
		db.commitMu.Unlock()
		return 0, err
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
		if _, end, err = appendFrames(buf); err != nil {
			db.commitMu.Unlock()
			return 0, err
		}
		logged = end
	}
	db.cur.Store(&state{cat: a.cat, lsn: end})
	db.commitMu.Unlock()
	db.commits.Add(1)
	db.committed.Add(1)
	if db.eng != nil {
		db.eng.notify()
	}
	return logged, nil
}

// syncCommit makes a commit that ended the journal at logged durable, as
// the save policy asks.
func (db *DB) syncCommit(logged journal.LSN) error {
	if db.policy != SaveCommit || logged == 0 {
		return nil
	}
	// Not the statement's context: once appended, the commit is decided;
	// the client's acknowledgement waits for the fsync, which is bounded.
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
	if end := db.jrnl.End(); end != st.lsn {
		// A primary's journal ends at its last commit: promotion cuts a
		// received, unterminated tail before it writes.
		panic(fmt.Sprintf("storage: database %s: epoch mark at LSN %d but the journal ends at %d", db.name, st.lsn, end))
	}
	return &Op{Kind: OpEpoch, Txn: txn, Mark: history.Mark{Epoch: w.Epoch, Node: w.Node, LSN: st.lsn}}, true
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
	return h, db.jrnl.End()
}

// rxState is a transaction whose frames are in the journal but whose end
// frame is not yet (a replica in the middle of receiving one): decoded once
// as its frames arrive, applied whole when its commit frame does, dropped at
// its abort frame. Guarded by commitMu.
type rxState struct {
	ops   []*Op
	start journal.LSN
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
			rx = &rxState{start: at}
			db.rx[op.Txn] = rx
		}
		rx.ops = append(rx.ops, op)
		return nil
	}
	txn, _, err := DecodeEnd(payload)
	if err != nil {
		return fmt.Errorf("database %s: frame at LSN %d: %w", db.name, at, err)
	}
	db.sawTxn(txn)
	rx := db.rx[txn]
	delete(db.rx, txn)
	st := db.cur.Load()
	end := at + journal.HeaderBytes + journal.LSN(len(payload))
	if typ == journal.FrameAbort || rx == nil {
		// Void, or a transaction with no change: the position moves on.
		db.cur.Store(&state{cat: st.cat, lsn: end})
		return nil
	}
	a := newApplier(st.cat, st.cat.seq+1, db.bind)
	for _, op := range rx.ops {
		if err := a.apply(op); err != nil {
			return fmt.Errorf("database %s: replay of the transaction at LSN %d: %w", db.name, rx.start, err)
		}
	}
	a.cat.seq = st.cat.seq + 1
	db.cur.Store(&state{cat: a.cat, lsn: end})
	return nil
}

// replay applies the journal from the committed state's LSN on: the
// recovery path, through the same apply function as commits.
func (db *DB) replay() error {
	return db.jrnl.Read(db.cur.Load().lsn, db.feedLocked)
}
