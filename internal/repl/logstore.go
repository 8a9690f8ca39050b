package repl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/miraj-db/miraj/internal/atomicfile"
	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/vfs"
)

// A log-store node (kind = "log-store", spec log-store-node.txt) keeps the
// journals of the databases it follows and nothing else: frames written at
// the primary's LSNs, fsync'd per its ack setting, retained by position,
// never applied. No table is built, so its memory does not grow with the
// data. It takes no copy: a database begins on it at the oldest position
// its upstream retains (LogBegin), with the base id and the epoch marks
// before that position adopted in-band. It serves what it holds as any
// relay does (followers, a promotion's catch-up), byte for byte.
//
// On disk, under DIR/miraj/logstore/<database>/:
//
//	meta.json   name, base id, the journal's first LSN and the epoch
//	            marks before it (written atomically)
//	journal/    the journal's segments (internal/journal)

// LogStoreDir is the folder of a log-store node's journals, in DIR/miraj.
const LogStoreDir = "logstore"

// ErrLogStore refuses what a log-store node cannot do (take a copy,
// become primary).
var ErrLogStore = errors.New("repl: a log-store node keeps the log only")

// LogStore is a log-store node's journals: its Log (what the core reads)
// and its Replica (where the follower side writes).
type LogStore struct {
	opts LogStoreOptions
	acc  Accounts

	mu  sync.Mutex
	dbs map[string]*logDB // by lower-case name
}

// LogStoreOptions configure a LogStore.
type LogStoreOptions struct {
	// FS holds meta.json and the folders (the journals' segments are
	// written by internal/journal at the same paths).
	FS  vfs.FS
	Dir string // DIR/miraj/logstore
	// Quarantine keeps a database set aside (its journal diverged);
	// Keeper says where the node stands, for the report.
	Quarantine *Quarantine
	Keeper     func() Keeper
	// Journal adds what the server or the simulator sets on each journal
	// (faults, write mode, segment size); Dir and StartLSN are the log
	// store's.
	Journal journal.Options
	Logger  *slog.Logger
}

// logDB is one database of a log store.
type logDB struct {
	mu   sync.Mutex
	dir  string
	meta logMeta
	j    *journal.Log
	// marks: the epoch marks of the frames from meta.Start on, in order;
	// committed: the end of the last frame that ends a transaction (what
	// the node serves to followers).
	marks     history.History
	committed journal.LSN
}

// logMeta is meta.json.
type logMeta struct {
	Name   string          `json:"name"`
	BaseID []byte          `json:"base_id"`
	Start  journal.LSN     `json:"start"`
	Hist   history.History `json:"history"` // marks before Start
}

var (
	_ Log     = (*LogStore)(nil)
	_ Replica = (*LogStore)(nil)
)

// OpenLogStore opens the journals kept in o.Dir (none at a first start).
// A journal's incomplete tail is cut as a secondary's is; damage before
// its last complete transaction is an error naming the file and offset.
func OpenLogStore(o LogStoreOptions, acc Accounts) (*LogStore, error) {
	o.FS = vfs.Or(o.FS)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &LogStore{opts: o, acc: acc, dbs: map[string]*logDB{}}
	if _, err := o.FS.Stat(o.Dir); err != nil {
		if err := vfs.MkdirAllSync(o.FS, o.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("log store %s: %w", o.Dir, err)
		}
	}
	entries, err := o.FS.ReadDir(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("log store %s: %w", o.Dir, err)
	}
	if err := s.finishSwaps(entries); err != nil {
		return nil, fmt.Errorf("log store %s: %w", o.Dir, err)
	}
	if entries, err = o.FS.ReadDir(o.Dir); err != nil {
		return nil, fmt.Errorf("log store %s: %w", o.Dir, err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		d, err := s.openDB(filepath.Join(o.Dir, e.Name()))
		if err != nil {
			s.Close()
			return nil, err
		}
		if d != nil {
			s.dbs[strings.ToLower(d.meta.Name)] = d
		}
	}
	return s, nil
}

// openDB opens one database's folder; a folder without meta.json (a
// LogBegin interrupted before it was written) is removed.
func (s *LogStore) openDB(dir string) (*logDB, error) {
	data, err := s.opts.FS.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		s.opts.Logger.Warn(fmt.Sprintf("Cluster: log store: %s has no meta.json (a database begun and not recorded): removed", dir))
		return nil, s.opts.FS.RemoveAll(dir)
	}
	d := &logDB{dir: dir}
	if err := json.Unmarshal(data, &d.meta); err != nil {
		return nil, fmt.Errorf("log store %s: %w", filepath.Join(dir, "meta.json"), err)
	}
	if err := d.meta.Hist.Check(); err != nil {
		return nil, fmt.Errorf("log store %s: %w", filepath.Join(dir, "meta.json"), err)
	}
	if err := s.openJournal(d); err != nil {
		return nil, err
	}
	// The marks and the committed end of what the journal holds.
	d.committed = d.meta.Start
	err = d.j.Read(d.meta.Start, func(lsn journal.LSN, typ journal.FrameType, payload []byte) error {
		return d.note(lsn, typ, payload, journal.HeaderBytes+len(payload))
	})
	if err != nil {
		d.j.Close()
		return nil, fmt.Errorf("log store: database %s: %w", d.meta.Name, err)
	}
	return d, nil
}

