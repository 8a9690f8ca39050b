package binlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miraj-db/miraj/internal/atomicfile"
	"github.com/miraj-db/miraj/internal/vfs"
)

// Limits and defaults of the options (§17.13.1).
const (
	DefaultBase    = "miraj-bin"
	MinMaxSize     = 4096
	DefaultMaxSize = 1 << 30
	fileExt        = ".mrb"
	indexExt       = ".mrbi"
	// maxFileNumber is the largest NNNNNN (MariaDB's limit too).
	maxFileNumber = 999999
	// maxRowsEventBytes is where a group's rows for one table are split
	// into another event: bounds an event's buffer (MariaDB's
	// binlog_row_event_max_size is 8 KiB; replicas accept up to 1 GiB).
	maxRowsEventBytes = 64 << 10
)

// Errors of the log, mapped to MySQL errors at the SQL boundary.
var (
	ErrClosed       = errors.New("binlog: log closed")
	ErrNotInIndex   = errors.New("binlog: file not in the index")
	ErrActiveFile   = errors.New("binlog: file is the active one")
	ErrBadPosition  = errors.New("binlog: position is not the start of an event")
	ErrPurged       = errors.New("binlog: position purged")
	ErrGTIDNotFound = errors.New("binlog: GTID position not in the log")
)

// Options configure a Log.
type Options struct {
	// Dir is the folder of the files; Base their name without extension
	// (DefaultBase when empty).
	Dir, Base string
	// MaxSize: a file past it is closed and the next one opened
	// (DefaultMaxSize when 0).
	MaxSize int64
	// Expire: at each rotation, files older than this are removed (0:
	// never).
	Expire time.Duration
	// SyncEvery: the file is fsynced every SyncEvery groups (0: left to
	// the system).
	SyncEvery int
	// NoChecksum writes no CRC32 footers (--binlog-checksum=NONE).
	NoChecksum bool
	// ServerID is the server id of the events the log writes itself.
	ServerID uint32
	// FS is the file system (vfs.Default when nil); Now the clock
	// (time.Now when nil).
	FS  vfs.FS
	Now func() time.Time
}

// Log is the binary log: its files, index and GTID state.
type Log struct {
	opts Options
	fs   vfs.FS
	mu   struct {
		sync.Mutex
		closed bool
		// files: the index, oldest first. Invariant: the last one is
		// the active file, open in f.
		files []string
		f     vfs.File
		// size: bytes of the active file written whole. Invariant:
		// readers see only [0, size) (whole events and groups).
		size    int64
		state   State
		noSync  int // groups since the last fsync
		tables  map[string]uint64
		nextTab uint64
		xid     uint64
		// changed is closed, and replaced, at each write: dumps waiting
		// for new events wait on it.
		changed chan struct{}
		// crc: the active file has checksums.
		crc bool
		// The settings that may change while the log is open (SetMaxSize,
		// SetChecksum, SetServerID); opts has their values at Open.
		maxSize    int64
		noChecksum bool
		serverID   uint32
	}
	// dumpsEnd is closed by EndDumps: every dump returns.
	dumpsEnd     chan struct{}
	endDumpsOnce sync.Once
}

// EndDumps makes every dump, running or to come, return, the log staying
// open: a server that shuts down ends its replicas' streams first, then
// closes the log after its last commit.
func (l *Log) EndDumps() { l.endDumpsOnce.Do(func() { close(l.dumpsEnd) }) }

