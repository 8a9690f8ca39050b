package funcs

import (
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// TimestampDiff is TIMESTAMPDIFF with MySQL's count of months (and of
// quarters and years, made of them): the whole calendar months from the
// earlier time to the later, a month short when the later one's day of
// the month, or on the same day its time of day, comes before the
// earlier one's. go-mysql-server v0.20 counted 30-day periods:
// TIMESTAMPDIFF(MONTH, '2024-01-31', '2024-03-30') was 0, not 1. The
// other units are go-mysql-server's (exact durations).
type TimestampDiff struct {
	*function.TimestampDiff
}

func (t *TimestampDiff) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := t.TimestampDiff.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &TimestampDiff{TimestampDiff: n.(*function.TimestampDiff)}, nil
}

func (t *TimestampDiff) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	args := t.Children()
	u, err := args[0].Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	unit, ok := u.(string)
	if !ok {
		return t.TimestampDiff.Eval(ctx, row)
	}
	var per int64
	switch strings.TrimPrefix(strings.ToLower(unit), "sql_tsi_") {
	case "month":
		per = 1
	case "quarter":
		per = 3
	case "year":
		per = 12
	default:
		return t.TimestampDiff.Eval(ctx, row)
	}
	var times [2]time.Time
	for i, e := range args[1:] {
		v, err := e.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		if v, _, err = types.DatetimeMaxPrecision.Convert(ctx, v); err != nil || v == nil {
			return nil, err
		}
		times[i] = v.(time.Time)
	}
	return calendarMonths(times[0], times[1]) / per, nil
}

// calendarMonths is the whole months from a to b (negative when b is
// before a), as MySQL counts them.
func calendarMonths(a, b time.Time) int64 {
	sign := int64(1)
	if b.Before(a) {
		a, b, sign = b, a, -1
	}
	months := int64(b.Year()-a.Year())*12 + int64(b.Month()) - int64(a.Month())
	sinceMidnight := func(t time.Time) time.Duration {
		return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute +
			time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond())
	}
	if b.Day() < a.Day() || (b.Day() == a.Day() && sinceMidnight(b) < sinceMidnight(a)) {
		months--
	}
	return sign * months
}
