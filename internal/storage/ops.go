package storage

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
)

// OpKind is the kind of one change. Each kind is one journal frame type.
type OpKind uint8

const (
	OpInsert       OpKind = 10 // Table, Row (ID + full image)
	OpUpdate       OpKind = 11 // Table, Old (full image), Row (ID + full new image)
	OpDelete       OpKind = 12 // Table, Old (ID + full image)
	OpCreateTable  OpKind = 20 // Def, Counters
	OpDropTable    OpKind = 21 // Table
	OpRenameTable  OpKind = 22 // Table, NewName
	OpAlterTable   OpKind = 23 // Table, Def: replaces the definition and empties the rows; Insert ops follow
	OpTruncate     OpKind = 24 // Table
	OpSetCounters  OpKind = 25 // Table, Counters
	OpSetMeta      OpKind = 26 // Table, Def: same columns, keys and indexes; new Meta (constraints, comments)
	OpReindex      OpKind = 27 // Table, Def: same columns; other primary key or indexes, built from the rows there
	OpPutObject    OpKind = 30 // ObjKind, ObjName, Data
	OpDeleteObject OpKind = 31 // ObjKind, ObjName
	OpDatabase     OpKind = 40 // BaseID, Data: the database's identity and options, written when it is created
	OpEpoch        OpKind = 41 // Mark: a primary's epoch mark, written before its first write of the epoch
)

// changesDefs says whether an operation of the kind may change a catalog's
// definitions (Catalog.Defs): all but row changes, counters and epoch marks.
func (k OpKind) changesDefs() bool {
	switch k {
	case OpInsert, OpUpdate, OpDelete, OpSetCounters, OpEpoch:
		return false
	}
	return true
}

// writesRow says whether the kind inserts, updates or deletes one row.
func (k OpKind) writesRow() bool { return k == OpInsert || k == OpUpdate || k == OpDelete }

// adoptable says whether a commit may take the transaction's own version
// of the table an op of the kind changed instead of applying the op again
// (Tx.adoptable).
func (k OpKind) adoptable() bool { return k.writesRow() || k == OpReindex }

// Op is one change to a database: what a journal frame carries and what the
// apply function executes.
type Op struct {
	Kind OpKind
	// Txn is the transaction the change belongs to: frames of different
	// transactions may interleave in a journal, and a transaction's
	// changes take effect at its commit frame (0 in a checkpoint).
	Txn     uint64
	Table   string
	Row     *Row
	Old     *Row
	Def     *TableDef
	NewName string
	// Counters: next row number and next AUTO_INCREMENT value.
	NextID, NextAuto uint64
	ObjKind          string
	ObjName          string
	Data             []byte
	// BaseID is a database's identity: random, set at CREATE DATABASE, so
	// that a database dropped and created again under the same name is
	// another database to replication.
	BaseID []byte
	// Mark is an epoch mark (OpEpoch); Mark.LSN is the LSN of its own frame.
	Mark history.Mark
}

// Payload layouts (integers as uvarints, strings as length + bytes); every
// payload starts with the transaction id, then:
//
//	Insert      table, id, row
//	Update      table, id, old row, new row
//	Delete      table, id, old row
//	CreateTable def, next id, next auto
//	DropTable   table
//	RenameTable table, new name
//	AlterTable  table, def
//	SetMeta     table, def
//	Reindex     table, def
//	Truncate    table
//	SetCounters table, next id, next auto
//	PutObject   kind, name, data
//	DeleteObj.  kind, name
//	Database    base id, data
//	Epoch       epoch, node id, LSN of this frame
//
// def = name, meta bytes, column count, auto-increment column + 1 (0: none), pk count, pk columns..., index count,
// then per index: name, unique (0/1), column count, columns...
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendDef(b []byte, d *TableDef) []byte {
	b = appendString(b, d.Name)
	b = appendBytes(b, d.Meta)
	b = appendUvarint(b, uint64(d.NumCols))
	b = appendUvarint(b, uint64(d.AutoCol+1))
	b = appendInts(b, d.PK)
	b = appendUvarint(b, uint64(len(d.Indexes)))
	for _, ix := range d.Indexes {
		b = appendString(b, ix.Name)
		if ix.Unique {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = appendInts(b, ix.Cols)
	}
	return b
}

func appendInts(b []byte, xs []int) []byte {
	b = appendUvarint(b, uint64(len(xs)))
	for _, x := range xs {
		b = appendUvarint(b, uint64(x))
	}
	return b
}

func (d *decoder) ints() []int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("int list length")
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = int(d.uvarint())
	}
	return out
}

func (d *decoder) str() string { return string(d.bytes()) }

func (d *decoder) def() *TableDef {
	def := &TableDef{Name: d.str(), Meta: append([]byte(nil), d.bytes()...), NumCols: int(d.uvarint())}
	def.AutoCol = int(d.uvarint()) - 1
	def.PK = d.ints()
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("index count")
		return def
	}
	for i := uint64(0); i < n; i++ {
		ix := IndexDef{Name: d.str(), Unique: d.byte1() == 1, Cols: d.ints()}
		def.Indexes = append(def.Indexes, ix)
	}
	return def
}

// AppendOp encodes op as one journal frame appended to buf.
func AppendOp(buf []byte, op *Op) []byte {
	buf, at := journal.BeginFrame(buf)
	buf = encodeOp(binary.AppendUvarint(buf, op.Txn), op)
	return journal.EndFrame(buf, at, journal.FrameType(op.Kind))
}