// Open opens the log in opts.Dir: it reads the index, removes an
// incomplete tail of the last file (an abrupt shutdown), rebuilds the
// GTID state and opens a new file.
func Open(opts Options) (*Log, error) {
	if opts.Base == "" {
		opts.Base = DefaultBase
	}
	if opts.MaxSize == 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.MaxSize < MinMaxSize || opts.MaxSize > DefaultMaxSize {
		return nil, fmt.Errorf("binlog: max size %d out of %d..%d", opts.MaxSize, MinMaxSize, DefaultMaxSize)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := &Log{opts: opts, fs: vfs.Or(opts.FS), dumpsEnd: make(chan struct{})}
	if err := l.fs.MkdirAll(opts.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("binlog: %w", err)
	}
	l.mu.tables = map[string]uint64{}
	l.mu.nextTab = 1
	l.mu.maxSize, l.mu.noChecksum, l.mu.serverID = opts.MaxSize, opts.NoChecksum, opts.ServerID
	l.mu.changed = make(chan struct{})
	files, err := l.readIndex()
	if err != nil {
		return nil, err
	}
	l.mu.files = files
	if n := len(files); n > 0 {
		st, err := l.recover(files[n-1])
		if err != nil {
			return nil, err
		}
		l.mu.state = st
	}
	if err := l.openNextLocked(); err != nil {
		return nil, err
	}
	return l, nil
}

// IndexPath is the index file's path.
func (l *Log) IndexPath() string { return filepath.Join(l.opts.Dir, l.opts.Base+indexExt) }

// BasePath is the files' base path (log_bin_basename).
func (l *Log) BasePath() string { return filepath.Join(l.opts.Dir, l.opts.Base) }

// path is the file of a log file's name: the name is base.NNNNNN (what
// SHOW BINARY LOGS, Rotate events and replicas use), the file on disk
// base.NNNNNN.mrb.
func (l *Log) path(name string) string { return filepath.Join(l.opts.Dir, name+fileExt) }

// canonical is a file's name as the log knows it: a name given with its
// .mrb extension is taken too.
func canonical(name string) string { return strings.TrimSuffix(name, fileExt) }

func (l *Log) readIndex() ([]string, error) {
	data, err := l.fs.ReadFile(l.IndexPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("binlog: read index: %w", err)
	}
	var files []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name := canonical(filepath.Base(line))
		if _, err := l.fs.Stat(l.path(name)); err != nil {
			continue // removed by hand: forgotten, as MariaDB does
		}
		files = append(files, name)
	}
	return files, nil
}

func (l *Log) writeIndexLocked(files []string) error {
	var b strings.Builder
	for _, f := range files {
		b.WriteString("./" + f + fileExt + "\n")
	}
	if err := atomicfile.WriteFS(l.fs, l.IndexPath(), []byte(b.String()), 0o640); err != nil {
		return fmt.Errorf("binlog: write index: %w", err)
	}
	return nil
}

// fileNumber is the NNNNNN of a file name.
func fileNumber(name string) (int, bool) {
	name = strings.TrimSuffix(name, fileExt)
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	return n, err == nil
}

func (l *Log) fileName(n int) string { return fmt.Sprintf("%s.%06d", l.opts.Base, n) }

// recover reads the last file: the GTID state at its end, after its
// incomplete tail (a group without its end) is cut off.
func (l *Log) recover(name string) (State, error) {
	data, err := l.fs.ReadFile(l.path(name))
	if err != nil {
		return State{}, fmt.Errorf("binlog: recover %s: %w", name, err)
	}
	sc := scanFile(data)
	if sc.err != nil && sc.good < int64(len(Magic)) {
		return State{}, fmt.Errorf("binlog: recover %s: %w", name, sc.err)
	}
	if sc.good < int64(len(data)) {
		// Keep whole groups only: written to a new file, then renamed.
		tmp := l.path(name) + ".tmp"
		f, err := l.fs.Create(tmp, 0o640)
		if err != nil {
			return State{}, fmt.Errorf("binlog: recover %s: %w", name, err)
		}
		_, err = f.Write(data[:sc.good])
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = l.fs.Rename(tmp, l.path(name))
		}
		if err == nil {
			err = l.fs.SyncDir(l.opts.Dir)
		}
		if err != nil {
			return State{}, fmt.Errorf("binlog: recover %s: cut the tail at %d: %w", name, sc.good, err)
		}
	}
	return sc.state, nil
}

// fileScan is what a pass over a whole file found.
type fileScan struct {
	crc   bool
	state State  // the state after the last whole group
	head  []GTID // the file's Gtid_list
	good  int64  // the end of the last whole group
	err   error  // why the scan stopped early, if it did
}

