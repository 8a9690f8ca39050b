package sqlserver

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
)

// insertErrors gives an INSERT's errors and warnings about a value MySQL's
// texts, which name the column and the row ("Out of range value for column
// 'ti' at row 2"): go-mysql-server's name the value and the type. It wraps
// the INSERT's iterator as a MutableRowIter, so that go-mysql-server still
// finds the INSERT's own iterator under it (it adds the accumulator that
// counts the rows by the iterator's type). The row of an error is one past
// the rows the statement handed to the storage editor so far: each row of
// an INSERT reaches the editor's Insert once, after its values are
// converted.
type insertErrors struct {
	sql.RowIter
	sess *Session
	sch  sql.Schema
	info *insertInfo // nil: the statement's OK has no info
	// replace: the statement is a REPLACE (replacesame.go).
	replace bool
	// noInsertID: a REPLACE or INSERT … ON DUPLICATE KEY UPDATE of a
	// table without an AUTO_INCREMENT column, whose OK packet's insert id
	// is 0 in MySQL; go-mysql-server put the session's LAST_INSERT_ID()
	// there.
	noInsertID bool
}

// hasAutoIncrement reports whether sch has an AUTO_INCREMENT column.
func hasAutoIncrement(sch sql.Schema) bool {
	for _, c := range sch {
		if c.AutoIncrement {
			return true
		}
	}
	return false
}

func newInsertErrors(iter sql.RowIter, s *Session, sch sql.Schema) *insertErrors {
	it := &insertErrors{RowIter: iter, sess: s, sch: sch}
	s.ins.calls, s.ins.sameReplaced = 0, 0
	s.ins.replaceDups, s.ins.replaceExtra = 0, 0
	s.ins.row = it
	return it
}

func (it *insertErrors) GetChildIter() sql.RowIter { return it.RowIter }

func (it *insertErrors) WithChildIter(child sql.RowIter) sql.RowIter {
	c := *it
	c.RowIter = child
	it.sess.ins.row = &c
	return &c
}

func (it *insertErrors) Close(ctx *sql.Context) error {
	if it.sess.ins.row == it {
		it.sess.ins.row = nil
	}
	return it.RowIter.Close(ctx)
}

func (it *insertErrors) Next(ctx *sql.Context) (sql.Row, error) {
	r, err := it.RowIter.Next(ctx)
	if err == nil {
		if it.replace {
			r = countSameReplaced(ctx, it.sess, r)
		}
		if it.noInsertID && len(r) == 1 {
			if ok, isOK := r[0].(types.OkResult); isOK && ok.InsertID != 0 {
				ok.InsertID = 0
				r = sql.NewRow(ok)
			}
		}
		return it.info.add(ctx, r), nil
	}
	if err == io.EOF {
		return r, err
	}
	var offending sql.Row
	cause := err
	if w, ok := err.(sql.WrappedInsertError); ok {
		offending, cause = w.OffendingRow, w.Cause
	}
	if se := it.valueError(cause.Error(), offending); se != nil {
		return nil, se
	}
	return nil, err
}

// valueErrorRE matches go-mysql-server's texts of a value a column cannot
// take: the value (and type) they name.
var (
	outOfRangeRE   = regexp.MustCompile(`^(.*) out of range for (.*)$`)
	invalidValueRE = regexp.MustCompile(`^error: '(.*)' is not a valid value for '(.*)'$`)
	badTimeRE      = regexp.MustCompile(`^Incorrect datetime value: '(.*)'$`)
	tooLongRE      = regexp.MustCompile(`^string '.*' is too large for column '(.*)'$`)
	badEnumRE      = regexp.MustCompile(`^value (.*) is not valid for this Enum$`)
	badSetRE       = regexp.MustCompile(`^value (.*) (?:was not found in the set|is not valid for this set)$`)
	badYearRE      = regexp.MustCompile(`^value (.*) is not a valid Year$`)
	tooManyBitsRE  = regexp.MustCompile(`^(.*) is beyond the maximum value that can be held by \d+ bits$`)
	badTimeOfDayRE = regexp.MustCompile(`^value (.*) is not a valid Time$`)
	decimalRangeRE = regexp.MustCompile(`^Out of range value for column of Decimal type\s*$`)
)

