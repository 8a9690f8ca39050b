package funcs

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Functions are MySQL functions go-mysql-server v0.20 does not have
// ("function: 'truncate' not found"), registered in the catalog.
var Functions = []sql.Function{
	sql.Function2{Name: "truncate", Fn: func(x, d sql.Expression) sql.Expression {
		return &Scalar{Name: "TRUNCATE", Args: []sql.Expression{x, d}, TypeOf: truncateType, EvalArgs: truncateEval}
	}},
	sql.Function2{Name: "makedate", Fn: func(y, d sql.Expression) sql.Expression {
		return &Scalar{Name: "MAKEDATE", Args: []sql.Expression{y, d}, TypeOf: func([]sql.Expression) sql.Type { return types.Date }, EvalArgs: makedateEval}
	}},
	sql.Function1{Name: "sec_to_time", Fn: func(s sql.Expression) sql.Expression {
		return &Scalar{Name: "SEC_TO_TIME", Args: []sql.Expression{s}, TypeOf: func([]sql.Expression) sql.Type { return types.Time }, EvalArgs: secToTimeEval}
	}},
	sql.FunctionN{Name: "insert", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		if len(args) != 4 {
			return nil, sql.ErrInvalidArgumentNumber.New("INSERT", 4, len(args))
		}
		return &Scalar{Name: "INSERT", Args: args, TypeOf: func([]sql.Expression) sql.Type { return types.LongText }, EvalArgs: insertEval}, nil
	}},
	sql.Function2{Name: "addtime", Fn: func(a, b sql.Expression) sql.Expression {
		return &Scalar{Name: "ADDTIME", Args: []sql.Expression{a, b}, TypeOf: addTimeType, EvalArgs: addTimeEval(1)}
	}},
	sql.Function2{Name: "subtime", Fn: func(a, b sql.Expression) sql.Expression {
		return &Scalar{Name: "SUBTIME", Args: []sql.Expression{a, b}, TypeOf: addTimeType, EvalArgs: addTimeEval(-1)}
	}},
}

// insertEval is INSERT(str, pos, len, newstr): str with the len
// characters from position pos replaced by newstr (the rest of str when
// len goes past its end); str itself when pos is not within it.
func insertEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	s, _, err := types.LongText.Convert(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	repl, _, err := types.LongText.Convert(ctx, vals[3])
	if err != nil {
		return nil, err
	}
	pos, _, err := types.Int64.Convert(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	n, _, err := types.Int64.Convert(ctx, vals[2])
	if err != nil {
		return nil, err
	}
	runes := []rune(s.(string))
	p, l := pos.(int64), n.(int64)
	if p < 1 || p > int64(len(runes)) {
		return s, nil
	}
	end := int64(len(runes))
	if l >= 0 && p-1+l < end {
		end = p - 1 + l
	}
	return string(runes[:p-1]) + repl.(string) + string(runes[end:]), nil
}

// timestampEval is TIMESTAMP(expr, time): the date and time expr plus the
// time. NULL, with a warning, for an argument that is not one.
func timestampEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	dt, _, err := types.DatetimeMaxPrecision.Convert(ctx, vals[0])
	t, ok := dt.(time.Time)
	if err != nil || !ok {
		ctx.Warn(1292, "Incorrect datetime value: '%v'", vals[0])
		return nil, nil
	}
	d, _, err := types.Time.Convert(ctx, vals[1])
	if err != nil || d == nil {
		ctx.Warn(1292, "Incorrect time value: '%v'", vals[1])
		return nil, nil
	}
	return t.Add(time.Duration(int64(d.(types.Timespan))) * time.Microsecond), nil
}

// addTimeType is ADDTIME's and SUBTIME's type: a DATETIME's for a DATETIME
// (or TIMESTAMP), a TIME's for a TIME, text for text, as in MySQL.
func addTimeType(args []sql.Expression) sql.Type {
	t := args[0].Type()
	switch {
	case types.IsTime(t) && !IsTimeType(t):
		return types.DatetimeMaxPrecision
	case IsTimeType(t):
		return types.Time
	}
	return types.LongText
}

