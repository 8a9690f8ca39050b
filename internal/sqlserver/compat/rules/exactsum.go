package rules

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// The digits SUM and AVG add to their argument's (sql/item_sum.cc:
// DECIMAL_LONGLONG_DIGITS for SUM, div_precision_increment = 4 for AVG).
const (
	sumExtraDigits = 22
	avgExtraDigits = 4
)

// ExactSum makes SUM and AVG of an integer or DECIMAL argument (not
// windowed) exact and typed as MySQL types them: SUM(DECIMAL(p,s)) is
// DECIMAL(p+22,s), SUM(INT) DECIMAL(n+22,0), AVG(DECIMAL(p,s))
// DECIMAL(p+4,s+4), AVG(INT) DECIMAL(n+4,4). go-mysql-server v0.20 adds
// them up as float64 (the sum of 12345678901234567.89 and 0.01 came back
// as 1.2345678901234568e+16, the sum of 0…999,999 as 4.999995e+11) and
// types them DOUBLE. STD, STDDEV_POP, STDDEV_SAMP, VARIANCE, VAR_POP and
// VAR_SAMP are DOUBLEs (go-mysql-server typed them as their argument, so
// STD of an INT column was truncated: 1 for 1.1180). COUNT(DISTINCT) of strings compares them under their
// collation (distinct.go). Only client connections get them (Session.mysql):
// go-mysql-server's engine suites assert its own DOUBLE results.
func ExactSum(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !compat.FromClient(ctx) {
		return n, transform.SameTree, nil
	}
	retyped := map[sql.ColumnId]sql.Type{}
	n, same, err := transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		var exprs []sql.Expression
		windowed := false
		switch n := n.(type) {
		case *plan.GroupBy:
			exprs = n.SelectedExprs
		case *plan.Window:
			exprs, windowed = n.SelectExprs, true
		default:
			return n, transform.SameTree, nil
		}
		changed := false
		sel := make([]sql.Expression, len(exprs))
		for i, e := range exprs {
			ne, same, err := transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				if cd := collatedCountDistinctOf(e); cd != nil && !windowed {
					return cd, transform.NewTree, nil
				}
				if gc := groupConcatOf(e); gc != nil && !windowed {
					return gc, transform.NewTree, nil
				}
				if r := peerRankOf(e); r != nil && windowed {
					return r, transform.NewTree, nil
				}
				if d := doubleAggOf(e, windowed); d != nil {
					retyped[d.Id()] = types.Float64
					return d, transform.NewTree, nil
				}
				agg := exactAggOf(e, windowed)
				if agg == nil {
					return e, transform.SameTree, nil
				}
				retyped[agg.Id()] = agg.typ
				return agg, transform.NewTree, nil
			})
			if err != nil {
				return nil, transform.SameTree, err
			}
			sel[i] = ne
			changed = changed || same == transform.NewTree
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		if gb, ok := n.(*plan.GroupBy); ok {
			return plan.NewGroupBy(sel, gb.GroupByExprs, gb.Child), transform.NewTree, nil
		}
		return plan.NewWindow(sel, n.(*plan.Window).Child), transform.NewTree, nil
	})
	if err != nil {
		return n, same, err
	}
	// A derived table, CTE or view analysed with exact sums already: the
	// outer query's columns that read them were typed DOUBLE when it was
	// planned.
	byAlias := map[string]sql.Type{}
	overSetOp := false // a projection of a UNION's result (retypeByPosition)
	transform.Inspect(n, func(n sql.Node) bool {
		if p, ok := n.(*plan.Project); ok {
			_, isSetOp := p.Child.(*plan.SetOp)
			overSetOp = overSetOp || isSetOp
		}
		if sa, ok := n.(*plan.SubqueryAlias); ok {
			for _, c := range sa.Schema() {
				if _, isDec := c.Type.(sql.DecimalType); isDec {
					byAlias[strings.ToLower(sa.Name()+"."+c.Name)] = c.Type
				}
			}
		}
		return true
	})
	if len(retyped) == 0 && len(byAlias) == 0 && !overSetOp {
		return n, same, nil
	}
	// The columns that read the aggregations' results get their type,
	// inside derived tables and UNIONs too (analysed already, they may
	// read a derived table of their own: SELECT * FROM (… WITH ROLLUP) q).
	n, _, err = transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		n, same, err := transform.OneNodeExprsWithNode(n, func(_ sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			gf, ok := e.(*expression.GetField)
			if !ok {
				return e, transform.SameTree, nil
			}
			t, ok := retyped[gf.Id()]
			if !ok {
				t, ok = byAlias[strings.ToLower(gf.Table()+"."+gf.Name())]
				if ok && !types.IsFloat(gf.Type()) {
					ok = false // only go-mysql-server's DOUBLE of a SUM or AVG
				}
			}
			if !ok || gf.Type() == t {
				return e, transform.SameTree, nil
			}
			return expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), t, gf.Database(), gf.Table(), gf.Name(), gf.IsNullable()).WithId(gf.Id()).(sql.Expression), transform.NewTree, nil
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		// The projection go-mysql-server puts on each side of a UNION
		// whose column types differ reads its side's columns by position
		// (their column ids are lost with their aliases'): AVG of an INT
		// came back as 15, not 15.0000.
		if p, ok := n.(*plan.Project); ok {
			n, same = retypeByPosition(p, n, same)
		}
		return n, same, nil
	})
	return n, transform.NewTree, err
}

