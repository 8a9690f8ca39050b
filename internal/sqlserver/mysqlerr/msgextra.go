package mysqlerr

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// More rows of the table of go-mysql-server's texts that MySQL gives
// another code or text (see pickedMessages).
func init() {
	pickedMessages = append(pickedMessages,
		pickedMessage{0, regexp.MustCompile("^`(.*)` expected `(\\d+)` parameters but got `(\\d+)`$"), wrongProcedureArguments},
		pickedMessage{1140, regexp.MustCompile(`^in aggregated query without GROUP BY, expression #%!d\(MISSING\)`), aggregateWithWindow},
	)
}

// wrongProcedureArguments is MySQL's 1318 for a CALL with a number of
// arguments the procedure does not take.
func wrongProcedureArguments(m []string, c Context) (int, string, string, bool) {
	return 1318, "42000", fmt.Sprintf("Incorrect number of arguments for PROCEDURE %s; expected %s, got %s",
		c.ProcedureName(m[1]), m[2], m[3]), true
}

// aggregateWithWindow gives MySQL's error for a query that has both an
// aggregate function and a window function, which go-mysql-server v0.20
// refuses with a 1140 whose text lacks its arguments. When a column of the
// select list is read outside an aggregate function (a window's argument,
// PARTITION BY or ORDER BY), MySQL refuses the query with 1140 too, and
// its text names the expression and the column. Otherwise MySQL runs the
// window functions over the grouped rows, which Miraj does not do: 1235,
// not supported.
func aggregateWithWindow(_ []string, c Context) (int, string, string, bool) {
	if pos, col, ok := nonAggregatedColumn(c); ok {
		return 1140, "42000", fmt.Sprintf("In aggregated query without GROUP BY, expression #%d of SELECT list contains nonaggregated column '%s'; this is incompatible with sql_mode=only_full_group_by", pos, col), true
	}
	return 1235, "42000", "This version of MySQL doesn't yet support 'window functions over the rows of an aggregated query'", true
}

// nonAggregatedColumn finds in the statement's first SELECT without GROUP
// BY the first expression of the select list that reads a column outside
// an aggregate function, and names the column as MySQL does
// (db.table.column). ok is false when there is none or when the column's
// table is not known for sure.
func nonAggregatedColumn(c Context) (int, string, bool) {
	stmt, _, err := ast.ParseOne(context.Background(), c.Query)
	if err != nil {
		return 0, "", false
	}
	var sel *ast.Select
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if s, ok := node.(*ast.Select); ok && sel == nil && len(s.GroupBy) == 0 {
			sel = s
		}
		return sel == nil, nil
	}, stmt)
	if sel == nil || len(sel.From) != 1 {
		return 0, "", false
	}
	at, ok := sel.From[0].(*ast.AliasedTableExpr)
	if !ok {
		return 0, "", false
	}
	tn, ok := at.Expr.(ast.TableName)
	if !ok {
		return 0, "", false
	}
	db := tn.DbQualifier.String()
	if db == "" {
		db = c.DB
	}
	for i, se := range sel.SelectExprs {
		ae, ok := se.(*ast.AliasedExpr)
		if !ok {
			continue
		}
		if col := freeColumn(ae.Expr); col != nil {
			return i + 1, db + "." + tn.Name.String() + "." + col.Name.String(), true
		}
	}
	return 0, "", false
}

// freeColumn is the first column e reads outside aggregate functions and
// subqueries.
func freeColumn(e ast.Expr) *ast.ColName {
	var col *ast.ColName
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if col != nil {
			return false, nil
		}
		switch n := node.(type) {
		case *ast.Subquery, *ast.GroupConcatExpr:
			return false, nil
		case *ast.FuncExpr:
			if n.Over == nil && funcs.Aggregates[strings.ToLower(n.Name.String())] {
				return false, nil
			}
		case *ast.ColName:
			col = n
			return false, nil
		}
		return true, nil
	}, e)
	return col
}
