package funcs

import (
	"regexp"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
)

// NO_ZERO_DATE. go-mysql-server v0.20 accepted the mode and wrote
// '0000-00-00' into DATE, DATETIME and TIMESTAMP columns whatever it said.
// With the mode, a zero date written by INSERT, UPDATE or ON DUPLICATE KEY
// UPDATE is refused in a strict mode without IGNORE (1292 Incorrect date
// value), and otherwise written with warning 1264, as MySQL and MariaDB
// do (insertRows and checkAssignments, numtext.go). Zero dates given as
// text are the ones checked: a zero date computed by an expression is
// written as before.
//
// NO_ZERO_IN_DATE needs nothing here: go-mysql-server refuses a date with
// a zero month or day ('2026-00-05', 1292) in any mode; without the mode
// MySQL would write it (a known difference).

// zeroDateRE matches the text of a zero date, with or without a time.
var zeroDateRE = regexp.MustCompile(`^\s*0{1,4}-0{1,2}-0{1,2}(?:[ T]0{1,2}:0{1,2}:0{1,2}(?:\.0*)?)?\s*$`)

// ChecksZeroDates reports whether the session's sql_mode has NO_ZERO_DATE.
func ChecksZeroDates(ctx *sql.Context) bool { return compat.SQLMode(ctx).ModeEnabled("NO_ZERO_DATE") }

// ZeroDate checks v, written into date column col at row at: a zero date
// is refused (refuse) or warned about.
func ZeroDate(ctx *sql.Context, col *sql.Column, v any, at int, refuse bool) error {
	s, ok := TextValue(v)
	if !ok || !zeroDateRE.MatchString(s) {
		return nil
	}
	if refuse {
		kind := "datetime"
		if types.IsDateType(col.Type) {
			kind = "date"
		}
		return mysql.NewSQLError(1292, "22007", "Incorrect %s value: '%s' for column '%s' at row %d", kind, s, col.Name, at)
	}
	ctx.Warn(1264, "Out of range value for column '%s' at row %d", col.Name, at)
	return nil
}

// ZeroDateCheck is ZeroDate for an assignment (checkedAssign).
func ZeroDateCheck(col *sql.Column, refuse bool) func(*sql.Context, any, int) (any, error) {
	return func(ctx *sql.Context, v any, at int) (any, error) {
		if err := ZeroDate(ctx, col, v, at, refuse); err != nil {
			return nil, err
		}
		return v, nil
	}
}