func (s *LogStore) openJournal(d *logDB) error {
	jo := s.opts.Journal
	jo.Dir, jo.StartLSN, jo.Logger = filepath.Join(d.dir, "journal"), d.meta.Start, s.opts.Logger
	j, err := journal.Open(jo)
	if err != nil {
		return fmt.Errorf("log store: database %s: %w", d.meta.Name, err)
	}
	d.j = j
	return nil
}

// note takes one frame at lsn into the marks and the committed end; a
// mark not newer than the last one is refused (a node never writes a
// frame of an epoch lower than one it has seen).
func (d *logDB) note(lsn journal.LSN, typ journal.FrameType, payload []byte, size int) error {
	if typ.Ends() {
		d.committed = lsn + journal.LSN(size)
		return nil
	}
	if storage.OpKind(typ) != storage.OpEpoch {
		return nil
	}
	op, err := storage.DecodeOp(storage.OpEpoch, payload)
	if err != nil {
		return fmt.Errorf("frame at LSN %d: %w", lsn, err)
	}
	last := d.recvHist().Last()
	if op.Mark.LSN != lsn {
		return fmt.Errorf("%w: epoch mark at LSN %d says %d", journal.ErrCorrupt, lsn, op.Mark.LSN)
	}
	if op.Mark.Epoch <= last.Epoch {
		return fmt.Errorf("%w: database %s: mark of epoch %d at LSN %d after epoch %d", storage.ErrStaleEpoch, d.meta.Name, op.Mark.Epoch, lsn, last.Epoch)
	}
	d.marks = append(d.marks, op.Mark)
	return nil
}

// recvHist is every mark (those of an unterminated transaction too);
// hist those of complete transactions.
func (d *logDB) recvHist() history.History {
	return append(slices.Clip(d.meta.Hist), d.marks...)
}

func (d *logDB) hist() history.History {
	h := slices.Clip(d.meta.Hist)
	for _, m := range d.marks {
		if m.LSN < d.committed {
			h = append(h, m)
		}
	}
	return h
}

func (d *logDB) info() DBInfo {
	d.mu.Lock()
	defer d.mu.Unlock()
	return DBInfo{Name: d.meta.Name, BaseID: d.meta.BaseID, Hist: d.hist(), Applied: d.committed,
		RecvHist: d.recvHist(), End: d.j.End(), Retained: max(d.j.Start(), d.meta.Start), Durable: d.j.Durable()}
}

func (s *LogStore) db(name string) (*logDB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.dbs[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%w: %s", storage.ErrNoDatabase, name)
	}
	return d, nil
}

// Databases lists the databases held (Log). Applied is the end of the
// last complete transaction: what the node serves, not what it applied
// (it applies nothing).
func (s *LogStore) Databases() []DBInfo {
	s.mu.Lock()
	dbs := make([]*logDB, 0, len(s.dbs))
	for _, key := range slices.Sorted(mapKeys(s.dbs)) {
		dbs = append(dbs, s.dbs[key])
	}
	s.mu.Unlock()
	out := make([]DBInfo, 0, len(dbs))
	for _, d := range dbs {
		out = append(out, d.info())
	}
	return out
}

// Has reports whether the store holds db.
func (s *LogStore) Has(db string) bool { _, err := s.db(db); return err == nil }

func (s *LogStore) ReadCommitted(name string, from journal.LSN, max int) ([]byte, error) {
	d, err := s.db(name)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	to := d.committed
	d.mu.Unlock()
	return d.j.ReadRange(from, to, max)
}

func (s *LogStore) ReadRange(name string, from, to journal.LSN, max int) ([]byte, error) {
	d, err := s.db(name)
	if err != nil {
		return nil, err
	}
	return d.j.ReadRange(from, to, max)
}

// Accounts are the server's, as a secondary's are: the log store relays
// the users and grants it installed.
func (s *LogStore) Accounts() (uint64, func() []byte) {
	if s.acc.Version == nil {
		return 0, nil
	}
	return s.acc.Version() + 1, s.acc.Data
}

