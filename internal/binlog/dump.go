package binlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/miraj-db/miraj/internal/vfs"
)

// fileReader reads a file of the log event by event, never past what the
// log has written whole (Log.readable). No buffering: bytes read are
// final, and the next read starts where the last event ended.
type fileReader struct {
	l    *Log
	name string
	f    vfs.File
	off  int64
	crc  bool
	hdr  [HeaderSize]byte
}

func (l *Log) openReader(name string) (*fileReader, error) {
	name = canonical(name)
	if _, _, _, err := l.readable(name); err != nil && !errors.Is(err, ErrClosed) {
		return nil, err
	}
	f, err := l.fs.Open(l.path(name))
	if err != nil {
		return nil, fmt.Errorf("binlog: open %s: %w", name, err)
	}
	var m [4]byte
	if _, err := io.ReadFull(f, m[:]); err != nil || !bytes.Equal(m[:], Magic) {
		f.Close()
		return nil, fmt.Errorf("%w: %s has no binary log magic", ErrCorrupt, name)
	}
	return &fileReader{l: l, name: name, f: f, off: int64(len(Magic))}, nil
}

func (r *fileReader) Close() { r.f.Close() }

// next returns the next whole event, or nil when the file has no more
// now; more tells whether it may grow (it is the active file). next names
// the file after this one once this one is complete.
func (r *fileReader) next() (ev []byte, more bool, nextFile string, err error) {
	size, active, nextFile, err := r.l.readable(r.name)
	if err != nil && !(errors.Is(err, ErrClosed) && active) {
		return nil, false, "", err
	}
	if r.off+HeaderSize > size {
		return nil, active && err == nil, nextFile, nil
	}
	if _, err := io.ReadFull(r.f, r.hdr[:]); err != nil {
		return nil, false, "", fmt.Errorf("binlog: read %s at %d: %w", r.name, r.off, err)
	}
	h, _ := ParseHeader(r.hdr[:])
	if h.Size < HeaderSize || r.off+int64(h.Size) > size {
		return nil, false, "", fmt.Errorf("%w: %s: event at %d of %d bytes past the end %d", ErrCorrupt, r.name, r.off, h.Size, size)
	}
	ev = make([]byte, h.Size)
	copy(ev, r.hdr[:])
	if _, err := io.ReadFull(r.f, ev[HeaderSize:]); err != nil {
		return nil, false, "", fmt.Errorf("binlog: read %s at %d: %w", r.name, r.off, err)
	}
	if h.Type == FormatDescriptionEvent {
		r.crc = fdeChecksum(ev) == ChecksumCRC32
	}
	r.off += int64(h.Size)
	return ev, active, nextFile, nil
}

// DumpRequest is a replica's request for the stream (COM_BINLOG_DUMP).
type DumpRequest struct {
	// UseGTID: start after GTID (the replica's @slave_connect_state);
	// else at File and Pos (File empty: the first file of the index).
	UseGTID bool
	GTID    Position
	File    string
	Pos     int64
	// ChecksumAware: the replica set @master_binlog_checksum, and reads
	// CRC32 footers; else they are removed.
	ChecksumAware bool
	// Heartbeat is the period of heartbeats while no event is sent (0:
	// none).
	Heartbeat time.Duration
}

// Dump sends the log to a replica from the request's start, event by
// event, each as it is in the file (less its footer for a replica that
// does not read them): a fake Rotate naming the first file, then each
// file's events from its Format_description, rotations followed, new
// groups awaited, heartbeats when idle. It returns when ctx ends, send
// fails, the log closes or EndDumps is called. Errors wrapping ErrGTIDNotFound or
// ErrNotInIndex are for 1236.
func (l *Log) Dump(ctx context.Context, req DumpRequest, send func(ev []byte) error) error {
	select {
	case <-l.dumpsEnd:
		return nil
	default:
	}
	file, pos := canonical(req.File), req.Pos
	if req.UseGTID {
		f, err := l.gtidStart(req.GTID)
		if err != nil {
			return err
		}
		file, pos = f, int64(len(Magic))
	} else {
		idx := l.indexCopy()
		if file == "" && len(idx) > 0 {
			file = idx[0]
		}
		if pos < int64(len(Magic)) {
			pos = int64(len(Magic))
		}
	}
	if _, _, _, err := l.readable(file); err != nil {
		return fmt.Errorf("%w: could not find first log file name in binary log index file (%s)", ErrNotInIndex, file)
	}
	// The fake Rotate has a footer as the log's events do.
	l.mu.Lock()
	d := &dumper{l: l, req: req, send: send, serverID: l.mu.serverID, crc: l.mu.crc}
	l.mu.Unlock()
	if err := d.emit(d.fake(func(w *eventWriter) { w.rotate(file, uint64(pos), flagArtificial) }), true); err != nil {
		return err
	}
	for {
		next, err := d.file(ctx, file, pos)
		if err != nil || next == "" {
			return err
		}
		file, pos = next, int64(len(Magic))
	}
}

