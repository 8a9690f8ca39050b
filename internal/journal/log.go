package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miraj-db/miraj/internal/atomicfile"
)

// LSN is a byte position in a database's log. It only grows, across segment
// files: segment files are named after the LSN of their first byte.
type LSN uint64

// ErrCorrupt marks a journal that cannot be read back safely: a damaged frame
// that is followed by valid data, or segments that do not follow each other.
// Test for it with errors.Is; the message names the file and offset.
var ErrCorrupt = errors.New("journal: corrupt")

// ErrFailed is returned by every call after a write or fsync failed: the state
// of the file is then unknown, and the only safe course is to stop and recover.
var ErrFailed = errors.New("journal: failed after an I/O error")

// ErrNotRetained is returned for a read from before the log's start: the
// segments were removed (a follower that far behind is sent a copy).
var ErrNotRetained = errors.New("is not retained")

// CorruptError says where a journal is damaged.
type CorruptError struct {
	File   string
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("journal: corrupt frame in %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

const (
	// DefaultSegmentBytes is the size after which appends go to a new file;
	// small enough that retention frees space in useful steps.
	DefaultSegmentBytes = 64 << 20
	// maxTornScanBytes bounds the search for valid frames after a damaged
	// one. A torn tail is at most what was written since the last fsync; a
	// longer stretch of undecodable bytes is reported as corruption rather
	// than cut.
	maxTornScanBytes = 256 << 20
	segmentSuffix    = ".journal"
)

// Options configure a Log.
type Options struct {
	// Dir holds the segment files. It is created if absent.
	Dir string
	// SegmentBytes is the roll-over size (DefaultSegmentBytes if zero).
	SegmentBytes int64
	// StartLSN is where recovery begins (the LSN of the checkpoint that
	// was loaded). Frames before it are not read at open.
	StartLSN LSN
	Logger   *slog.Logger
	// Faults, when set, is asked before each write and fsync of a segment
	// file; an error it returns is that I/O failing (crash tests and the
	// simulator inject disk errors through it).
	Faults func(op FaultOp) error
	// Writes chooses how the current segment is written (direct.go).
	Writes WriteMode
	// DuringGroupWrite, when set, is called while the group commit's
	// write is under way, without the lock appends take: the simulator
	// commits from it, deterministically, what a concurrent commit would
	// append at that moment.
	DuringGroupWrite func()
	// DuringGather, when set, is called when the group commit of a
	// SyncToGathering caller is about to fsync: once it waits for its
	// group to gather (gatherGroup), or at once when it does not wait.
	// The simulator commits from it what a client answered with the last
	// group would.
	DuringGather func()
	// KeepOpen keeps, at Open, the whole frames after the last commit
	// or abort frame (a transaction still open: one streamed before its
	// commit, or a replica's still in reception), cutting only a torn
	// frame; without it they are cut too.
	KeepOpen bool
}

// WriteMode is how a log writes its current segment.
type WriteMode int

const (
	// WriteAuto: direct I/O where the file system takes it, else
	// WriteBuffered.
	WriteAuto WriteMode = iota
	// WriteBuffered: the bytes as they come, into the page cache; the
	// fsync writes them out.
	WriteBuffered
	// WriteBlocks: whole blocks as direct I/O writes them, through the
	// page cache: the direct path's logic on a file system without direct
	// I/O (the simulator's, in memory).
	WriteBlocks
)

// FaultOp names the I/O an injected fault stands for.
type FaultOp string

const (
	FaultWrite FaultOp = "write"
	FaultSync  FaultOp = "fsync"
)

// fault returns the injected error for op, if any.
func (l *Log) fault(op FaultOp) error {
	if l.opts.Faults == nil {
		return nil
	}
	return l.opts.Faults(op)
}

// Log is one database's append-only journal. Append, SyncTo, End, Durable and
// Read are safe for concurrent use. A Log has no goroutines of its own.
type Log struct {
	opts Options
	log  *slog.Logger

	// wr is held by whoever writes to the segment files or changes which
	// one is current: a write, a roll, a truncation, a close. Lock order:
	// wr, mu, sy. The group commit's write (flush) holds wr and not mu
	// while its bytes go to the file, so that commits append meanwhile:
	// a commit appends under its database's commit lock, which would
	// otherwise wait for the write (about 50 µs of direct I/O). Methods
	// named …Locked are called with mu held; those that write to or
	// switch the segment (flushLocked, writeLocked, rollLocked,
	// useSegmentLocked, loadTailLocked) with wr too.
	wr struct {
		sync.Mutex
		// zeroed is the offset in the current segment up to which the
		// file holds bytes: the log's, then zeros written ahead of them
		// (see zeroAhead).
		zeroed int64
		// block's first (written-curStart)%blockBytes bytes are the
		// file's bytes of the segment's last, partial block, when it is
		// written in whole blocks (mu.direct, direct.go).
		block []byte
	}
	// mu guards the log's state. cur, curStart, direct and written change
	// only with wr held too, so wr's holder reads them without mu.
	mu struct {
		sync.Mutex
		cur      *os.File
		curStart LSN
		written  LSN // end of the bytes handed to write(2)
		// inflight is how many bytes after written the group commit is
		// writing (flush), taken from pending.
		inflight int
		// pending holds the frames of deferred appends (AppendDeferred)
		// not yet handed to write(2); they follow written and the bytes
		// in flight. Whatever needs the bytes in the file (an fsync, a
		// read, a roll, a truncation) writes them first.
		pending []byte
		spare   []byte // pending's next buffer, while one is in flight
		failed  error
		// segments: the start LSN of each segment, ascending.
		segments []LSN
		// direct: cur is written in whole blocks (direct.go): with
		// direct I/O (WriteAuto) or through the page cache (WriteBlocks).
		direct bool
		// recent holds the log's latest bytes, [recentStart, written),
		// for readers of its fresh end (see readRecent).
		recent      []byte
		recentStart LSN
		// appends counts the appends; taken is what it was when the
		// pending frames were last handed to write(2) (the appends a
		// group commit's fsync then covers).
		appends, taken uint64
		// gatherAt, gatherCh: a group commit gathering its group
		// (gatherGroup) waits on gatherCh, which the append that brings
		// appends to gatherAt closes.
		gatherAt uint64
		gatherCh chan struct{}
	}
	// gr is the group commit's record of its last group, for gatherGroup;
	// only the caller syncing (sy.syncing) uses it.
	gr struct {
		covered uint64 // appends covered by the last fsync
		group   uint64 // how many appends the last fsync covered
		arrived uint64 // appends that came while it ran
		misses  int    // waits in vain in a row
		rest    int    // group commits left to go without waiting
		timer   *time.Timer
	}
	// sy holds what the group commit needs, apart from mu so that
	// committers waiting for an fsync never hold up Append. Lock order: mu
	// before sy; SyncTo lets go of sy before it takes wr or mu.
	sy struct {
		sync.Mutex
		synced  LSN // end of the bytes known to be on disk; Invariant: synced <= mu.written
		syncing bool
		waiting int   // SyncTo callers waiting for another's fsync
		failed  error // mu.failed, for the waiters
	}
	synced *sync.Cond // on sy
	// fsyncs counts the fsyncs of segment files (group commit shares them).
	fsyncs atomic.Uint64
	// gathersMissed counts the group commits that waited for their group
	// in vain (gatherGroup).
	gathersMissed atomic.Uint64
	// groups counts the fsyncs of the group commit by how many appends
	// each covered (GroupSizes).
	groups groupSizes
}

// InBlocks reports whether the current segment is written in whole blocks
// (direct I/O, or WriteBlocks) rather than as the bytes come.
func (l *Log) InBlocks() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.direct
}

// Fsyncs returns how many times the log fsync'd a segment file.
func (l *Log) Fsyncs() uint64 { return l.fsyncs.Load() }

// GroupWaitsMissed returns how many group commits waited for their group
// in vain (see gatherGroup).
func (l *Log) GroupWaitsMissed() uint64 { return l.gathersMissed.Load() }

// GroupSizes returns how many appends the group commit's fsyncs covered,
// as a histogram.
func (l *Log) GroupSizes() GroupSizes { return l.groups.load() }

func segmentName(start LSN) string { return fmt.Sprintf("%020d%s", uint64(start), segmentSuffix) }

// listSegments returns the start LSNs of the segment files in dir, ascending.
func listSegments(dir string) ([]LSN, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []LSN
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, segmentSuffix) {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(name, segmentSuffix), 10, 64)
		if err != nil {
			continue
		}
		out = append(out, LSN(n))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// Open validates the journal from opts.StartLSN on, cuts a torn tail and any
// frames of a transaction that never got its commit marker (both logged), and
// returns the log positioned at its end. Damage before the last commit marker
// is an error naming the file and offset: nothing is cut past a committed frame.
func Open(opts Options) (*Log, error) {
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("journal %s: %w", opts.Dir, err)
	}
	l := &Log{opts: opts, log: opts.Logger}
	l.synced = sync.NewCond(&l.sy)
	segs, err := listSegments(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", opts.Dir, err)
	}
	if len(segs) == 0 {
		l.mu.written, l.sy.synced = opts.StartLSN, opts.StartLSN
		if err := l.createSegment(opts.StartLSN); err != nil {
			return nil, err
		}
		l.mu.segments = []LSN{opts.StartLSN}
		l.forgetRecentLocked()
		return l, nil
	}
	end, segs, err := l.recover(segs)
	if err != nil {
		return nil, err
	}
	last := segs[len(segs)-1]
	f, err := os.OpenFile(filepath.Join(opts.Dir, segmentName(last)), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", opts.Dir, err)
	}
	l.mu.segments = segs
	l.mu.written, l.sy.synced = end, end
	l.forgetRecentLocked()
	if err := l.useSegmentLocked(f, last); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// recover scans the segments from StartLSN and returns the end of the last
// committed transaction, having cut the log there, and the segments that
// remain. The frames after it belong to no committed transaction: a torn
// write, or a replica's transaction whose commit frame never came, which
// may span segments (a replica appends frames as they arrive, and a
// segment rolls between them).
func (l *Log) recover(segs []LSN) (LSN, []LSN, error) {
	start := l.opts.StartLSN
	if start < segs[0] {
		return 0, nil, &CorruptError{File: filepath.Join(l.opts.Dir, segmentName(segs[0])), Offset: 0,
			Reason: fmt.Sprintf("journal starts at LSN %d, after the checkpoint's LSN %d", segs[0], start)}
	}
	committed, framesEnd := start, start
	for i, seg := range segs {
		path := filepath.Join(l.opts.Dir, segmentName(seg))
		data, err := os.ReadFile(path)
		if err != nil {
			return 0, nil, fmt.Errorf("journal %s: %w", path, err)
		}
		lastSeg := i == len(segs)-1
		segEnd := seg + LSN(len(data))
		if !lastSeg && segEnd != segs[i+1] {
			return 0, nil, &CorruptError{File: path, Offset: int64(len(data)),
				Reason: fmt.Sprintf("segment ends at LSN %d but the next segment starts at %d", segEnd, segs[i+1])}
		}
		if segEnd <= start {
			if lastSeg && segEnd < start {
				return 0, nil, &CorruptError{File: path, Offset: int64(len(data)),
					Reason: fmt.Sprintf("journal ends at LSN %d, before the checkpoint's LSN %d", segEnd, start)}
			}
			continue
		}
		pos := 0
		if seg < start {
			pos = int(start - seg)
		}
		for pos < len(data) {
			typ, _, size, ok := DecodeFrame(data[pos:])
			if !ok {
				if lastSeg && isZero(data[pos:]) {
					// The zeros written ahead of the log
					// (zeroAhead): its end.
					data = data[:pos]
					break
				}
				if !lastSeg || validFrameAfter(data[pos+1:]) {
					return 0, nil, &CorruptError{File: path, Offset: int64(pos), Reason: "checksum or length mismatch before the end of the log"}
				}
				l.log.Warn("journal: torn frame at the end of the log cut off",
					"file", path, "offset", pos, "bytes", len(data)-pos)
				break
			}
			pos += size
			framesEnd = seg + LSN(pos)
			if typ.Ends() {
				committed = framesEnd
			}
		}
	}
	if l.opts.KeepOpen && framesEnd > committed {
		l.log.Info("journal: frames of open transactions kept after the last commit marker",
			"dir", l.opts.Dir, "lsn", committed, "bytes", framesEnd-committed)
		committed = framesEnd
	}
	k := segmentHolding(segs, committed)
	if framesEnd > committed {
		l.log.Warn("journal: cutting frames after the last commit marker",
			"file", filepath.Join(l.opts.Dir, segmentName(segs[k])), "offset", committed-segs[k],
			"bytes", framesEnd-committed, "segments_removed", len(segs)-1-k)
	}
	if err := l.cutAfter(segs, k, committed); err != nil {
		return 0, nil, err
	}
	return committed, segs[:k+1], nil
}

// segmentHolding returns the index of the segment that lsn falls in (the
// last one starting at or before it).
func segmentHolding(segs []LSN, lsn LSN) int {
	k := 0
	for i, s := range segs {
		if s <= lsn {
			k = i
		}
	}
	return k
}

// cutAfter removes what the segments hold after committed (frames of no
// committed transaction, a torn write, zeros written ahead): the segments
// that start after it and the rest of segs[k], the one holding it,
// durably, so that a removed segment cannot come back beside the frames
// written next.
func (l *Log) cutAfter(segs []LSN, k int, committed LSN) error {
	path := filepath.Join(l.opts.Dir, segmentName(segs[k]))
	if k == len(segs)-1 {
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("journal %s: %w", path, err)
		}
		if st.Size() == int64(committed-segs[k]) {
			return nil
		}
	}
	for i := len(segs) - 1; i > k; i-- {
		if err := os.Remove(filepath.Join(l.opts.Dir, segmentName(segs[i]))); err != nil {
			return fmt.Errorf("journal %s: %w", l.opts.Dir, err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("journal %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(int64(committed - segs[k])); err != nil {
		return fmt.Errorf("journal %s: truncate: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("journal %s: fsync: %w", path, err)
	}
	return atomicfile.SyncDir(l.opts.Dir)
}

// validFrameAfter reports whether any valid frame starts somewhere in b,
// looking at most maxTornScanBytes ahead (beyond that, it answers true so the
// caller reports corruption instead of cutting).
func validFrameAfter(b []byte) bool {
	if len(b) > maxTornScanBytes {
		return true
	}
	for i := 0; i+HeaderBytes <= len(b); i++ {
		if _, _, _, ok := DecodeFrame(b[i:]); ok {
			return true
		}
	}
	return false
}

func (l *Log) createSegment(start LSN) error {
	path := filepath.Join(l.opts.Dir, segmentName(start))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("journal %s: create segment: %w", path, err)
	}
	if err := atomicfile.SyncDir(l.opts.Dir); err != nil {
		f.Close()
		return err
	}
	if l.mu.cur != nil {
		l.mu.cur.Close()
	}
	return l.useSegmentLocked(f, start)
}

// useSegmentLocked makes f, the segment that starts at start and holds the
// log's end, the one appends go to, written as opts.Writes says; written in
// blocks, its last block's bytes are read back.
func (l *Log) useSegmentLocked(f *os.File, start LSN) error {
	l.mu.cur, l.mu.curStart, l.wr.zeroed = f, start, int64(l.mu.written-start)
	l.mu.direct = l.inBlocks(f)
	if l.mu.direct {
		return l.loadTailLocked(int64(l.mu.written - start))
	}
	return nil
}

// Append writes already encoded frames (see AppendFrame) at the end of the
// log and returns the LSN range they occupy. The bytes reach the operating
// system before Append returns; SyncTo makes them durable. One call's bytes
// never span two segment files. The log keeps no reference to frames once
// the call returns (it copies what it holds back or keeps for readers), so
// the caller may reuse the buffer.
func (l *Log) Append(frames []byte) (start, end LSN, err error) {
	return l.append(frames, false)
}

// AppendDeferred is Append for a caller that calls SyncTo next: the frames
// are in the log (End, readers and SyncTo see them) but reach the operating
// system with the next write the log makes, at the latest the fsync's. A
// group of commits that share an fsync then shares one write(2) too, made
// outside their commit lock. Until then a process crash loses them, as a
// power loss loses bytes not yet fsync'd.
func (l *Log) AppendDeferred(frames []byte) (start, end LSN, err error) {
	return l.append(frames, len(frames) < maxDeferredBytes)
}

// AppendQueued is AppendDeferred whatever the size of frames: they are
// copied into the log's pending bytes and reach the operating system with
// the next write the log makes (SyncTo's). A caller that appends under a
// lock others wait for and writes them after releasing it (a transaction
// streamed before its commit) uses it.
func (l *Log) AppendQueued(frames []byte) (start, end LSN, err error) {
	return l.append(frames, true)
}

// maxDeferredBytes bounds what AppendDeferred holds back: a larger append
// is written at once rather than copied.
const maxDeferredBytes = 64 << 10

func (l *Log) append(frames []byte, deferred bool) (start, end LSN, err error) {
	l.mu.Lock()
	if deferred && l.mu.failed == nil && int64(l.endLocked()-l.mu.curStart) < l.opts.SegmentBytes {
		// The usual case, without wr: a write in flight goes on.
		start = l.endLocked()
		l.mu.pending = append(l.mu.pending, frames...)
		end = l.endLocked()
		l.countAppendLocked()
		l.mu.Unlock()
		return start, end, nil
	}
	l.mu.Unlock()
	l.wr.Lock()
	defer l.wr.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.failed != nil {
		return 0, 0, l.mu.failed
	}
	if int64(l.endLocked()-l.mu.curStart) >= l.opts.SegmentBytes {
		if err := l.flushLocked(); err != nil {
			return 0, 0, err
		}
		if err := l.rollLocked(); err != nil {
			return 0, 0, l.failLocked(err)
		}
	}
	start = l.endLocked()
	l.countAppendLocked()
	if deferred {
		l.mu.pending = append(l.mu.pending, frames...)
		return start, l.endLocked(), nil
	}
	if err := l.flushLocked(); err != nil {
		return 0, 0, err
	}
	if err := l.writeLocked(frames); err != nil {
		return 0, 0, err
	}
	return start, l.mu.written, nil
}

// endLocked returns the end of the log: the bytes written, those in
// flight, then the pending ones.
func (l *Log) endLocked() LSN {
	return l.mu.written + LSN(l.mu.inflight) + LSN(len(l.mu.pending))
}

// countAppendLocked counts an append, and ends the wait of a group commit
// gathering its group once the group is complete.
func (l *Log) countAppendLocked() {
	l.mu.appends++
	if l.mu.gatherCh != nil && l.mu.appends >= l.mu.gatherAt {
		close(l.mu.gatherCh)
		l.mu.gatherCh = nil
	}
}

// flushLocked hands the pending frames to write(2). Called with wr and mu
// held (no write is in flight).
func (l *Log) flushLocked() error {
	l.mu.taken = l.mu.appends
	if len(l.mu.pending) == 0 {
		return nil
	}
	err := l.writeLocked(l.mu.pending)
	if cap(l.mu.pending) > 4*maxDeferredBytes {
		l.mu.pending = nil // do not keep a rare large group's buffer
	} else {
		l.mu.pending = l.mu.pending[:0]
	}
	return err
}

// flush hands the pending frames to write(2) as the group commit does:
// it holds mu only to take them and then to count them written, so that
// appends go on during the write. Called with wr held, not mu.
func (l *Log) flush() error {
	l.mu.Lock()
	b := l.mu.pending
	if l.mu.failed != nil || len(b) == 0 {
		err := l.mu.failed
		l.mu.Unlock()
		return err
	}
	l.mu.pending, l.mu.spare = l.mu.spare[:0], nil
	l.mu.taken = l.mu.appends
	l.mu.inflight = len(b)
	off := int64(l.mu.written - l.mu.curStart)
	l.mu.Unlock()

	if l.opts.DuringGroupWrite != nil {
		l.opts.DuringGroupWrite()
	}
	err := l.writeOut(off, b)

	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.inflight = 0
	if err != nil {
		return l.failLocked(err)
	}
	l.mu.written += LSN(len(b))
	l.keepRecentLocked(b)
	if cap(b) <= 4*maxDeferredBytes { // a rare large group's buffer is not kept
		l.mu.spare = b[:0]
	}
	return nil
}

// writeLocked writes b at the end of the current segment; an error fails
// the log. Called with wr and mu held.
func (l *Log) writeLocked(b []byte) error {
	if err := l.writeOut(int64(l.mu.written-l.mu.curStart), b); err != nil {
		return l.failLocked(err)
	}
	l.mu.written += LSN(len(b))
	l.keepRecentLocked(b)
	return nil
}

// writeOut writes b at offset off of the current segment, the log's end.
// Called with wr held: the file's zeros ahead and tail block are the
// writer's.
func (l *Log) writeOut(off int64, b []byte) error {
	if err := l.fault(FaultWrite); err != nil {
		return fmt.Errorf("journal %s: write: %w", l.opts.Dir, err)
	}
	if err := l.zeroAhead(off + int64(len(b))); err != nil {
		return fmt.Errorf("journal %s: write: %w", l.opts.Dir, err)
	}
	var err error
	if l.mu.direct {
		err = l.writeDirect(off, b)
	} else {
		_, err = l.mu.cur.WriteAt(b, off)
	}
	if err != nil {
		return fmt.Errorf("journal %s: write: %w", l.opts.Dir, err)
	}
	return nil
}

// The current segment is filled with zeros ahead of the log by as much as
// it holds already, at least zeroMinStep and at most zeroMaxStep at a time:
// a database that writes little (a test's) costs little disk.
const (
	zeroMinStep = 64 << 10
	zeroMaxStep = 4 << 20
)

// zeroAhead makes the current segment hold zeros up to at least end
// (an offset in the file). The frames are then written
// over zeros, inside the file: the fsync that makes them durable writes
// the data alone (fdatasync, no block allocation, no new size), which on
// ext4 costs about a quarter less time and CPU than one that extends the
// file. Recovery and readers take the zeros for the end of the log; a roll
// and a truncation cut them off. Written in blocks, the zeros are whole
// blocks: they start at the block after the log's last (which the log's
// own write fills) and end on a block boundary.
func (l *Log) zeroAhead(end int64) error {
	if end <= l.wr.zeroed {
		return nil
	}
	step := min(zeroMaxStep, max(zeroMinStep, l.wr.zeroed))
	from, to := l.wr.zeroed, max(end, min(l.wr.zeroed+step, l.opts.SegmentBytes))
	if l.mu.direct {
		from, to = alignUp(from), alignUp(to)
	}
	for from < to {
		n := min(to-from, int64(len(zeroBlocks)))
		if _, err := l.mu.cur.WriteAt(zeroBlocks[:n], from); err != nil {
			return err
		}
		from += n
	}
	l.wr.zeroed = to
	return nil
}

// zeroBlocks is what zeroAhead writes from: zeros, aligned for direct
// I/O, allocated once and shared by every log (never written to).
var zeroBlocks = alignedBuf(zeroMaxStep)

// isZero reports whether b holds only zero bytes.
func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func (l *Log) failLocked(err error) error {
	l.mu.pending = nil
	l.mu.failed = fmt.Errorf("%w: %v", ErrFailed, err)
	l.setSynced(0, l.mu.failed)
	l.log.Error("journal: I/O error, the database refuses further writes", "dir", l.opts.Dir, "err", err)
	return l.mu.failed
}

// rollLocked makes the current segment durable and starts the next one.
// Only the last segment may end in zeros: the zeros written ahead stop at
// the segment size, which a rolled segment has passed, and the cut here
// (a no-op then) is on disk before the next segment exists.
func (l *Log) rollLocked() error {
	if err := l.mu.cur.Truncate(int64(l.mu.written - l.mu.curStart)); err != nil {
		return fmt.Errorf("journal %s: truncate: %w", l.opts.Dir, err)
	}
	l.fsyncs.Add(1)
	if err := l.fault(FaultSync); err != nil {
		return fmt.Errorf("journal %s: fsync: %w", l.opts.Dir, err)
	}
	if err := syncData(l.mu.cur); err != nil {
		return fmt.Errorf("journal %s: fsync: %w", l.opts.Dir, err)
	}
	l.setSynced(l.mu.written, nil)
	if err := l.createSegment(l.mu.written); err != nil {
		return err
	}
	l.mu.segments = append(l.mu.segments, l.mu.written)
	return nil
}

// setSynced raises the durable end to at least lsn and, with failed, makes
// the waiters of SyncTo return it; it wakes them.
func (l *Log) setSynced(lsn LSN, failed error) {
	l.sy.Lock()
	defer l.sy.Unlock()
	if lsn > l.sy.synced {
		l.sy.synced = lsn
	}
	if failed != nil {
		l.sy.failed = failed
	}
	l.synced.Broadcast()
}

// SyncTo returns once every byte before upto is on disk. Concurrent callers
// share fsyncs (group commit): one caller syncs everything written so far
// while the others wait for it, then at most one more fsync covers them.
func (l *Log) SyncTo(ctx context.Context, upto LSN) error {
	return l.syncTo(ctx, upto, false)
}

// SyncToGathering is SyncTo for a commit whose client, once answered,
// commits again at once (an autocommit write): the caller that fsyncs
// first waits for its group to gather (gatherGroup).
func (l *Log) SyncToGathering(ctx context.Context, upto LSN) error {
	return l.syncTo(ctx, upto, true)
}

func (l *Log) syncTo(ctx context.Context, upto LSN, gather bool) error {
	l.sy.Lock()
	defer l.sy.Unlock()
	for l.sy.synced < upto {
		if l.sy.failed != nil {
			return l.sy.failed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if l.sy.syncing {
			l.sy.waiting++
			l.synced.Wait()
			l.sy.waiting--
			continue
		}
		l.sy.syncing = true
		shared := l.sy.waiting > 0
		l.sy.Unlock()
		err := l.syncWritten(shared, gather)
		l.sy.Lock()
		l.sy.syncing = false
		l.synced.Broadcast()
		if err != nil {
			return err
		}
	}
	return nil
}

// syncWritten fsyncs what was written so far and raises the durable end;
// called by one SyncTo at a time, without sy. With shared (others wait for
// an fsync: committers run side by side), committers that are ready to run
// append first, and the one fsync covers them too; a lone committer does
// not yield, which would only wake an idle thread to find nothing to do.
func (l *Log) syncWritten(shared, gather bool) error {
	switch {
	case gather:
		l.gatherGroup()
	case shared:
		runtime.Gosched()
	}
	l.wr.Lock()
	failed := l.flush()
	l.mu.Lock()
	target, f, start := l.mu.written, l.mu.cur, l.mu.curStart
	taken := l.mu.taken
	l.mu.Unlock()
	l.wr.Unlock()
	if failed != nil {
		return failed
	}
	err := l.fault(FaultSync)
	if err == nil {
		err = syncData(f)
	}
	l.fsyncs.Add(1)
	l.noteGroup(taken)
	if err != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.mu.failed != nil {
			return l.mu.failed
		}
		if l.mu.curStart != start {
			// The segment rolled (and was closed) meanwhile: the roll
			// made it durable whole.
			return nil
		}
		return l.failLocked(fmt.Errorf("journal %s: fsync: %w", l.opts.Dir, err))
	}
	l.setSynced(target, nil)
	return nil
}

// Gathering a group. With a few clients each sending an autocommit write
// as soon as the last is answered, the fsyncs alternate between two groups
// of about half of them, each fsync started as soon as the last ended,
// and the disk, never idle, sets the pace. The caller about to fsync for
// such a commit (SyncToGathering) first waits until as many commits have
// appended since the last fsync's group as that group held plus those that
// came while it ran: then one fsync covers them all, and the clients
// answered together come back together. A lone client's group is itself
// and never waits. A wait lasts at most maxGatherWait; one that ends
// without its group (a client gone, or commits that come at random) makes
// the next 2, 4, … up to maxGatherRest group commits go without waiting.
// Commits that come one at a time (the COMMIT of a transaction of several
// statements, after its round trips) call SyncTo, which does not wait.
const (
	maxGather     = 64 // the largest group waited for
	maxGatherWait = time.Millisecond
	maxGatherRest = 64
)

// gatherGroup waits for the group of the fsync to come, as above.
func (l *Log) gatherGroup() {
	ch := l.armGather()
	if l.opts.DuringGather != nil {
		l.opts.DuringGather()
	}
	if ch == nil {
		return
	}
	if l.gr.timer == nil {
		l.gr.timer = time.NewTimer(maxGatherWait)
	} else {
		l.gr.timer.Reset(maxGatherWait)
	}
	select {
	case <-ch:
		l.gr.timer.Stop()
		l.gr.misses = 0
	case <-l.gr.timer.C:
		l.mu.Lock()
		if l.mu.gatherCh == ch {
			l.mu.gatherCh = nil
		}
		l.mu.Unlock()
		l.gr.misses = min(l.gr.misses+1, 6)
		l.gr.rest = min(1<<l.gr.misses, maxGatherRest)
		l.gathersMissed.Add(1)
	}
}

// armGather returns the channel the group's last append closes, or nil
// when the group commit goes without waiting: a group of one, a rest after
// a wait in vain, a group already there, or a failed log.
func (l *Log) armGather() chan struct{} {
	want := min(l.gr.group+l.gr.arrived, maxGather)
	if want <= 1 {
		return nil
	}
	if l.gr.rest > 0 {
		l.gr.rest--
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.appends-l.gr.covered >= want || l.mu.failed != nil {
		return nil
	}
	ch := make(chan struct{})
	l.mu.gatherAt, l.mu.gatherCh = l.gr.covered+want, ch
	return ch
}

// noteGroup records the group an fsync covered: the appends before taken.
func (l *Log) noteGroup(taken uint64) {
	l.mu.Lock()
	now := l.mu.appends
	l.mu.Unlock()
	l.gr.group = taken - l.gr.covered
	l.gr.arrived = now - taken
	l.gr.covered = taken
	l.groups.note(l.gr.group)
}

// End returns the LSN after the last appended byte.
func (l *Log) End() LSN {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.endLocked()
}

// Written returns the end of the bytes handed to write(2): an fsync covers
// at most these.
func (l *Log) Written() LSN {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.written
}

// SegmentFull reports whether the next append rolls to a new segment: it
// then waits for a group commit's write in flight, which the others do not.
func (l *Log) SegmentFull() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(l.endLocked()-l.mu.curStart) >= l.opts.SegmentBytes
}

// Durable returns the LSN up to which the log is on disk.
func (l *Log) Durable() LSN {
	l.sy.Lock()
	defer l.sy.Unlock()
	return l.sy.synced
}

// Start returns the LSN of the oldest retained byte.
func (l *Log) Start() LSN {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.segments[0]
}

// Read calls fn for each frame from LSN from (which must be a frame boundary)
// up to the end of the log as it is when Read is called. payload is only
// valid during the call.
func (l *Log) Read(from LSN, fn func(lsn LSN, typ FrameType, payload []byte) error) error {
	if err := l.lockWritten(); err != nil {
		return err
	}
	segs := append([]LSN(nil), l.mu.segments...)
	end := l.mu.written
	l.mu.Unlock()
	if from < segs[0] {
		return fmt.Errorf("journal %s: LSN %d is no longer retained (oldest %d)", l.opts.Dir, from, segs[0])
	}
	for i, seg := range segs {
		segEnd := end
		if i+1 < len(segs) {
			segEnd = segs[i+1]
		}
		if segEnd <= from {
			continue
		}
		path := filepath.Join(l.opts.Dir, segmentName(seg))
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("journal %s: %w", path, err)
		}
		start := seg
		if seg < from {
			start = from
		}
		data := make([]byte, segEnd-start)
		_, err = f.ReadAt(data, int64(start-seg))
		f.Close()
		if err != nil {
			return fmt.Errorf("journal %s: read: %w", path, err)
		}
		for pos := 0; pos < len(data); {
			typ, payload, size, ok := DecodeFrame(data[pos:])
			if !ok {
				return &CorruptError{File: path, Offset: int64(start-seg) + int64(pos), Reason: "checksum or length mismatch"}
			}
			if err := fn(start+LSN(pos), typ, payload); err != nil {
				return err
			}
			pos += size
		}
	}
	return nil
}

// lockWritten locks mu with every byte appended so far handed to write(2)
// (written): pending ones, or ones in flight, are written first, under wr.
// On error mu is not held.
func (l *Log) lockWritten() error {
	l.mu.Lock()
	if len(l.mu.pending) == 0 && l.mu.inflight == 0 {
		return nil
	}
	l.mu.Unlock()
	l.wr.Lock()
	defer l.wr.Unlock()
	l.mu.Lock()
	if err := l.flushLocked(); err != nil {
		l.mu.Unlock()
		return err
	}
	return nil
}

// RemoveBefore deletes the segment files that hold only bytes before lsn.
// The current segment is never removed.
func (l *Log) RemoveBefore(lsn LSN) error {
	// The segments leave the log under its lock, and their files are
	// removed after it: removing a large file takes the file system a
	// while (seconds for a GiB on ext4), and appends, End and readers must
	// not wait for it.
	l.mu.Lock()
	var gone []string
	for len(l.mu.segments) > 1 && l.mu.segments[1] <= lsn {
		gone = append(gone, filepath.Join(l.opts.Dir, segmentName(l.mu.segments[0])))
		l.mu.segments = l.mu.segments[1:]
	}
	l.mu.Unlock()
	// Oldest first, stopping at a failure: the files left are still a
	// run of consecutive segments, which the next open reads as the log.
	for _, path := range gone {
		if err := removeFile(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("journal %s: remove: %w", path, err)
		}
	}
	return nil
}

// removeFile removes a segment's file (a variable for tests).
var removeFile = os.Remove

// Close makes the log durable and closes it.
func (l *Log) Close() error {
	if err := l.SyncTo(context.Background(), l.End()); err != nil && !errors.Is(err, ErrFailed) {
		return err
	}
	l.wr.Lock()
	defer l.wr.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.cur != nil {
		var err error
		if l.mu.failed == nil && l.wr.zeroed > int64(l.mu.written-l.mu.curStart) {
			// A closed log ends where its file does: the zeros ahead go.
			if err = l.mu.cur.Truncate(int64(l.mu.written - l.mu.curStart)); err == nil {
				err = syncData(l.mu.cur)
			}
		}
		if cerr := l.mu.cur.Close(); err == nil {
			err = cerr
		}
		l.mu.cur = nil
		l.mu.failed = fmt.Errorf("%w: closed", ErrFailed)
		return err
	}
	return nil
}

// ReadRange returns whole frames from from (a frame boundary) up to upto,
// about max bytes of them: fewer when the next frame would pass max, but at
// least one frame when from < upto. Frames never span segments, so neither
// does the result. Every frame's checksum is verified.
func (l *Log) ReadRange(from, upto LSN, max int) ([]byte, error) {
	if from >= upto {
		return nil, nil
	}
	if err := l.lockWritten(); err != nil {
		return nil, err
	}
	segs := l.mu.segments
	written := l.mu.written
	var seg, segEnd LSN
	found := false
	for i, s := range segs {
		end := written
		if i+1 < len(segs) {
			end = segs[i+1]
		}
		if s <= from && from < end {
			seg, segEnd, found = s, end, true
			break
		}
	}
	l.mu.Unlock()
	if !found {
		return nil, fmt.Errorf("journal %s: LSN %d %w (log holds %d to %d)", l.opts.Dir, from, ErrNotRetained, segs[0], written)
	}
	if upto > segEnd {
		upto = segEnd
	}
	path := filepath.Join(l.opts.Dir, segmentName(seg))
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	// readAt fills p from at: from the bytes kept in memory if they hold
	// it, else from the segment file.
	readAt := func(p []byte, at LSN) error {
		if l.readRecent(p, at) {
			return nil
		}
		if f == nil {
			var err error
			if f, err = os.Open(path); err != nil {
				return fmt.Errorf("journal %s: %w", path, err)
			}
		}
		if _, err := f.ReadAt(p, int64(at-seg)); err != nil {
			return fmt.Errorf("journal %s: read at %d: %w", path, at-seg, err)
		}
		return nil
	}
	n := int(upto - from)
	if n > max {
		n = max
	}
	if n < HeaderBytes {
		n = min(int(upto-from), HeaderBytes)
	}
	buf := make([]byte, n)
	if err := readAt(buf, from); err != nil {
		return nil, err
	}
	pos := 0
	for pos < len(buf) {
		_, _, size, ok := DecodeFrame(buf[pos:])
		if !ok {
			break
		}
		pos += size
	}
	if pos > 0 {
		return buf[:pos], nil
	}
	// The first frame is larger than max: read exactly it.
	if len(buf) < HeaderBytes {
		return nil, &CorruptError{File: path, Offset: int64(from - seg), Reason: "frame header cut"}
	}
	size := HeaderBytes + int(binary.LittleEndian.Uint32(buf[0:4]))
	if size > MaxPayloadBytes+HeaderBytes || from+LSN(size) > upto {
		return nil, &CorruptError{File: path, Offset: int64(from - seg), Reason: "frame length beyond the log"}
	}
	buf = make([]byte, size)
	if err := readAt(buf, from); err != nil {
		return nil, err
	}
	if _, _, _, ok := DecodeFrame(buf); !ok {
		return nil, &CorruptError{File: path, Offset: int64(from - seg), Reason: "checksum mismatch"}
	}
	return buf, nil
}

// Truncate cuts the log at to, a frame boundary at or after the start of
// the current segment's predecessor chain: later segments are removed and
// the one holding to is shortened, all made durable before it returns.
// Only a replica's unterminated tail is ever cut (at promotion, after it
// was saved to quarantine); committed frames never are.
func (l *Log) Truncate(to LSN) error {
	l.wr.Lock()
	defer l.wr.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.failed != nil {
		return l.mu.failed
	}
	if err := l.flushLocked(); err != nil {
		return err
	}
	if to > l.mu.written || to < l.mu.segments[0] {
		return fmt.Errorf("journal %s: truncate to %d outside the log (%d to %d)", l.opts.Dir, to, l.mu.segments[0], l.mu.written)
	}
	if to == l.mu.written {
		return nil
	}
	// Drop whole segments that start after to (or at it, unless it is the
	// first one, which must remain).
	for len(l.mu.segments) > 1 && l.mu.segments[len(l.mu.segments)-1] >= to {
		last := l.mu.segments[len(l.mu.segments)-1]
		if l.mu.cur != nil && l.mu.curStart == last {
			l.mu.cur.Close()
			l.mu.cur = nil
		}
		if err := os.Remove(filepath.Join(l.opts.Dir, segmentName(last))); err != nil {
			return l.failLocked(fmt.Errorf("journal %s: truncate: %w", l.opts.Dir, err))
		}
		l.mu.segments = l.mu.segments[:len(l.mu.segments)-1]
	}
	seg := l.mu.segments[len(l.mu.segments)-1]
	path := filepath.Join(l.opts.Dir, segmentName(seg))
	if l.mu.cur == nil || l.mu.curStart != seg {
		if l.mu.cur != nil {
			l.mu.cur.Close()
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return l.failLocked(fmt.Errorf("journal %s: truncate: %w", l.opts.Dir, err))
		}
		l.mu.cur, l.mu.curStart = f, seg
		l.mu.direct = l.inBlocks(f)
	}
	if err := l.mu.cur.Truncate(int64(to - seg)); err != nil {
		return l.failLocked(fmt.Errorf("journal %s: truncate: %w", l.opts.Dir, err))
	}
	l.wr.zeroed = int64(to - seg)
	if l.mu.direct {
		if err := l.loadTailLocked(int64(to - seg)); err != nil {
			return l.failLocked(err)
		}
	}
	if err := l.mu.cur.Sync(); err != nil {
		return l.failLocked(fmt.Errorf("journal %s: fsync: %w", l.opts.Dir, err))
	}
	if err := atomicfile.SyncDir(l.opts.Dir); err != nil {
		return l.failLocked(err)
	}
	l.mu.written = to
	l.forgetRecentLocked()
	l.sy.Lock()
	l.sy.synced = to
	l.synced.Broadcast()
	l.sy.Unlock()
	return nil
}

// ReadBytes returns the raw bytes of the log in [from, upto).
func (l *Log) ReadBytes(from, upto LSN) ([]byte, error) {
	out := make([]byte, 0, upto-from)
	for from < upto {
		b, err := l.ReadRange(from, upto, int(upto-from))
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, &CorruptError{File: l.opts.Dir, Offset: int64(from), Reason: "no frame where one was expected"}
		}
		out = append(out, b...)
		from += LSN(len(b))
	}
	return out, nil
}

// Crash closes the log as a power loss would leave it: the bytes written
// but not yet fsync'd are cut off (the worst case a crash allows; segment
// rolls fsync, so only the last segment holds any). For crash tests and
// the simulator; a server closes with Close.
func (l *Log) Crash() error {
	l.wr.Lock()
	defer l.wr.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.cur != nil {
		l.mu.cur.Close()
		l.mu.cur = nil
	}
	l.mu.pending, l.mu.spare = nil, nil
	l.mu.failed = fmt.Errorf("%w: crashed", ErrFailed)
	l.setSynced(0, l.mu.failed)
	synced := l.Durable()
	seg := l.mu.segments[len(l.mu.segments)-1]
	if synced < seg {
		panic(fmt.Sprintf("journal %s: synced %d before the last segment %d", l.opts.Dir, synced, seg))
	}
	return os.Truncate(filepath.Join(l.opts.Dir, segmentName(seg)), int64(synced-seg))
}

// Scan reads, without changing anything, the frames of the journal folder
// dir from LSN from (a frame boundary) to its end, calling fn for each; a
// damaged frame ends the scan (a torn tail). For tools that read a journal
// kept aside, such as a quarantine folder.
func Scan(dir string, from LSN, fn func(lsn LSN, typ FrameType, payload []byte) error) error {
	segs, err := listSegments(dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return fmt.Errorf("journal %s: no segment", dir)
	}
	if from < segs[0] {
		from = segs[0]
	}
	for i, seg := range segs {
		path := filepath.Join(dir, segmentName(seg))
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		end := seg + LSN(len(data))
		if i+1 < len(segs) && end != segs[i+1] {
			return &CorruptError{File: path, Offset: int64(len(data)), Reason: "segments do not follow each other"}
		}
		if end <= from {
			continue
		}
		pos := 0
		if seg < from {
			pos = int(from - seg)
		}
		if err := ScanFrames(data[pos:], seg+LSN(pos), fn); err != nil {
			return err
		}
	}
	return nil
}

// ScanFrames calls fn for each whole frame of data, the first at LSN start,
// and stops at the first one that does not decode (a torn tail).
func ScanFrames(data []byte, start LSN, fn func(lsn LSN, typ FrameType, payload []byte) error) error {
	for pos := 0; pos < len(data); {
		typ, payload, size, ok := DecodeFrame(data[pos:])
		if !ok {
			return nil
		}
		if err := fn(start+LSN(pos), typ, payload); err != nil {
			return err
		}
		pos += size
	}
	return nil
}
