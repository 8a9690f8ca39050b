package sqlserver

import (
	"math"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/json"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
)

// castRule gives two string conversions MySQL's meaning, for client
// connections (Session.mysql; go-mysql-server's engine suites assert its
// own):
//
//   - CAST(s AS SIGNED | UNSIGNED) of a string reads the integer at its
//     start, as MySQL does ('12abc' is 12, with Warning 1292 Truncated
//     incorrect INTEGER value); go-mysql-server gave 0 without a warning.
//   - x LIKE BINARY p compares bytes, so case matters; go-mysql-server
//     compared under x's collation, case-insensitively. x is converted to
//     binary too.
//   - GREATEST and LEAST of DECIMALs (and integers) compare them as
//     DECIMALs; go-mysql-server failed ("unsupported type for
//     greatest/least argument: decimal.Decimal"). Of integers they
//     compare integers (go-mysql-server went through float64: 2^53 + 1
//     and 2^53 were equal, and an unsigned value past BIGINT's range
//     failed); of strings they compare under the arguments' collation
//     (go-mysql-server compared bytes: LEAST('a', 'B') was 'B').
//   - TIMESTAMPDIFF in MONTH, QUARTER and YEAR counts calendar months
//     (timestampdiff.go); go-mysql-server counted 30-day periods.
//   - DATE ± INTERVAL n DAY (or WEEK, MONTH, QUARTER, YEAR) is a DATE;
//     go-mysql-server made it a DATETIME ('2024-03-01 00:00:00'). A date
//     as text ± such an interval is text, the date alone for a date alone
//     (textinterval.go).
//   - JSON_EXTRACT (->, ->>) reads simple paths as MySQL does
//     (jsonpath.go).
//   - A number where a date belongs is the date its digits spell
//     (NumbersAsDates, datenum.go).
//   - An ENUM, SET or date argument of a string function, LIKE or CAST(…
//     AS CHAR) is read as its text (textargs.go).
//   - A TIME compared with a text literal written with days ('1 10:00:00')
//     reads it as MySQL does (TimeDaysComparison, TimeDaysBetween,
//     TimeDaysIn: timerange.go).
func castRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !compat.FromClient(ctx) {
		return n, transform.SameTree, nil
	}
	if s := ctx.Session.(*Session); s.hints != nil {
		if err := s.checkIndexHints(ctx); err != nil {
			return nil, transform.SameTree, err
		}
	}
	n, datesSame, err := funcs.NumbersAsDates(n)
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, same, err := transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		return transform.OneNodeExprsWithNode(n, func(node sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			_, projected := node.(*plan.Project)
			return transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				// ENUM, SET and date arguments of string functions read
				// as their text (textargs.go).
				same := transform.SameTree
				if ne, ok := rules.WithTextArgs(ctx, e); ok {
					e, same = ne, transform.NewTree
				}
				switch e := e.(type) {
				case *expression.UserVar:
					// A variable not set when the statement was planned
					// (SELECT @x := 5, @x) has no type, and its value went
					// out as NULL whatever it was by then; MySQL sends it
					// as a LONGBLOB string.
					if projected && e.Type() == types.Null {
						return expression.NewUserVarWithType(e.Name, types.LongText), transform.NewTree, nil
					}
				case *expression.Convert:
					t := e.Type()
					if (t == types.Int64 || t == types.Uint64) && types.IsText(e.Child.Type()) {
						return &stringToInteger{Convert: e, unsigned: t == types.Uint64}, transform.NewTree, nil
					}
				case *expression.Interval:
					// INTERVAL '1:30' HOUR_MINUTE (syntaxtext.go).
					if ne := rules.CompoundInterval(e); ne != nil {
						return ne, transform.NewTree, nil
					}
				case *expression.Arithmetic:
					if rules.DateInterval(e) {
						return expression.NewConvert(e, expression.ConvertToDate), transform.NewTree, nil
					}
					if t := funcs.TextDateInterval(e); t != nil {
						return t, transform.NewTree, nil
					}
				case *function.TimestampDiff:
					return &funcs.TimestampDiff{TimestampDiff: e}, transform.NewTree, nil
				case *json.JSONExtract:
					return &funcs.JSONExtract{JSONExtract: e}, transform.NewTree, nil
				case *json.JSONContainsPath:
					return &funcs.JSONContainsPath{JSONContainsPath: e}, transform.NewTree, nil
				case *function.Greatest:
					if x := newExtreme(ctx, "GREATEST", e.Args, true); x != nil {
						return x, transform.NewTree, nil
					}
					if decimalArgs(e.Args) {
						return newDecimalExtreme("GREATEST", e.Args, true), transform.NewTree, nil
					}
					if args, ok := decimalsAsDoubles(e.Args); ok {
						g, err := function.NewGreatest(args...)
						return g, transform.NewTree, err
					}
				case *function.Least:
					if x := newExtreme(ctx, "LEAST", e.Args, false); x != nil {
						return x, transform.NewTree, nil
					}
					if decimalArgs(e.Args) {
						return newDecimalExtreme("LEAST", e.Args, false), transform.NewTree, nil
					}
					if args, ok := decimalsAsDoubles(e.Args); ok {
						l, err := function.NewLeast(args...)
						return l, transform.NewTree, err
					}
				case *expression.Like:
					if types.IsBinaryType(e.Right().Type()) && types.IsText(e.Left().Type()) {
						return expression.NewLike(expression.NewConvert(e.Left(), expression.ConvertToBinary), e.Right(), e.Escape), transform.NewTree, nil
					}
				case *expression.Between:
					if ne, ok := funcs.TimeDaysBetween(e); ok {
						return ne, transform.NewTree, nil
					}
				case *expression.InTuple:
					if ne, ok := funcs.TimeDaysIn(e); ok {
						return ne, transform.NewTree, nil
					}
				case expression.Comparer:
					// A TIME compared with text written with days. Last:
					// an interface, it would hide a comparison's own case.
					if ne, ok := funcs.TimeDaysComparison(e); ok {
						return ne, transform.NewTree, nil
					}
				}
				return e, same, nil
			})
		})
	})
	return n, same && datesSame, err
}