type dumper struct {
	l        *Log
	req      DumpRequest
	send     func([]byte) error
	serverID uint32
	crc      bool // the current file has footers
	skipping bool // inside a group the replica already has
}

// fake builds an event sent outside a file (timestamp 0, position 0).
func (d *dumper) fake(write func(w *eventWriter)) []byte {
	w := &eventWriter{crc: d.crc, serverID: d.serverID}
	write(w)
	binary.LittleEndian.PutUint32(w.buf[13:], 0)
	if w.crc {
		binary.LittleEndian.PutUint32(w.buf[len(w.buf)-ChecksumSize:], eventCRC(w.buf[:len(w.buf)-ChecksumSize]))
	}
	return w.buf
}

// emit sends an event, its footer kept or removed as the replica asks.
func (d *dumper) emit(ev []byte, hasCRC bool) error {
	if hasCRC && !d.req.ChecksumAware {
		ev = ev[:len(ev)-ChecksumSize]
		binary.LittleEndian.PutUint32(ev[9:], uint32(len(ev)))
	}
	return d.send(ev)
}

// file sends one file from pos and returns the next file's name ("" when
// the log closed).
func (d *dumper) file(ctx context.Context, name string, pos int64) (string, error) {
	r, err := d.l.openReader(name)
	if err != nil {
		return "", err
	}
	defer r.Close()
	fde, _, _, err := r.next()
	if err != nil {
		return "", err
	}
	if fde == nil || EventType(fde[4]) != FormatDescriptionEvent {
		return "", fmt.Errorf("%w: %s does not start with a Format_description", ErrCorrupt, name)
	}
	d.crc = r.crc
	fde = bytes.Clone(fde)
	if pos > int64(len(Magic)) {
		// Sent for its layout only: the replica keeps its position.
		binary.LittleEndian.PutUint32(fde[13:], 0)
	}
	if !d.req.ChecksumAware {
		fde[len(fde)-ChecksumSize-1] = ChecksumOff
	}
	binary.LittleEndian.PutUint32(fde[len(fde)-ChecksumSize:], eventCRC(fde[:len(fde)-ChecksumSize]))
	if err := d.send(fde); err != nil {
		return "", err
	}
	// Up to pos: events the replica has.
	for r.off < pos {
		ev, _, _, err := r.next()
		if err != nil {
			return "", err
		}
		if ev == nil {
			return "", fmt.Errorf("%w: %s has no event at %d", ErrBadPosition, name, pos)
		}
	}
	if pos > int64(len(Magic)) && r.off != pos {
		return "", fmt.Errorf("%w: %s: %d", ErrBadPosition, name, pos)
	}
	var beat <-chan time.Time
	var ticker *time.Ticker
	if d.req.Heartbeat > 0 {
		ticker = time.NewTicker(d.req.Heartbeat)
		defer ticker.Stop()
		beat = ticker.C
	}
	for {
		changed := d.l.Changed()
		ev, more, next, err := r.next()
		if err != nil {
			if errors.Is(err, ErrClosed) {
				return "", nil
			}
			return "", err
		}
		if ev != nil {
			rot, err := d.event(ev)
			if err != nil {
				return "", err
			}
			if ticker != nil {
				ticker.Reset(d.req.Heartbeat)
			}
			if rot != "" {
				return rot, nil
			}
			continue
		}
		if !more {
			if next == "" {
				return "", nil // closed
			}
			// A file closed without a Rotate (a restart): the replica
			// is told of the next one.
			if err := d.emit(d.fake(func(w *eventWriter) { w.rotate(next, uint64(len(Magic)), flagArtificial) }), d.crc); err != nil {
				return "", err
			}
			return next, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-d.l.dumpsEnd:
			return "", nil
		case <-changed:
		case <-beat:
			hb := d.fake(func(w *eventWriter) { w.heartbeat(name) })
			binary.LittleEndian.PutUint32(hb[13:], uint32(r.off))
			if d.crc {
				binary.LittleEndian.PutUint32(hb[len(hb)-ChecksumSize:], eventCRC(hb[:len(hb)-ChecksumSize]))
			}
			if err := d.emit(hb, d.crc); err != nil {
				return "", err
			}
		}
	}
}