// scanFile reads a file's events: its head state and the GTIDs of its
// whole groups. A group is whole at its Xid, or at the event after a
// standalone Gtid.
func scanFile(data []byte) fileScan {
	var sc fileScan
	if len(data) < len(Magic) || !bytes.Equal(data[:len(Magic)], Magic) {
		sc.err = fmt.Errorf("%w: no binary log magic", ErrCorrupt)
		return sc
	}
	pos := int64(len(Magic))
	sc.good = pos
	var open *GTID
	standalone := false
	for pos < int64(len(data)) {
		h, err := ParseHeader(data[pos:])
		if err != nil || h.Size < HeaderSize || pos+int64(h.Size) > int64(len(data)) {
			sc.err = fmt.Errorf("%w: event at %d cut short", ErrCorrupt, pos)
			return sc
		}
		ev := data[pos : pos+int64(h.Size)]
		if h.Type == FormatDescriptionEvent {
			sc.crc = fdeChecksum(ev) == ChecksumCRC32
		}
		if sc.crc || h.Type == FormatDescriptionEvent {
			if err := VerifyChecksum(ev); err != nil {
				sc.err = fmt.Errorf("event at %d: %w", pos, err)
				return sc
			}
		}
		body := eventBody(ev, sc.crc || h.Type == FormatDescriptionEvent)
		pos += int64(h.Size)
		switch h.Type {
		case GTIDListEvent:
			sc.head = parseGTIDList(body)
			sc.state = stateOf(sc.head)
			sc.good = pos
		case GTIDEvent:
			g, flags := parseGTIDEvent(body, h.ServerID)
			open, standalone = &g, flags&gtidStandalone != 0
		case XIDEvent:
			if open != nil {
				sc.state.Record(*open)
				open = nil
			}
			sc.good = pos
		default:
			if open != nil && standalone {
				sc.state.Record(*open)
				open = nil
				sc.good = pos
			} else if open == nil {
				sc.good = pos
			}
		}
	}
	return sc
}

// eventBody is ev without its header and footer.
func eventBody(ev []byte, crc bool) []byte {
	end := len(ev)
	if crc {
		end -= ChecksumSize
	}
	return ev[HeaderSize:end]
}

// fdeChecksum is the checksum algorithm a Format_description announces.
func fdeChecksum(ev []byte) byte {
	// The algorithm byte precedes the 4-byte footer.
	if len(ev) < HeaderSize+2+serverVersionSize+4+1+ChecksumSize+1 {
		return ChecksumOff
	}
	return ev[len(ev)-ChecksumSize-1]
}

func parseGTIDList(body []byte) []GTID {
	if len(body) < 4 {
		return nil
	}
	n := int(leUint32(body) & 0x0fffffff)
	var out []GTID
	for i := 0; i < n && 4+16*(i+1) <= len(body); i++ {
		p := body[4+16*i:]
		out = append(out, GTID{Domain: leUint32(p), Server: leUint32(p[4:]), Seq: leUint64(p[8:])})
	}
	return out
}

func parseGTIDEvent(body []byte, server uint32) (GTID, byte) {
	if len(body) < 13 {
		return GTID{Server: server}, 0
	}
	return GTID{Seq: leUint64(body), Domain: leUint32(body[8:]), Server: server}, body[12]
}

func leUint32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func leUint64(b []byte) uint64 { return uint64(leUint32(b)) | uint64(leUint32(b[4:]))<<32 }

// openNextLocked opens the next file: magic, Format_description, the
// GTID state as Gtid_list, Binlog_checkpoint; then the index names it.
func (l *Log) openNextLocked() error {
	n := 1
	if k := len(l.mu.files); k > 0 {
		last, _ := fileNumber(l.mu.files[k-1])
		n = last + 1
	}
	return l.openNumberLocked(n)
}

