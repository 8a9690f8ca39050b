package storage

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/vfs"
)

// ErrDatabaseExists and ErrNoDatabase are returned by CreateDatabase and DropDatabase.
var (
	ErrDatabaseExists = errors.New("storage: database exists")
	ErrNoDatabase     = errors.New("storage: no such database")
)

// ReservedDir is the folder of the data directory that holds the server's
// own state (accounts, cluster state); no database is stored there.
const ReservedDir = "miraj"

const (
	// defaultCheckpointBytes of journal since the last checkpoint trigger
	// a new one: bounds recovery time and lets old segments go.
	defaultCheckpointBytes = 64 << 20
	// checkpointPoll is how often Run looks at journal growth.
	checkpointPoll = time.Second
)

// Options configure an Engine.
type Options struct {
	Root         string
	Policy       SavePolicy
	SaveInterval time.Duration // SavePeriodic: time between fsyncs
	SegmentBytes int64
	// CheckpointBytes of journal written since the newest checkpoint
	// make Run take a new one (default 64 MiB).
	CheckpointBytes int64
	// KeepBytes of journal are kept behind the newest checkpoint (on top
	// of what the previous checkpoint needs).
	KeepBytes int64
	Bind      Binder
	Logger    *slog.Logger
	// Now is the clock of commit times (nil: time.Now).
	Now func() time.Time
	// FS is the file system of the data directory's checkpoints, format
	// files and database folders (created, dropped, installed, moved
	// aside); nil is the operating system's. The journals' segments do
	// not go through it (see JournalFaults).
	FS vfs.FS
	// JournalFaults is passed to every journal (journal.Options.Faults):
	// disk errors injected by crash tests and the simulator.
	JournalFaults func(op journal.FaultOp) error
	// JournalDuringGroupWrite is passed to every journal
	// (journal.Options.DuringGroupWrite): the simulator's commits made
	// while a group's write is under way.
	JournalDuringGroupWrite func()
	// JournalDuringGather is passed to every journal
	// (journal.Options.DuringGather): the simulator's commits made while
	// a group commit waits for its group.
	JournalDuringGather func()
	// JournalWrites is how every journal writes its segments
	// (journal.Options.Writes; zero: direct I/O where available).
	JournalWrites journal.WriteMode
}

// journalOptions are the options of a database's journal in dir whose
// recovery starts at start: the engine's segment size, logger, and the
// simulator's and crash tests' hooks.
//
// Under SavePeriodic a commit is acknowledged once its frames are written
// to the OS, not to the disk: they go through the page cache (a copy,
// about 5 µs), where direct I/O would have each commit wait for the
// device's write (75 µs here) and leave the fsync every interval only the
// disk's cache to flush. A process crash loses nothing either way.
func (e *Engine) journalOptions(dir string, start journal.LSN) journal.Options {
	writes := e.opts.JournalWrites
	if writes == journal.WriteAuto && e.opts.Policy == SavePeriodic {
		writes = journal.WriteBuffered
	}
	return journal.Options{Dir: dir, SegmentBytes: e.opts.SegmentBytes, StartLSN: start, Logger: e.log,
		Faults: e.opts.JournalFaults, DuringGroupWrite: e.opts.JournalDuringGroupWrite, DuringGather: e.opts.JournalDuringGather, Writes: writes,
		KeepOpen: true}
}

// Engine is the set of databases under a data directory.
type Engine struct {
	opts Options
	fs   vfs.FS // opts.FS, or the operating system's
	log  *slog.Logger
	mu   struct {
		sync.Mutex
		dbs map[string]*DB // key: lower-case name; changed through putDBLocked and deleteDBLocked
	}
	// dbsView is a copy of mu.dbs as of its last change, for Database to
	// read without the lock that every statement would take.
	dbsView  atomic.Pointer[map[string]*DB]
	readOnly atomic.Bool
	// writer is the epoch and node this engine writes for as a cluster's
	// primary (nil: standalone, no epoch marks).
	writer  atomic.Pointer[Writer]
	chMu    sync.Mutex
	changed chan struct{} // closed and replaced at each change, once handed out
	// changedOut: Changed has handed out the current channel.
	changedOut bool
	retMu      sync.Mutex
	retention  func(db *DB) (journal.LSN, bool)
	// locks are the row locks of the engine's transactions (locks.go).
	locks *lockManager
	// commitHook: commithook.go.
	commitHook atomic.Pointer[CommitHook]
	// pace: the pace of streamed transactions (pace.go).
	pace atomic.Pointer[func(db *DB, upto journal.LSN) bool]
}

