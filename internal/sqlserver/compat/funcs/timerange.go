package funcs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/shopspring/decimal"
)

// A TIME beyond MySQL's range, ±838:59:59. go-mysql-server clamps it in
// silence ('839:00:00' was stored as 838:59:59). MySQL, in a strict mode
// and without IGNORE, refuses it (1292, Incorrect time value: '839:00:00'
// for column 't' at row 1); otherwise it stores the end of the range with
// Warning 1264 (Out of range value). INSERT rows (insertRows), UPDATE and
// ON DUPLICATE KEY UPDATE assignments (TimeCheck) are checked here; a
// compiled statement leaves such a value to the planner. The same paths
// read a TIME written with days ('1 10:30:00'), which go-mysql-server
// refused (timeDaysText).

// TimeBeyondRange reports whether v, written into a TIME column, is a
// time beyond ±838:59:59 (maxTimeSeconds, functions.go) as MySQL reads it
// ('839:00:00', '35 00:00:00', 8390000 for 839:00:00); false for a value
// it cannot read (the conversion reports that one) and for fractions of a
// second.
func TimeBeyondRange(v any) bool {
	s, ok := TextValue(v)
	if !ok {
		switch v.(type) {
		case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint, float32, float64, decimal.Decimal:
			s = fmt.Sprint(v)
		default:
			return false
		}
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

// timeDaysText rewrites a TIME written with a count of days, as MySQL
// takes it ('1 10:30:00' is 34:30:00, '-2 03' is -51:00:00), in hours,
// which go-mysql-server's conversion reads (it refuses the days); false
// for a value that is not such text. A fraction of a second is kept.
func timeDaysText(v any) (string, bool) {
	s, ok := TextValue(v)
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign = "-"
	}
	body := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	sp := strings.IndexByte(body, ' ')
	if sp <= 0 {
		return "", false
	}
	if rest := strings.TrimSpace(body[sp+1:]); !strings.Contains(rest, ":") && len(rest) < 2 {
		return "", false // 'D H': MariaDB refuses it (1292), 'D HH' it takes
	}
	frac := ""
	if i := strings.IndexByte(body, '.'); i > sp {
		frac = body[i:]
	}
	secs, ok := timeSeconds(body)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s%d:%02d:%02d%s", sign, secs/3600, secs/60%60, secs%60, frac), true
}

// timeBeyond is the error (refuse) or the value to store instead, with
// its warning, of a TIME v beyond the range for column col at row at.
func timeBeyond(ctx *sql.Context, col string, v any, at int, refuse bool) (any, error) {
	given := v
	if t, ok := TextValue(v); ok {
		given = t
	}
	if refuse {
		return nil, mysql.NewSQLError(1292, "22007", "Incorrect time value: '%v' for column '%s' at row %d", given, col, at)
	}
	ctx.Warn(1264, "Out of range value for column '%s' at row %d", col, at)
	if strings.HasPrefix(strings.TrimSpace(fmt.Sprint(given)), "-") {
		return "-838:59:59", nil
	}
	return "838:59:59", nil
}

// TimeWritten is what goes into TIME column col for v, written at row
// at: the end of the range or an error for a time beyond it (timeBeyond),
// the hours of one written with days (timeDaysText), the column's digits
// for one with a fraction (timeRounded; digits is 0 for TIME, n for
// TIME(n)); changed is false when v goes as it is.
func TimeWritten(ctx *sql.Context, col string, digits int, v any, at int, refuse bool) (nv any, changed bool, err error) {
	if TimeBeyondRange(v) {
		nv, err = timeBeyond(ctx, col, v, at, refuse)
		return nv, true, err
	}
	if t, ok := timeDaysText(v); ok {
		v, changed = t, true
	}
	if r, ok := timeRounded(v, digits); ok {
		return r, true, nil
	}
	return v, changed, nil
}

// timeRounded is v, a time with more digits after the seconds than a
// TIME(digits) column keeps, rounded to them (half away from zero) as
// MySQL 8 stores it; go-mysql-server kept the fraction ('12:34:56.789'
// was stored and shown as 12:34:56.789000 in a TIME column, where MySQL
// has 12:34:57). False when v needs no rounding or is no time (the
// conversion reports that one). Rounding never leaves the range: it ends
// at ±838:59:59.
func timeRounded(v any, digits int) (types.Timespan, bool) {
	ts, err := types.Time.ConvertToTimespan(v)
	if err != nil {
		return 0, false
	}
	r := RoundTimespan(ts, digits)
	return r, r != ts
}

// TimeFraction reports whether v, written into a TIME column (digits 0)
// or a TIME(n) one, has digits to round (timeRounded): a compiled
// statement leaves it to the planner, which rounds it.
func TimeFraction(v any, digits int) bool {
	_, ok := timeRounded(v, digits)
	return ok
}

// TimeCheck checks a value for TIME column col with digits digits
// (TimeWritten).
func TimeCheck(col string, digits int, refuse bool) func(*sql.Context, any, int) (any, error) {
	return func(ctx *sql.Context, v any, at int) (any, error) {
		nv, _, err := TimeWritten(ctx, col, digits, v, at, refuse)
		return nv, err
	}
}

// timeDaysLiteral is text literal e written with days as the hours it
// means, where it is compared with a TIME; e itself for anything else.
func timeDaysLiteral(e sql.Expression) sql.Expression {
	le, ok := e.(*expression.Literal)
	if !ok {
		return e
	}
	t, ok := timeDaysText(le.Value())
	if !ok {
		return e
	}
	return expression.NewLiteral(t, le.Type())
}

// TimeDaysBetween is TimeDaysComparison for TIME BETWEEN a AND b.
func TimeDaysBetween(e *expression.Between) (sql.Expression, bool) {
	if !IsTimeType(e.Val.Type()) {
		return nil, false
	}
	lo, hi := timeDaysLiteral(e.Lower), timeDaysLiteral(e.Upper)
	if lo == e.Lower && hi == e.Upper {
		return nil, false
	}
	return expression.NewBetween(e.Val, lo, hi), true
}

// TimeDaysIn is TimeDaysComparison for TIME IN (a, b, …).
func TimeDaysIn(e *expression.InTuple) (sql.Expression, bool) {
	tup, ok := e.Right().(expression.Tuple)
	if !ok || !IsTimeType(e.Left().Type()) {
		return nil, false
	}
	out, changed := make(expression.Tuple, len(tup)), false
	for i, x := range tup {
		out[i] = timeDaysLiteral(x)
		changed = changed || out[i] != x
	}
	if !changed {
		return nil, false
	}
	return expression.NewInTuple(e.Left(), out), true
}

// TimeDaysComparison rewrites comparison e of a TIME with a text literal
// written with days ('1 10:00:00') to compare with the hours it means
// (timeDaysText), which go-mysql-server's conversion reads; false when e
// is no such comparison.
func TimeDaysComparison(e expression.Comparer) (sql.Expression, bool) {
	l, r := e.Left(), e.Right()
	nl, nr := l, r
	if IsTimeType(r.Type()) {
		nl = timeDaysLiteral(l)
	}
	if nl == l && IsTimeType(l.Type()) {
		nr = timeDaysLiteral(r)
	}
	if nl == l && nr == r {
		return nil, false
	}
	ne, err := e.WithChildren(nl, nr)
	return ne, err == nil
}
