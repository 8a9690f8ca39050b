package funcs

import (
	"fmt"
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
)

// MySQL reads a number where a date belongs as the date its digits spell:
// 20240305 is 2024-03-05, 240305 too, 20240305143000 is 2024-03-05
// 14:30:00 (number_to_datetime). go-mysql-server refused every number but
// 0: INSERT of 20240305 into a DATE column failed (1292), CAST(20240305 AS
// DATE), DATE(20240305) and YEAR(20240305) were NULL, and d = 20240305 was
// never true. NumbersAsDates puts numberAsDatetime (or, for a literal,
// the text it spells) in front of a number that meets a date there.

// numberDatetimeText returns the DATETIME the digits of nr spell, with
// micro microseconds, as MySQL's number_to_datetime reads them; false
// when they spell none.
func numberDatetimeText(nr int64, micro int) (string, bool) {
	switch {
	case nr <= 0 || nr < 101:
		return "", false
	case nr <= 691231:
		nr = (nr + 20000000) * 1000000
	case nr < 700101:
		return "", false
	case nr <= 991231:
		nr = (nr + 19000000) * 1000000
	case nr < 10000101:
		return "", false
	case nr <= 99991231:
		nr *= 1000000
	case nr < 101000000:
		return "", false
	case nr <= 691231235959:
		nr += 20000000000000
	case nr < 700101000000:
		return "", false
	case nr <= 991231235959:
		nr += 19000000000000
	case nr > 99991231235959:
		return "", false
	}
	date, clock := nr/1000000, nr%1000000
	y, mo, d := date/10000, date/100%100, date%100
	h, mi, s := clock/10000, clock/100%100, clock%100
	if mo < 1 || mo > 12 || d < 1 || d > int64(daysIn(y, mo)) || h > 23 || mi > 59 || s > 59 {
		return "", false
	}
	t := fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", y, mo, d, h, mi, s)
	if micro > 0 {
		t += fmt.Sprintf(".%06d", micro)
	}
	return t, true
}

// daysIn returns the days of month mo of year y.
func daysIn(y, mo int64) int {
	switch mo {
	case 4, 6, 9, 11:
		return 30
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return 31
}

// NumberAsDate returns the DATETIME text of number v, or v itself when it
// is no number or spells no date (the conversion after it then refuses
// it, as before).
func NumberAsDate(v any) any {
	var nr int64
	micro := 0
	switch x := v.(type) {
	case int8, int16, int32, int64, int:
		nr, _ = AsInt64(x)
	case uint8, uint16, uint32, uint64, uint:
		u, _ := AsUint64(x)
		if u > math.MaxInt64 {
			return v
		}
		nr = int64(u)
	case float32, float64:
		f, _ := x.(float64)
		if f32, ok := x.(float32); ok {
			f = float64(f32)
		}
		if f < 0 || f >= math.MaxInt64 {
			return v
		}
		whole := math.Floor(f)
		nr, micro = int64(whole), int(math.Round((f-whole)*1e6))
	case decimal.Decimal:
		if x.Sign() < 0 {
			return v
		}
		whole := x.Truncate(0)
		nr, micro = whole.IntPart(), int(x.Sub(whole).Shift(6).Round(0).IntPart())
	default:
		return v
	}
	if micro >= 1000000 {
		return v
	}
	if t, ok := numberDatetimeText(nr, micro); ok {
		return t
	}
	return v
}

// numericType reports whether t is a number MySQL would read as a date
// (not a YEAR, not a BIT).
func numericType(t sql.Type) bool {
	return types.IsNumber(t) && !types.IsYear(t) && !types.IsBit(t)
}

// NumbersAsDates reads as dates the numbers of n that meet dates: put in
// a date column by INSERT … VALUES, set in one, cast to a date, compared
// to one, given to a date function. The analyzer's rules (castRule) and
// the execution of the INSERT, UPDATE and DELETE go-mysql-server plans
// without them (adminExec) call it.
func NumbersAsDates(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	same := transform.SameTree
	if ins, ok := n.(*plan.InsertInto); ok {
		if d := insertDates(ins); d != nil {
			n, same = d, transform.NewTree
		}
	}
	n, exprsSame, err := compat.TransformAllExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if t := temporalOperands(e); t != nil {
			return t, transform.NewTree, nil
		}
		switch e := e.(type) {
		case *numberAsDatetime, *temporalNumber:
			return e, transform.SameTree, nil
		case *expression.Convert:
			if types.IsTime(e.Type()) && numericType(e.Child.Type()) {
				c, err := e.WithChildren(asDate(e.Child, false))
				return c, transform.NewTree, err
			}
		case *expression.SetField:
			if types.IsTime(e.LeftChild.Type()) && numericType(e.RightChild.Type()) {
				c, err := e.WithChildren(e.LeftChild, asDate(e.RightChild, true))
				return c, transform.NewTree, err
			}
		case expression.Comparer:
			if c := datesOfComparison(e); c != nil {
				return c, transform.NewTree, nil
			}
		case sql.FunctionExpression:
			if d := dateArguments(e); d != nil {
				return d, transform.NewTree, nil
			}
		}
		return e, transform.SameTree, nil
	})
	return n, same && exprsSame, err
}