func (l *Log) openNumberLocked(n int) error {
	if n > maxFileNumber {
		return fmt.Errorf("binlog: file number %d past %d: RESET MASTER", n, maxFileNumber)
	}
	name := l.fileName(n)
	f, err := l.fs.Create(l.path(name), 0o640)
	if err != nil {
		return fmt.Errorf("binlog: create %s: %w", name, err)
	}
	w := l.writer(0)
	w.crc = !l.mu.noChecksum // the new file's
	w.buf = append(w.buf, Magic...)
	w.formatDescription(l.checksumAlg(), false)
	w.gtidList(l.mu.state.List(), 0)
	w.binlogCheckpoint(name)
	if _, err := f.Write(w.buf); err != nil {
		f.Close()
		return fmt.Errorf("binlog: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("binlog: sync %s: %w", name, err)
	}
	files := append(slices.Clone(l.mu.files), name)
	if err := l.writeIndexLocked(files); err != nil {
		f.Close()
		return err
	}
	l.mu.files, l.mu.f, l.mu.size = files, f, int64(len(w.buf))
	l.mu.crc = !l.mu.noChecksum
	l.notifyLocked()
	return nil
}

// checksumAlg is the checksum of the files opened from now on.
func (l *Log) checksumAlg() byte {
	if l.mu.noChecksum {
		return ChecksumOff
	}
	return ChecksumCRC32
}

// writer is an event writer for the active file at pos.
func (l *Log) writer(pos int64) *eventWriter {
	return &eventWriter{pos: uint32(pos), crc: l.mu.crc, serverID: l.mu.serverID, ts: uint32(l.opts.Now().Unix())}
}

// SetMaxSize changes the size past which a new file is opened
// (max_binlog_size): from the next group on.
func (l *Log) SetMaxSize(n int64) error {
	if n < MinMaxSize || n > DefaultMaxSize {
		return fmt.Errorf("binlog: max size %d out of %d..%d", n, MinMaxSize, DefaultMaxSize)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.maxSize = n
	return nil
}

// MaxSize is the size past which a new file is opened.
func (l *Log) MaxSize() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.maxSize
}

// SetChecksum turns the events' CRC32 footers on or off (binlog_checksum):
// a change opens a new file, whose Format_description says so, as every
// file has one checksum setting throughout.
func (l *Log) SetChecksum(on bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return ErrClosed
	}
	if l.mu.noChecksum == !on {
		return nil
	}
	l.mu.noChecksum = !on
	return l.rotateLocked()
}

// Checksum reports whether the files opened from now on have footers.
func (l *Log) Checksum() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.mu.noChecksum
}

// SetServerID changes the server id of the events written from now on
// (server_id): groups that carry their own keep theirs (GroupInfo).
func (l *Log) SetServerID(id uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.serverID = id
}

func (l *Log) notifyLocked() {
	close(l.mu.changed)
	l.mu.changed = make(chan struct{})
}

// Changed is closed at the log's next write (or rotation, purge, reset).
func (l *Log) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.changed
}

// Coordinates is a place in the log: a file and an offset in it.
type Coordinates struct {
	File string
	Pos  int64
}

// Append writes g as the next group and returns the log's end after it.
// It assigns the group's GTID (GroupInfo.Seq, or the domain's next) and
// rotates past MaxSize.
func (l *Log) Append(g *Group) (Coordinates, GTID, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return Coordinates{}, GTID{}, ErrClosed
	}
	gt := GTID{Domain: g.info.Domain, Server: g.info.ServerID, Seq: g.info.Seq}
	if gt.Seq == 0 {
		gt.Seq = l.mu.state.NextSeq(gt.Domain)
	} else if g.info.Strict && gt.Seq < l.mu.state.NextSeq(gt.Domain) {
		return Coordinates{}, GTID{}, fmt.Errorf("%w: %s does not follow %s", ErrGTIDOrder, gt, l.mu.state.Pos()[gt.Domain])
	}
	w := l.writer(l.mu.size)
	w.serverID = g.info.ServerID
	if err := l.encodeLocked(w, g, gt); err != nil {
		return Coordinates{}, GTID{}, err
	}
	if _, err := l.mu.f.Write(w.buf); err != nil {
		// The file may hold part of the group: the next start cuts it
		// (recover); until then no more is written to it.
		l.mu.closed = true
		return Coordinates{}, GTID{}, fmt.Errorf("binlog: write %s: %w", l.activeLocked(), err)
	}
	l.mu.size += int64(len(w.buf))
	l.mu.state.Record(gt)
	if l.opts.SyncEvery > 0 {
		if l.mu.noSync++; l.mu.noSync >= l.opts.SyncEvery {
			l.mu.noSync = 0
			if err := l.mu.f.Sync(); err != nil {
				l.mu.closed = true
				return Coordinates{}, GTID{}, fmt.Errorf("binlog: sync %s: %w", l.activeLocked(), err)
			}
		}
	}
	l.notifyLocked()
	end := Coordinates{File: l.activeLocked(), Pos: l.mu.size}
	if l.mu.size >= l.mu.maxSize {
		if err := l.rotateLocked(); err != nil {
			return end, gt, err
		}
	}
	return end, gt, nil
}

