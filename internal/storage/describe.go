package storage

import (
	"fmt"
	"strings"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
)

// TxnSummary describes one transaction of a journal kept aside (quarantine
// reports, miraj-quarantine): its changes as text, how it ended.
type TxnSummary struct {
	LSN   journal.LSN // of its first frame
	Txn   uint64
	Ended string // "commit", "abort", or "unterminated"
	At    time.Time
	Rows  int // rows inserted, updated or deleted
	Ops   []string
}

// Describe turns journal frames (from journal.Scan or journal.ScanFrames)
// into transaction summaries, in the order their first frames appear.
type Describe struct {
	Txns []*TxnSummary
	open map[uint64]*TxnSummary
	err  error
}

// Frame takes one frame; it has journal.Scan's callback signature.
func (d *Describe) Frame(lsn journal.LSN, typ journal.FrameType, payload []byte) error {
	if d.open == nil {
		d.open = map[uint64]*TxnSummary{}
	}
	if typ.Ends() {
		txn, at, err := DecodeEnd(payload)
		if err != nil {
			return fmt.Errorf("frame at LSN %d: %w", lsn, err)
		}
		t := d.open[txn]
		if t == nil {
			t = &TxnSummary{LSN: lsn, Txn: txn}
			d.Txns = append(d.Txns, t)
		}
		delete(d.open, txn)
		t.Ended, t.At = "commit", at
		if typ == journal.FrameAbort {
			t.Ended = "abort"
		}
		return nil
	}
	op, err := DecodeOp(OpKind(typ), payload)
	if err != nil {
		return fmt.Errorf("frame at LSN %d: %w", lsn, err)
	}
	t := d.open[op.Txn]
	if t == nil {
		t = &TxnSummary{LSN: lsn, Txn: op.Txn, Ended: "unterminated"}
		d.open[op.Txn] = t
		d.Txns = append(d.Txns, t)
	}
	if op.Kind == OpInsert || op.Kind == OpUpdate || op.Kind == OpDelete {
		t.Rows++
	}
	t.Ops = append(t.Ops, op.String())
	return nil
}

// String renders a change in SQL-like text: rows as full images, in column
// order (the journal carries no column names).
func (op *Op) String() string {
	switch op.Kind {
	case OpInsert:
		return fmt.Sprintf("INSERT INTO `%s` VALUES %s", op.Table, rowText(op.Row.Values()))
	case OpUpdate:
		return fmt.Sprintf("UPDATE `%s`: %s -> %s", op.Table, rowText(op.Old.Values()), rowText(op.Row.Values()))
	case OpDelete:
		return fmt.Sprintf("DELETE FROM `%s`: %s", op.Table, rowText(op.Old.Values()))
	case OpCreateTable:
		return fmt.Sprintf("CREATE TABLE `%s` (%d columns)", op.Def.Name, op.Def.NumCols)
	case OpDropTable:
		return fmt.Sprintf("DROP TABLE `%s`", op.Table)
	case OpRenameTable:
		return fmt.Sprintf("RENAME TABLE `%s` TO `%s`", op.Table, op.NewName)
	case OpAlterTable, OpSetMeta, OpReindex:
		return fmt.Sprintf("ALTER TABLE `%s`", op.Table)
	case OpTruncate:
		return fmt.Sprintf("TRUNCATE TABLE `%s`", op.Table)
	case OpSetCounters:
		return fmt.Sprintf("-- counters of `%s`: next row %d, next AUTO_INCREMENT %d", op.Table, op.NextID, op.NextAuto)
	case OpPutObject:
		return fmt.Sprintf("-- %s `%s` defined", op.ObjKind, op.ObjName)
	case OpDeleteObject:
		return fmt.Sprintf("-- %s `%s` dropped", op.ObjKind, op.ObjName)
	case OpDatabase:
		return fmt.Sprintf("-- database identity %x", op.BaseID)
	case OpEpoch:
		return fmt.Sprintf("-- epoch %d begins (primary %s)", op.Mark.Epoch, op.Mark.Node)
	}
	return fmt.Sprintf("-- change of kind %d", op.Kind)
}

func rowText(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case nil:
			parts[i] = "NULL"
		case string:
			parts[i] = "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(x) + "'"
		case []byte:
			parts[i] = fmt.Sprintf("X'%x'", x)
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