// Write appends frames at LSN at of db's journal (the upstream's bytes at
// the same LSNs), fsync'd first when durable.
func (s *LogStore) Write(ctx context.Context, name string, at journal.LSN, frames []byte, durable bool) (journal.LSN, error) {
	d, err := s.db(name)
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	if end := d.j.End(); end != at {
		d.mu.Unlock()
		return 0, fmt.Errorf("%w: database %s: frames start at LSN %d, local journal ends at %d", storage.ErrGap, name, at, end)
	}
	// Every frame checked, the marks noted on a copy: nothing is taken
	// in unless all of it is.
	saved := &logDB{meta: d.meta, marks: slices.Clip(d.marks), committed: d.committed}
	for pos := 0; pos < len(frames); {
		typ, payload, size, ok := journal.DecodeFrame(frames[pos:])
		if ok {
			err = saved.note(at+journal.LSN(pos), typ, payload, size)
		} else {
			err = fmt.Errorf("%w: bad frame at +%d", journal.ErrCorrupt, pos)
		}
		if err != nil {
			d.mu.Unlock()
			return 0, fmt.Errorf("database %s: replicated frames at LSN %d: %w", name, at, err)
		}
		pos += size
	}
	_, end, err := d.j.Append(frames)
	if err != nil {
		d.mu.Unlock()
		return 0, err
	}
	d.marks, d.committed = saved.marks, saved.committed
	d.mu.Unlock()
	if durable {
		if err := d.j.SyncTo(context.Background(), end); err != nil {
			return 0, err
		}
	}
	return end, nil
}

// Apply does nothing: a log-store node never applies.
func (s *LogStore) Apply(string) error { return nil }

// Install refuses: a log-store node takes no copy (LogBegin).
func (s *LogStore) Install(db string, _ io.Reader) (journal.LSN, error) {
	return 0, fmt.Errorf("%w: database %s: a copy was sent, a log-store node takes none", ErrLogStore, db)
}

// Begin starts db at LSN start with base id base and the epoch marks
// before start, replacing what the store held of it (set aside first
// when quarantine: its journal diverged after common).
func (s *LogStore) Begin(name string, base []byte, hist history.History, start journal.LSN, quarantine bool, common journal.LSN, reason string) error {
	if quarantine && s.Has(name) {
		if _, err := s.SetAside(name, common, "the upstream begins it again: "+reason); err != nil {
			return err
		}
	}
	var before history.History
	for _, m := range hist {
		if m.LSN < start {
			before = append(before, m)
		}
	}
	if err := before.Check(); err != nil {
		return fmt.Errorf("%w: database %s: %v", ErrProtocol, name, err)
	}
	// The new folder is made whole under a temporary name, then swapped
	// in: a crash leaves the old journal or the new one, never neither
	// (openDB finishes or undoes the swap).
	dirName := storage.DirName(name)
	final := filepath.Join(s.opts.Dir, dirName)
	tmp, old := filepath.Join(s.opts.Dir, beginPrefix+dirName), filepath.Join(s.opts.Dir, oldPrefix+dirName)
	d := &logDB{dir: tmp, meta: logMeta{Name: name, BaseID: base, Start: start, Hist: before}, committed: start}
	if err := s.opts.FS.RemoveAll(tmp); err != nil {
		return err
	}
	if err := vfs.MkdirAllSync(s.opts.FS, tmp, 0o755); err != nil {
		return err
	}
	if err := s.writeMeta(d); err != nil {
		return err
	}
	prev, err := s.remove(name)
	if err != nil {
		return err
	}
	if prev != nil {
		if err := s.opts.FS.Rename(final, old); err != nil {
			return err
		}
	}
	if err := s.opts.FS.Rename(tmp, final); err != nil {
		return err
	}
	if err := s.opts.FS.SyncDir(s.opts.Dir); err != nil {
		return err
	}
	if prev != nil {
		if err := s.opts.FS.RemoveAll(old); err != nil {
			return err
		}
		if err := s.opts.FS.SyncDir(s.opts.Dir); err != nil {
			return err
		}
	}
	d.dir = final
	if err := s.openJournal(d); err != nil {
		return err
	}
	s.mu.Lock()
	s.dbs[strings.ToLower(name)] = d
	s.mu.Unlock()
	return nil
}

// A database begun again is made under beginPrefix+folder and swapped in;
// the folder it replaces waits under oldPrefix+folder until the swap is
// durable. (Database folder names never start with a dot.)
const (
	beginPrefix = ".begin-"
	oldPrefix   = ".old-"
)

