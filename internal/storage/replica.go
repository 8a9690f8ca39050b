package storage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/miraj-db/miraj/internal/history"
	"io"
	"path/filepath"

	"github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/vfs"
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

// Writer is who a primary's engine writes for: its epoch marks carry it.
type Writer struct {
	Epoch epoch.Epoch
	Node  string
}

// CloseWrites makes client writes fail with ErrReadOnly. When it returns, no
// client transaction is committing and none will until OpenWrites: the flag
// is checked under each database's commit lock, which this takes in turn.
// Replication's own writes are not affected.
func (e *Engine) CloseWrites() {
	e.readOnly.Store(true)
	e.writer.Store(nil)
	e.mu.Lock() // CreateDatabase checks the flag under e.mu
	//lint:ignore SA2001 an empty critical section is the barrier
	e.mu.Unlock()
	for _, db := range e.Databases() {
		db.commitMu.Lock()
		db.orphanStreamsLocked()
		db.commitMu.Unlock()
	}
}

// OpenWrites lets client writes in again. With a non-nil w (a cluster's
// primary) every database's next write is preceded by w's epoch mark.
func (e *Engine) OpenWrites(w *Writer) {
	e.writer.Store(w)
	e.readOnly.Store(false)
}

// ReadOnly reports whether client writes are refused.
func (e *Engine) ReadOnly() bool { return e.readOnly.Load() }

// Changed returns a channel closed at the next commit (or replicated apply,
// database creation or drop) on any database.
func (e *Engine) Changed() <-chan struct{} {
	e.chMu.Lock()
	defer e.chMu.Unlock()
	e.changedOut = true
	return e.changed
}