// DirName is the folder name of a database: the name itself when it is made
// of lower-case letters, digits and '_', otherwise each other byte is
// written as @xx (hex), so that every name maps to one folder and back.
func DirName(db string) string {
	var b strings.Builder
	for i := 0; i < len(db); i++ {
		c := db[i]
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "@%02x", c)
		}
	}
	s := b.String()
	if s == ReservedDir {
		s = fmt.Sprintf("@%02x%s", s[0], s[1:])
	}
	return s
}

func nameFromDir(dir string) (string, bool) {
	var b []byte
	for i := 0; i < len(dir); i++ {
		if dir[i] == '@' {
			if i+2 >= len(dir) {
				return "", false
			}
			var c byte
			if _, err := fmt.Sscanf(dir[i+1:i+3], "%02x", &c); err != nil {
				return "", false
			}
			b = append(b, c)
			i += 2
			continue
		}
		b = append(b, dir[i])
	}
	return string(b), true
}

// Open loads every database found under opts.Root: the newest valid
// checkpoint, then the journal after it.
func Open(opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.CheckpointBytes <= 0 {
		opts.CheckpointBytes = defaultCheckpointBytes
	}
	if opts.SaveInterval <= 0 {
		opts.SaveInterval = time.Second
	}
	fs := vfs.Or(opts.FS)
	// A new data directory is made durable in its parent before anything
	// is put in it.
	if err := vfs.MkdirAllSync(fs, opts.Root, 0o755); err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, fs: fs, log: opts.Logger, changed: make(chan struct{}), locks: newLockManager()}
	e.mu.dbs = map[string]*DB{}
	e.publishDBsLocked()
	ents, err := fs.ReadDir(opts.Root)
	if err != nil {
		return nil, err
	}
	for _, ent := range ents {
		n := ent.Name()
		if strings.HasPrefix(n, ".dropped-") || strings.HasPrefix(n, ".creating-") {
			fs.RemoveAll(filepath.Join(opts.Root, n)) // an interrupted DROP or CREATE DATABASE
			continue
		}
		if !ent.IsDir() || n == ReservedDir || strings.HasPrefix(n, ".") {
			continue
		}
		name, ok := nameFromDir(n)
		if !ok {
			e.log.Warn("storage: folder in the data directory is not a database, ignored", "dir", n)
			continue
		}
		if err := checkFormat(e.fs, filepath.Join(opts.Root, n)); err != nil {
			e.Close()
			return nil, fmt.Errorf("database %s: %w", name, err)
		}
		db, err := e.openDB(name, filepath.Join(opts.Root, n))
		if err != nil {
			e.Close()
			return nil, err
		}
		e.mu.dbs[lower(name)] = db
	}
	e.publishDBsLocked()
	return e, nil
}

// putDBLocked and deleteDBLocked change the set of databases; e.mu held.
func (e *Engine) putDBLocked(name string, db *DB) {
	e.mu.dbs[lower(name)] = db
	e.publishDBsLocked()
}

func (e *Engine) deleteDBLocked(name string) {
	delete(e.mu.dbs, lower(name))
	e.publishDBsLocked()
}

func (e *Engine) publishDBsLocked() {
	m := maps.Clone(e.mu.dbs)
	e.dbsView.Store(&m)
}

func (e *Engine) openDB(name, dir string) (*DB, error) { return e.openDBFrom(name, dir, nil) }

// loadedCheckpoint is a checkpoint read: its catalog, LSN and the
// transactions open there.
type loadedCheckpoint struct {
	cat  *Catalog
	lsn  journal.LSN
	open []openTxn
}

