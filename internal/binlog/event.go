package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Event layout (MariaDB's binary log, version 4):
//
//	header (19 bytes):
//	  [timestamp:4 LE] [type:1] [server id:4 LE] [event size:4 LE]
//	  [next position:4 LE] [flags:2 LE]
//	body:   type-specific (post-header, then payload)
//	footer: [CRC32:4 LE] of header and body, when the file's
//	        Format_description says CRC32
//
// A file starts with the 4-byte magic fe 'b' 'i' 'n'. The event's next
// position is the offset in its file just past it; events sent outside a
// file (a fake Rotate, a heartbeat) carry 0 or the current position.

// EventType is an event's type byte.
type EventType byte

// The event types Miraj writes or sends.
const (
	QueryEvent             EventType = 2
	StopEvent              EventType = 3
	RotateEvent            EventType = 4
	FormatDescriptionEvent EventType = 15
	XIDEvent               EventType = 16
	TableMapEvent          EventType = 19
	WriteRowsEventV1       EventType = 23
	UpdateRowsEventV1      EventType = 24
	DeleteRowsEventV1      EventType = 25
	HeartbeatEvent         EventType = 27
	BinlogCheckpointEvent  EventType = 161
	GTIDEvent              EventType = 162
	GTIDListEvent          EventType = 163
)

// Names as SHOW BINLOG EVENTS shows them (MariaDB's).
var eventNames = map[EventType]string{
	QueryEvent: "Query", StopEvent: "Stop", RotateEvent: "Rotate",
	FormatDescriptionEvent: "Format_desc", XIDEvent: "Xid", TableMapEvent: "Table_map",
	WriteRowsEventV1: "Write_rows_v1", UpdateRowsEventV1: "Update_rows_v1",
	DeleteRowsEventV1: "Delete_rows_v1", HeartbeatEvent: "Heartbeat",
	BinlogCheckpointEvent: "Binlog_checkpoint", GTIDEvent: "Gtid", GTIDListEvent: "Gtid_list",
}

func (t EventType) String() string {
	if n, ok := eventNames[t]; ok {
		return n
	}
	return fmt.Sprintf("Unknown(%d)", byte(t))
}

// Header flags.
const (
	flagBinlogInUse  uint16 = 0x0001 // LOG_EVENT_BINLOG_IN_USE_F: Format_description of a file still open
	flagSuppressUse  uint16 = 0x0008 // LOG_EVENT_SUPPRESS_USE_F: a Query whose database is in the statement
	flagArtificial   uint16 = 0x0020 // LOG_EVENT_ARTIFICIAL_F: a fake Rotate or Gtid_list sent by the dump
	rowsFlagStmtEnd  uint16 = 0x0001 // STMT_END_F on the last rows event of a statement
	tableMapFlagNone uint16 = 0x0001 // what MariaDB writes in a Table_map's flags (TM_BIT_LEN_EXACT_F)
)

const (
	// HeaderSize is the size of every event's common header.
	HeaderSize = 19
	// ChecksumSize is the size of the CRC32 footer.
	ChecksumSize = 4
	// serverVersionSize is the fixed field of Format_description.
	serverVersionSize = 50
	// ServerVersion is what Format_description announces: a MariaDB 10.x
	// version so that MariaDB's tools and replicas read the file as one of
	// theirs (the 10.4 tools refuse one not starting with 5 or 10).
	ServerVersion = "10.4.32-MIRAJ-log"
	// MaxEventSize bounds one event: a larger row is refused at commit
	// rather than written as an event no replica can read
	// (MariaDB's max_allowed_packet ceiling is 1 GiB).
	MaxEventSize = 1 << 30
)

// Magic is the first four bytes of every binary log file.
var Magic = []byte{0xfe, 'b', 'i', 'n'}

// postHeaderLengths is the table of post-header sizes by event type
// (index type-1) that mariadbd 10.11.19 writes in its Format_description,
// copied from a file it wrote; replicas size each event's post-header
// from it.
var postHeaderLengths = []byte{
	56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0, 228, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0, 0, 10, 10, 10,
	0, 0, 0, 0, 0, 0, 10, 10, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	4, 19, 4, 0, 13, 8, 8, 8, 10, 10, 10,
}

// Checksum algorithms of Format_description.
const (
	ChecksumOff   byte = 0
	ChecksumCRC32 byte = 1
)

// ErrCorrupt marks an event that cannot be read: a bad size or checksum.
var ErrCorrupt = errors.New("binlog: corrupt event")

// Header is an event's common header.
type Header struct {
	Timestamp uint32
	Type      EventType
	ServerID  uint32
	Size      uint32 // the whole event, header and footer included
	NextPos   uint32
	Flags     uint16
}

// ParseHeader reads the header at the start of ev.
func ParseHeader(ev []byte) (Header, error) {
	if len(ev) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes, less than a header", ErrCorrupt, len(ev))
	}
	return Header{
		Timestamp: binary.LittleEndian.Uint32(ev[0:]),
		Type:      EventType(ev[4]),
		ServerID:  binary.LittleEndian.Uint32(ev[5:]),
		Size:      binary.LittleEndian.Uint32(ev[9:]),
		NextPos:   binary.LittleEndian.Uint32(ev[13:]),
		Flags:     binary.LittleEndian.Uint16(ev[17:]),
	}, nil
}