// notify closes the channel Changed handed out, if it did since the last
// change: a commit no one waits for makes no channel.
func (e *Engine) notify() {
	e.chMu.Lock()
	if e.changedOut {
		close(e.changed)
		e.changed = make(chan struct{})
		e.changedOut = false
	}
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
// end of the last committed transaction or of this primary's last streamed
// frames (stream.go), about max bytes of them.
func (db *DB) ReadCommitted(from journal.LSN, max int) ([]byte, error) {
	upto := db.LSN()
	if s := journal.LSN(db.streamEnd.Load()); s > upto {
		upto = s
	}
	return db.jrnl.ReadRange(from, upto, max)
}

// AppendReplicated writes a primary's frames at the end of the local journal
// and applies what they complete (WriteReplicated, then ApplyReplicated).
func (db *DB) AppendReplicated(ctx context.Context, start journal.LSN, frames []byte, durable bool) (journal.LSN, error) {
	end, err := db.WriteReplicated(ctx, start, frames, durable)
	if err != nil {
		return 0, err
	}
	if err := db.ApplyReplicated(); err != nil {
		return 0, err
	}
	return end, nil
}

// unappliedBatch is frames written by WriteReplicated, not applied yet.
type unappliedBatch struct {
	start  journal.LSN
	frames []byte
	marks  []history.Mark
}

// WriteReplicated writes a primary's frames at the end of the local journal
// (the same bytes at the same LSNs), fsync'd with durable set, and returns
// the new journal end; ApplyReplicated applies them later, in order, so a
// replica can acknowledge what it wrote before it applies it. Until then the
// frames are in the journal and not in the tables: ReceivedHistory counts
// their epoch marks, CutTail refuses to run. An epoch mark older than the
// journal's last one is refused: a node never writes a frame of an epoch
// lower than one it has seen. frames must not change until applied.
func (db *DB) WriteReplicated(ctx context.Context, start journal.LSN, frames []byte, durable bool) (journal.LSN, error) {
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
	marks, err := db.checkMarksLocked(start, frames)
	if err != nil {
		db.commitMu.Unlock()
		return 0, err
	}
	_, end, err := db.jrnl.Append(frames)
	if err != nil {
		db.commitMu.Unlock()
		return 0, err
	}
	db.unapplied = append(db.unapplied, unappliedBatch{start: start, frames: frames, marks: marks})
	db.commitMu.Unlock()
	if durable {
		// Not ctx: the frames are in; the fsync is bounded.
		if err := db.jrnl.SyncTo(context.Background(), end); err != nil {
			return 0, err
		}
	}
	return end, nil
}

// ApplyReplicated applies, in order, the frames WriteReplicated wrote: every
// transaction they complete, decoding only the new frames (a transaction
// received over many batches is applied once, at its commit frame).
func (db *DB) ApplyReplicated() error {
	db.commitMu.Lock()
	batches := db.unapplied
	db.unapplied = nil
	var err error
	for _, b := range batches {
		for pos := 0; pos < len(b.frames) && err == nil; {
			typ, payload, size, _ := journal.DecodeFrame(b.frames[pos:])
			err = db.feedLocked(b.start+journal.LSN(pos), typ, payload)
			pos += size
		}
	}
	db.commitMu.Unlock()
	if err != nil {
		return err
	}
	if len(batches) > 0 {
		db.commits.Add(1)
		if db.eng != nil {
			db.eng.notify()
		}
	}
	return nil
}

// ErrStaleEpoch is returned for replicated frames that carry an epoch mark
// not newer than the journal's last one.
var ErrStaleEpoch = errors.New("storage: epoch mark older than the journal's")

// checkMarksLocked refuses frames whose epoch marks do not extend the
// journal's history (those of the transaction in reception and of the
// frames written and not applied yet included); it returns the frames'
// marks.
func (db *DB) checkMarksLocked(start journal.LSN, frames []byte) ([]history.Mark, error) {
	last := db.cur.Load().cat.history.Last()
	if m, ok := db.receivingMarkLocked(); ok {
		last = m
	}
	for _, b := range db.unapplied {
		if len(b.marks) > 0 {
			last = b.marks[len(b.marks)-1]
		}
	}
	var marks []history.Mark
	for pos := 0; pos < len(frames); {
		typ, payload, size, _ := journal.DecodeFrame(frames[pos:])
		if OpKind(typ) == OpEpoch {
			op, err := DecodeOp(OpEpoch, payload)
			if err != nil {
				return nil, fmt.Errorf("database %s: frame at LSN %d: %w", db.name, start+journal.LSN(pos), err)
			}
			if op.Mark.Epoch <= last.Epoch {
				return nil, fmt.Errorf("%w: database %s: mark of epoch %d at LSN %d after epoch %d", ErrStaleEpoch, db.name, op.Mark.Epoch, start+journal.LSN(pos), last.Epoch)
			}
			last = op.Mark
			marks = append(marks, op.Mark)
		}
		pos += size
	}
	return marks, nil
}

// CutTail is what a node becoming primary does with the frames after its
// last complete transaction: whole frames of transactions another primary
// left open (a transaction streamed before its commit, or received in
// several batches, whose commit frame never came). They stay: they are
// that primary's frames, of its epoch, and every follower that received
// them holds the same bytes; the new primary's epoch mark follows them and
// its abort frames end those transactions, never applied (MarkEpoch,
// stream.go). Cutting them made every follower that had received them a
// diverged one. Nothing is handed to keep and CutTail returns 0; it
// refuses while replicated frames wait to be applied (they would be taken
// for a tail).
func (db *DB) CutTail(keep func(from journal.LSN, tail []byte) error) (int, error) {
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	if len(db.unapplied) > 0 {
		return 0, fmt.Errorf("database %s: %d batch(es) of replicated frames written and not applied: apply them before the promotion goes on", db.name, len(db.unapplied))
	}
	return 0, nil
}

// MoveAside takes the database name out of service and moves its folder,
// journal and checkpoints as they are, to dest (quarantine), so that a
// copy from the primary can take its place. Nothing in it is deleted.
func (e *Engine) MoveAside(name, dest string) error {
	db, err := e.detach(name)
	if err != nil {
		return err
	}
	if err := vfs.MkdirAllSync(e.fs, filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	if err := e.fs.Rename(db.dir, dest); err != nil {
		return fmt.Errorf("database %s: moving aside: %w", name, err)
	}
	if err := e.syncDir(filepath.Dir(dest)); err != nil {
		return err
	}
	if err := e.syncDir(e.opts.Root); err != nil {
		return err
	}
	e.notify()
	return nil
}

// WriteSnapshot writes a consistent copy of db (a checkpoint stream) to w
// and returns the LSN it is taken at. Writers are not stopped.
func (db *DB) WriteSnapshot(w io.Writer) (journal.LSN, error) {
	return db.WriteSnapshotSized(w, nil)
}

// WriteSnapshotSized is WriteSnapshot that first tells size how many bytes
// the copy will be (a counting pass over the same consistent state, for
// the progress of a seeding): nil skips the pass.
func (db *DB) WriteSnapshotSized(w io.Writer, size func(int64)) (journal.LSN, error) {
	st, open := db.frozenOpen()
	if size != nil {
		var c countingWriter
		bw := bufio.NewWriterSize(&c, 1<<16)
		if err := writeCatalog(bw, st.cat, st.lsn, open); err != nil {
			return 0, err
		}
		if err := bw.Flush(); err != nil {
			return 0, err
		}
		size(c.n)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := writeCatalog(bw, st.cat, st.lsn, open); err != nil {
		return 0, err
	}
	return st.lsn, bw.Flush()
}

// countingWriter counts what is written to it, and keeps nothing.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// InstallSeed replaces (or creates) the database name with the copy read
// from r (a stream written by WriteSnapshot). The copy is assembled aside
// and swapped in whole: a crash in the middle leaves the old database.
func (e *Engine) InstallSeed(name string, r io.Reader) (*DB, error) {
	final := filepath.Join(e.opts.Root, DirName(name))
	tmp := filepath.Join(e.opts.Root, ".creating-"+DirName(name))
	// A folder left by an interrupted create or copy must go first: its
	// journal would be opened and appended to.
	if err := e.fs.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	if err := e.fs.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	ck := filepath.Join(tmp, "seed.tmp")
	f, err := e.fs.Create(ck, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if err != nil {
		e.fs.RemoveAll(tmp)
		return nil, fmt.Errorf("database %s: seed: %w", name, err)
	}
	cat, lsn, open, err := readCheckpointFile(e.fs, ck, e.opts.Bind)
	if err != nil {
		e.fs.RemoveAll(tmp)
		return nil, fmt.Errorf("database %s: seed: %w", name, err)
	}
	if err := e.fs.Rename(ck, filepath.Join(tmp, fmt.Sprintf("checkpoint-%020d-%020d%s", uint64(lsn), cat.seq, ckptSuffix))); err != nil {
		return nil, err
	}
	j, err := journal.Open(e.journalOptions(tmp, lsn))
	if err != nil {
		return nil, err
	}
	j.Close()
	if err := writeFormat(e.fs, tmp); err != nil {
		return nil, err
	}
	if err := e.syncDir(tmp); err != nil {
		return nil, err
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.mu.dbs[lower(name)]; ok {
		e.deleteDBLocked(name)
		old.commitMu.Lock()
		old.jrnl.Close()
		old.stopWorkersLocked()
		old.commitMu.Unlock()
		gone := filepath.Join(e.opts.Root, ".dropped-"+filepath.Base(old.dir))
		e.fs.RemoveAll(gone)
		if err := e.fs.Rename(old.dir, gone); err != nil {
			return nil, err
		}
		defer e.fs.RemoveAll(gone)
	}
	if err := e.fs.Rename(tmp, final); err != nil {
		return nil, err
	}
	if err := e.syncDir(e.opts.Root); err != nil {
		return nil, err
	}
	db, err := e.openDBFrom(name, final, &loadedCheckpoint{cat: cat, lsn: lsn, open: open})
	if err != nil {
		return nil, err
	}
	e.putDBLocked(name, db)
	defer e.notify()
	return db, nil
}
