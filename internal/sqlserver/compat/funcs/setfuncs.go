package funcs

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// MAKE_SET, EXPORT_SET, UUID_SHORT and BENCHMARK, which go-mysql-server
// v0.20 does not have (1305 FUNCTION … does not exist).

func init() {
	Functions = append(Functions,
		sql.FunctionN{Name: "make_set", Fn: func(args ...sql.Expression) (sql.Expression, error) {
			if len(args) < 2 {
				return nil, sql.ErrInvalidArgumentNumber.New("MAKE_SET", "2 or more", len(args))
			}
			return &Scalar{Name: "MAKE_SET", Args: args, TypeOf: makeSetType, evalRow: makeSetEval}, nil
		}},
		sql.FunctionN{Name: "export_set", Fn: func(args ...sql.Expression) (sql.Expression, error) {
			if len(args) < 3 || len(args) > 5 {
				return nil, sql.ErrInvalidArgumentNumber.New("EXPORT_SET", "3 to 5", len(args))
			}
			return &Scalar{Name: "EXPORT_SET", Args: args, TypeOf: exportSetType, EvalArgs: exportSetEval}, nil
		}},
		sql.Function0{Name: "uuid_short", Fn: func() sql.Expression { return uuidShort{} }},
		sql.FunctionN{Name: intervalFunction, Fn: func(args ...sql.Expression) (sql.Expression, error) {
			if len(args) < 2 {
				return nil, sql.ErrInvalidArgumentNumber.New("INTERVAL", "2 or more", len(args))
			}
			return &Scalar{Name: "INTERVAL", Args: args, TypeOf: func([]sql.Expression) sql.Type { return types.Int32 }, evalRow: intervalEval}, nil
		}},
		sql.Function2{Name: "benchmark", Fn: func(n, e sql.Expression) sql.Expression {
			return &Scalar{Name: "BENCHMARK", Args: []sql.Expression{n, e}, TypeOf: func([]sql.Expression) sql.Type { return types.Int32 }, evalRow: benchmarkEval, Volatile: true}
		}},
	)
}

// maxChars is the most characters e's value takes as a string.
func maxChars(e sql.Expression) int64 {
	if l, ok := e.(*expression.Literal); ok {
		// go-mysql-server types a string literal LONGTEXT; MySQL by its
		// length.
		switch v := l.Value().(type) {
		case nil:
			return 0
		case string:
			return int64(utf8.RuneCountInString(v))
		}
	}
	if st, ok := e.Type().(sql.StringType); ok {
		return st.MaxCharacterLength()
	}
	return 64 // a number's digits, or a date's
}

// varcharOf is a VARCHAR of n characters as MySQL types a string
// function's result, or LONGTEXT past what a VARCHAR holds.
func varcharOf(n int64) sql.Type {
	if n > 16383 {
		return types.LongText
	}
	return types.MustCreateString(sqltypes.VarChar, n, sql.Collation_Default)
}

// makeSetType: every string and the commas between them.
func makeSetType(args []sql.Expression) sql.Type {
	n := int64(len(args) - 2)
	for _, a := range args[1:] {
		n += maxChars(a)
	}
	return varcharOf(n)
}

// exportSetType: 64 of the longer of on and off, and 63 separators.
func exportSetType(args []sql.Expression) sql.Type {
	sep := int64(1)
	if len(args) > 3 {
		sep = maxChars(args[3])
	}
	return varcharOf(64*max(maxChars(args[1]), maxChars(args[2])) + 63*sep)
}

// bitsOf reads a set's bits as MySQL does: an unsigned 64-bit integer
// (a negative number is its two's complement).
func bitsOf(ctx *sql.Context, v any) (uint64, bool) {
	if u, _, err := types.Uint64.Convert(ctx, v); err == nil && u != nil {
		return u.(uint64), true
	}
	i, _, err := types.Int64.Convert(ctx, v)
	if err != nil || i == nil {
		return 0, false
	}
	return uint64(i.(int64)), true
}

// makeSetEval is MAKE_SET(bits, str1, str2, …): the strings whose bit is
// set in bits (str1 bit 0), comma-separated; NULL strings are left out,
// and a NULL bits is NULL.
func makeSetEval(ctx *sql.Context, args []sql.Expression, row sql.Row) (any, error) {
	b, err := args[0].Eval(ctx, row)
	if err != nil || b == nil {
		return nil, err
	}
	bits, ok := bitsOf(ctx, b)
	if !ok {
		return nil, nil
	}
	var parts []string
	for i, a := range args[1:] {
		if i >= 64 {
			break
		}
		if bits&(1<<uint(i)) == 0 {
			continue
		}
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		s, _, err := types.LongText.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		parts = append(parts, s.(string))
	}
	return strings.Join(parts, ","), nil
}

