package sqlserver

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// Text written into a numeric column, as MySQL takes it. go-mysql-server
// stores '' and '  ' as 0 without a word and refuses '12abc' with 1366,
// in every sql_mode. MySQL, in a strict mode and without IGNORE, refuses
// '' (1366, Incorrect integer value) and '12abc' (1265, Data truncated);
// otherwise it warns with the same code and stores 0 or the number the
// text begins with. The checks run on the values before go-mysql-server
// converts them: the rows an INSERT (or LOAD DATA) hands on, and the
// values of an UPDATE's assignments.

// numericPrefix reads s as MySQL reads a number from text: leading white
// space, a sign, digits with an optional fraction, an optional exponent,
// trailing white space. It returns the number's text and whether s held
// nothing else; "" when s does not begin with a number.
func numericPrefix(s string) (num string, whole bool) {
	const space = " \t\n\r"
	t := strings.TrimLeft(s, space)
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	digits := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
		digits++
	}
	if i < len(t) && t[i] == '.' {
		i++
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return "", false
	}
	end := i
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		j := i + 1
		if j < len(t) && (t[j] == '+' || t[j] == '-') {
			j++
		}
		k := j
		for k < len(t) && t[k] >= '0' && t[k] <= '9' {
			k++
		}
		if k > j {
			end = k
		}
	}
	return t[:end], strings.TrimRight(t[end:], space) == ""
}

// isNumericColumn reports the column types whose text values are checked.
func isNumericColumn(t sql.Type) bool {
	return types.IsInteger(t) || types.IsFloat(t) || types.IsDecimal(t)
}

// numericText checks text v written into column col at row at. It
// returns the value to write instead (v itself when it is a number), or
// MySQL's error when refuse is set; otherwise the difference is a warning.
func numericText(ctx *sql.Context, col *sql.Column, v string, at int, refuse bool) (any, error) {
	num, whole := numericPrefix(v)
	if whole {
		return v, nil
	}
	var code int
	var state, msg string
	if num == "" {
		code, state = 1366, "HY000"
		msg = fmt.Sprintf("Incorrect %s value: '%s' for column '%s' at row %d", valueKind(col.Type), v, col.Name, at)
		num = "0"
	} else {
		code, state = 1265, "01000"
		msg = fmt.Sprintf("Data truncated for column '%s' at row %d", col.Name, at)
	}
	if refuse {
		return nil, mysql.NewSQLError(code, state, "%s", msg)
	}
	ctx.Warn(code, "%s", msg)
	return num, nil
}

// refusesBadValues reports whether a statement refuses a value its column
// cannot take (a strict sql_mode, no IGNORE) instead of warning.
func refusesBadValues(ctx *sql.Context, ignore bool) bool {
	if ignore {
		return false
	}
	m := compat.SQLMode(ctx)
	return m.ModeEnabled("STRICT_TRANS_TABLES") || m.ModeEnabled("STRICT_ALL_TABLES")
}

// insertRows are the rows an INSERT's source hands on, in the
// destination's column order (a longer row carries outer scope values
// first, as go-mysql-server's insert takes it): it counts them (the
// statement's info, insertinfo.go) and checks their text values for
// numeric columns.
type insertRows struct {
	sql.RowIter
	sch   sql.Schema
	cols  []int // the numeric columns of sch
	times []int // the TIME columns of sch (timerange.go)
	// dates are the DATE, DATETIME and TIMESTAMP columns of sch when
	// NO_ZERO_DATE is set (zerodate.go).
	dates  []int
	refuse bool
	// divZero: a division by zero in a row's values is refused
	// (divzero.go); warned is how many of the statement's warnings were
	// looked at for one.
	divZero bool
	warned  uint16
	tally   *insertTally
}

func newInsertRows(ctx *sql.Context, iter sql.RowIter, src insertSource) sql.RowIter {
	var cols, times, dates []int
	zeroDates := funcs.ChecksZeroDates(ctx)
	for i, c := range src.sch {
		if isNumericColumn(c.Type) {
			cols = append(cols, i)
		}
		if funcs.IsTimeType(c.Type) {
			times = append(times, i)
		}
		if zeroDates && types.IsTime(c.Type) {
			dates = append(dates, i)
		}
	}
	tally := src.tally
	if tally == nil {
		tally = &insertTally{}
	}
	return &insertRows{RowIter: iter, sch: src.sch, cols: cols, times: times, dates: dates, refuse: refusesBadValues(ctx, src.ignore),
		divZero: refusesDivisionByZero(ctx, src.ignore), tally: tally}
}

