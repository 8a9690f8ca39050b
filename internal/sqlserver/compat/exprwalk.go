package compat

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// TransformAllExprs applies f to every expression of every node of n,
// bottom up, including the nodes of the subqueries its expressions hold
// (which transform.NodeExprs leaves alone): the walk of the analyzer rules
// that rewrite expressions wherever a statement has them.
func TransformAllExprs(n sql.Node, f transform.ExprFunc) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		return transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			sq, ok := e.(*plan.Subquery)
			if !ok {
				return f(e)
			}
			q, inner, err := TransformAllExprs(sq.Query, f)
			if err != nil {
				return e, transform.SameTree, err
			}
			if inner == transform.NewTree {
				e = sq.WithQuery(q)
			}
			ne, outer, err := f(e)
			if err != nil {
				return e, transform.SameTree, err
			}
			return ne, inner && outer, nil // SameTree is true
		})
	})
}
