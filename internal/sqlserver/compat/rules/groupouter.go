package rules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GroupOuter lets a correlated subquery in the select list, HAVING or
// ORDER BY of a grouped query read the grouped table's columns that the
// query does not select:
//
//	SELECT SUM(c), (SELECT v FROM h WHERE h.a = g.a) FROM g GROUP BY a
//
// go-mysql-server v0.20 builds the GROUP BY's output from the aggregates
// and the columns the select list names outside subqueries, so g.a was
// not in the rows the subquery saw: it read another column in its place
// (the wrong rows, or error 1242 "Subquery returns more than 1 row").
// This rule adds each such column to the GROUP BY's output, where the
// index assignment that follows finds it by its column id; a grouped
// column has one value per group, and any other takes a row's of its
// group, as MySQL's does.
//
// The select list's aliases of such a query are computed by a projection
// right above the GROUP BY, and the outer projection held the same alias
// again: it evaluated the subquery a second time, on the inner
// projection's rows, where the column it reads is not. The outer
// projection now reads the inner one's column instead.
func GroupOuter(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	same1 := transform.SameTree
	grouped := false
	transform.Inspect(n, func(n sql.Node) bool {
		_, ok := n.(*plan.GroupBy)
		grouped = grouped || ok
		return !grouped
	})
	if grouped {
		var err error
		if n, same1, err = groupOuter(n, nil); err != nil {
			return nil, transform.SameTree, err
		}
	}
	n, same2, err := transform.Node(n, reuseAliases)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, same1 && same2, nil
}

// reuseAliases makes a projection that repeats an alias holding a
// subquery, which the projection under it (through nodes that keep their
// child's columns) already computes, read that projection's column.
func reuseAliases(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	p, ok := n.(*plan.Project)
	if !ok {
		return n, transform.SameTree, nil
	}
	var inner *plan.Project
	for c := p.Child; inner == nil; {
		switch cn := c.(type) {
		case *plan.Project:
			inner = cn
		case *plan.Having:
			c = cn.Child
		case *plan.Sort:
			c = cn.Child
		case *plan.Filter:
			c = cn.Child
		default:
			return n, transform.SameTree, nil
		}
	}
	var projs []sql.Expression
	for i, e := range p.Projections {
		a, ok := e.(*expression.Alias)
		if !ok || !hasSubquery(a) {
			continue
		}
		for j, ie := range inner.Projections {
			ia, ok := ie.(*expression.Alias)
			if !ok || ia.Id() != a.Id() || ia.Name() != a.Name() || ia.String() != a.String() {
				continue
			}
			if projs == nil {
				projs = append([]sql.Expression{}, p.Projections...)
			}
			col := inner.Schema()[j]
			projs[i] = expression.NewGetFieldWithTable(j, 0, col.Type, col.DatabaseSource, col.Source, col.Name, col.Nullable).WithId(a.Id()).(sql.Expression)
			break
		}
	}
	if projs == nil {
		return n, transform.SameTree, nil
	}
	np, err := p.WithExpressions(projs...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return np, transform.NewTree, nil
}

// hasSubquery reports whether e holds a subquery.
func hasSubquery(e sql.Expression) bool {
	return transform.InspectExpr(e, func(e sql.Expression) bool {
		_, ok := e.(*plan.Subquery)
		return ok
	})
}

// groupOuter rewrites the GROUP BY nodes of n; above are the columns that
// subqueries in n's ancestors read.
func groupOuter(n sql.Node, above []*expression.GetField) (sql.Node, transform.TreeIdentity, error) {
	refs := above
	if ex, ok := n.(sql.Expressioner); ok {
		for _, e := range ex.Expressions() {
			refs = subqueryRefs(e, refs)
		}
	}
	same := transform.SameTree
	if g, ok := n.(*plan.GroupBy); ok {
		if extra := missingGroupCols(g, refs); len(extra) > 0 {
			n = plan.NewGroupBy(append(append([]sql.Expression{}, g.SelectedExprs...), extra...), g.GroupByExprs, g.Child)
			same = transform.NewTree
		}
		// Nothing above a GROUP BY reads the rows below it.
		refs = nil
	}
	children := n.Children()
	if len(children) == 0 {
		return n, same, nil
	}
	var newChildren []sql.Node // made once a child changes
	for i, c := range children {
		nc, s, err := groupOuter(c, refs)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if s == transform.NewTree && newChildren == nil {
			newChildren = append([]sql.Node{}, children...)
		}
		if newChildren != nil {
			newChildren[i] = nc
		}
	}
	if newChildren == nil {
		return n, same, nil
	}
	nn, err := n.WithChildren(newChildren...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return nn, transform.NewTree, nil
}

// subqueryRefs appends to refs the columns that the subqueries in e (at
// any depth) read by column id.
func subqueryRefs(e sql.Expression, refs []*expression.GetField) []*expression.GetField {
	transform.InspectExpr(e, func(e sql.Expression) bool {
		if sq, ok := e.(*plan.Subquery); ok && sq.Query != nil {
			refs = nodeRefs(sq.Query, refs)
		}
		return false
	})
	return refs
}

// nodeRefs appends to refs the columns the expressions of n and of its
// descendants read.
func nodeRefs(n sql.Node, refs []*expression.GetField) []*expression.GetField {
	transform.Inspect(n, func(n sql.Node) bool {
		ex, ok := n.(sql.Expressioner)
		if !ok {
			return true
		}
		for _, e := range ex.Expressions() {
			transform.InspectExpr(e, func(e sql.Expression) bool {
				switch e := e.(type) {
				case *expression.GetField:
					if e.Id() != 0 {
						refs = append(refs, e)
					}
				case *plan.Subquery:
					if e.Query != nil {
						refs = nodeRefs(e.Query, refs)
					}
				}
				return false
			})
		}
		return true
	})
	return refs
}

// missingGroupCols returns the columns of refs that the rows under g hold
// and g's output does not, once each.
func missingGroupCols(g *plan.GroupBy, refs []*expression.GetField) []sql.Expression {
	if len(refs) == 0 {
		return nil
	}
	var have sql.ColSet
	for _, e := range g.SelectedExprs {
		if ide, ok := e.(sql.IdExpression); ok {
			have.Add(ide.Id())
		}
	}
	var below sql.ColSet
	transform.Inspect(g.Child, func(n sql.Node) bool {
		if t, ok := n.(plan.TableIdNode); ok {
			below = below.Union(t.Columns())
		}
		return true
	})
	var extra []sql.Expression
	for _, r := range refs {
		if !below.Contains(r.Id()) || have.Contains(r.Id()) {
			continue
		}
		have.Add(r.Id())
		extra = append(extra, r)
	}
	return extra
}