// eventWriter appends events to a buffer, each with its header and, when
// crc, its checksum. pos is the file offset of buf[0].
type eventWriter struct {
	buf      []byte
	pos      uint32
	crc      bool
	serverID uint32
	ts       uint32
}

// begin starts an event of type t: it appends the header with the size
// and next position left for end, and returns the event's start in buf.
func (w *eventWriter) begin(t EventType, flags uint16) int {
	start := len(w.buf)
	var h [HeaderSize]byte
	binary.LittleEndian.PutUint32(h[0:], w.ts)
	h[4] = byte(t)
	binary.LittleEndian.PutUint32(h[5:], w.serverID)
	binary.LittleEndian.PutUint16(h[17:], flags)
	w.buf = append(w.buf, h[:]...)
	return start
}

// end completes the event started at start: size, next position and
// checksum.
func (w *eventWriter) end(start int) {
	size := len(w.buf) - start
	if w.crc || EventType(w.buf[start+4]) == FormatDescriptionEvent {
		size += ChecksumSize
	}
	if size > MaxEventSize {
		panic(fmt.Sprintf("binlog: event of %d bytes past the %d limit", size, MaxEventSize))
	}
	ev := w.buf[start:]
	binary.LittleEndian.PutUint32(ev[9:], uint32(size))
	next := w.pos + uint32(len(w.buf)) + uint32(size-len(ev))
	binary.LittleEndian.PutUint32(ev[13:], next)
	if size > len(ev) {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, eventCRC(w.buf[start:]))
	}
}

// eventCRC is the checksum of an event without its footer. The in-use
// flag of a Format_description is left out, as MariaDB does, so that
// clearing it when the file is closed keeps the sum right.
func eventCRC(ev []byte) uint32 {
	if EventType(ev[4]) == FormatDescriptionEvent && ev[17]&byte(flagBinlogInUse) != 0 {
		h := crc32.NewIEEE()
		var hd [HeaderSize]byte
		copy(hd[:], ev[:HeaderSize])
		hd[17] &^= byte(flagBinlogInUse)
		h.Write(hd[:])
		h.Write(ev[HeaderSize:])
		return h.Sum32()
	}
	return crc32.ChecksumIEEE(ev)
}

// VerifyChecksum checks the CRC32 footer of a whole event.
func VerifyChecksum(ev []byte) error {
	if len(ev) < HeaderSize+ChecksumSize {
		return fmt.Errorf("%w: %d bytes", ErrCorrupt, len(ev))
	}
	n := len(ev) - ChecksumSize
	if got, want := binary.LittleEndian.Uint32(ev[n:]), eventCRC(ev[:n]); got != want {
		return fmt.Errorf("%w: checksum %08x, computed %08x", ErrCorrupt, got, want)
	}
	return nil
}

// formatDescription appends the Format_description event.
//
//	[binlog version:2 = 4] [server version:50, zero padded]
//	[create timestamp:4] [header length:1 = 19] [post-header lengths]
//	[checksum algorithm:1] [CRC32:4, always present]
func (w *eventWriter) formatDescription(checksum byte, inUse bool) {
	var flags uint16
	if inUse {
		flags = flagBinlogInUse
	}
	s := w.begin(FormatDescriptionEvent, flags)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, 4)
	var ver [serverVersionSize]byte
	copy(ver[:], ServerVersion)
	w.buf = append(w.buf, ver[:]...)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, w.ts)
	w.buf = append(w.buf, HeaderSize)
	w.buf = append(w.buf, postHeaderLengths...)
	w.buf = append(w.buf, checksum)
	w.end(s)
}

