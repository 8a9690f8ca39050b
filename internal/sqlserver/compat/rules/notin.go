package rules

import (
	"fmt"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// NotIn rewrites, in the conjuncts of every WHERE and HAVING, NOT (x IN
// (subquery)) and NOT EXISTS (subquery) as (…) IS FALSE. Both are the same
// filter (a row passes when the predicate is TRUE, and NOT p is TRUE
// exactly when p is FALSE), but go-mysql-server v0.20 leaves these alone,
// where it unnests the NOT forms into anti joins that get NULLs wrong: x
// NOT IN (…) became a left join keeping the rows whose x is NULL (MySQL:
// NULL NOT IN (non-empty set) is NULL, the row is not returned), and NOT
// EXISTS an anti join that drops the rows whose correlated column is NULL
// (MySQL returns them: no row of the subquery matches). The IN and EXISTS
// of the rewritten filters are evaluated as expressions, with MySQL's
// three-valued logic (an uncorrelated subquery's rows are read once).
func NotIn(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return rewriteNotIn(n)
}

func rewriteNotIn(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		// Subqueries in the node's expressions first.
		n, same, err := transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			sq, ok := e.(*plan.Subquery)
			if !ok {
				return e, transform.SameTree, nil
			}
			q, same, err := rewriteNotIn(sq.Query)
			if err != nil || same {
				return e, transform.SameTree, err
			}
			return sq.WithQuery(q), transform.NewTree, nil
		})
		if err != nil {
			return n, transform.SameTree, err
		}
		var cond sql.Expression
		switch f := n.(type) {
		case *plan.Filter:
			cond = f.Expression
		case *plan.Having:
			cond = f.Cond
		default:
			return n, same, nil
		}
		conj := expression.SplitConjunction(cond)
		changed := false
		var guards []sql.Expression
		for i, c := range conj {
			if cmp, ok := c.(expression.Comparer); ok {
				if sq := manyRowsSubquery(cmp); sq != nil {
					if sq.Correlated().Empty() {
						// Evaluated once: a guard raises 1242, and the
						// comparison keeps go-mysql-server's join (and
						// index lookups).
						g, err := singleRowGuard(sq)
						if err != nil {
							return n, transform.SameTree, err
						}
						guards = append(guards, g)
					} else {
						conj[i] = expression.NewIsTrue(c)
					}
					changed = true
					continue
				}
			}
			not, ok := c.(*expression.Not)
			if !ok {
				continue
			}
			switch not.Child.(type) {
			case *plan.InSubquery, *plan.ExistsSubquery:
				conj[i] = expression.NewIsFalse(not.Child)
				changed = true
			}
		}
		if !changed {
			return n, same, nil
		}
		conj = append(guards, conj...)
		switch f := n.(type) {
		case *plan.Filter:
			return plan.NewFilter(expression.JoinAnd(conj...), f.Child), transform.NewTree, nil
		case *plan.Having:
			return plan.NewHaving(expression.JoinAnd(conj...), f.Child), transform.NewTree, nil
		}
		return n, same, nil
	})
}

// manyRowsSubquery returns the scalar subquery operand of a comparison
// that may return more than one row, or nil.
func manyRowsSubquery(c expression.Comparer) *plan.Subquery {
	for _, e := range []sql.Expression{c.Left(), c.Right()} {
		if sq, ok := e.(*plan.Subquery); ok && !singleRow(sq.Query) {
			return sq
		}
	}
	return nil
}

// singleRowGuard is a filter that is TRUE when sq returns at most one row
// and fails with 1242 otherwise: COALESCE((sq), 1) IS NOT NULL, which reads
// sq as a scalar (an expression, not a comparison, so go-mysql-server does
// not make a join of it). An uncorrelated subquery's result is cached.
func singleRowGuard(sq *plan.Subquery) (sql.Expression, error) {
	c, err := function.NewCoalesce(sq, expression.NewLiteral(int8(1), types.Int8))
	if err != nil {
		return nil, err
	}
	return expression.NewNot(expression.NewIsNull(c)), nil
}

// singleRow says whether a query returns at most one row by its shape: an
// aggregate without GROUP BY, or LIMIT 0 or 1, under projections, filters
// and sorts.
func singleRow(n sql.Node) bool {
	switch n := n.(type) {
	case *plan.Project:
		return singleRow(n.Child)
	case *plan.Filter:
		return singleRow(n.Child)
	case *plan.Having:
		return singleRow(n.Child)
	case *plan.Sort:
		return singleRow(n.Child)
	case *plan.SubqueryAlias:
		return singleRow(n.Child)
	case *plan.GroupBy:
		return len(n.GroupByExprs) == 0
	case *plan.Limit:
		if lit, ok := n.Limit.(*expression.Literal); ok {
			switch v := lit.Value().(type) {
			case int8, int16, int32, int64, uint8, uint16, uint32, uint64, int:
				if i, err := strconv.ParseInt(fmt.Sprint(v), 10, 64); err == nil && i <= 1 {
					return true
				}
			}
		}
		return singleRow(n.Child)
	}
	return false
}