// asDate returns e read as a date where it is a number: wrapped in
// numberAsDatetime, or with fold, a literal as the text it spells.
func asDate(e sql.Expression, fold bool) sql.Expression {
	if e == nil || !numericType(e.Type()) {
		return e
	}
	if _, wrapped := e.(*numberAsDatetime); wrapped {
		return e
	}
	if lit, ok := e.(*expression.Literal); ok && fold {
		if t, ok := NumberAsDate(lit.Value()).(string); ok {
			return expression.NewLiteral(t, types.LongText)
		}
		return e
	}
	return &numberAsDatetime{UnaryExpression: expression.UnaryExpression{Child: e}}
}

// numberAsDatetime is its child, a number, read as a date (NumberAsDate).
type numberAsDatetime struct{ expression.UnaryExpression }

var _ sql.Expression = (*numberAsDatetime)(nil)

func (n *numberAsDatetime) Type() sql.Type   { return types.LongText }
func (n *numberAsDatetime) String() string   { return n.Child.String() }
func (n *numberAsDatetime) IsNullable() bool { return n.Child.IsNullable() }

func (n *numberAsDatetime) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := n.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	return NumberAsDate(v), nil
}

func (n *numberAsDatetime) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return &numberAsDatetime{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// dateArgs are the functions whose arguments at these places are dates
// (-1: all of them).
var dateArgs = map[string][]int{
	"date": {0}, "year": {0}, "month": {0}, "day": {0}, "dayofmonth": {0}, "dayofweek": {0},
	"dayofyear": {0}, "dayname": {0}, "monthname": {0}, "quarter": {0}, "week": {0},
	"weekofyear": {0}, "yearweek": {0}, "weekday": {0}, "last_day": {0}, "to_days": {0},
	"date_format": {0}, "date_add": {0}, "date_sub": {0}, "adddate": {0}, "subdate": {0},
	"datediff": {-1}, "unix_timestamp": {0}, "to_seconds": {0},
}

// dateArguments returns f with its numeric date arguments read as dates,
// or nil when it has none.
func dateArguments(f sql.FunctionExpression) sql.Expression {
	at, ok := dateArgs[strings.ToLower(f.FunctionName())]
	if !ok {
		return nil
	}
	if at[0] == -1 {
		at = nil
		for i := range f.Children() {
			at = append(at, i)
		}
	}
	return withChildrenAt(f, at, func(c sql.Expression) sql.Expression { return asDate(c, false) })
}

// withChildrenAt returns e with wrap applied to its children at the
// places at, or nil when wrap changed none.
func withChildrenAt(e sql.Expression, at []int, wrap func(sql.Expression) sql.Expression) sql.Expression {
	out := append([]sql.Expression(nil), e.Children()...)
	changed := false
	for _, i := range at {
		if i >= len(out) {
			continue
		}
		if w := wrap(out[i]); w != out[i] {
			out[i], changed = w, true
		}
	}
	if !changed {
		return nil
	}
	n, err := e.WithChildren(out...)
	if err != nil {
		return nil
	}
	return n
}

// datesOfComparison returns c with a number compared to a date read as a
// date, or nil.
func datesOfComparison(c expression.Comparer) sql.Expression {
	l, r := c.Left(), c.Right()
	switch {
	case types.IsTime(l.Type()) && numericType(r.Type()):
		r = asDate(r, false)
	case types.IsTime(r.Type()) && numericType(l.Type()):
		l = asDate(l, false)
	default:
		return nil
	}
	e, err := c.WithChildren(l, r)
	if err != nil {
		return nil
	}
	return e
}

// insertDates returns ins with the numbers its VALUES put in date columns
// read as dates, or nil. Its source is the VALUES, or by execution a
// projection of them onto the table's columns.
func insertDates(ins *plan.InsertInto) sql.Node {
	if ins.Destination == nil {
		return nil
	}
	schema := ins.Destination.Schema()
	var colType func(i int) sql.Type
	values, ok := ins.Source.(*plan.Values)
	proj, projected := ins.Source.(*plan.Project)
	switch {
	case ok:
		colType = func(i int) sql.Type {
			if len(ins.ColumnNames) > 0 {
				if i < len(ins.ColumnNames) {
					if j := schema.IndexOfColName(ins.ColumnNames[i]); j >= 0 {
						return schema[j].Type
					}
				}
				return nil
			}
			if i < len(schema) {
				return schema[i].Type
			}
			return nil
		}
	case projected:
		if values, ok = proj.Child.(*plan.Values); !ok || len(proj.Projections) != len(schema) {
			return nil
		}
		at := map[int]sql.Type{}
		for j, pe := range proj.Projections {
			if a, isAlias := pe.(*expression.Alias); isAlias {
				pe = a.Child
			}
			if gf, isField := pe.(*expression.GetField); isField {
				at[gf.Index()] = schema[j].Type
			}
		}
		colType = func(i int) sql.Type { return at[i] }
	default:
		return nil
	}
	var tuples [][]sql.Expression
	for ti, tuple := range values.ExpressionTuples {
		var copied bool
		for i, e := range tuple {
			if t := colType(i); t == nil || !types.IsTime(t) {
				continue
			}
			if w := asDate(e, true); w != e {
				if tuples == nil {
					tuples = append([][]sql.Expression(nil), values.ExpressionTuples...)
				}
				if !copied {
					tuples[ti], copied = append([]sql.Expression(nil), tuple...), true
				}
				tuples[ti][i] = w
			}
		}
	}
	if tuples == nil {
		return nil
	}
	nv := *values
	nv.ExpressionTuples = tuples
	if !projected {
		return ins.WithSource(&nv)
	}
	src, err := proj.WithChildren(&nv)
	if err != nil {
		return nil
	}
	return ins.WithSource(src)
}
