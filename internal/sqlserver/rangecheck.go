package sqlserver

import (
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/shopspring/decimal"
)

// An UPDATE's value out of its numeric column's range. go-mysql-server
// converts an assignment's value to the column's type and drops the
// converter's word that it did not fit: UPDATE t SET n = -1 stored
// 4294967295 in an INT UNSIGNED column, SET s = 300 stored 127 in a
// TINYINT, in every sql_mode. MySQL, in a strict mode and without
// IGNORE, refuses the statement (1264, Out of range value for column 'n'
// at row 1) and writes nothing; otherwise it stores the nearest value the
// column takes, with the same 1264 as a warning. An INSERT's values are
// checked by go-mysql-server already; a compiled UPDATE leaves a value
// that does not fit to the planner, which checks it here.

// checkedAssign is the value of an UPDATE's (or ON DUPLICATE KEY
// UPDATE's) assignment, checked for its column by check, which returns
// the value to store or MySQL's error; it counts the rows it is evaluated
// for, the row an error names unless at says otherwise. The checks:
// rangeCheck (here), listedCheck (here), TimeCheck (timerange.go).
type checkedAssign struct {
	sql.Expression
	check func(ctx *sql.Context, v any, at int) (any, error)
	rows  int
	at    func() int // the row an error names; nil: rows
}

func (a *checkedAssign) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	a.rows++
	v, err := a.Expression.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	at := a.rows
	if a.at != nil {
		at = a.at()
	}
	return a.check(ctx, v, at)
}

func (a *checkedAssign) Children() []sql.Expression { return []sql.Expression{a.Expression} }

func (a *checkedAssign) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 1)
	}
	c := *a
	c.Expression = children[0]
	return &c, nil
}

func (a *checkedAssign) String() string { return a.Expression.String() }

// rangeCheck checks a value for numeric column col against its range.
func rangeCheck(col *sql.Column, refuse bool) func(*sql.Context, any, int) (any, error) {
	return func(ctx *sql.Context, v any, at int) (any, error) {
		if fits(ctx, col.Type, v) {
			return v, nil // the assignment converts it, or reports why not
		}
		msg := "Out of range value for column '" + col.Name + "' at row " + strconv.Itoa(at)
		if refuse {
			return nil, mysql.NewSQLError(1264, "22003", "%s", msg)
		}
		ctx.Warn(1264, "%s", msg)
		if nearest, ok := nearestInRange(col.Type, v); ok {
			return nearest, nil
		}
		return v, nil
	}
}

// fits reports whether v is in the range of numeric type t, or is no
// number at all (the assignment's conversion reports that).
func fits(ctx *sql.Context, t sql.Type, v any) bool {
	if lo, hi, ok := numericRange(t); ok {
		d, ok := asDecimal(v)
		if !ok {
			return true
		}
		if lo.IsZero() && d.Sign() < 0 {
			return false // unsigned: -0.4 does not fit either, as in MySQL
		}
		d = d.Round(scaleOf(t)) // as the column will store it: 255.4 fits a TINYINT UNSIGNED
		return !d.LessThan(lo) && !d.GreaterThan(hi)
	}
	_, inRange, err := t.Convert(ctx, v)
	return err != nil || inRange == sql.InRange
}

// numericRange is the range of an integer or DECIMAL column type; false
// for another type (FLOAT, DOUBLE: their converter says).
func numericRange(t sql.Type) (lo, hi decimal.Decimal, ok bool) {
	if dt, isDec := t.(sql.DecimalType); isDec {
		p, sc := int32(dt.Precision()), int32(dt.Scale())
		// 10^(p-s) - 10^-s: DECIMAL(5,2) reaches 999.99.
		hi = decimal.New(1, p-sc).Sub(decimal.New(1, -sc))
		return hi.Neg(), hi, true
	}
	return integerRange(t.Type())
}

// scaleOf is the number of decimals a numeric column keeps (0 for an
// integer).
func scaleOf(t sql.Type) int32 {
	if dt, ok := t.(sql.DecimalType); ok {
		return int32(dt.Scale())
	}
	return 0
}

