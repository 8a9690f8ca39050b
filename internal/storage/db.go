package storage

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

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
	return &Tx{db: db, base: db.cur.Load().cat, touched: map[string]*tableTouch{}}
}

// LSN returns the end of the journal as applied to the committed catalog.
func (db *DB) LSN() journal.LSN { return db.cur.Load().lsn }

func (db *DB) commit(ctx context.Context, tx *Tx) error {
	var buf []byte
	if db.policy != SaveManual {
		buf = make([]byte, 0, 256*len(tx.ops))
		for _, op := range tx.ops {
			buf = AppendOp(buf, op)
		}
		buf = journal.AppendFrame(buf, journal.FrameCommit, nil)
	}

	db.commitMu.Lock()
	st := db.cur.Load()
	if err := tx.checkLocked(st.cat); err != nil {
		db.commitMu.Unlock()
		return err
	}
	a := newApplier(st.cat, st.cat.seq+1, db.bind)
	for _, op := range tx.ops {
		if err := a.apply(op); err != nil {
			db.commitMu.Unlock()
			return err
		}
	}
	a.cat.seq = st.cat.seq + 1
	end := st.lsn
	if buf != nil {
		var err error
		if _, end, err = db.jrnl.Append(buf); err != nil {
			db.commitMu.Unlock()
			return err
		}
	}
	db.cur.Store(&state{cat: a.cat, lsn: end})
	db.commitMu.Unlock()
	db.commits.Add(1)
	if db.eng != nil {
		db.eng.notify()
	}

	if db.policy == SaveCommit {
		// Not ctx: once appended, the commit is decided; the client's
		// acknowledgement waits for the fsync, which is bounded.
		return db.jrnl.SyncTo(context.Background(), end)
	}
	return nil
}

// replay applies the journal from the committed state's LSN on: the
// recovery path, through the same apply function as commits.
func (db *DB) replay() error {
	st := db.cur.Load()
	cat, lsn := st.cat, st.lsn
	var batch []*Op
	var batchStart journal.LSN
	err := db.jrnl.Read(lsn, func(at journal.LSN, typ journal.FrameType, payload []byte) error {
		if typ != journal.FrameCommit {
			op, err := DecodeOp(OpKind(typ), payload)
			if err != nil {
				return fmt.Errorf("database %s: frame at LSN %d: %w", db.name, at, err)
			}
			if len(batch) == 0 {
				batchStart = at
			}
			batch = append(batch, op)
			return nil
		}
		a := newApplier(cat, cat.seq+1, db.bind)
		for _, op := range batch {
			if err := a.apply(op); err != nil {
				return fmt.Errorf("database %s: replay of the transaction at LSN %d: %w", db.name, batchStart, err)
			}
		}
		a.cat.seq = cat.seq + 1
		cat = a.cat
		lsn = at + journal.HeaderBytes
		batch = batch[:0]
		return nil
	})
	if err != nil {
		return err
	}
	db.cur.Store(&state{cat: cat, lsn: lsn})
	return nil
}
