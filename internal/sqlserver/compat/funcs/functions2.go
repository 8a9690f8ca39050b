package funcs

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// More of MySQL's functions go-mysql-server v0.20 does not have (1305):
// OCT, TO_SECONDS, PERIOD_ADD, PERIOD_DIFF, MAKETIME and UTC_DATE; and
// MICROSECOND of a TIME (Overridden: go-mysql-server read its argument
// as a DATETIME, and MICROSECOND('12:00:00.123456') failed with 1292).
var MoreFunctions = []sql.Function{
	sql.Function1{Name: "oct", Fn: func(n sql.Expression) sql.Expression {
		return &Scalar{Name: "OCT", Args: []sql.Expression{n}, TypeOf: func([]sql.Expression) sql.Type { return octType }, EvalArgs: octEval}
	}},
	sql.Function1{Name: "to_seconds", Fn: func(d sql.Expression) sql.Expression {
		return &Scalar{Name: "TO_SECONDS", Args: []sql.Expression{d}, TypeOf: func([]sql.Expression) sql.Type { return types.Int64 }, EvalArgs: toSecondsEval}
	}},
	sql.Function2{Name: "period_add", Fn: func(p, n sql.Expression) sql.Expression {
		return &Scalar{Name: "PERIOD_ADD", Args: []sql.Expression{p, n}, TypeOf: func([]sql.Expression) sql.Type { return types.Int32 }, EvalArgs: periodAddEval}
	}},
	sql.Function2{Name: "period_diff", Fn: func(p1, p2 sql.Expression) sql.Expression {
		return &Scalar{Name: "PERIOD_DIFF", Args: []sql.Expression{p1, p2}, TypeOf: func([]sql.Expression) sql.Type { return types.Int32 }, EvalArgs: periodDiffEval}
	}},
	sql.Function3{Name: "maketime", Fn: func(h, m, s sql.Expression) sql.Expression {
		return &Scalar{Name: "MAKETIME", Args: []sql.Expression{h, m, s}, TypeOf: func([]sql.Expression) sql.Type { return types.Time }, EvalArgs: makeTimeEval}
	}},
	sql.Function0{Name: "utc_date", Fn: func() sql.Expression {
		return &Scalar{Name: "UTC_DATE", TypeOf: func([]sql.Expression) sql.Type { return types.Date }, EvalArgs: utcDateEval}
	}},
}

// microsecondEval is MICROSECOND(expr): the microseconds of a DATETIME,
// or of a TIME.
func microsecondEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	if v, _, err := types.DatetimeMaxPrecision.Convert(ctx, vals[0]); err == nil {
		if t, ok := v.(time.Time); ok {
			return int64(t.Nanosecond() / 1000), nil
		}
	}
	v, _, err := types.Time.Convert(ctx, vals[0])
	ts, ok := v.(types.Timespan)
	if err != nil || !ok {
		ctx.Warn(1292, "Incorrect time value: '%v'", vals[0])
		return nil, nil
	}
	us := int64(ts)
	if us < 0 {
		us = -us
	}
	return us % 1e6, nil
}

// octType is OCT's VARCHAR: 22 digits hold any 64 bits.
var octType = types.MustCreateString(sqltypes.VarChar, 22, sql.Collation_Default)

// octEval is OCT(N): N's octal digits, a negative N as its 64-bit
// two's complement (as CONV(N, 10, 8)).
func octEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	n, _, err := types.Int64.Convert(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	return strconv.FormatUint(uint64(n.(int64)), 8), nil
}

// dayNumber is MySQL's day number of a date (calc_daynr): days since
// the year 0, as TO_DAYS gives them.
func dayNumber(year, month, day int64) int64 {
	if year == 0 && month == 0 {
		return 0
	}
	n := 365*year + 31*(month-1) + day
	if month <= 2 {
		year--
	} else {
		n -= (month*4 + 23) / 10
	}
	return n + year/4 - ((year/100+1)*3)/4
}