// nearestInRange is the value of integer or DECIMAL type t nearest to v,
// which is outside t's range; false for another type or a value that is
// not a number.
func nearestInRange(t sql.Type, v any) (any, bool) {
	lo, hi, ok := numericRange(t)
	if !ok {
		return nil, false
	}
	d, ok := asDecimal(v)
	if !ok {
		return nil, false
	}
	if d.LessThan(lo) {
		return lo.String(), true
	}
	if d.GreaterThan(hi) {
		return hi.String(), true
	}
	return nil, false
}

// integerBits are the integer column types: their width and whether they
// are signed.
var integerBits = map[querypb.Type]struct {
	bits   uint
	signed bool
}{
	sqltypes.Int8: {8, true}, sqltypes.Int16: {16, true}, sqltypes.Int24: {24, true},
	sqltypes.Int32: {32, true}, sqltypes.Int64: {64, true},
	sqltypes.Uint8: {8, false}, sqltypes.Uint16: {16, false}, sqltypes.Uint24: {24, false},
	sqltypes.Uint32: {32, false}, sqltypes.Uint64: {64, false},
}

// integerRange is the range of an integer column type.
func integerRange(t querypb.Type) (lo, hi decimal.Decimal, ok bool) {
	w, ok := integerBits[t]
	switch {
	case !ok:
		return decimal.Zero, decimal.Zero, false
	case w.signed:
		m := int64(1) << (w.bits - 1)
		return decimal.NewFromInt(-m), decimal.NewFromInt(m - 1), true
	case w.bits == 64:
		return decimal.Zero, decimal.RequireFromString(strconv.FormatUint(math.MaxUint64, 10)), true
	}
	return decimal.Zero, decimal.NewFromInt(int64(1)<<w.bits - 1), true
}

// asDecimal reads a number of any of the kinds an expression evaluates to.
func asDecimal(v any) (decimal.Decimal, bool) {
	switch n := v.(type) {
	case float32:
		return decimal.NewFromFloat32(n), !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0)
	case float64:
		return decimal.NewFromFloat(n), !math.IsNaN(n) && !math.IsInf(n, 0)
	case decimal.Decimal:
		return n, true
	case decimal.NullDecimal:
		return n.Decimal, n.Valid
	case string:
		d, err := decimal.NewFromString(strings.TrimSpace(n))
		return d, err == nil
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decimal.NewFromInt(r.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return decimal.RequireFromString(strconv.FormatUint(r.Uint(), 10)), true
	}
	return decimal.Zero, false
}

// listedCheck checks a value for an ENUM, SET, YEAR, BIT, DATE, DATETIME
// or TIMESTAMP column in a strict mode: a value the column does not take
// is MySQL's error naming the column and the row (1265 for a member the
// ENUM or SET does not list, 1264 for a YEAR out of range, 1406 for a
// number wider than the BIT, 1292 for a date that is none), where
// go-mysql-server's was 1105, or 1292 without them. Without a strict mode
// the assignment converts as before.
func listedCheck(col *sql.Column) func(*sql.Context, any, int) (any, error) {
	return func(ctx *sql.Context, v any, at int) (any, error) {
		if _, _, err := col.Type.Convert(ctx, v); err == nil {
			return v, nil
		}
		switch t := col.Type; {
		case types.IsEnum(t), types.IsSet(t):
			return nil, mysql.NewSQLError(1265, "01000", "Data truncated for column '%s' at row %d", col.Name, at)
		case types.IsYear(t):
			return nil, mysql.NewSQLError(1264, "22003", "Out of range value for column '%s' at row %d", col.Name, at)
		case types.IsTime(t):
			kind := "datetime"
			if types.IsDateType(t) {
				kind = "date"
			}
			return nil, mysql.NewSQLError(1292, "22007", "Incorrect %s value: '%v' for column '%s' at row %d", kind, v, col.Name, at)
		default:
			return nil, mysql.NewSQLError(1406, "22001", "Data too long for column '%s' at row %d", col.Name, at)
		}
	}
}

// listedColumn reports whether t is a type listedCheck checks.
func listedColumn(t sql.Type) bool {
	return types.IsEnum(t) || types.IsSet(t) || types.IsYear(t) || types.IsBit(t) || types.IsTime(t)
}