// finishSwaps, at open, completes or undoes a Begin that a crash
// interrupted: a replaced folder whose replacement is in place goes, one
// whose replacement is not comes back; an unfinished new folder goes.
func (s *LogStore) finishSwaps(entries []os.DirEntry) error {
	fs := s.opts.FS
	changed := false
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), oldPrefix); ok {
			changed = true
			final := filepath.Join(s.opts.Dir, rest)
			if _, err := fs.Stat(final); err == nil {
				if err := fs.RemoveAll(filepath.Join(s.opts.Dir, e.Name())); err != nil {
					return err
				}
			} else if err := fs.Rename(filepath.Join(s.opts.Dir, e.Name()), final); err != nil {
				return err
			}
		}
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), beginPrefix) {
			changed = true
			if err := fs.RemoveAll(filepath.Join(s.opts.Dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if !changed {
		return nil
	}
	return fs.SyncDir(s.opts.Dir)
}

func (s *LogStore) writeMeta(d *logDB) error {
	data, err := json.MarshalIndent(d.meta, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFS(s.opts.FS, filepath.Join(d.dir, "meta.json"), data, 0o644)
}

// remove takes db out of the map and closes its journal.
func (s *LogStore) remove(name string) (*logDB, error) {
	s.mu.Lock()
	d, ok := s.dbs[strings.ToLower(name)]
	delete(s.dbs, strings.ToLower(name))
	s.mu.Unlock()
	if !ok {
		return nil, nil
	}
	return d, d.j.Close()
}

// SetAside moves db's folder into quarantine whole, with a report.
func (s *LogStore) SetAside(name string, from journal.LSN, reason string) (string, error) {
	d, err := s.remove(name)
	if d == nil || err != nil {
		return "", err
	}
	q := s.opts.Quarantine
	dst, err := q.folder(name)
	if err != nil {
		return "", err
	}
	if err := vfs.MkdirAllSync(q.FS, filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if err := q.FS.Rename(d.dir, dst); err != nil {
		return "", err
	}
	// From here the database is in the folder: the folder is returned,
	// even if the report cannot be written.
	if err := q.FS.SyncDir(filepath.Dir(dst)); err != nil {
		return dst, err
	}
	if err := q.FS.SyncDir(s.opts.Dir); err != nil {
		return dst, err
	}
	k := s.opts.Keeper()
	report := fmt.Sprintf("Miraj quarantine report\n\nnode:      %s (cluster %s, log-store node)\ndatabase:  %s\nbase id:   %x\nepoch:     %d (this node's, primary %s)\nLSN range: %d to %d\nwhat:      the journal this log-store node held (journal/ and meta.json; no tables)\nwhy:       %s\ndiverges:  from LSN %d\n",
		q.Node, q.Cluster, d.meta.Name, d.meta.BaseID, k.Epoch, k.Primary, d.meta.Start, d.j.End(), reason, from)
	if err := atomicfile.WriteFS(q.FS, filepath.Join(dst, "report.txt"), []byte(report), 0o644); err != nil {
		return dst, err
	}
	s.opts.Logger.Warn(fmt.Sprintf("Cluster: log store: database %s set aside in %s: %s", name, dst, reason))
	return dst, nil
}

// Drop removes db.
func (s *LogStore) Drop(name string) error {
	d, err := s.remove(name)
	if d == nil || err != nil {
		return err
	}
	if err := s.opts.FS.RemoveAll(d.dir); err != nil {
		return err
	}
	return s.opts.FS.SyncDir(s.opts.Dir)
}

// RemoveBefore lets db's journal go before floor, a frame boundary
// (whole segments go): meta.json moves its start to floor, with the
// marks before it, first, so that a crash between the two finds a start
// within the journal.
func (s *LogStore) RemoveBefore(name string, floor journal.LSN) error {
	d, err := s.db(name)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// Never past what is durable: meta.json must not name a start that a
	// crash could leave beyond the journal's end.
	floor = min(floor, d.committed, d.j.Durable())
	if floor <= d.meta.Start {
		return nil
	}
	meta := d.meta
	meta.Start, meta.Hist = floor, slices.Clip(meta.Hist)
	var kept history.History
	for _, m := range d.marks {
		if m.LSN < floor {
			meta.Hist = append(meta.Hist, m)
		} else {
			kept = append(kept, m)
		}
	}
	old := d.meta
	d.meta = meta
	if err := s.writeMeta(d); err != nil {
		d.meta = old
		return err
	}
	d.marks = kept
	return d.j.RemoveBefore(floor)
}

// Bytes is the size of the journals held (monitoring, the cost figures).
func (s *LogStore) Bytes() int64 {
	var n int64
	for _, db := range s.Databases() {
		n += int64(db.End - db.Retained)
	}
	return n
}

// Crash drops what the journals did not fsync (the simulator's power loss).
func (s *LogStore) Crash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.dbs {
		d.j.Crash()
	}
	s.dbs = map[string]*logDB{}
}

// Close closes the journals.
func (s *LogStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for _, d := range s.dbs {
		if err := d.j.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.dbs = map[string]*logDB{}
	return first
}