// retypeByPosition gives p's columns that read a column of p's child by
// position and name the child's exact type, where they took
// go-mysql-server's DOUBLE; n is p (same: unchanged) or the node
// returned.
func retypeByPosition(p *plan.Project, n sql.Node, same transform.TreeIdentity) (sql.Node, transform.TreeIdentity) {
	under := p.Child.Schema()
	if len(under) != len(p.Projections) {
		return n, same
	}
	var projs []sql.Expression
	for i, e := range p.Projections {
		gf, ok := e.(*expression.GetField)
		if !ok || !types.IsFloat(gf.Type()) || !strings.EqualFold(gf.Name(), under[i].Name) {
			continue
		}
		if _, isDec := under[i].Type.(sql.DecimalType); !isDec {
			continue
		}
		if projs == nil {
			projs = append([]sql.Expression{}, p.Projections...)
		}
		projs[i] = expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), under[i].Type, gf.Database(), gf.Table(), gf.Name(), gf.IsNullable())
	}
	if projs == nil {
		return n, same
	}
	np, err := p.WithExpressions(projs...)
	if err != nil {
		return n, same
	}
	return np, transform.NewTree
}

// exactAggOf returns e as an exact SUM or AVG, or nil when e is not a SUM
// or AVG of an integer or DECIMAL (or is one already). windowed says
// whether e is a window function's (… OVER (…)), which the node of a window
// holds, as a GROUP BY holds the others.
func exactAggOf(e sql.Expression, windowed bool) *exactAgg {
	var (
		agg sql.Aggregation
		avg bool
	)
	switch a := e.(type) {
	case *aggregation.Sum:
		agg = a
	case *aggregation.Avg:
		agg, avg = a, true
	default:
		return nil
	}
	if (agg.Window() != nil) != windowed {
		return nil
	}
	arg := agg.Children()[0].Type()
	var prec, scale int
	switch {
	case types.IsDecimal(arg):
		d := arg.(sql.DecimalType)
		prec, scale = int(d.Precision()), int(d.Scale())
	case types.IsInteger(arg):
		prec = IntegerDigits(arg)
	default:
		return nil
	}
	if avg {
		prec, scale = prec+avgExtraDigits, scale+avgExtraDigits
	} else {
		prec += sumExtraDigits
	}
	prec, scale = min(prec, funcs.MaxDecimalPrecision), min(scale, funcs.MaxDecimalScale)
	return &exactAgg{Aggregation: agg, avg: avg, typ: types.MustCreateDecimalType(uint8(prec), uint8(scale)), scale: int32(scale)}
}

// IntegerDigits is the number of digits of an integer type's widest value.
func IntegerDigits(t sql.Type) int {
	switch t.Type() {
	case types.Int8.Type(), types.Uint8.Type():
		return 3
	case types.Int16.Type(), types.Uint16.Type():
		return 5
	case types.Int24.Type(), types.Uint24.Type():
		return 8
	case types.Int32.Type(), types.Uint32.Type():
		return 10
	case types.Uint64.Type():
		return 20
	}
	return 19
}

// exactAgg is a SUM or AVG of exact numbers, added up as decimals.
type exactAgg struct {
	sql.Aggregation // *aggregation.Sum or *aggregation.Avg
	avg             bool
	typ             sql.Type
	scale           int32 // the result's scale (AVG rounds to it)
}

func (a *exactAgg) Type() sql.Type { return a.typ }

func (a *exactAgg) FunctionName() string {
	if f, ok := a.Aggregation.(sql.FunctionExpression); ok {
		return f.FunctionName()
	}
	return ""
}