// gtidList appends a Gtid_list: the last GTID of each domain and server
// before this point.
//
//	[count:4, low 28 bits] then count × [domain:4] [server:4] [seq:8]
func (w *eventWriter) gtidList(list []GTID, flags uint16) {
	s := w.begin(GTIDListEvent, flags)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(len(list)))
	for _, g := range list {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, g.Domain)
		w.buf = binary.LittleEndian.AppendUint32(w.buf, g.Server)
		w.buf = binary.LittleEndian.AppendUint64(w.buf, g.Seq)
	}
	w.end(s)
}

// binlogCheckpoint appends a Binlog_checkpoint naming file.
//
//	[name length:4] [name]
func (w *eventWriter) binlogCheckpoint(file string) {
	s := w.begin(BinlogCheckpointEvent, 0)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(len(file)))
	w.buf = append(w.buf, file...)
	w.end(s)
}

// GTID event flags2 (MariaDB's Gtid_log_event).
const (
	gtidStandalone    = 0x01 // FL_STANDALONE: no BEGIN, a single DDL or statement
	gtidTransactional = 0x04 // FL_TRANSACTIONAL
	gtidAllowParallel = 0x08 // FL_ALLOW_PARALLEL
	gtidDDL           = 0x20 // FL_DDL
)

// gtid appends a Gtid event.
//
//	[seq:8] [domain:4] [flags2:1] [unused:6]
func (w *eventWriter) gtid(g GTID, flags2 byte) {
	s := w.begin(GTIDEvent, flagSuppressUse)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, g.Seq)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, g.Domain)
	w.buf = append(w.buf, flags2, 0, 0, 0, 0, 0, 0)
	w.end(s)
}

// Query status variables written (MariaDB's Q_* codes).
const (
	qFlags2Code   = 0
	qSQLModeCode  = 1
	qCatalogNZ    = 6
	qCharsetCode  = 4
	charsetUTF8MB = 45 // utf8mb4_general_ci
)

// query appends a Query event.
//
//	[thread id:4] [exec time:4] [db length:1] [error code:2]
//	[status vars length:2] [status vars] [db] [00] [statement]
func (w *eventWriter) query(threadID uint32, db, stmt string, sqlMode uint64) {
	flags := uint16(0)
	if db == "" {
		flags = flagSuppressUse
	}
	s := w.begin(QueryEvent, flags)
	if len(db) > 255 {
		panic(fmt.Sprintf("binlog: database name of %d bytes", len(db)))
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, threadID)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, 0)
	w.buf = append(w.buf, byte(len(db)))
	w.buf = binary.LittleEndian.AppendUint16(w.buf, 0)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, 5+9+5+7)
	w.buf = append(w.buf, qFlags2Code, 0, 0, 0, 0)
	w.buf = append(w.buf, qSQLModeCode)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, sqlMode)
	w.buf = append(w.buf, qCatalogNZ, 3, 's', 't', 'd')
	w.buf = append(w.buf, qCharsetCode)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, charsetUTF8MB)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, charsetUTF8MB)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, charsetUTF8MB)
	w.buf = append(w.buf, db...)
	w.buf = append(w.buf, 0)
	w.buf = append(w.buf, stmt...)
	w.end(s)
}

// xid appends an Xid: [xid:8].
func (w *eventWriter) xid(id uint64) {
	s := w.begin(XIDEvent, 0)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, id)
	w.end(s)
}

// rotate appends a Rotate to file at pos: [position:8] [file name].
func (w *eventWriter) rotate(file string, pos uint64, flags uint16) {
	s := w.begin(RotateEvent, flags)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, pos)
	w.buf = append(w.buf, file...)
	w.end(s)
}

// heartbeat appends a Heartbeat naming the current file: [file name].
func (w *eventWriter) heartbeat(file string) {
	s := w.begin(HeartbeatEvent, flagArtificial)
	w.buf = append(w.buf, file...)
	w.end(s)
}

// stop appends a Stop event (a clean shutdown), with no body.
func (w *eventWriter) stop() {
	w.end(w.begin(StopEvent, 0))
}

// appendLenEnc appends a length-encoded integer.
func appendLenEnc(b []byte, v uint64) []byte {
	switch {
	case v < 251:
		return append(b, byte(v))
	case v < 1<<16:
		return binary.LittleEndian.AppendUint16(append(b, 0xfc), uint16(v))
	case v < 1<<24:
		return append(b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), v)
}