// stringToInteger is CAST(… AS SIGNED | UNSIGNED) of a string.
type stringToInteger struct {
	*expression.Convert // for its type, name and the other values
	unsigned            bool
}

func (c *stringToInteger) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := c.Convert.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &stringToInteger{Convert: n.(*expression.Convert), unsigned: c.unsigned}, nil
}

func (c *stringToInteger) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return c.Convert.Eval(ctx, row)
	}
	n, exact := integerPrefix(s)
	if !exact {
		ctx.Warn(1292, "Truncated incorrect INTEGER value: '%s'", s)
	}
	if c.unsigned {
		return uint64(n), nil
	}
	return n, nil
}

// integerPrefix reads the integer at the start of s as MySQL does (spaces,
// a sign, digits), clamped to BIGINT's range; exact is false when anything
// but spaces follows it, when there is no digit, or when it was clamped.
func integerPrefix(s string) (n int64, exact bool) {
	t := strings.TrimLeft(s, " \t\n\r")
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	digits := 0
	var u uint64
	clamped := false
	for digits < len(t) && t[digits] >= '0' && t[digits] <= '9' {
		d := uint64(t[digits] - '0')
		if u > (math.MaxUint64-d)/10 {
			clamped = true
			u = math.MaxUint64
		} else if !clamped {
			u = u*10 + d
		}
		digits++
	}
	switch {
	case neg && u > 1<<63:
		n, clamped = math.MinInt64, true
	case neg:
		n = -int64(u)
	case u > math.MaxInt64:
		n, clamped = math.MaxInt64, true
	default:
		n = int64(u)
	}
	rest := strings.TrimRight(t[digits:], " \t\n\r")
	return n, digits > 0 && rest == "" && !clamped
}

// decimalArgs says whether args are numbers, at least one a DECIMAL and
// none a float (which MySQL compares as DOUBLE, as go-mysql-server does).
func decimalArgs(args []sql.Expression) bool {
	dec := false
	for _, a := range args {
		t := a.Type()
		switch {
		case types.IsDecimal(t):
			dec = true
		case types.IsInteger(t):
		default:
			return false
		}
	}
	return dec
}