// sizeHint is about the bytes AppendOp appends for op: at least them for a
// row change of compact rows.
func (op *Op) sizeHint() int {
	n := journal.HeaderBytes + 3*binary.MaxVarintLen64 + len(op.Table)
	for _, r := range [2]*Row{op.Row, op.Old} {
		if r == nil {
			continue
		}
		if s, _, ok := r.compactVals(); ok {
			n += len(s) + 2*binary.MaxVarintLen64
		} else {
			n += 256
		}
	}
	return n
}

// AppendEnd appends the frame that ends transaction txn: journal.FrameCommit
// or journal.FrameAbort, with the time it ended (Unix microseconds; shown
// by quarantine reports):
//
//	payload = txn id (uvarint), end time in µs since 1970 (uvarint)
func AppendEnd(buf []byte, typ journal.FrameType, txn uint64, at time.Time) []byte {
	if !typ.Ends() {
		panic(fmt.Sprintf("storage: AppendEnd of frame type %d", typ))
	}
	var p [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(p[:], txn)
	n += binary.PutUvarint(p[n:], uint64(max(at.UnixMicro(), 0)))
	return journal.AppendFrame(buf, typ, p[:n])
}

// DecodeEnd returns the transaction id and end time carried by a commit or
// abort frame (zero for the empty payload of a checkpoint's end).
func DecodeEnd(payload []byte) (txn uint64, at time.Time, err error) {
	if len(payload) == 0 {
		return 0, time.Time{}, nil
	}
	d := &decoder{b: payload}
	txn, us := d.uvarint(), d.uvarint()
	if d.err != nil || len(d.b) != 0 {
		return 0, time.Time{}, fmt.Errorf("%w: transaction end of %d bytes", ErrDecode, len(payload))
	}
	return txn, time.UnixMicro(int64(us)).UTC(), nil
}

func encodeOp(b []byte, op *Op) []byte {
	switch op.Kind {
	case OpInsert:
		b = appendString(b, op.Table)
		b = appendUvarint(b, op.Row.ID)
		b = appendRowOf(b, op.Row)
	case OpUpdate:
		b = appendString(b, op.Table)
		b = appendUvarint(b, op.Row.ID)
		b = appendRowOf(b, op.Old)
		b = appendRowOf(b, op.Row)
	case OpDelete:
		b = appendString(b, op.Table)
		b = appendUvarint(b, op.Old.ID)
		b = appendRowOf(b, op.Old)
	case OpCreateTable:
		b = appendDef(b, op.Def)
		b = appendUvarint(b, op.NextID)
		b = appendUvarint(b, op.NextAuto)
	case OpDropTable, OpTruncate:
		b = appendString(b, op.Table)
	case OpRenameTable:
		b = appendString(b, op.Table)
		b = appendString(b, op.NewName)
	case OpAlterTable, OpSetMeta, OpReindex:
		b = appendString(b, op.Table)
		b = appendDef(b, op.Def)
	case OpSetCounters:
		b = appendString(b, op.Table)
		b = appendUvarint(b, op.NextID)
		b = appendUvarint(b, op.NextAuto)
	case OpPutObject:
		b = appendString(b, op.ObjKind)
		b = appendString(b, op.ObjName)
		b = appendBytes(b, op.Data)
	case OpDeleteObject:
		b = appendString(b, op.ObjKind)
		b = appendString(b, op.ObjName)
	case OpDatabase:
		b = appendBytes(b, op.BaseID)
		b = appendBytes(b, op.Data)
	case OpEpoch:
		b = appendUvarint(b, uint64(op.Mark.Epoch))
		b = appendString(b, op.Mark.Node)
		b = appendUvarint(b, uint64(op.Mark.LSN))
	default:
		panic(fmt.Sprintf("storage: encode of unknown op kind %d", op.Kind))
	}
	return b
}

// DecodeOp decodes the payload of a frame of type kind.
func DecodeOp(kind OpKind, payload []byte) (*Op, error) {
	d := &decoder{b: payload}
	op := &Op{Kind: kind, Txn: d.uvarint()}
	switch kind {
	case OpInsert:
		op.Table = d.str()
		op.Row = d.storedRow(d.uvarint())
	case OpUpdate:
		op.Table = d.str()
		id := d.uvarint()
		op.Old = d.storedRow(id)
		op.Row = d.storedRow(id)
	case OpDelete:
		op.Table = d.str()
		op.Old = d.storedRow(d.uvarint())
	case OpCreateTable:
		op.Def = d.def()
		op.NextID = d.uvarint()
		op.NextAuto = d.uvarint()
	case OpDropTable, OpTruncate:
		op.Table = d.str()
	case OpRenameTable:
		op.Table = d.str()
		op.NewName = d.str()
	case OpAlterTable, OpSetMeta, OpReindex:
		op.Table = d.str()
		op.Def = d.def()
	case OpSetCounters:
		op.Table = d.str()
		op.NextID = d.uvarint()
		op.NextAuto = d.uvarint()
	case OpPutObject:
		op.ObjKind = d.str()
		op.ObjName = d.str()
		op.Data = append([]byte(nil), d.bytes()...)
	case OpDeleteObject:
		op.ObjKind = d.str()
		op.ObjName = d.str()
	case OpDatabase:
		op.BaseID = append([]byte(nil), d.bytes()...)
		op.Data = append([]byte(nil), d.bytes()...)
	case OpEpoch:
		op.Mark.Epoch = epoch.Epoch(d.uvarint())
		op.Mark.Node = d.str()
		op.Mark.LSN = journal.LSN(d.uvarint())
	default:
		return nil, fmt.Errorf("%w: unknown frame type %d", ErrDecode, kind)
	}
	if d.err != nil {
		return nil, fmt.Errorf("op kind %d: %w", kind, d.err)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: op kind %d: %d trailing bytes", ErrDecode, kind, len(d.b))
	}
	return op, nil
}