// ErrGTIDOrder: gtid_strict_mode refuses a sequence that does not follow
// its domain's (1950 at the SQL boundary).
var ErrGTIDOrder = errors.New("binlog: GTID out of order")

func (l *Log) activeLocked() string { return l.mu.files[len(l.mu.files)-1] }

// encodeLocked writes g's events into w.
func (l *Log) encodeLocked(w *eventWriter, g *Group, gt GTID) error {
	if g.ddl != nil {
		w.gtid(gt, gtidStandalone|gtidDDL|gtidAllowParallel)
		w.query(g.info.ThreadID, g.ddl.db, g.ddl.stmt, g.ddl.sqlMode)
		return nil
	}
	w.gtid(gt, gtidTransactional|gtidAllowParallel)
	ids := make([]uint64, len(g.tables))
	for i, t := range g.tables {
		key := t.DB + "\x00" + t.Name
		id, ok := l.mu.tables[key]
		if !ok {
			id = l.mu.nextTab
			l.mu.nextTab++
			l.mu.tables[key] = id
		}
		ids[i] = id
		w.tableMap(id, t)
	}
	for i, ev := range g.rows {
		flags := uint16(0)
		if i == len(g.rows)-1 {
			flags = rowsFlagStmtEnd
		}
		s := w.rowsHeader(ev.kind, ids[ev.table], len(g.tables[ev.table].Cols), flags)
		w.buf = append(w.buf, ev.data...)
		w.end(s)
	}
	l.mu.xid++
	w.xid(l.mu.xid)
	return nil
}

// Rotate closes the active file with a Rotate event and opens the next
// (FLUSH BINARY LOGS), then removes the expired files.
func (l *Log) Rotate() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return ErrClosed
	}
	return l.rotateLocked()
}

func (l *Log) rotateLocked() error {
	n, _ := fileNumber(l.activeLocked())
	next := l.fileName(n + 1)
	w := l.writer(l.mu.size)
	w.rotate(next, uint64(len(Magic)), 0)
	if _, err := l.mu.f.Write(w.buf); err != nil {
		l.mu.closed = true
		return fmt.Errorf("binlog: write %s: %w", l.activeLocked(), err)
	}
	if err := l.closeFileLocked(); err != nil {
		return err
	}
	if err := l.openNumberLocked(n + 1); err != nil {
		l.mu.closed = true
		return err
	}
	if l.opts.Expire > 0 {
		return l.purgeBeforeLocked(l.opts.Now().Add(-l.opts.Expire))
	}
	return nil
}

func (l *Log) closeFileLocked() error {
	err := l.mu.f.Sync()
	if cerr := l.mu.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		l.mu.closed = true
		return fmt.Errorf("binlog: close %s: %w", l.activeLocked(), err)
	}
	return nil
}

// FileInfo is a file of the index.
type FileInfo struct {
	Name string
	Size int64
}

// Files lists the index with the files' sizes (SHOW BINARY LOGS).
func (l *Log) Files() []FileInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]FileInfo, 0, len(l.mu.files))
	for i, name := range l.mu.files {
		fi := FileInfo{Name: name}
		if i == len(l.mu.files)-1 {
			fi.Size = l.mu.size
		} else if st, err := l.fs.Stat(l.path(name)); err == nil {
			fi.Size = st.Size()
		}
		out = append(out, fi)
	}
	return out
}

