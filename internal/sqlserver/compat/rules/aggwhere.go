package rules

import (
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// An aggregate function in a WHERE clause (of a SELECT, an UPDATE or a
// DELETE, or a join's ON) is MySQL's 1111, Invalid use of group function:
// the rows are filtered before they are grouped. go-mysql-server v0.20
// planned such a query and failed while running it with an internal text
// ("unable to find field with index 3 in row of 2 columns"). An aggregate
// inside a subquery of the clause belongs to the subquery, which is checked
// on its own.

// CheckAggregatePlacement returns 1111 for the first WHERE or ON of stmt
// that holds an aggregate function of its own query.
func CheckAggregatePlacement(stmt ast.Statement) error {
	var found bool
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if found {
			return false, nil
		}
		switch n := node.(type) {
		case *ast.Select:
			found = n.Where != nil && holdsAggregate(n.Where.Expr)
		case *ast.Update:
			found = n.Where != nil && holdsAggregate(n.Where.Expr)
		case *ast.Delete:
			found = n.Where != nil && holdsAggregate(n.Where.Expr)
		case *ast.JoinTableExpr:
			found = n.Condition.On != nil && holdsAggregate(n.Condition.On)
		}
		return !found, nil
	}, stmt)
	if found {
		return errGroupFunctionUse()
	}
	return nil
}

// errGroupFunctionUse is MySQL's 1111.
func errGroupFunctionUse() error {
	return mysql.NewSQLError(1111, "HY000", "Invalid use of group function")
}

// holdsAggregate says whether e holds an aggregate function (not a window
// function) outside its subqueries.
func holdsAggregate(e ast.Expr) bool {
	if e == nil {
		return false
	}
	var found bool
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if found {
			return false, nil
		}
		switch n := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.GroupConcatExpr:
			found = true
		case *ast.FuncExpr:
			if n.Over == nil && n.Qualifier.IsEmpty() && funcs.Aggregates[strings.ToLower(n.Name.String())] {
				found = true
			}
		}
		return !found, nil
	}, e)
	return found
}
