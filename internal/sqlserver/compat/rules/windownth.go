package rules

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// NTH_VALUE(expr, N) OVER (…): expr of the frame's N-th row, NULL when
// the frame has fewer rows. go-mysql-server v0.20 has no such function
// and builds a window function only from the names it lists (1305). The
// parsed call becomes FIRST_VALUE(NthFunction(expr, N)) OVER (…), one of
// those names (NthValueCall), and WindowFrame turns that into
// nthValue, with MySQL's frame: the one written, else with ORDER BY RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (the current row's peers
// included), else the whole partition.

// NthFunction carries NTH_VALUE's arguments through FIRST_VALUE.
const NthFunction = "__miraj_nth_value"

// NthValueCall rewrites f, when it is NTH_VALUE(…) OVER (…), as
// FIRST_VALUE(NthFunction(…)) OVER (…).
func NthValueCall(f *ast.FuncExpr) {
	if f.Over == nil || !f.Qualifier.IsEmpty() || f.Name.Lowered() != "nth_value" {
		return
	}
	inner := &ast.FuncExpr{Name: ast.NewColIdent(NthFunction), Exprs: f.Exprs}
	f.Name = ast.NewColIdent("first_value")
	f.Exprs = ast.SelectExprs{&ast.AliasedExpr{Expr: inner}}
}

// nthArgs is NthFunction(expr, N), which only FIRST_VALUE carries.
type nthArgs struct {
	expr, n sql.Expression
}

func NewNthArgs(expr, n sql.Expression) sql.Expression { return &nthArgs{expr: expr, n: n} }

func (a *nthArgs) Resolved() bool             { return a.expr.Resolved() && a.n.Resolved() }
func (a *nthArgs) String() string             { return fmt.Sprintf("%s, %s", a.expr, a.n) }
func (a *nthArgs) Type() sql.Type             { return a.expr.Type() }
func (a *nthArgs) IsNullable() bool           { return true }
func (a *nthArgs) Children() []sql.Expression { return []sql.Expression{a.expr, a.n} }

func (a *nthArgs) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 2)
	}
	return NewNthArgs(children[0], children[1]), nil
}

func (a *nthArgs) Eval(*sql.Context, sql.Row) (any, error) {
	return nil, mysql.NewSQLError(1210, "HY000", "Incorrect arguments to nth_value")
}

// asNthValue returns e, FIRST_VALUE(NthFunction(expr, N)) OVER (…), as
// nthValue, or nil when e is something else. N must be a positive integer
// constant (1210, as MySQL).
func asNthValue(ctx *sql.Context, e sql.Expression) (sql.Expression, error) {
	fv, ok := e.(*window.FirstValue)
	if !ok {
		return nil, nil
	}
	args, ok := fv.Child.(*nthArgs)
	if !ok {
		return nil, nil
	}
	bad := mysql.NewSQLError(1210, "HY000", "Incorrect arguments to nth_value")
	lit, ok := args.n.(*expression.Literal)
	if !ok {
		return nil, bad
	}
	v, _, err := types.Int64.Convert(ctx, lit.Value())
	n, isInt := v.(int64)
	if err != nil || !isInt || n < 1 || !types.IsInteger(lit.Type()) {
		return nil, bad
	}
	return &nthValue{window: fv.Window(), expr: args.expr, n: n, id: fv.Id()}, nil
}

// nthValue is NTH_VALUE(expr, n) OVER window.
type nthValue struct {
	window *sql.WindowDefinition
	expr   sql.Expression
	n      int64
	id     sql.ColumnId
}

var _ sql.WindowAdaptableExpression = (*nthValue)(nil)
var _ sql.FunctionExpression = (*nthValue)(nil)

func (f *nthValue) Id() sql.ColumnId { return f.id }

func (f *nthValue) WithId(id sql.ColumnId) sql.IdExpression {
	nf := *f
	nf.id = id
	return &nf
}

func (f *nthValue) FunctionName() string { return "NTH_VALUE" }
func (f *nthValue) Description() string {
	return "returns value of argument from the N-th row of the window frame."
}
func (f *nthValue) Window() *sql.WindowDefinition { return f.window }

func (f *nthValue) Resolved() bool {
	if !f.expr.Resolved() {
		return false
	}
	if f.window == nil {
		return true
	}
	return expression.ExpressionsResolved(append(f.window.OrderBy.ToExpressions(), f.window.PartitionBy...)...)
}

func (f *nthValue) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "nth_value(%s, %d)", f.expr, f.n)
	if f.window != nil {
		sb.WriteString(" ")
		sb.WriteString(f.window.String())
	}
	return sb.String()
}

func (f *nthValue) Type() sql.Type   { return f.expr.Type() }
func (f *nthValue) IsNullable() bool { return true }

func (f *nthValue) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, f.expr)
}

func (f *nthValue) Eval(*sql.Context, sql.Row) (any, error) {
	return nil, sql.ErrWindowUnsupported.New(f.FunctionName())
}

func (f *nthValue) Children() []sql.Expression {
	return append(f.window.ToExpressions(), f.expr)
}

func (f *nthValue) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) < 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(f, len(children), 1)
	}
	nf := *f
	w, err := f.window.FromExpressions(children[:len(children)-1])
	if err != nil {
		return nil, err
	}
	nf.window = w
	nf.expr = children[len(children)-1]
	return &nf, nil
}

func (f *nthValue) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	nf := *f
	nf.window = w
	return &nf
}

func (f *nthValue) NewWindowFunction() (sql.WindowFunction, error) {
	c, err := transform.Clone(f.expr)
	if err != nil {
		return nil, err
	}
	fn := &nthAgg{expr: c, n: f.n}
	w := f.window
	switch {
	case w != nil && w.Frame != nil:
		fn.framer, err = w.Frame.NewFramer(w)
	case w != nil && len(w.OrderBy) > 0:
		frame := &peersFrame{RangeUnboundedPrecedingToCurrentRowFrame: plan.NewRangeUnboundedPrecedingToCurrentRowFrame()}
		fn.framer, err = frame.NewFramer(w)
	default:
		fn.framer = aggregation.NewPartitionFramer()
	}
	if err != nil {
		return nil, err
	}
	return fn, nil
}

// nthAgg computes NTH_VALUE over each row's frame.
type nthAgg struct {
	expr   sql.Expression
	n      int64
	framer sql.WindowFramer
}

func (a *nthAgg) Dispose()                                        { expression.Dispose(a.expr) }
func (a *nthAgg) DefaultFramer() sql.WindowFramer                 { return a.framer }
func (a *nthAgg) NewSlidingFrameInterval(_, _ sql.WindowInterval) {}

func (a *nthAgg) StartPartition(*sql.Context, sql.WindowInterval, sql.WindowBuffer) error {
	return nil
}

func (a *nthAgg) Compute(ctx *sql.Context, in sql.WindowInterval, buf sql.WindowBuffer) any {
	at := int64(in.Start) + a.n - 1
	if at >= int64(in.End) || at >= int64(len(buf)) {
		return nil
	}
	v, err := a.expr.Eval(ctx, buf[at])
	if err != nil {
		return err
	}
	return v
}