// addTimeEval is ADDTIME (sign 1) or SUBTIME (-1): the first argument, a
// time or a date and time, plus (minus) the second, a time. NULL, with a
// warning, for an argument that is not one.
func addTimeEval(sign int64) func(ctx *sql.Context, args []sql.Expression, vals []any) (any, error) {
	return func(ctx *sql.Context, args []sql.Expression, vals []any) (any, error) {
		d, _, err := types.Time.Convert(ctx, vals[1])
		if err != nil || d == nil {
			ctx.Warn(1292, "Incorrect time value: '%v'", vals[1])
			return nil, nil
		}
		delta := sign * int64(d.(types.Timespan))
		frac := hasFraction(vals[0]) || hasFraction(vals[1])
		t0 := args[0].Type()
		isDatetime := types.IsTime(t0) && !IsTimeType(t0)
		if s, ok := vals[0].(string); ok && strings.Contains(strings.TrimSpace(s), "-") && strings.Count(s, ":") > 0 && strings.Contains(strings.TrimSpace(s), " ") {
			isDatetime = true
		}
		if isDatetime {
			dt, _, err := types.DatetimeMaxPrecision.Convert(ctx, vals[0])
			t, ok := dt.(time.Time)
			if err != nil || !ok {
				ctx.Warn(1292, "Incorrect datetime value: '%v'", vals[0])
				return nil, nil
			}
			t = t.Add(time.Duration(delta) * time.Microsecond)
			if !types.IsText(addTimeType(args)) {
				return t, nil
			}
			if frac {
				return t.Format("2006-01-02 15:04:05.000000"), nil
			}
			return t.Format("2006-01-02 15:04:05"), nil
		}
		a, _, err := types.Time.Convert(ctx, vals[0])
		if err != nil || a == nil {
			ctx.Warn(1292, "Incorrect time value: '%v'", vals[0])
			return nil, nil
		}
		sum := int64(a.(types.Timespan)) + delta
		const maxMicros = maxTimeSeconds*1e6 + 999999
		if sum > maxMicros || sum < -maxMicros {
			ctx.Warn(1292, "Truncated incorrect time value: '%v'", sum)
			sum = max(min(sum, maxTimeSeconds*1e6), -maxTimeSeconds*1e6)
		}
		ts := types.Timespan(sum)
		if !types.IsText(addTimeType(args)) {
			return ts, nil
		}
		neg := sum < 0
		if neg {
			sum = -sum
		}
		secs := sum / 1e6
		text := fmt.Sprintf("%02d:%02d:%02d", secs/3600, secs/60%60, secs%60)
		if frac {
			text += fmt.Sprintf(".%06d", sum%1e6)
		}
		if neg {
			text = "-" + text
		}
		return text, nil
	}
}

// hasFraction reports a value with fractional seconds (text with a point,
// or a time or date and time with microseconds).
func hasFraction(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, ".")
	case time.Time:
		return x.Nanosecond() != 0
	case types.Timespan:
		return int64(x)%1e6 != 0
	}
	return false
}

// Overridden are MySQL's versions of functions go-mysql-server has in
// another form (Provider.Function finds them first).
var Overridden = map[string]sql.Function{
	"microsecond": sql.Function1{Name: "microsecond", Fn: func(t sql.Expression) sql.Expression {
		return &Scalar{Name: "MICROSECOND", Args: []sql.Expression{t}, TypeOf: func([]sql.Expression) sql.Type { return types.Int32 }, EvalArgs: microsecondEval}
	}},
	"str_to_date": sql.Function2{Name: "str_to_date", Fn: func(d, f sql.Expression) sql.Expression {
		return &strToDate{StrToDate: function.NewStrToDate(d, f).(*function.StrToDate)}
	}},
	// TIMESTAMP(expr, time) adds the time to the date and time, as
	// ADDTIME does; go-mysql-server knew one argument only (1105).
	"timestamp": sql.FunctionN{Name: "timestamp", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		if len(args) != 2 {
			return function.NewDatetime(args...)
		}
		return &Scalar{Name: "TIMESTAMP", Args: args, TypeOf: func([]sql.Expression) sql.Type { return types.DatetimeMaxPrecision }, EvalArgs: timestampEval}, nil
	}},
	"time_to_sec": sql.Function1{Name: "time_to_sec", Fn: func(t sql.Expression) sql.Expression {
		return &Scalar{Name: "TIME_TO_SEC", Args: []sql.Expression{t}, TypeOf: timeToSecType, EvalArgs: timeToSecEval}
	}},
}

// strToDate is STR_TO_DATE with the hour of a 12-hour clock read with its
// AM or PM (%p, %r): go-mysql-server v0.20 read the marker and dropped it
// (STR_TO_DATE('2:07 PM', '%h:%i %p') was 02:07:00, not 14:07:00).
type strToDate struct {
	*function.StrToDate
}

// amPM finds an AM or PM word in a date string.
var amPM = regexp.MustCompile(`(?i)(?:^|[^a-z])(am|pm)(?:[^a-z]|$)`)