// valueError is MySQL's error for go-mysql-server's text msg about a value
// of the row being inserted (nil: msg is about something else, or its
// column cannot be told). row is the row as given, when known.
func (it *insertErrors) valueError(msg string, row sql.Row) *mysql.SQLError {
	at := it.sess.ins.calls + 1
	if m := tooLongRE.FindStringSubmatch(msg); m != nil {
		return mysql.NewSQLError(1406, "22001", "Data too long for column '%s' at row %d", m[1], at)
	}
	if m := outOfRangeRE.FindStringSubmatch(msg); m != nil {
		if col := it.column(row, m[1], m[2], nil); col != nil {
			return mysql.NewSQLError(1264, "22003", "Out of range value for column '%s' at row %d", col.Name, at)
		}
		return nil
	}
	if m := invalidValueRE.FindStringSubmatch(msg); m != nil {
		if col := it.column(row, m[1], m[2], nil); col != nil {
			return mysql.NewSQLError(1366, "HY000", "Incorrect %s value: '%s' for column '%s' at row %d", valueKind(col.Type), m[1], col.Name, at)
		}
		return nil
	}
	// A value an ENUM or SET column does not list: MySQL's strict 1265.
	// The column holding the value as given, else the only one of the
	// kind (a SET's message names the member, not the value).
	for _, k := range []struct {
		re   *regexp.Regexp
		kind func(sql.Type) bool
	}{{badEnumRE, types.IsEnum}, {badSetRE, types.IsSet}} {
		if m := k.re.FindStringSubmatch(msg); m != nil {
			col := it.column(row, m[1], "", k.kind)
			if col == nil {
				col = it.column(nil, "", "", k.kind)
			}
			if col != nil {
				return mysql.NewSQLError(1265, "01000", "Data truncated for column '%s' at row %d", col.Name, at)
			}
			return nil
		}
	}
	// A YEAR, a BIT, a TIME or a DECIMAL that does not fit: the column
	// holding the value as given, else the only one of the type. (The
	// texts index their arguments: column, row, value.)
	for _, k := range []struct {
		re          *regexp.Regexp
		kind        func(sql.Type) bool
		code        int
		state, text string
	}{
		{badYearRE, types.IsYear, 1264, "22003", "Out of range value for column '%[1]s' at row %[2]d"},
		{tooManyBitsRE, types.IsBit, 1406, "22001", "Data too long for column '%[1]s' at row %[2]d"},
		{badTimeOfDayRE, funcs.IsTimeType, 1292, "22007", "Incorrect time value: '%[3]s' for column '%[1]s' at row %[2]d"},
		{decimalRangeRE, types.IsDecimal, 1264, "22003", "Out of range value for column '%[1]s' at row %[2]d"},
	} {
		if m := k.re.FindStringSubmatch(msg); m != nil {
			var col *sql.Column
			if len(m) > 1 {
				col = it.column(row, m[1], "", k.kind)
			}
			if col == nil {
				col = it.column(nil, "", "", k.kind)
			}
			if col == nil {
				return nil
			}
			value := ""
			if len(m) > 1 {
				value = m[1]
			}
			return mysql.NewSQLError(k.code, k.state, k.text, col.Name, at, value)
		}
	}
	if m := badTimeRE.FindStringSubmatch(msg); m != nil {
		if col := it.column(row, m[1], "", types.IsTime); col != nil {
			kind := "datetime"
			if types.IsDateType(col.Type) {
				kind = "date"
			}
			return mysql.NewSQLError(1292, "22007", "Incorrect %s value: '%s' for column '%s' at row %d", kind, m[1], col.Name, at)
		}
	}
	return nil
}

// column finds the column a value belongs to: by the value in row (when
// known) and by the type's name (when typ is given) or kind; nil when no
// column, or more than one, fits.
func (it *insertErrors) column(row sql.Row, value, typ string, kind func(sql.Type) bool) *sql.Column {
	var found *sql.Column
	for i, c := range it.sch {
		if typ != "" && !strings.EqualFold(c.Type.String(), typ) {
			continue
		}
		if kind != nil && !kind(c.Type) {
			continue
		}
		if row != nil && (i >= len(row) || row[i] == nil || fmt.Sprint(row[i]) != value) {
			continue
		}
		if found != nil {
			return nil
		}
		found = c
	}
	return found
}

// valueKind is the word MySQL's 1366 uses for a column's type.
func valueKind(t sql.Type) string {
	switch {
	case types.IsInteger(t):
		return "integer"
	case types.IsDecimal(t):
		return "decimal"
	case types.IsFloat(t):
		return "double"
	}
	return "string"
}

// valueErrorOrNil is valueError of a warning (whose row is not known), for
// an INSERT in progress; nil otherwise.
func (it *insertErrors) valueErrorOrNil(msg string) *mysql.SQLError {
	if it == nil {
		return nil
	}
	return it.valueError(msg, nil)
}

// fkClause is MySQL's text of foreign key name of table in database db, as
// last committed ("" when it is not found): its columns, the parent table
// (with its database when it is another one) and columns, and the actions
// given.
// columnCount is the number of columns of table db.table, 0 when there is
// no such table.
func (s *Server) columnCount(db, table string) int {
	d, ok := s.storage.Database(db)
	if !ok {
		return 0
	}
	st, ok := d.Latest().Table(table)
	if !ok {
		return 0
	}
	return st.Def().NumCols
}

func (s *Server) fkClause(db, table, name string) string {
	d, ok := s.storage.Database(db)
	if !ok {
		return ""
	}
	st, ok := d.Latest().Table(table) // the definition only
	if !ok {
		return ""
	}
	ti, err := tabledef.Decode(st.Def())
	if err != nil {
		return ""
	}
	quote := func(names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = "`" + n + "`"
		}
		return strings.Join(q, ", ")
	}
	for _, fk := range ti.Meta.ForeignKeys {
		if !strings.EqualFold(fk.Name, name) {
			continue
		}
		parent := "`" + fk.ParentTable + "`"
		if fk.ParentDatabase != "" && !strings.EqualFold(fk.ParentDatabase, db) {
			parent = "`" + fk.ParentDatabase + "`." + parent
		}
		text := fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s (%s)", quote(fk.Columns), parent, quote(fk.ParentColumns))
		for _, a := range []struct {
			on     string
			action sql.ForeignKeyReferentialAction
		}{{"DELETE", fk.OnDelete}, {"UPDATE", fk.OnUpdate}} {
			if a.action != "" && a.action != sql.ForeignKeyReferentialAction_DefaultAction && a.action != sql.ForeignKeyReferentialAction_Restrict {
				text += " ON " + a.on + " " + string(a.action)
			}
		}
		return text
	}
	return ""
}