// event sends one event of a file, unless it belongs to a group the
// replica already has; a Rotate's next file is returned.
func (d *dumper) event(ev []byte) (string, error) {
	t := EventType(ev[4])
	body := eventBody(ev, d.crc)
	switch t {
	case GTIDEvent:
		d.skipping = false
		if d.req.UseGTID {
			g, _ := parseGTIDEvent(body, binary.LittleEndian.Uint32(ev[5:]))
			if want, ok := d.req.GTID[g.Domain]; ok && g.Seq <= want.Seq {
				d.skipping = true
			}
		}
	case FormatDescriptionEvent, GTIDListEvent, BinlogCheckpointEvent, RotateEvent, StopEvent:
		d.skipping = false
	}
	if d.skipping {
		return "", nil
	}
	if err := d.emit(ev, d.crc); err != nil {
		return "", err
	}
	if t == RotateEvent && len(body) > 8 {
		return string(body[8:]), nil
	}
	return "", nil
}

// gtidStart is the file to read from for a replica at pos: the newest
// whose head state the replica has reached in every domain.
func (l *Log) gtidStart(pos Position) (string, error) {
	st := l.State()
	cur := st.Pos()
	for d, want := range pos {
		if have, ok := cur[d]; ok && want.Seq > st.NextSeq(d)-1 {
			return "", fmt.Errorf("%w: the replica's GTID %s is past the log's %s in domain %d", ErrGTIDNotFound, want, have, d)
		}
	}
	idx := l.indexCopy()
	for i := len(idx) - 1; i >= 0; i-- {
		head, err := l.head(idx[i])
		if err != nil {
			return "", err
		}
		if reached(head, pos) {
			return idx[i], nil
		}
	}
	return "", fmt.Errorf("%w: could not find GTID state requested by slave in any binlog files; probably the slave state (%s) is too old and required binlog files have been purged", ErrGTIDNotFound, pos)
}

// reached reports whether a replica at pos has every group before a file
// whose Gtid_list is head.
func reached(head []GTID, pos Position) bool {
	last := map[uint32]uint64{}
	for _, g := range head {
		last[g.Domain] = g.Seq
	}
	for d, seq := range last {
		want, ok := pos[d]
		if !ok || want.Seq < seq {
			return false
		}
	}
	return true
}