func (a *exactAgg) Description() string {
	if f, ok := a.Aggregation.(sql.FunctionExpression); ok {
		return f.Description()
	}
	return ""
}

func (a *exactAgg) with(agg sql.Aggregation) *exactAgg {
	c := *a
	c.Aggregation = agg
	return &c
}

func (a *exactAgg) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := a.Aggregation.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return a.with(n.(sql.Aggregation)), nil
}

func (a *exactAgg) WithId(id sql.ColumnId) sql.IdExpression {
	return a.with(a.Aggregation.WithId(id).(sql.Aggregation))
}

func (a *exactAgg) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	return a.with(a.Aggregation.WithWindow(w).(sql.Aggregation))
}

// NewWindowFunction is the window function of SUM(…) OVER (…) or AVG(…)
// OVER (…): go-mysql-server's, for its frame, with the sums made exact.
func (a *exactAgg) NewWindowFunction() (sql.WindowFunction, error) {
	inner, err := a.Aggregation.NewWindowFunction()
	if err != nil {
		return nil, err
	}
	return &exactWindow{WindowFunction: inner, expr: a.Children()[0], avg: a.avg, scale: a.scale}, nil
}

func (a *exactAgg) NewBuffer() (sql.AggregationBuffer, error) {
	// Each group its own copy of the argument: a DISTINCT argument keeps
	// the values it has seen, which must not carry over to the next group.
	expr, err := transform.Clone(a.Children()[0])
	if err != nil {
		return nil, err
	}
	return &exactBuffer{expr: expr, avg: a.avg, scale: a.scale}, nil
}

// exactBuffer adds up one group's values as decimals.
type exactBuffer struct {
	expr  sql.Expression
	avg   bool
	scale int32
	sum   decimal.Decimal
	rows  int64 // non-NULL values added
}

func (b *exactBuffer) Update(ctx *sql.Context, row sql.Row) error {
	v, err := b.expr.Eval(ctx, row)
	if err != nil || v == nil {
		return err
	}
	d, err := funcs.ExactValue(ctx, v)
	if err != nil {
		return err
	}
	b.sum = b.sum.Add(d)
	b.rows++
	return nil
}

func (b *exactBuffer) Eval(*sql.Context) (any, error) {
	if b.rows == 0 {
		return nil, nil
	}
	if b.avg {
		return b.sum.DivRound(decimal.NewFromInt(b.rows), b.scale), nil
	}
	return b.sum, nil
}

func (b *exactBuffer) Dispose() { expression.Dispose(b.expr) }

// collatedCountDistinctOf returns e as a COUNT(DISTINCT) that compares
// strings under their collation, or nil when e is not a COUNT(DISTINCT) of
// a collated string (or is one already).
func collatedCountDistinctOf(e sql.Expression) *collatedCountDistinct {
	cd, ok := e.(*aggregation.CountDistinct)
	if !ok || cd.Window() != nil {
		return nil
	}
	var sch sql.Schema
	for _, c := range cd.Children() {
		sch = append(sch, &sql.Column{Type: c.Type()})
	}
	if !HasCollatedString(sch) {
		return nil
	}
	return &collatedCountDistinct{Aggregation: cd, sch: sch}
}

// collatedCountDistinct is COUNT(DISTINCT …) with MySQL's comparison of
// strings.
type collatedCountDistinct struct {
	sql.Aggregation // *aggregation.CountDistinct
	sch             sql.Schema
}

func (a *collatedCountDistinct) FunctionName() string { return "count" }

func (a *collatedCountDistinct) Description() string {
	return "returns the number of distinct values in a result set"
}

func (a *collatedCountDistinct) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := a.Aggregation.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &collatedCountDistinct{Aggregation: n.(sql.Aggregation), sch: a.sch}, nil
}

func (a *collatedCountDistinct) WithId(id sql.ColumnId) sql.IdExpression {
	return &collatedCountDistinct{Aggregation: a.Aggregation.WithId(id).(sql.Aggregation), sch: a.sch}
}

func (a *collatedCountDistinct) NewBuffer() (sql.AggregationBuffer, error) {
	return &countDistinctBuffer{exprs: a.Children(), sch: a.sch, seen: map[string]struct{}{}}, nil
}

// countDistinctBuffer counts one group's distinct non-NULL values.
type countDistinctBuffer struct {
	exprs []sql.Expression
	sch   sql.Schema
	seen  map[string]struct{}
	key   []byte
}