// openDBFrom opens a database; a non-nil cat is its newest checkpoint,
// already loaded at lsn (a copy just installed), so it is not read again.
func (e *Engine) openDBFrom(name, dir string, preloaded *loadedCheckpoint) (*DB, error) {
	db := &DB{name: name, dir: dir, policy: e.opts.Policy, bind: e.opts.Bind, log: e.log, eng: e}
	ckpts, err := listCheckpoints(e.fs, dir)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	cat, lsn := newCatalog(), journal.LSN(0)
	var open []openTxn
	loaded := false
	if preloaded != nil {
		cat, lsn, open, loaded = preloaded.cat, preloaded.lsn, preloaded.open, true
		db.ckptLSN.Store(uint64(lsn))
		ckpts = nil
	}
	for _, c := range ckpts {
		cc, cl, co, err := readCheckpointFile(e.fs, c.path, e.opts.Bind)
		if err != nil {
			e.log.Warn("storage: checkpoint unreadable, trying an older one", "database", name, "err", err)
			continue
		}
		cat, lsn, open, loaded = cc, cl, co, true
		db.ckptLSN.Store(uint64(cl))
		break
	}
	if !loaded && len(ckpts) > 0 {
		if segs, _ := listSegmentStarts(dir); len(segs) == 0 || segs[0] != 0 {
			return nil, fmt.Errorf("database %s: no readable checkpoint in %s and the journal does not start at LSN 0", name, dir)
		}
	}
	j, err := journal.Open(e.journalOptions(dir, lsn))
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	db.jrnl = j
	db.cur.Store(&state{cat: cat, lsn: lsn})
	db.restoreOpen(open)
	if err := db.replay(); err != nil {
		j.Close()
		return nil, err
	}
	e.log.Info("database opened", "database", name, "checkpoint_lsn", lsn, "lsn", db.LSN(), "tables", db.Latest().tables.len())
	return db, nil
}