// toSecondsEval is TO_SECONDS(expr): seconds since the year 0.
func toSecondsEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	arg := vals[0]
	switch arg.(type) {
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		arg = fmt.Sprint(arg) // 20240101, as a date
	}
	v, _, err := types.DatetimeMaxPrecision.Convert(ctx, arg)
	t, ok := v.(time.Time)
	if err != nil || !ok {
		ctx.Warn(1292, "Incorrect datetime value: '%v'", vals[0])
		return nil, nil
	}
	days := dayNumber(int64(t.Year()), int64(t.Month()), int64(t.Day()))
	return days*86400 + int64(t.Hour()*3600+t.Minute()*60+t.Second()), nil
}

// periodMonths is a period (YYMM or YYYYMM) as months since the year 0;
// a two-digit year is 1970–2069.
func periodMonths(p int64) int64 {
	if p == 0 {
		return 0
	}
	y := p / 100
	switch {
	case y < 70:
		y += 2000
	case y < 100:
		y += 1900
	}
	return y*12 + p%100 - 1
}

// monthsPeriod is months since the year 0 as a period, YYYYMM.
func monthsPeriod(m int64) int64 {
	if m == 0 {
		return 0
	}
	y := m / 12
	if y < 100 {
		if y < 70 {
			y += 2000
		} else {
			y += 1900
		}
	}
	return y*100 + m%12 + 1
}

func periodArgs(ctx *sql.Context, vals []any) (int64, int64, error) {
	a, _, err := types.Int64.Convert(ctx, vals[0])
	if err != nil {
		return 0, 0, err
	}
	b, _, err := types.Int64.Convert(ctx, vals[1])
	if err != nil {
		return 0, 0, err
	}
	return a.(int64), b.(int64), nil
}

// periodAddEval is PERIOD_ADD(P, N): N months after period P, as YYYYMM.
func periodAddEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	p, n, err := periodArgs(ctx, vals)
	if err != nil || p == 0 {
		return int32(0), err
	}
	return int32(monthsPeriod(periodMonths(p) + n)), nil
}

// periodDiffEval is PERIOD_DIFF(P1, P2): the months from P2 to P1.
func periodDiffEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	p1, p2, err := periodArgs(ctx, vals)
	if err != nil {
		return nil, err
	}
	return int32(periodMonths(p1) - periodMonths(p2)), nil
}

// makeTimeEval is MAKETIME(hour, minute, second): NULL for a minute
// outside 0–59 or a second outside [0, 60); hours past 838 are 838:59:59
// with a warning.
func makeTimeEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	h, _, err := types.Int64.Convert(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	m, _, err := types.Int64.Convert(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	s, _, err := types.Float64.Convert(ctx, vals[2])
	if err != nil {
		return nil, err
	}
	hours, minutes, secs := h.(int64), m.(int64), s.(float64)
	if minutes < 0 || minutes > 59 || secs < 0 || secs >= 60 {
		return nil, nil
	}
	neg := hours < 0
	if neg {
		hours = -hours
	}
	whole := int64(secs)
	micros := int64(math.Round((secs - float64(whole)) * 1e6))
	text := fmt.Sprintf("%02d:%02d:%02d", hours, minutes, whole)
	if hours*3600+minutes*60+whole > maxTimeSeconds {
		text, micros = "838:59:59", 0
		ctx.Warn(1292, "Truncated incorrect time value: '%02d:%02d:%02d'", h, m, whole)
	}
	if micros > 0 {
		text += fmt.Sprintf(".%06d", micros)
	}
	if neg {
		text = "-" + text
	}
	v, _, err := types.Time.Convert(ctx, text)
	return v, err
}

// utcDateEval is UTC_DATE(): the statement's date in UTC.
func utcDateEval(ctx *sql.Context, _ []sql.Expression, _ []any) (any, error) {
	t := ctx.QueryTime().UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
}
