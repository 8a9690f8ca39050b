package rules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// BranchType gives CASE, IF, IFNULL and COALESCE whose results are
// numbers, not all integers, MySQL's type for them: DOUBLE when one is a
// float, else a DECIMAL with as many decimals as the most precise one. go-mysql-server v0.20 takes the type of
// one of them: COALESCE(NULL, -71 * 75, AVG(17)) failed with 1105 "Out of
// range value for column of Decimal type" (AVG(17) is a DECIMAL(6,4)),
// IF(1, -71 * 75, AVG(17)) printed -5325 (MySQL: -5325.0000), IF(1, 2.5,
// 1e0) was a DECIMAL (MySQL: DOUBLE), COALESCE(AVG(17),
// 123456.5) printed 17.0 (MySQL: 17.0000). Client connections only
// (Session.mysql), as for exact sums, which make most of these DECIMALs.
func BranchType(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !compat.FromClient(ctx) {
		return n, transform.SameTree, nil
	}
	return compat.TransformAllExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		var results []sql.Expression
		var coalesce []sql.Expression
		switch e := e.(type) {
		case *function.Coalesce:
			results, coalesce = e.Children(), e.Children()
		case *function.IfNull:
			results = []sql.Expression{e.LeftChild, e.RightChild}
		case *function.If:
			results = e.Children()[1:]
		case *expression.Case:
			for _, b := range e.Branches {
				results = append(results, b.Value)
			}
			if e.Else != nil {
				results = append(results, e.Else)
			}
		default:
			return e, transform.SameTree, nil
		}
		typ, ok := decimalOfBranches(results)
		if !ok || typ.Equals(e.Type()) {
			return e, transform.SameTree, nil
		}
		return &decimalBranches{Expression: e, typ: typ, coalesce: coalesce != nil}, transform.NewTree, nil
	})
}

// decimalOfBranches returns the type that holds every one of the results
// when they are numbers, not all integers: DOUBLE if one is a float, else
// a DECIMAL with the most decimals among them.
func decimalOfBranches(results []sql.Expression) (sql.Type, bool) {
	scale, decimals, floats := 0, 0, 0
	for _, r := range results {
		t := r.Type()
		switch {
		case t == types.Null:
		case types.IsDecimal(t):
			scale = max(scale, int(t.(sql.DecimalType).Scale()))
			decimals++
		case types.IsInteger(t):
		case types.IsFloat(t):
			floats++
		default:
			return nil, false
		}
	}
	switch {
	case floats > 0:
		return types.Float64, true
	case decimals == 0:
		return nil, false
	}
	// The widest precision: go-mysql-server's arithmetic on DECIMALs
	// reports fewer digits than its results can have (AVG(1) * 45 + 1455
	// is typed DECIMAL(5,4)), so digits counted from the types could be too
	// few. The decimals are what MySQL's type has; they decide the output.
	return types.MustCreateDecimalType(funcs.MaxDecimalPrecision, uint8(min(scale, funcs.MaxDecimalScale))), true
}

// decimalBranches is a CASE, IF, IFNULL or COALESCE typed by
// BranchType: its result is converted to that type. A COALESCE's
// arguments are evaluated here, since its own Eval converts each to its
// narrower type first.
type decimalBranches struct {
	sql.Expression
	typ      sql.Type
	coalesce bool
}

func (d *decimalBranches) Type() sql.Type { return d.typ }

func (d *decimalBranches) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	var v any
	var err error
	if d.coalesce {
		for _, arg := range d.Children() {
			if v, err = arg.Eval(ctx, row); err != nil || v != nil {
				break
			}
		}
	} else {
		v, err = d.Expression.Eval(ctx, row)
	}
	if err != nil || v == nil {
		return v, err
	}
	if v, _, err = d.typ.Convert(ctx, v); err != nil {
		return nil, err
	}
	// A DECIMAL result prints with its value's decimals: give it the type's.
	if dt, ok := d.typ.(sql.DecimalType); ok {
		if dec, ok := v.(decimal.Decimal); ok {
			v = dec.Round(int32(dt.Scale()))
		}
	}
	return v, nil
}

func (d *decimalBranches) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := d.Expression.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &decimalBranches{Expression: e, typ: d.typ, coalesce: d.coalesce}, nil
}