func (s *strToDate) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := s.StrToDate.Eval(ctx, row)
	t, ok := v.(time.Time)
	if err != nil || !ok {
		return v, err
	}
	format, err := s.Format.Eval(ctx, row)
	if f, isStr := format.(string); err != nil || !isStr || !(strings.Contains(f, "%p") || strings.Contains(f, "%r")) {
		return v, err
	}
	date, err := s.Date.Eval(ctx, row)
	d, isStr := date.(string)
	if err != nil || !isStr {
		return v, err
	}
	m := amPM.FindAllStringSubmatch(d, -1)
	if len(m) == 0 {
		return v, nil
	}
	pm := strings.EqualFold(m[len(m)-1][1], "pm")
	switch h := t.Hour(); {
	case pm && h < 12:
		t = t.Add(12 * time.Hour)
	case !pm && h == 12:
		t = t.Add(-12 * time.Hour)
	}
	return t, nil
}

func (s *strToDate) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := s.StrToDate.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &strToDate{StrToDate: n.(*function.StrToDate)}, nil
}

// timeToSecType: the seconds are a BIGINT for an integer, TIME or DATETIME
// argument and for text without fractions of a second; a DECIMAL with the
// text's decimals otherwise (TIME_TO_SEC('00:00:01.5') is 1.5), six for text
// not known before it is read, as in MariaDB.
func timeToSecType(args []sql.Expression) sql.Type {
	if !types.IsText(args[0].Type()) {
		return types.Int64
	}
	scale := 6
	if lit, ok := args[0].(*expression.Literal); ok {
		if s, ok := lit.Value().(string); ok {
			_, terr := types.Time.ConvertToTimespan(s)
			_, _, derr := types.DatetimeMaxPrecision.Convert(sql.NewEmptyContext(), s)
			if terr == nil || derr == nil {
				scale = 0
				if i := strings.IndexByte(s, '.'); i >= 0 {
					scale = min(len(strings.TrimSpace(s[i+1:])), 6)
				}
			}
		}
	}
	if scale == 0 {
		return types.Int64
	}
	return types.MustCreateDecimalType(uint8(10+scale), uint8(scale))
}

// timeToSecEval is TIME_TO_SEC: its argument read as a TIME (the time of
// day of a DATETIME), in seconds. go-mysql-server read it as a DATETIME:
// TIME_TO_SEC('01:02:05') failed with 1292.
func timeToSecEval(ctx *sql.Context, args []sql.Expression, vals []any) (any, error) {
	v := vals[0]
	tv, _, err := types.Time.Convert(ctx, v)
	if err != nil || tv == nil {
		// A DATETIME, or its text: the time of day.
		dt, _, derr := types.DatetimeMaxPrecision.Convert(ctx, v)
		t, ok := dt.(time.Time)
		if derr != nil || !ok {
			ctx.Warn(1292, "Incorrect time value: '%v'", vals[0])
			return nil, nil
		}
		if tv, _, err = types.Time.Convert(ctx, t.Format("15:04:05.999999")); err != nil || tv == nil {
			ctx.Warn(1292, "Incorrect time value: '%v'", vals[0])
			return nil, nil
		}
	}
	micros := int64(tv.(types.Timespan))
	if !types.IsText(args[0].Type()) {
		return micros / 1e6, nil
	}
	if dt, ok := timeToSecType(args).(sql.DecimalType); ok {
		return decimal.New(micros, -6).Round(int32(dt.Scale())), nil
	}
	return micros / 1e6, nil
}

// Scalar is a function of a few arguments whose result is NULL when an
// argument is; or, with evalRow, one that evaluates its arguments itself.
type Scalar struct {
	Name     string
	Args     []sql.Expression
	TypeOf   func(args []sql.Expression) sql.Type
	EvalArgs func(ctx *sql.Context, args []sql.Expression, vals []any) (any, error)
	// evalRow, if set, is the function, given the unevaluated arguments;
	// volatile: its result may differ between calls on the same row.
	evalRow  func(ctx *sql.Context, args []sql.Expression, row sql.Row) (any, error)
	Volatile bool
}

var _ sql.NonDeterministicExpression = (*Scalar)(nil)

func (f *Scalar) IsNonDeterministic() bool { return f.Volatile }

var _ sql.FunctionExpression = (*Scalar)(nil)

func (f *Scalar) FunctionName() string { return strings.ToLower(f.Name) }
func (f *Scalar) Description() string  { return "MySQL's " + f.Name }
func (f *Scalar) Resolved() bool {
	for _, a := range f.Args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}
func (f *Scalar) Type() sql.Type             { return f.TypeOf(f.Args) }
func (f *Scalar) IsNullable() bool           { return true }
func (f *Scalar) Children() []sql.Expression { return f.Args }
func (f *Scalar) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}