// intervalEval is INTERVAL(N, N1, N2, …): how many of N1, N2, … (in
// ascending order) are at most N, as the index of the first greater one;
// -1 when N is NULL. A NULL Nk counts as below N. Integers compare as
// integers, other numbers as doubles.
func intervalEval(ctx *sql.Context, args []sql.Expression, row sql.Row) (any, error) {
	vals := make([]any, len(args))
	ints := true
	for i, a := range args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		vals[i] = v
		ints = ints && (v == nil || types.IsInteger(a.Type()))
	}
	if vals[0] == nil {
		return int32(-1), nil
	}
	less := func(a, b any) (bool, error) { // a < b
		if ints {
			x, _, err := types.Int64.Convert(ctx, a)
			if err != nil {
				return false, err
			}
			y, _, err := types.Int64.Convert(ctx, b)
			return err == nil && x.(int64) < y.(int64), err
		}
		x, _, err := types.Float64.Convert(ctx, a)
		if err != nil {
			return false, err
		}
		y, _, err := types.Float64.Convert(ctx, b)
		return err == nil && x.(float64) < y.(float64), err
	}
	for i, v := range vals[1:] {
		if v == nil {
			continue
		}
		lt, err := less(vals[0], v)
		if err != nil {
			return nil, err
		}
		if lt {
			return int32(i), nil
		}
	}
	return int32(len(vals) - 1), nil
}

// benchmarkEval is BENCHMARK(count, expr): expr evaluated count times
// (for its time), then 0; NULL for a NULL or negative count (with warning
// 1411 for a negative one). A NULL expr is evaluated too.
func benchmarkEval(ctx *sql.Context, args []sql.Expression, row sql.Row) (any, error) {
	v, err := args[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	n, _, err := types.Int64.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	if n.(int64) < 0 {
		ctx.Warn(1411, "Incorrect count value: '%d' for function benchmark", n.(int64))
		return nil, nil
	}
	for i := int64(0); i < n.(int64); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err // KILL QUERY
		}
		if _, err := args[1].Eval(ctx, row); err != nil {
			return nil, err
		}
	}
	return int32(0), nil
}

// exportSetEval is EXPORT_SET(bits, on, off[, separator[, number_of_bits]]):
// for each of the number_of_bits lowest bits of bits (64 when it is
// missing, negative or over 64), lowest first, on when it is set and off
// when not, joined by separator (a comma when missing).
func exportSetEval(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
	bits, ok := bitsOf(ctx, vals[0])
	if !ok {
		return nil, nil
	}
	strs := make([]string, 0, 3)
	for _, v := range vals[1:min(len(vals), 4)] {
		s, _, err := types.LongText.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		strs = append(strs, s.(string))
	}
	sep := ","
	if len(strs) == 3 {
		sep = strs[2]
	}
	n := int64(64)
	if len(vals) == 5 {
		v, _, err := types.Int64.Convert(ctx, vals[4])
		if err != nil {
			return nil, err
		}
		if m := v.(int64); m >= 0 && m < 64 {
			n = m
		}
	}
	var b strings.Builder
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		if bits&(1<<uint(i)) != 0 {
			b.WriteString(strs[0])
		} else {
			b.WriteString(strs[1])
		}
	}
	return b.String(), nil
}

// uuidShort is UUID_SHORT(): as MySQL makes it, (server_id & 255) << 56,
// plus the server's start time in seconds << 24, plus one more at each
// call: unique among the servers of a cluster (each has its own
// server_id) while the server does not make more than 2^24 a second on
// average since it started.
type uuidShort struct{}

var (
	uuidShortStart = time.Now().Unix()
	uuidShortNext  atomic.Uint64
	uuidShortOnce  sync.Once
)

func (uuidShort) Resolved() bool             { return true }
func (uuidShort) String() string             { return "UUID_SHORT()" }
func (uuidShort) Type() sql.Type             { return types.Uint64 }
func (uuidShort) IsNullable() bool           { return false }
func (uuidShort) IsNonDeterministic() bool   { return true }
func (uuidShort) Children() []sql.Expression { return nil }
func (uuidShort) FunctionName() string       { return "uuid_short" }
func (uuidShort) Description() string        { return "MySQL's UUID_SHORT" }
func (u uuidShort) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}

func (u uuidShort) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(u, len(children), 0)
	}
	return u, nil
}

func (uuidShort) Eval(*sql.Context, sql.Row) (any, error) {
	uuidShortOnce.Do(func() {
		_, v, _ := sql.SystemVariables.GetGlobal("server_id") // the server's live value
		id, _ := v.(uint32)
		uuidShortNext.Store(uint64(id&255)<<56 + uint64(uuidShortStart)<<24)
	})
	return uuidShortNext.Add(1) - 1, nil
}

var _ sql.NonDeterministicExpression = uuidShort{}
var _ sql.FunctionExpression = uuidShort{}

// intervalFunction is the function INTERVAL(N, N1, …) becomes (in the
// case INTERVAL was written).
const intervalFunction = "__miraj_interval"
