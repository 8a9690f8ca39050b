package rules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/weights"
)

// HashJoin makes the hash keys of a hash join (and of the semi-joins
// of IN and EXISTS) on strings their weight strings under the collation
// MySQL compares them with. go-mysql-server v0.20 hashes the strings
// themselves, so rows whose strings are equal under the collation but
// not byte for byte ('apple', 'APPLE' under utf8mb4_0900_ai_ci) never met:
// a JOIN … ON a.s = b.s that MySQL answers with every row found almost
// none once the planner chose a hash join (larger tables). Equal weight
// strings are equal strings under the collation, and the join's own
// condition is still evaluated on the rows a key finds.
func HashJoin(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		hl, ok := n.(*plan.HashLookup)
		if !ok {
			return n, transform.SameTree, nil
		}
		right, left, changed := collatedKeys(ctx, hl.RightEntryKey, hl.LeftProbeKey)
		if !changed {
			return n, transform.SameTree, nil
		}
		c := *hl
		c.RightEntryKey, c.LeftProbeKey = right, left
		return &c, transform.NewTree, nil
	})
}

// collatedKeys wraps the string parts of a hash join's two keys (single
// expressions or tuples of them, pair by pair) in weightKey.
func collatedKeys(ctx *sql.Context, right, left sql.Expression) (sql.Expression, sql.Expression, bool) {
	rt, rIsTuple := right.(expression.Tuple)
	lt, lIsTuple := left.(expression.Tuple)
	if rIsTuple != lIsTuple {
		return right, left, false
	}
	if !rIsTuple {
		r, l, ok := collatedPair(ctx, right, left)
		return r, l, ok
	}
	if len(rt) != len(lt) {
		return right, left, false
	}
	nr, nl := make(expression.Tuple, len(rt)), make(expression.Tuple, len(lt))
	changed := false
	for i := range rt {
		var ok bool
		nr[i], nl[i], ok = collatedPair(ctx, rt[i], lt[i])
		changed = changed || ok
	}
	return nr, nl, changed
}

// collatedPair wraps two string keys in weightKey under the collation
// their comparison uses; keys of other types, of a binary collation, or
// already wrapped are left as they are.
func collatedPair(ctx *sql.Context, right, left sql.Expression) (sql.Expression, sql.Expression, bool) {
	if _, done := right.(*weightKey); done {
		return right, left, false
	}
	if !types.IsText(right.Type()) || !types.IsText(left.Type()) {
		return right, left, false
	}
	rc, rk := sql.GetCoercibility(ctx, right)
	lc, lk := sql.GetCoercibility(ctx, left)
	coll, _ := sql.ResolveCoercibility(rc, rk, lc, lk)
	if coll == sql.Collation_Unspecified || coll.Equals(sql.Collation_binary) || coll.Sorter() == nil {
		return right, left, false
	}
	return &weightKey{Expression: right, coll: coll}, &weightKey{Expression: left, coll: coll}, true
}

// weightKey is the weight string of its string under coll (see
// weights.AppendWeights), as a hash key.
type weightKey struct {
	sql.Expression
	coll sql.CollationID
}

func (w *weightKey) Type() sql.Type { return types.LongBlob }

func (w *weightKey) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := w.Expression.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	v, err = sql.UnwrapAny(ctx, v)
	if err != nil {
		return nil, err
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return v, nil
	}
	b, err := weights.AppendWeights(nil, w.coll, s)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func (w *weightKey) Children() []sql.Expression { return []sql.Expression{w.Expression} }

func (w *weightKey) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(w, len(children), 1)
	}
	return &weightKey{Expression: children[0], coll: w.coll}, nil
}

func (w *weightKey) String() string { return w.Expression.String() }
