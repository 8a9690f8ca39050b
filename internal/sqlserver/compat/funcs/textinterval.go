package funcs

import (
	"regexp"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// TextDateInterval returns text ± INTERVAL n DAY (or WEEK, MONTH, QUARTER,
// YEAR) as MySQL answers it, or nil when e is not one: a string, which is
// the date alone ('2026-03-25') when the text was a date alone and the date
// and time otherwise. go-mysql-server made it a DATETIME ('2026-03-25
// 00:00:00'); DATE '2026-03-24' + INTERVAL 1 DAY is one of them, as the
// parser reads DATE '…' as its text.
func TextDateInterval(e *expression.Arithmetic) sql.Expression {
	if e.Op != "+" && e.Op != "-" {
		return nil
	}
	text, iv := e.Left(), e.Right()
	if _, ok := text.(*expression.Interval); ok && e.Op == "+" {
		text, iv = iv, text
	}
	in, ok := iv.(*expression.Interval)
	if !ok || !types.IsText(text.Type()) {
		return nil
	}
	switch strings.ToUpper(in.Unit) {
	case "DAY", "WEEK", "MONTH", "QUARTER", "YEAR", "YEAR_MONTH":
	default:
		return nil
	}
	return &textInterval{UnaryExpression: expression.UnaryExpression{Child: e}, text: text}
}

// textInterval is text ± an interval of whole days or more (Child, which
// stays an Arithmetic: go-mysql-server refuses an interval anywhere else).
type textInterval struct {
	expression.UnaryExpression
	text sql.Expression // the text operand, one of Child's
}

func (e *textInterval) Type() sql.Type { return types.LongText }

func (e *textInterval) String() string { return e.Child.String() }

func (e *textInterval) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := e.Child.Eval(ctx, row)
	t, ok := v.(time.Time)
	if err != nil || !ok {
		return v, err
	}
	s, err := e.text.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if s, ok := s.(string); ok && dateOnlyText.MatchString(s) {
		return t.Format("2006-01-02"), nil
	}
	if t.Nanosecond() != 0 {
		return t.Format("2006-01-02 15:04:05.000000"), nil
	}
	return t.Format("2006-01-02 15:04:05"), nil
}

func (e *textInterval) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	if a, ok := children[0].(*expression.Arithmetic); ok {
		if t := TextDateInterval(a); t != nil {
			return t, nil
		}
	}
	return children[0], nil
}

// dateOnlyText is a date written without a time.
var dateOnlyText = regexp.MustCompile(`^\s*(\d{1,4}[-/.:]\d{1,2}[-/.:]\d{1,2}|\d{6}|\d{8})\s*$`)
