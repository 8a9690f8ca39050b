package sqlserver

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/shopspring/decimal"
)

// A TIME beyond MySQL's range, ±838:59:59. go-mysql-server clamps it in
// silence ('839:00:00' was stored as 838:59:59). MySQL, in a strict mode
// and without IGNORE, refuses it (1292, Incorrect time value: '839:00:00'
// for column 't' at row 1); otherwise it stores the end of the range with
// Warning 1264 (Out of range value). INSERT rows (insertRows), UPDATE and
// ON DUPLICATE KEY UPDATE assignments (timeAssign) are checked here; a
// compiled statement leaves such a value to the planner.

// timeBeyondRange reports whether v, written into a TIME column, is a
// time beyond ±838:59:59 (maxTimeSeconds, functions.go) as MySQL reads it ('839:00:00', '35 00:00:00',
// 8390000 for 839:00:00); false for a value it cannot read (the
// conversion reports that one) and for fractions of a second.
func timeBeyondRange(v any) bool {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		s = fmt.Sprint(x)
	case float32, float64, decimal.Decimal:
		s = fmt.Sprint(x)
	default:
		return false
	}
	secs, ok := timeSeconds(s)
	return ok && secs > maxTimeSeconds
}

// timeSeconds reads text as MySQL reads a TIME (its whole seconds, sign
// dropped): [D ]H[:M[:S]], or the digits HHMMSS; a fraction is ignored.
func timeSeconds(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	var days int64
	if i := strings.IndexByte(s, ' '); i >= 0 {
		d, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || d < 0 {
			return 0, false
		}
		days, s = d, strings.TrimSpace(s[i+1:])
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 || s == "" {
		return 0, false
	}
	var h, m, sec int64
	if len(parts) == 1 && days == 0 {
		n, err := strconv.ParseInt(parts[0], 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		h, m, sec = n/10000, n/100%100, n%100
	} else {
		nums := make([]int64, 3)
		for i, p := range parts {
			n, err := strconv.ParseInt(p, 10, 64)
			if err != nil || n < 0 {
				return 0, false
			}
			nums[i] = n
		}
		h, m, sec = nums[0], nums[1], nums[2]
	}
	if m > 59 || sec > 59 {
		return 0, false
	}
	return (days*24+h)*3600 + m*60 + sec, true
}

// timeBeyond is the error (refuse) or the value to store instead, with
// its warning, of a TIME v beyond the range for column col at row at.
func timeBeyond(ctx *sql.Context, col string, v any, at int, refuse bool) (any, error) {
	if refuse {
		return nil, mysql.NewSQLError(1292, "22007", "Incorrect time value: '%v' for column '%s' at row %d", text(v), col, at)
	}
	ctx.Warn(1264, "Out of range value for column '%s' at row %d", col, at)
	if strings.HasPrefix(strings.TrimSpace(fmt.Sprint(text(v))), "-") {
		return "-838:59:59", nil
	}
	return "838:59:59", nil
}

func text(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

// timeAssign is the value of an UPDATE's assignment to a TIME column,
// checked against the range; it counts the rows it is evaluated for.
type timeAssign struct {
	sql.Expression
	col    string
	refuse bool
	rows   int
	at     func() int // the row an error names; nil: rows
}

func (a *timeAssign) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	a.rows++
	v, err := a.Expression.Eval(ctx, row)
	if err != nil || v == nil || !timeBeyondRange(v) {
		return v, err
	}
	at := a.rows
	if a.at != nil {
		at = a.at()
	}
	return timeBeyond(ctx, a.col, v, at, a.refuse)
}

func (a *timeAssign) Children() []sql.Expression { return []sql.Expression{a.Expression} }

func (a *timeAssign) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 1)
	}
	c := *a
	c.Expression = children[0]
	return &c, nil
}

func (a *timeAssign) String() string { return a.Expression.String() }