// End is the active file and its size (SHOW MASTER STATUS).
func (l *Log) End() Coordinates {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Coordinates{File: l.activeLocked(), Pos: l.mu.size}
}

// State is a copy of the GTID state.
func (l *Log) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.state.Clone()
}

// PurgeTo removes the files before name (PURGE BINARY LOGS TO).
func (l *Log) PurgeTo(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(l.mu.files, canonical(name))
	if i < 0 {
		return fmt.Errorf("%w: %s", ErrNotInIndex, name)
	}
	return l.removeLocked(i)
}

// PurgeBefore removes the files last written before t, oldest first, up to
// the first one that is not (PURGE BINARY LOGS BEFORE); never the active
// file.
func (l *Log) PurgeBefore(t time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.purgeBeforeLocked(t)
}

func (l *Log) purgeBeforeLocked(t time.Time) error {
	k := 0
	for ; k < len(l.mu.files)-1; k++ {
		st, err := l.fs.Stat(l.path(l.mu.files[k]))
		if err != nil || !st.ModTime().Before(t) {
			break
		}
	}
	return l.removeLocked(k)
}

// removeLocked removes the first k files of the index.
func (l *Log) removeLocked(k int) error {
	if k == 0 {
		return nil
	}
	gone := l.mu.files[:k]
	rest := slices.Clone(l.mu.files[k:])
	if err := l.writeIndexLocked(rest); err != nil {
		return err
	}
	l.mu.files = rest
	for _, name := range gone {
		if err := l.fs.Remove(l.path(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("binlog: remove %s: %w", name, err)
		}
	}
	l.notifyLocked()
	return nil
}

// Reset removes every file, forgets the GTID state and starts again at
// file number first (RESET MASTER [TO first]).
func (l *Log) Reset(first int) error {
	if first < 1 || first > maxFileNumber {
		return fmt.Errorf("binlog: RESET MASTER TO %d out of 1..%d", first, maxFileNumber)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return ErrClosed
	}
	if err := l.closeFileLocked(); err != nil {
		return err
	}
	for _, name := range l.mu.files {
		if err := l.fs.Remove(l.path(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			l.mu.closed = true
			return fmt.Errorf("binlog: remove %s: %w", name, err)
		}
	}
	l.mu.files = nil
	l.mu.state = State{}
	if err := l.openNumberLocked(first); err != nil {
		l.mu.closed = true
		return err
	}
	return nil
}

// Close writes a Stop event and closes the active file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return nil
	}
	w := l.writer(l.mu.size)
	w.stop()
	_, err := l.mu.f.Write(w.buf)
	if cerr := l.closeFileLocked(); err == nil {
		err = cerr
	}
	l.mu.closed = true
	l.notifyLocked()
	return err
}

// readable returns, for a file of the index, how many of its bytes may be
// read (the active file: what was written whole), whether it is the
// active file, and the next file's name ("" for the active one).
func (l *Log) readable(name string) (size int64, active bool, next string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(l.mu.files, canonical(name))
	if i < 0 {
		return 0, false, "", fmt.Errorf("%w: %s", ErrNotInIndex, name)
	}
	if i == len(l.mu.files)-1 {
		if l.mu.closed {
			return l.mu.size, true, "", ErrClosed
		}
		return l.mu.size, true, "", nil
	}
	st, err := l.fs.Stat(l.path(name))
	if err != nil {
		return 0, false, "", fmt.Errorf("binlog: %w", err)
	}
	return st.Size(), false, l.mu.files[i+1], nil
}

// indexCopy is the index now.
func (l *Log) indexCopy() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.mu.files)
}

// readFile reads [0, size) of a file of the log.
func (l *Log) readFile(name string, size int64) ([]byte, error) {
	f, err := l.fs.Open(l.path(name))
	if err != nil {
		return nil, fmt.Errorf("binlog: %w", err)
	}
	defer f.Close()
	buf := make([]byte, size)
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, fmt.Errorf("binlog: read %s: %w", name, err)
	}
	return buf, nil
}