func listSegmentStarts(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []uint64
	for _, ent := range ents {
		var n uint64
		if _, err := fmt.Sscanf(ent.Name(), "%020d.journal", &n); err == nil {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// syncDir makes the entries of a folder durable.
func (e *Engine) syncDir(dir string) error {
	if err := e.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// Database returns the database called name (case-insensitive).
func (e *Engine) Database(name string) (*DB, bool) {
	db, ok := (*e.dbsView.Load())[lower(name)]
	return db, ok
}

// Databases returns the databases, sorted by name.
func (e *Engine) Databases() []*DB {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*DB, 0, len(e.mu.dbs))
	for _, db := range e.mu.dbs {
		out = append(out, db)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Counts are the engine's totals over its open databases, for SHOW STATUS.
type Counts struct {
	Commits uint64 // transactions committed since each database was opened
	Fsyncs  uint64 // fsyncs of journal files (one covers every commit it finds written)
	// InPlace counts the commits that changed the committed trees in
	// place, no one holding the catalog they wrote (see DB.Read).
	InPlace uint64
	// GroupWaitsMissed counts the group commits that waited for their
	// group in vain (journal.Log.SyncToGathering).
	GroupWaitsMissed uint64
	// GroupSizes: the group commit's fsyncs by how many commits each
	// made durable.
	GroupSizes journal.GroupSizes
}

// Counts sums the counters of the open databases.
func (e *Engine) Counts() Counts {
	var c Counts
	for _, db := range e.Databases() {
		c.Commits += db.Committed()
		c.InPlace += db.InPlaceCommits()
		if db.jrnl != nil {
			c.Fsyncs += db.jrnl.Fsyncs()
			c.GroupWaitsMissed += db.jrnl.GroupWaitsMissed()
			c.GroupSizes.Add(db.jrnl.GroupSizes())
		}
	}
	return c
}

// CreateDatabase creates a database whose first journal transaction records
// options. The database appears whole or not at all: it is built in a
// temporary folder, made durable, then renamed.
func (e *Engine) CreateDatabase(name string, options []byte) (*DB, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ReadOnly() {
		return nil, ErrReadOnly // checked under e.mu, which CloseWrites takes
	}
	if _, ok := e.mu.dbs[lower(name)]; ok {
		return nil, fmt.Errorf("%w: %s", ErrDatabaseExists, name)
	}
	final := filepath.Join(e.opts.Root, DirName(name))
	tmp := filepath.Join(e.opts.Root, ".creating-"+DirName(name))
	// A folder left by an interrupted create or copy must go first: its
	// journal would be opened and appended to.
	if err := e.fs.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	j, err := journal.Open(e.journalOptions(tmp, 0))
	if err != nil {
		return nil, err
	}
	baseID := make([]byte, 16)
	if _, err := rand.Read(baseID); err != nil {
		return nil, err
	}
	var buf []byte
	if w := e.writer.Load(); w != nil {
		// A primary's new database starts with its epoch mark.
		buf = AppendOp(buf, &Op{Kind: OpEpoch, Txn: 1, Mark: history.Mark{Epoch: w.Epoch, Node: w.Node, LSN: 0}})
	}
	buf = AppendOp(buf, &Op{Kind: OpDatabase, Txn: 1, BaseID: baseID, Data: options})
	buf = AppendEnd(buf, journal.FrameCommit, 1, e.now())
	if _, end, err := j.Append(buf); err != nil {
		j.Close()
		return nil, err
	} else if err := j.SyncTo(context.Background(), end); err != nil {
		j.Close()
		return nil, err
	}
	j.Close()
	if err := writeFormat(e.fs, tmp); err != nil {
		return nil, err
	}
	if err := e.fs.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	if err := e.syncDir(e.opts.Root); err != nil {
		return nil, err
	}
	db, err := e.openDB(name, final)
	if err != nil {
		return nil, err
	}
	e.putDBLocked(name, db)
	defer e.notify()
	return db, nil
}

// detach takes the database name out of service: out of the engine's set,
// its journal closed (after any commit in progress). Its folder stays.
func (e *Engine) detach(name string) (*DB, error) {
	e.mu.Lock()
	db, ok := e.mu.dbs[lower(name)]
	if ok {
		e.deleteDBLocked(name)
	}
	e.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoDatabase, name)
	}
	db.commitMu.Lock()
	db.jrnl.Close()
	db.stopWorkersLocked()
	db.commitMu.Unlock()
	return db, nil
}

// DropDatabase removes a database and its files.
func (e *Engine) DropDatabase(name string) error {
	db, err := e.detach(name)
	if err != nil {
		return err
	}
	gone := filepath.Join(e.opts.Root, ".dropped-"+filepath.Base(db.dir))
	e.fs.RemoveAll(gone)
	if err := e.fs.Rename(db.dir, gone); err != nil {
		return fmt.Errorf("database %s: %w", name, err)
	}
	if err := e.syncDir(e.opts.Root); err != nil {
		return err
	}
	e.notify()
	return e.fs.RemoveAll(gone)
}

// Checkpoint writes a snapshot of db at its current LSN, in the caller's
// goroutine, without stopping writers: the snapshot is an immutable catalog.
// It then removes the checkpoints and journal segments no longer needed.
func (e *Engine) Checkpoint(db *DB) error {
	db.ckptMu.Lock()
	defer db.ckptMu.Unlock()
	st, open := db.frozenOpen()
	if db.commits.Load() == 0 && uint64(st.lsn) == db.ckptLSN.Load() {
		if cks, _ := listCheckpoints(e.fs, db.dir); len(cks) > 0 {
			return nil
		}
	}
	db.commits.Store(0)
	start := time.Now()
	if db.policy != SaveManual {
		// The checkpoint stands for the journal up to st.lsn, which must
		// be on disk first: the commits it holds may not be fsync'd yet
		// (their commit waits for the fsync, or a periodic policy's does)
		// or even written (journal.AppendDeferred). A checkpoint past the
		// journal's durable end would, after a crash, be a journal that
		// ends before its checkpoint, which recovery refuses.
		if err := db.jrnl.SyncTo(context.Background(), st.lsn); err != nil {
			return fmt.Errorf("database %s: checkpoint: %w", db.name, err)
		}
	}
	path, err := writeCheckpoint(e.fs, db.dir, st.cat, st.lsn, open)
	if err != nil {
		return fmt.Errorf("database %s: %w", db.name, err)
	}
	db.ckptLSN.Store(uint64(st.lsn))
	if fi, err := e.fs.Stat(path); err == nil {
		db.ckptBytes.Store(fi.Size())
	}
	e.log.Info("checkpoint written", "database", db.name, "lsn", st.lsn, "file", filepath.Base(path), "duration", time.Since(start).Round(time.Millisecond))
	// Keep this checkpoint and the previous one (in case this one is
	// damaged later), and the journal both need.
	cks, err := listCheckpoints(e.fs, db.dir)
	if err != nil {
		return err
	}
	keepFrom := st.lsn
	for i, c := range cks {
		if i < 2 {
			keepFrom = min(keepFrom, journal.LSN(c.lsn))
			continue
		}
		e.fs.Remove(c.path)
	}
	if floor, ok := e.retentionFloor(db); ok {
		keepFrom = min(keepFrom, floor)
	}
	if floor, ok := db.openFloor(); ok {
		// The frames of open transactions: the next checkpoint carries
		// them (stream.go).
		keepFrom = min(keepFrom, floor)
	}
	if e.opts.KeepBytes > 0 {
		if journal.LSN(e.opts.KeepBytes) >= st.lsn {
			keepFrom = 0
		} else {
			keepFrom = min(keepFrom, st.lsn-journal.LSN(e.opts.KeepBytes))
		}
	}
	return db.jrnl.RemoveBefore(keepFrom)
}

// Run does the engine's background work until ctx ends: the fsyncs of the
// periodic save policy and checkpoints as journals grow.
func (e *Engine) Run(ctx context.Context) error {
	syncTick := time.NewTicker(e.opts.SaveInterval)
	defer syncTick.Stop()
	ckptTick := time.NewTicker(checkpointPoll)
	defer ckptTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-syncTick.C:
			// The periodic policy's fsync; under the others it also makes
			// durable what a secondary wrote without fsync (ack = written).
			if e.opts.Policy == SaveManual {
				continue
			}
			for _, db := range e.Databases() {
				if db.jrnl.Durable() >= db.jrnl.End() {
					continue
				}
				if err := db.jrnl.SyncTo(ctx, db.jrnl.End()); err != nil && ctx.Err() == nil {
					e.log.Error("journal fsync failed", "database", db.name, "err", err)
				}
			}
		case <-ckptTick.C:
			if e.opts.Policy == SaveManual {
				continue
			}
			for _, db := range e.Databases() {
				if int64(db.LSN())-int64(db.ckptLSN.Load()) < max(e.opts.CheckpointBytes, db.ckptBytes.Load()) {
					continue
				}
				if err := e.Checkpoint(db); err != nil {
					e.log.Error("checkpoint failed", "database", db.name, "err", err)
				}
			}
		}
	}
}

// Close checkpoints every database and closes the journals.
func (e *Engine) Close() error {
	var first error
	for _, db := range e.Databases() {
		if err := e.Checkpoint(db); err != nil && first == nil {
			first = err
		}
		if err := db.jrnl.Close(); err != nil && first == nil {
			first = err
		}
		db.commitMu.Lock()
		db.stopWorkersLocked()
		db.commitMu.Unlock()
	}
	return first
}

func (e *Engine) now() time.Time {
	if e.opts.Now != nil {
		return e.opts.Now()
	}
	return time.Now()
}

// Crash stops the engine as a power loss would: no checkpoint, and every
// journal loses what was not fsync'd. For crash tests and the simulator.
func (e *Engine) Crash() error {
	var first error
	for _, db := range e.Databases() {
		db.commitMu.Lock()
		if err := db.jrnl.Crash(); err != nil && first == nil {
			first = err
		}
		db.stopWorkersLocked()
		db.commitMu.Unlock()
	}
	return first
}