func (it *insertRows) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil {
		return row, err
	}
	if it.divZero {
		// Since the last row, or since the statement began for the
		// first: the planner folds a constant 1/0 into NULL, with its
		// warning, before the rows are made.
		err, it.warned = divisionByZero(ctx, it.warned), ctx.Session.WarningCount()
		if err != nil {
			return nil, err
		}
	}
	it.tally.records++
	off := len(row) - len(it.sch)
	if off < 0 {
		return row, nil
	}
	copied := false
	for _, i := range it.cols {
		s, ok := funcs.TextValue(row[off+i])
		if !ok {
			continue
		}
		v, err := numericText(ctx, it.sch[i], s, it.tally.records, it.refuse)
		if err != nil {
			return nil, err
		}
		if v != s {
			if !copied {
				row, copied = row.Copy(), true
			}
			row[off+i] = v
		}
	}
	for _, i := range it.dates {
		if err := funcs.ZeroDate(ctx, it.sch[i], row[off+i], it.tally.records, it.refuse); err != nil {
			return nil, err
		}
	}
	for _, i := range it.times {
		v := row[off+i]
		if v == nil {
			continue
		}
		nv, changed, err := funcs.TimeWritten(ctx, it.sch[i].Name, funcs.TimeDigits(it.sch[i].Type), v, it.tally.records, it.refuse)
		if err != nil {
			return nil, err
		}
		if !changed {
			continue
		}
		if !copied {
			row, copied = row.Copy(), true
		}
		row[off+i] = nv
	}
	return row, nil
}

func (it *insertRows) GetChildIter() sql.RowIter { return it.RowIter }

func (it *insertRows) WithChildIter(child sql.RowIter) sql.RowIter {
	c := *it
	c.RowIter = child
	return &c
}

// checkUpdateText wraps the value of each assignment of an UPDATE to a
// column in a checkedAssign (rangecheck.go): a numeric column's against
// its range, a TIME's too, an ENUM's, SET's, YEAR's, BIT's or date's
// against what the column takes (in a strict mode); a numeric column's
// value that is text (a literal, a parameter, a string expression) is
// checked as text first (textCheck).
func checkUpdateText(ctx *sql.Context, n sql.Node, ignore bool) (sql.Node, transform.TreeIdentity, error) {
	return checkAssignments(ctx, n, ignore, nil)
}

// checkAssignments is checkUpdateText with the number of the row an
// error names given by at (nil: the rows the assignment is evaluated for,
// an UPDATE's; an INSERT's ON DUPLICATE KEY UPDATE names the row of the
// INSERT).
func checkAssignments(ctx *sql.Context, n sql.Node, ignore bool, at func() int) (sql.Node, transform.TreeIdentity, error) {
	refuse, divZero := refusesBadValues(ctx, ignore), refusesDivisionByZero(ctx, ignore)
	zeroDates := funcs.ChecksZeroDates(ctx)
	if divZero {
		// A constant 1/0 was folded into NULL, with its warning, when the
		// statement was planned.
		if err := divisionByZero(ctx, 0); err != nil {
			return nil, transform.SameTree, err
		}
	}
	return compat.TransformAllExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		sf, ok := e.(*expression.SetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		gf, ok := sf.LeftChild.(*expression.GetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		switch sf.RightChild.(type) {
		case *checkedAssign, *divisionChecked:
			return e, transform.SameTree, nil
		}
		value := sf.RightChild
		if divZero {
			value = &divisionChecked{value}
		}
		col := &sql.Column{Name: gf.Name(), Type: gf.Type()}
		checked := false
		if zeroDates && types.IsTime(gf.Type()) {
			value, checked = &checkedAssign{Expression: value, check: funcs.ZeroDateCheck(col, refuse), at: at}, true
		}
		if funcs.IsTimeType(gf.Type()) {
			return expression.NewSetField(sf.LeftChild, &checkedAssign{Expression: value, check: funcs.TimeCheck(gf.Name(), funcs.TimeDigits(gf.Type()), refuse), at: at}), transform.NewTree, nil
		}
		if refuse && listedColumn(gf.Type()) {
			return expression.NewSetField(sf.LeftChild, &checkedAssign{Expression: value, check: listedCheck(col), at: at}), transform.NewTree, nil
		}
		if !isNumericColumn(gf.Type()) {
			if divZero || checked {
				return expression.NewSetField(sf.LeftChild, value), transform.NewTree, nil
			}
			return e, transform.SameTree, nil
		}
		if types.IsText(value.Type()) {
			value = &checkedAssign{Expression: value, check: textCheck(col, refuse)}
		}
		return expression.NewSetField(sf.LeftChild, &checkedAssign{Expression: value, check: rangeCheck(col, refuse), at: at}), transform.NewTree, nil
	})
}

// textCheck checks the text value of an assignment to numeric column col
// as MySQL does (numericText), the row counted by the assignment's own
// evaluations.
func textCheck(col *sql.Column, refuse bool) func(*sql.Context, any, int) (any, error) {
	return func(ctx *sql.Context, v any, at int) (any, error) {
		s, ok := funcs.TextValue(v)
		if !ok {
			return v, nil
		}
		return numericText(ctx, col, s, at, refuse)
	}
}

// insertSource is the source node of an INSERT being built, with the
// destination's columns, whether the INSERT has IGNORE, and the count of
// its rows.
type insertSource struct {
	node   sql.Node
	sch    sql.Schema
	ignore bool
	tally  *insertTally
}
