package rules

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// RecursiveTypes gives a recursive CTE's DATE, DATETIME(n) and
// TIMESTAMP(n) columns the type its non-recursive part gives them, as
// MySQL does. go-mysql-server v0.20 widened them (Type.Promote) to
// DATETIME(6): a DATE carried through WITH RECURSIVE came back as
// '2026-02-25 00:00:00.000000', not '2026-02-25'. The CTE's schema, its
// working table's and the columns that read them are retyped. Only client
// connections get it (Session.mysql).
func RecursiveTypes(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !compat.FromClient(ctx) {
		return n, transform.SameTree, nil
	}
	// The analyzer's rules before it (castRule) do not reach into a
	// recursive CTE: a DATE or a date as text ± INTERVAL n DAY in it is
	// made a DATE or the text of one here.
	n, same, err := transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		r, ok := n.(*plan.RecursiveCte)
		if !ok {
			return n, transform.SameTree, nil
		}
		children := r.Children()
		changed := false
		for i, c := range children {
			nc, same, err := transform.NodeWithOpaque(c, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
				return transform.OneNodeExprsWithNode(n, func(_ sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
					return transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
						a, ok := e.(*expression.Arithmetic)
						if !ok {
							return e, transform.SameTree, nil
						}
						if DateInterval(a) {
							return expression.NewConvert(a, expression.ConvertToDate), transform.NewTree, nil
						}
						if t := funcs.TextDateInterval(a); t != nil {
							return t, transform.NewTree, nil
						}
						return e, transform.SameTree, nil
					})
				})
			})
			if err != nil {
				return nil, transform.SameTree, err
			}
			children[i] = nc
			changed = changed || same == transform.NewTree
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		nr, err := r.WithChildren(children...)
		return nr, transform.NewTree, err
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	// table.column (lower case) -> the type it takes, for the CTE's own
	// name (read by its recursive part) and the names it is read under.
	retyped := map[string]sql.Type{}
	fix := func(r *plan.RecursiveCte, names ...string) {
		sch := r.Schema()
		init := r.Left().Schema()
		if len(sch) != len(init) {
			return
		}
		for i, c := range sch {
			t := init[i].Type
			if !dateOrTime(t) || !dateOrTime(c.Type) {
				continue
			}
			// The schema is shared with the working table's and with
			// every reference to the CTE: it may be retyped already.
			c.Type = t
			for _, name := range names {
				retyped[strings.ToLower(name+"."+c.Name)] = t
			}
		}
		if r.Working != nil {
			for i, c := range r.Working.Schema() {
				if i < len(init) && dateOrTime(c.Type) && dateOrTime(init[i].Type) {
					c.Type = init[i].Type
				}
			}
		}
	}
	transform.Inspect(n, func(n sql.Node) bool {
		switch n := n.(type) {
		case *plan.SubqueryAlias:
			// The CTE, or a filter pushed down onto it.
			c := n.Child
			for len(c.Children()) == 1 {
				if _, ok := c.(*plan.RecursiveCte); ok {
					break
				}
				c = c.Children()[0]
			}
			if r, ok := c.(*plan.RecursiveCte); ok {
				fix(r, n.Name(), r.Name())
			}
		case *plan.RecursiveCte:
			fix(n, n.Name())
		}
		return true
	})
	if len(retyped) == 0 {
		return n, same, nil
	}
	return transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		return transform.OneNodeExprsWithNode(n, func(_ sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			return transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				gf, ok := e.(*expression.GetField)
				if !ok {
					return e, transform.SameTree, nil
				}
				t, ok := retyped[strings.ToLower(gf.Table()+"."+gf.Name())]
				if !ok || gf.Type() == t || !dateOrTime(gf.Type()) {
					return e, transform.SameTree, nil
				}
				return expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), t, gf.Database(), gf.Table(), gf.Name(), gf.IsNullable()).WithId(gf.Id()).(sql.Expression), transform.NewTree, nil
			})
		})
	})
}

// dateOrTime says whether t is DATE, DATETIME or TIMESTAMP.
func dateOrTime(t sql.Type) bool {
	if t == nil {
		return false
	}
	switch t.Type() {
	case sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp:
		return true
	}
	return false
}

// DateInterval says whether e is a DATE plus or minus an interval of whole
// days or more, which MySQL keeps a DATE.
func DateInterval(e *expression.Arithmetic) bool {
	if e.Op != "+" && e.Op != "-" {
		return false
	}
	date, iv := e.Left(), e.Right()
	if _, ok := date.(*expression.Interval); ok && e.Op == "+" {
		date, iv = iv, date
	}
	in, ok := iv.(*expression.Interval)
	if !ok || date.Type() != types.Date {
		return false
	}
	switch strings.ToUpper(in.Unit) {
	case "DAY", "WEEK", "MONTH", "QUARTER", "YEAR", "YEAR_MONTH":
		return true
	}
	return false
}