// newDecimalExtreme is GREATEST (greatest) or LEAST of DECIMAL and integer
// arguments: NULL if one is NULL, else the largest (smallest) as a DECIMAL
// wide enough for every argument.
func newDecimalExtreme(name string, args []sql.Expression, greatest bool) *funcs.Scalar {
	return &funcs.Scalar{Name: name, Args: args,
		TypeOf: func(args []sql.Expression) sql.Type {
			intDigits, scale := 0, 0
			for _, a := range args {
				p, s := rules.IntegerDigits(a.Type()), 0
				if d, ok := a.Type().(sql.DecimalType); ok {
					p, s = int(d.Precision()), int(d.Scale())
				}
				intDigits, scale = max(intDigits, p-s), max(scale, s)
			}
			return funcs.DecimalType(intDigits, scale)
		},
		EvalArgs: func(ctx *sql.Context, args []sql.Expression, vals []any) (any, error) {
			var best decimal.Decimal
			for i, v := range vals {
				d, err := funcs.ExactValue(ctx, v)
				if err != nil {
					return nil, err
				}
				if i == 0 || (greatest && d.GreaterThan(best)) || (!greatest && d.LessThan(best)) {
					best = d
				}
			}
			scale := int32(0)
			for _, a := range args {
				if d, ok := a.Type().(sql.DecimalType); ok {
					scale = max(scale, int32(d.Scale()))
				}
			}
			// At the result's scale, as MySQL prints it (0.00, not 0).
			return best.Round(scale), nil
		}}
}

// decimalsAsDoubles converts the DECIMAL arguments of a GREATEST or LEAST
// that mixes them with strings or floats to DOUBLE, which go-mysql-server
// compares (it fails on a DECIMAL value); ok is false when there is none.
func decimalsAsDoubles(args []sql.Expression) ([]sql.Expression, bool) {
	out := make([]sql.Expression, len(args))
	found := false
	for i, a := range args {
		out[i] = a
		if types.IsDecimal(a.Type()) {
			out[i] = expression.NewConvert(a, expression.ConvertToDouble)
			found = true
		}
	}
	return out, found
}

// newExtreme is GREATEST (greatest) or LEAST of integer arguments, or of
// string arguments; nil for other arguments. Signed and unsigned integers
// together compare as DECIMALs (an unsigned value past BIGINT's range is
// kept).
func newExtreme(ctx *sql.Context, name string, args []sql.Expression, greatest bool) sql.Expression {
	allInt, allText, signed, unsigned := true, true, false, false
	for _, a := range args {
		t := a.Type()
		integer, uns := rules.IntegerKind(t)
		allInt = allInt && integer
		allText = allText && types.IsText(t)
		signed = signed || (integer && !uns)
		unsigned = unsigned || (integer && uns)
	}
	switch {
	case allInt && signed && unsigned:
		return newDecimalExtreme(name, args, greatest)
	case allInt:
		typ := sql.Type(types.Int64)
		if unsigned {
			typ = types.Uint64
		}
		return &funcs.Scalar{Name: name, Args: args,
			TypeOf:   func([]sql.Expression) sql.Type { return typ },
			EvalArgs: extremeOf(typ, greatest)}
	case allText:
		coll, coer := sql.GetCoercibility(ctx, args[0])
		for _, a := range args[1:] {
			c, k := sql.GetCoercibility(ctx, a)
			coll, coer = sql.ResolveCoercibility(coll, coer, c, k)
		}
		if coll == sql.Collation_Unspecified {
			coll = ctx.GetCollation()
		}
		typ := types.CreateLongText(coll)
		return &stringExtreme{funcs.Scalar{Name: name, Args: args,
			TypeOf:   func([]sql.Expression) sql.Type { return typ },
			EvalArgs: extremeOf(typ, greatest)}, coll, coer}
	}
	return nil
}

// extremeOf evaluates GREATEST (greatest) or LEAST of values converted to
// typ and compared by typ.
func extremeOf(typ sql.Type, greatest bool) func(*sql.Context, []sql.Expression, []any) (any, error) {
	return func(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
		var best any
		for i, v := range vals {
			c, _, err := typ.Convert(ctx, v)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				best = c
				continue
			}
			cmp, err := typ.Compare(ctx, c, best)
			if err != nil {
				return nil, err
			}
			if (greatest && cmp > 0) || (!greatest && cmp < 0) {
				best = c
			}
		}
		return best, nil
	}
}

// stringExtreme is GREATEST or LEAST of strings: its result has the
// arguments' collation.
type stringExtreme struct {
	funcs.Scalar
	coll sql.CollationID
	coer byte
}

func (s *stringExtreme) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return s.coll, s.coer
}

func (s *stringExtreme) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	f, err := s.Scalar.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	c := *s
	c.Scalar = *f.(*funcs.Scalar)
	return &c, nil
}