func (b *countDistinctBuffer) Update(ctx *sql.Context, row sql.Row) error {
	key, ok, err := distinctValuesKey(ctx, b.key[:0], b.exprs, b.sch, row)
	b.key = key
	if err != nil || !ok {
		return err // a row with a NULL is not counted
	}
	b.seen[string(b.key)] = struct{}{}
	return nil
}

// distinctValuesKey writes into b the DistinctKey of the values of exprs
// (of types sch) on row; false when one of them is NULL.
func distinctValuesKey(ctx *sql.Context, b []byte, exprs []sql.Expression, sch sql.Schema, row sql.Row) ([]byte, bool, error) {
	vals := make(sql.Row, len(exprs))
	for i, e := range exprs {
		v, err := e.Eval(ctx, row)
		if err != nil || v == nil {
			return b, false, err
		}
		vals[i] = v
	}
	b, err := DistinctKey(ctx, b, sch, vals)
	return b, err == nil, err
}

func (b *countDistinctBuffer) Eval(*sql.Context) (any, error) { return int64(len(b.seen)), nil }

func (b *countDistinctBuffer) Dispose() {
	for _, e := range b.exprs {
		expression.Dispose(e)
	}
}

// exactWindow computes a window's SUM or AVG over a frame from exact
// prefix sums of its partition.
type exactWindow struct {
	sql.WindowFunction // go-mysql-server's, whose framer is kept
	expr               sql.Expression
	avg                bool
	scale              int32
	start              int               // the partition's first row in the buffer
	sums               []decimal.Decimal // sums[i]: sum of the partition's first i values
	counts             []int64           // counts[i]: non-NULL values among them
}

func (w *exactWindow) StartPartition(ctx *sql.Context, iv sql.WindowInterval, buf sql.WindowBuffer) error {
	n := iv.End - iv.Start
	w.start = iv.Start
	w.sums = make([]decimal.Decimal, n+1)
	w.counts = make([]int64, n+1)
	for i := 0; i < n; i++ {
		w.sums[i+1], w.counts[i+1] = w.sums[i], w.counts[i]
		v, err := w.expr.Eval(ctx, buf[iv.Start+i])
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		d, err := funcs.ExactValue(ctx, v)
		if err != nil {
			return err
		}
		w.sums[i+1] = w.sums[i+1].Add(d)
		w.counts[i+1]++
	}
	return nil
}

func (w *exactWindow) Compute(ctx *sql.Context, iv sql.WindowInterval, buf sql.WindowBuffer) any {
	i, j := iv.Start-w.start, iv.End-w.start
	if j-i < 1 || i < 0 || j >= len(w.sums) {
		return nil
	}
	n := w.counts[j] - w.counts[i]
	if n == 0 {
		return nil
	}
	sum := w.sums[j].Sub(w.sums[i])
	if w.avg {
		return sum.DivRound(decimal.NewFromInt(n), w.scale)
	}
	return sum
}

func (w *exactWindow) Dispose() { w.WindowFunction.Dispose() }

// doubleAggOf returns e as a standard deviation or variance typed DOUBLE,
// or nil when e is not one (or is one already).
func doubleAggOf(e sql.Expression, windowed bool) *doubleAgg {
	var agg sql.Aggregation
	switch a := e.(type) {
	case *aggregation.StdDevPop:
		agg = a
	case *aggregation.StdDevSamp:
		agg = a
	case *aggregation.VarPop:
		agg = a
	case *aggregation.VarSamp:
		agg = a
	default:
		return nil
	}
	if (agg.Window() != nil) != windowed || types.IsFloat(agg.Type()) {
		return nil
	}
	return &doubleAgg{Aggregation: agg}
}

// doubleAgg is an aggregation whose result is a DOUBLE.
type doubleAgg struct{ sql.Aggregation }

func (a *doubleAgg) Type() sql.Type { return types.Float64 }

func (a *doubleAgg) FunctionName() string {
	if f, ok := a.Aggregation.(sql.FunctionExpression); ok {
		return f.FunctionName()
	}
	return ""
}

func (a *doubleAgg) Description() string {
	if f, ok := a.Aggregation.(sql.FunctionExpression); ok {
		return f.Description()
	}
	return ""
}

func (a *doubleAgg) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := a.Aggregation.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &doubleAgg{n.(sql.Aggregation)}, nil
}

func (a *doubleAgg) WithId(id sql.ColumnId) sql.IdExpression {
	return &doubleAgg{a.Aggregation.WithId(id).(sql.Aggregation)}
}

func (a *doubleAgg) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	return &doubleAgg{a.Aggregation.WithWindow(w).(sql.Aggregation)}
}
