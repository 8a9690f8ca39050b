package funcs

import (
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// In arithmetic MySQL reads a date as the number its digits spell: a DATE
// as YYYYMMDD (d + 0 is 20240305), a TIME as hhmmss, a DATETIME(n) as
// YYYYMMDDhhmmss with its n digits of fraction. go-mysql-server read a
// DATE as YYYYMMDDhhmmss (d + 0 was 20240305000000, d - 1 20240304999999),
// a TIME as 0 with a warning, dropped a DATETIME's fraction, and refused
// a date in DIV, MOD, ABS and ROUND (1105). NumbersAsDates puts
// temporalNumber in front of such an operand.

// temporalNumber is its child, a DATE, TIME or DATETIME(n) column, as the
// number MySQL reads it as.
type temporalNumber struct {
	expression.UnaryExpression
	typ sql.Type
}

var _ sql.Expression = (*temporalNumber)(nil)

// asNumber returns e as temporalNumber when it is a DATE, a TIME, or a
// DATETIME or TIMESTAMP column with a fraction (others are read as
// go-mysql-server reads them: YYYYMMDDhhmmss), e otherwise.
func asNumber(e sql.Expression) sql.Expression {
	if _, done := e.(*temporalNumber); done {
		return e
	}
	t := e.Type()
	switch {
	case TimeDigits(t) > 0:
		// A TIME(n): hhmmss with its n digits of fraction.
		p := TimeDigits(t)
		return &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: e}, typ: types.MustCreateDecimalType(uint8(7+p), uint8(p))}
	case types.IsDateType(t), IsTimeType(t):
		return &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: e}, typ: types.Int64}
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		dt, ok := t.(sql.DatetimeType)
		if _, column := e.(*expression.GetField); !ok || !column || dt.Precision() == 0 {
			return e
		}
		p := dt.Precision()
		return &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: e}, typ: types.MustCreateDecimalType(uint8(14+p), uint8(p))}
	}
	return e
}

func (n *temporalNumber) Type() sql.Type   { return n.typ }
func (n *temporalNumber) String() string   { return n.Child.String() }
func (n *temporalNumber) IsNullable() bool { return n.Child.IsNullable() }

func (n *temporalNumber) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := n.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	switch x := v.(type) {
	case time.Time:
		ymd := int64(x.Year())*10000 + int64(x.Month())*100 + int64(x.Day())
		if n.typ == types.Int64 {
			return ymd, nil
		}
		hms := int64(x.Hour())*10000 + int64(x.Minute())*100 + int64(x.Second())
		whole := decimal.NewFromInt(ymd*1000000 + hms)
		dt, _ := n.typ.(sql.DecimalType)
		frac := decimal.New(int64(x.Nanosecond()/1000), -6).Truncate(int32(dt.Scale()))
		return whole.Add(frac), nil
	case types.Timespan:
		us := x.AsMicroseconds()
		neg := us < 0
		if neg {
			us = -us
		}
		s := us / 1000000
		hms := s/3600*10000 + s/60%60*100 + s%60
		if dt, ok := n.typ.(sql.DecimalType); ok {
			d := decimal.NewFromInt(hms).Add(decimal.New(us%1000000, -6).Truncate(int32(dt.Scale())))
			if neg {
				d = d.Neg()
			}
			return d, nil
		}
		if neg {
			hms = -hms
		}
		return hms, nil
	}
	return n.Child.Eval(ctx, row)
}

func (n *temporalNumber) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return &temporalNumber{UnaryExpression: expression.UnaryExpression{Child: children[0]}, typ: n.typ}, nil
}

// numericFunctions are the functions whose first argument is a number.
var numericFunctions = map[string]bool{"abs": true, "round": true, "floor": true, "ceil": true, "ceiling": true, "sign": true, "truncate": true}

// temporalOperands returns e with its DATE, TIME and DATETIME(n) operands
// read as numbers (an arithmetic operation that is no date ± INTERVAL, a
// unary minus, a numeric function), or nil.
func temporalOperands(e sql.Expression) sql.Expression {
	var at []int
	switch x := e.(type) {
	case *expression.Arithmetic, *expression.Div, *expression.IntDiv, *expression.Mod:
		for _, c := range x.Children() {
			if _, interval := c.(*expression.Interval); interval {
				return nil
			}
		}
		at = []int{0, 1}
	case *expression.UnaryMinus:
		at = []int{0}
	case sql.FunctionExpression:
		if !numericFunctions[strings.ToLower(x.FunctionName())] {
			return nil
		}
		at = []int{0}
	default:
		return nil
	}
	return withChildrenAt(e, at, asNumber)
}