func (f *Scalar) String() string {
	s := make([]string, len(f.Args))
	for i, a := range f.Args {
		s[i] = a.String()
	}
	return f.Name + "(" + strings.Join(s, ", ") + ")"
}

func (f *Scalar) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != len(f.Args) {
		return nil, sql.ErrInvalidChildrenNumber.New(f, len(children), len(f.Args))
	}
	c := *f
	c.Args = children
	return &c, nil
}

func (f *Scalar) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if f.evalRow != nil {
		return f.evalRow(ctx, f.Args, row)
	}
	vals := make([]any, len(f.Args))
	for i, a := range f.Args {
		v, err := a.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		vals[i] = v
	}
	return f.EvalArgs(ctx, f.Args, vals)
}

// truncateType is TRUNCATE(X, D)'s type: X's for an integer or a float, a
// DECIMAL with D's scale (when D is a constant) for the rest.
func truncateType(args []sql.Expression) sql.Type {
	t := args[0].Type()
	switch {
	case types.IsInteger(t), types.IsFloat(t):
		return t
	case types.IsDecimal(t):
		dt := t.(sql.DecimalType)
		if d, ok := constInt(args[1]); ok && d >= 0 && d <= MaxDecimalScale {
			return DecimalType(int(dt.Precision())-int(dt.Scale()), int(d))
		}
		return t
	}
	return types.Float64
}

func constInt(e sql.Expression) (int64, bool) {
	if !e.Resolved() || len(e.Children()) > 0 {
		return 0, false
	}
	v, err := e.Eval(sql.NewEmptyContext(), nil)
	if err != nil || v == nil {
		return 0, false
	}
	n, _, err := types.Int64.Convert(sql.NewEmptyContext(), v)
	if err != nil {
		return 0, false
	}
	return n.(int64), true
}

// truncateEval is TRUNCATE(X, D): X cut (toward zero) to D decimals, or
// for a negative D to a multiple of 10^-D.
func truncateEval(ctx *sql.Context, args []sql.Expression, vals []any) (any, error) {
	dv, _, err := types.Int64.Convert(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	d := dv.(int64)
	t := args[0].Type()
	switch {
	case types.IsFloat(t) || !(types.IsInteger(t) || types.IsDecimal(t)):
		fv, _, err := types.Float64.Convert(ctx, vals[0])
		if err != nil {
			return nil, err
		}
		p := math.Pow(10, float64(d))
		return math.Trunc(fv.(float64)*p) / p, nil
	}
	x, err := ExactValue(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	var r decimal.Decimal
	if d >= 0 {
		places := int32(min(d, MaxDecimalScale))
		r = x.Truncate(places).Round(places) // at D decimals: TRUNCATE(1.5, 3) is 1.500
	} else {
		p := decimal.New(1, int32(-d))
		r = x.Div(p).Truncate(0).Mul(p)
	}
	if types.IsInteger(t) {
		n, _, err := t.Convert(ctx, r)
		return n, err
	}
	return r, nil
}

// makedateEval is MAKEDATE(year, dayofyear): the date of that day of the
// year (past its end, the next years'); NULL for a day below 1.
func makedateEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	yv, _, err := types.Int64.Convert(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	dv, _, err := types.Int64.Convert(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	y, d := yv.(int64), dv.(int64)
	if d <= 0 || y < 0 || y > 9999 {
		return nil, nil
	}
	if y < 70 {
		y += 2000
	} else if y < 100 {
		y += 1900
	}
	t := time.Date(int(y), 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(d-1))
	if t.Year() > 9999 {
		return nil, nil
	}
	return t, nil
}

// maxTimeSeconds is TIME's largest value, 838:59:59.
const maxTimeSeconds = 838*3600 + 59*60 + 59

// secToTimeEval is SEC_TO_TIME(seconds) as a TIME, clamped to TIME's range.
func secToTimeEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	fv, _, err := types.Float64.Convert(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	s := int64(fv.(float64))
	neg := s < 0
	if neg {
		s = -s
	}
	if s > maxTimeSeconds {
		s = maxTimeSeconds
		ctx.Warn(1292, "Truncated incorrect time value: '%v'", vals[0])
	}
	text := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if neg {
		text = "-" + text
	}
	v, _, err := types.Time.Convert(ctx, text)
	return v, err
}

// DecimalType is the DECIMAL of intDigits digits before the point and
// scale after, within MySQL's bounds.
func DecimalType(intDigits, scale int) sql.Type {
	scale = min(max(scale, 0), MaxDecimalScale)
	prec := min(max(intDigits, 1)+scale, MaxDecimalPrecision)
	return types.MustCreateDecimalType(uint8(prec), uint8(scale))
}
