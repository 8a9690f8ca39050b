package sqlserver

import (
	"bytes"
	"errors"
	"reflect"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/storage"
)

// A REPLACE whose row is already there, value for value, counts one row
// affected, as in MySQL and MariaDB (the row is the same: nothing was
// deleted); go-mysql-server counted two, a row deleted and one inserted,
// for every row REPLACE met as a duplicate. The table's inserter notes
// each duplicate that equals the row being written (noteSameRow); the
// REPLACE's OK takes them off its count (countSameReplaced).

// noteSameRow counts, for the session's statement, a duplicate err of
// row that holds the same values as row.
func noteSameRow(s *Session, row []any, err error) {
	var dup *storage.DuplicateError
	if !errors.As(err, &dup) {
		return
	}
	existing := dup.Existing.Values()
	if len(existing) != len(row) {
		return
	}
	for i := range row {
		if !sameValue(row[i], existing[i]) {
			return
		}
	}
	s.ins.sameReplaced++
}

// sameValue reports whether two stored values are the same value (the
// same bytes for strings: 'a' and 'A' are different rows to MySQL's
// REPLACE even where a collation compares them equal).
func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case string:
		switch y := b.(type) {
		case string:
			return x == y
		case []byte:
			return x == string(y)
		}
	case []byte:
		switch y := b.(type) {
		case string:
			return string(x) == y
		case []byte:
			return bytes.Equal(x, y)
		}
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case decimal.Decimal:
		y, ok := b.(decimal.Decimal)
		return ok && x.Equal(y)
	}
	return reflect.DeepEqual(a, b)
}

// countSameReplaced takes the rows noted by noteSameRow off a REPLACE's
// row count (and ROW_COUNT()).
func countSameReplaced(ctx *sql.Context, s *Session, row sql.Row) sql.Row {
	if (s.ins.sameReplaced == 0 && s.ins.replaceExtra == 0) || len(row) != 1 {
		return row
	}
	ok, isOK := row[0].(types.OkResult)
	if !isOK {
		return row
	}
	n := uint64(s.ins.sameReplaced)
	extra := uint64(s.ins.replaceExtra)
	s.ins.sameReplaced, s.ins.replaceExtra = 0, 0
	if ok.RowsAffected < n {
		return row
	}
	ok.RowsAffected += extra - n
	ctx.SetLastQueryInfoInt(sql.RowCount, int64(ok.RowsAffected))
	return sql.NewRow(ok)
}

// A REPLACE whose row meets two rows (one by the primary key, another by a
// unique key) deletes both: MySQL counts each row deleted, three rows
// affected; go-mysql-server counted one row deleted whatever their number.
// The table's inserter counts the duplicates a row of a REPLACE meets
// (each is deleted before the row is tried again); once the row is in,
// those beyond the first are counted (countSameReplaced adds them).

func replacing(s *Session) bool { return s.ins.row != nil && s.ins.row.replace }

// noteReplaceDup counts a duplicate err the row of a REPLACE met.
func noteReplaceDup(s *Session, err error) {
	var dup *storage.DuplicateError
	if replacing(s) && errors.As(err, &dup) {
		s.ins.replaceDups++
	}
}

// noteReplaced ends the row of a REPLACE: it was written.
func noteReplaced(s *Session) {
	if s.ins.replaceDups > 1 && replacing(s) {
		s.ins.replaceExtra += s.ins.replaceDups - 1
	}
	s.ins.replaceDups = 0
}
