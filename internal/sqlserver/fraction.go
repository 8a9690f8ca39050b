package sqlserver

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
)

// A DATETIME(n) value is written with n digits after the seconds, zeros
// too ('2024-03-05 14:30:00.000000' for DATETIME(6), MySQL's form);
// go-mysql-server left trailing zeros out ('2024-03-05 14:30:00',
// '14:30:00.5' of DATETIME(3)). padFractions writes the text rows of a
// result so; the binary protocol sends the microseconds as a number.

// padFractions rewrites r's DATETIME values to the digits of their column:
// a table's column, or a CAST that names fewer than 6 digits.
// go-mysql-server types its date functions' results DATETIME(6) where
// MySQL's have their argument's digits (DATE_SUB of a DATETIME has none),
// so those are left as they are.
func padFractions(r *sqltypes.Result) {
	for i, f := range r.Fields {
		if f.Decimals == 0 || f.Decimals > 6 || (f.Type != querypb.Type_DATETIME && f.Type != querypb.Type_TIMESTAMP) ||
			(f.Decimals == 6 && f.OrgTable == "") {
			continue
		}
		for _, row := range r.Rows {
			if i >= len(row) || row[i].IsNull() {
				continue
			}
			if s, ok := withFraction(row[i].ToString(), int(f.Decimals)); ok {
				row[i] = sqltypes.MakeTrusted(f.Type, []byte(s))
			}
		}
	}
}

// withFraction returns s, a date and time, with n digits after its
// seconds; false when it already has them or is no date and time.
func withFraction(s string, n int) (string, bool) {
	sp := strings.IndexByte(s, ' ')
	if sp < 0 {
		return s, false
	}
	dot := strings.IndexByte(s[sp:], '.')
	digits := 0
	if dot >= 0 {
		dot += sp
		digits = len(s) - dot - 1
	}
	switch {
	case digits == n:
		return s, false
	case dot < 0:
		return s + "." + strings.Repeat("0", n), true
	case digits < n:
		return s + strings.Repeat("0", n-digits), true
	}
	return s[:dot+1+n], true
}

// timestampDigits puts into fields the digits of each TIMESTAMP(n) and
// TIME(n) table column, which go-mysql-server's result columns leave at 0
// (it counts them for DATETIME only): clients read a binary TIMESTAMP's fraction only
// up to the column's digits (go-sql-driver wrote '10:00:00' for
// '10:00:00.500'), and padFractions writes a text value's. The digits are
// the column's in the catalog the connection's session sees; a column it
// cannot find (a view's, a temporary table's) keeps 0. The fields of a
// result are shared by its batches: the first fixes them for the rest.
func (h protocolHandler) timestampDigits(c *mysql.Conn, fields []*querypb.Field) {
	for _, f := range fields {
		if (f.Type != querypb.Type_TIMESTAMP && f.Type != querypb.Type_TIME) || f.Decimals != 0 || f.OrgTable == "" || f.Database == "" {
			continue
		}
		if n := h.srv.columnDigits(c.ConnectionID, f.Database, f.OrgTable, f.OrgName); n > 0 {
			f.Decimals = uint32(n)
		}
	}
}

// columnDigits is the fractional digits of a DATETIME, TIMESTAMP or TIME column
// as connection id's session sees it; 0 when there is no such column.
func (s *Server) columnDigits(id uint32, database, table, column string) int {
	sess := s.session(id)
	db, ok := s.storage.Database(database)
	if sess == nil || !ok {
		return 0
	}
	t, ok := sess.defsIn(db).Table(table)
	if !ok {
		return 0
	}
	ti, err := tabledef.Decode(t.Def())
	if err != nil {
		return 0
	}
	i := ti.Schema.Schema.IndexOfColName(column)
	if i < 0 {
		return 0
	}
	if dt, ok := ti.Schema.Schema[i].Type.(sql.DatetimeType); ok {
		return dt.Precision()
	}
	return funcs.TimeDigits(ti.Schema.Schema[i].Type)
}