// head reads a file's Gtid_list: the GTID state when it was opened.
func (l *Log) head(name string) ([]GTID, error) {
	r, err := l.openReader(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for range 3 {
		ev, _, _, err := r.next()
		if err != nil {
			return nil, err
		}
		if ev == nil {
			break
		}
		if EventType(ev[4]) == GTIDListEvent {
			return parseGTIDList(eventBody(ev, r.crc)), nil
		}
	}
	return nil, fmt.Errorf("%w: %s has no Gtid_list", ErrCorrupt, name)
}

// EventInfo is one event as SHOW BINLOG EVENTS lists it.
type EventInfo struct {
	File     string
	Pos      int64
	Type     EventType
	ServerID uint32
	EndPos   int64
	Info     string
}

// Events lists the events of file from pos (the start of an event, else
// ErrBadPosition), skipping offset and returning at most limit (<0: all).
func (l *Log) Events(file string, pos int64, offset, limit int) ([]EventInfo, error) {
	file = canonical(file)
	if file == "" {
		if idx := l.indexCopy(); len(idx) > 0 {
			file = idx[0]
		}
	}
	r, err := l.openReader(file)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if pos < int64(len(Magic)) {
		pos = int64(len(Magic))
	}
	var out []EventInfo
	var tables = map[uint64]string{}
	for limit < 0 || len(out) < limit {
		start := r.off
		ev, _, _, err := r.next()
		if err != nil && !errors.Is(err, ErrClosed) {
			return nil, err
		}
		if ev == nil {
			break
		}
		if start < pos {
			if r.off > pos {
				return nil, fmt.Errorf("%w: %s: %d", ErrBadPosition, file, pos)
			}
			if EventType(ev[4]) == TableMapEvent {
				describe(ev, r.crc, tables)
			}
			continue
		}
		h, _ := ParseHeader(ev)
		info := describe(ev, r.crc, tables)
		if offset > 0 {
			offset--
			continue
		}
		out = append(out, EventInfo{File: file, Pos: start, Type: h.Type, ServerID: h.ServerID, EndPos: int64(h.NextPos), Info: info})
	}
	if pos > int64(len(Magic)) && r.off < pos {
		return nil, fmt.Errorf("%w: %s: %d", ErrBadPosition, file, pos)
	}
	return out, nil
}

// describe is an event's Info column (MariaDB's wording).
func describe(ev []byte, crc bool, tables map[uint64]string) string {
	t := EventType(ev[4])
	body := eventBody(ev, crc || t == FormatDescriptionEvent)
	switch t {
	case FormatDescriptionEvent:
		v := body[2 : 2+serverVersionSize]
		if i := bytes.IndexByte(v, 0); i >= 0 {
			v = v[:i]
		}
		return fmt.Sprintf("Server ver: %s, Binlog ver: %d", v, binary.LittleEndian.Uint16(body))
	case GTIDListEvent:
		gs := parseGTIDList(body)
		s := make([]string, len(gs))
		for i, g := range gs {
			s[i] = g.String()
		}
		return "[" + joinComma(s) + "]"
	case BinlogCheckpointEvent:
		return string(body[4:])
	case GTIDEvent:
		g, flags := parseGTIDEvent(body, binary.LittleEndian.Uint32(ev[5:]))
		if flags&gtidStandalone != 0 {
			return "GTID " + g.String()
		}
		return "BEGIN GTID " + g.String()
	case QueryEvent:
		dbLen := int(body[8])
		varsLen := int(binary.LittleEndian.Uint16(body[11:]))
		stmt := body[13+varsLen+dbLen+1:]
		if dbLen > 0 {
			return fmt.Sprintf("use `%s`; %s", body[13+varsLen:13+varsLen+dbLen], stmt)
		}
		return string(stmt)
	case TableMapEvent:
		id := leUint48(body)
		dbLen := int(body[8])
		db := string(body[9 : 9+dbLen])
		nameLen := int(body[9+dbLen+1])
		name := string(body[9+dbLen+2 : 9+dbLen+2+nameLen])
		tables[id] = db + "." + name
		return fmt.Sprintf("table_id: %d (%s)", id, tables[id])
	case WriteRowsEventV1, UpdateRowsEventV1, DeleteRowsEventV1:
		s := fmt.Sprintf("table_id: %d", leUint48(body))
		if binary.LittleEndian.Uint16(body[6:])&rowsFlagStmtEnd != 0 {
			s += " flags: STMT_END_F"
		}
		return s
	case XIDEvent:
		return fmt.Sprintf("COMMIT /* xid=%d */", binary.LittleEndian.Uint64(body))
	case RotateEvent:
		return fmt.Sprintf("%s;pos=%d", body[8:], binary.LittleEndian.Uint64(body))
	}
	return ""
}

func leUint48(b []byte) uint64 {
	return uint64(leUint32(b)) | uint64(b[4])<<32 | uint64(b[5])<<40
}

func joinComma(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(x)
	}
	return b.String()
}

// GTIDPosAt is the GTID position at an offset of a file: its head state
// and the groups before the offset (BINLOG_GTID_POS).
func (l *Log) GTIDPosAt(file string, pos int64) (Position, error) {
	r, err := l.openReader(file)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var st State
	for r.off < pos {
		ev, _, _, err := r.next()
		if err != nil && !errors.Is(err, ErrClosed) {
			return nil, err
		}
		if ev == nil {
			break
		}
		t := EventType(ev[4])
		body := eventBody(ev, r.crc || t == FormatDescriptionEvent)
		switch t {
		case GTIDListEvent:
			st = stateOf(parseGTIDList(body))
		case GTIDEvent:
			g, _ := parseGTIDEvent(body, binary.LittleEndian.Uint32(ev[5:]))
			st.Record(g) // a group counts once its Gtid is passed
		}
	}
	if r.off != pos && pos > int64(len(Magic)) {
		return nil, fmt.Errorf("%w: %s: %d", ErrBadPosition, file, pos)
	}
	return st.Pos(), nil
}
