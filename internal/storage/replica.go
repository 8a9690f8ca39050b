package storage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/miraj-db/miraj/internal/atomicfile"
	"github.com/miraj-db/miraj/internal/journal"
)

// What replication needs from storage: a read-only gate for clients, the
// committed frames of a database, appending a primary's frames at the same
// LSNs and applying them, and copying a whole database (seeding).

// ErrReadOnly is returned to writes while the engine is read-only (a
// secondary).
var ErrReadOnly = errors.New("storage: the server is read-only")

// ErrGap is returned when replicated frames do not start at the end of the
// local journal.
var ErrGap = errors.New("storage: replicated frames do not follow the local journal")

// SetReadOnly makes client writes fail with ErrReadOnly (or lets them again).
// Replication's own writes are not affected.
func (e *Engine) SetReadOnly(v bool) { e.readOnly.Store(v) }

// ReadOnly reports whether client writes are refused.
func (e *Engine) ReadOnly() bool { return e.readOnly.Load() }

// Changed returns a channel closed at the next commit (or replicated apply,
// database creation or drop) on any database.
func (e *Engine) Changed() <-chan struct{} {
	e.chMu.Lock()
	defer e.chMu.Unlock()
	return e.changed
}

func (e *Engine) notify() {
	e.chMu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.chMu.Unlock()
}

// SetRetention gives the LSN before which a database's journal may not be
// removed (followers still need it); ok false means no constraint.
func (e *Engine) SetRetention(floor func(db *DB) (journal.LSN, bool)) {
	e.retMu.Lock()
	e.retention = floor
	e.retMu.Unlock()
}

func (e *Engine) retentionFloor(db *DB) (journal.LSN, bool) {
	e.retMu.Lock()
	f := e.retention
	e.retMu.Unlock()
	if f == nil {
		return 0, false
	}
	return f(db)
}

// ReadCommitted returns whole frames of db's journal from from on, up to the
// end of the last committed transaction, about max bytes of them.
func (db *DB) ReadCommitted(from journal.LSN, max int) ([]byte, error) {
	return db.jrnl.ReadRange(from, db.LSN(), max)
}

// AppendReplicated writes a primary's frames at the end of the local journal
// (the same bytes at the same LSNs), fsyncs them when durable is set, and
// applies every transaction they complete. It returns the new journal end.
func (db *DB) AppendReplicated(ctx context.Context, start journal.LSN, frames []byte, durable bool) (journal.LSN, error) {
	for pos := 0; pos < len(frames); {
		_, _, size, ok := journal.DecodeFrame(frames[pos:])
		if !ok {
			return 0, fmt.Errorf("database %s: replicated frames at LSN %d: %w: bad frame at +%d", db.name, start, journal.ErrCorrupt, pos)
		}
		pos += size
	}
	db.commitMu.Lock()
	if end := db.jrnl.End(); end != start {
		db.commitMu.Unlock()
		return 0, fmt.Errorf("%w: database %s: frames start at LSN %d, local journal ends at %d", ErrGap, db.name, start, end)
	}
	_, end, err := db.jrnl.Append(frames)
	db.commitMu.Unlock()
	if err != nil {
		return 0, err
	}
	if durable {
		if err := db.jrnl.SyncTo(ctx, end); err != nil {
			return 0, err
		}
	}
	db.commitMu.Lock()
	err = db.replay()
	db.commitMu.Unlock()
	if err != nil {
		return 0, err
	}
	db.commits.Add(1)
	if db.eng != nil {
		db.eng.notify()
	}
	return end, nil
}

// WriteSnapshot writes a consistent copy of db (a checkpoint stream) to w
// and returns the LSN it is taken at. Writers are not stopped.
func (db *DB) WriteSnapshot(w io.Writer) (journal.LSN, error) {
	st := db.cur.Load()
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := writeCatalog(bw, st.cat, st.lsn); err != nil {
		return 0, err
	}
	return st.lsn, bw.Flush()
}

// InstallSeed replaces (or creates) the database name with the copy read
// from r (a stream written by WriteSnapshot). The copy is assembled aside
// and swapped in whole: a crash in the middle leaves the old database.
func (e *Engine) InstallSeed(name string, r io.Reader) (*DB, error) {
	final := filepath.Join(e.opts.Root, DirName(name))
	tmp := filepath.Join(e.opts.Root, ".creating-"+DirName(name))
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	ck := filepath.Join(tmp, "seed.tmp")
	f, err := os.Create(ck)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("database %s: seed: %w", name, err)
	}
	cat, lsn, err := readCheckpoint(ck, e.opts.Bind)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("database %s: seed: %w", name, err)
	}
	if err := os.Rename(ck, filepath.Join(tmp, fmt.Sprintf("checkpoint-%020d-%020d%s", uint64(lsn), cat.seq, ckptSuffix))); err != nil {
		return nil, err
	}
	j, err := journal.Open(journal.Options{Dir: tmp, SegmentBytes: e.opts.SegmentBytes, StartLSN: lsn, Logger: e.log})
	if err != nil {
		return nil, err
	}
	j.Close()
	if err := atomicfile.SyncDir(tmp); err != nil {
		return nil, err
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.mu.dbs[lower(name)]; ok {
		delete(e.mu.dbs, lower(name))
		old.commitMu.Lock()
		old.jrnl.Close()
		old.commitMu.Unlock()
		gone := filepath.Join(e.opts.Root, ".dropped-"+filepath.Base(old.dir))
		os.RemoveAll(gone)
		if err := os.Rename(old.dir, gone); err != nil {
			return nil, err
		}
		defer os.RemoveAll(gone)
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, err
	}
	if err := atomicfile.SyncDir(e.opts.Root); err != nil {
		return nil, err
	}
	db, err := e.openDBFrom(name, final, cat, lsn)
	if err != nil {
		return nil, err
	}
	e.mu.dbs[lower(name)] = db
	defer e.notify()
	return db, nil
}
