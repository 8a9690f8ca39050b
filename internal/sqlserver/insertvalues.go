package sqlserver

import (
	"fmt"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// INSERT … SELECT … ON DUPLICATE KEY UPDATE c = VALUES(c), MySQL's way to
// write the value the SELECT gave a column into the row it met. The
// planner of go-mysql-server v0.20 finds VALUES(c) only for rows written
// as VALUES (…): with a SELECT it failed with 1105 (expected ON DUPLICATE
// KEY ... VALUES() to reference a column). The SELECT is made a derived
// table with a name for each column inserted, and VALUES(c) that table's
// column for c, which the planner reads as any column of the source.

// insertSourceAlias names the derived table of the rewritten source.
const insertSourceAlias = "~ins"

// rewriteInsertSelectValues rewrites stmt, an INSERT … SELECT whose ON
// DUPLICATE KEY UPDATE uses VALUES(); s finds the table's columns when
// the INSERT names none.
func rewriteInsertSelectValues(s *Session, db string, stmt ast.Statement) {
	ins, ok := stmt.(*ast.Insert)
	if !ok || len(ins.OnDup) == 0 {
		return
	}
	sel, ok := ins.Rows.(ast.SelectStatement)
	if !ok {
		return
	}
	var values []*ast.ValuesFuncExpr
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.ValuesFuncExpr:
			values = append(values, n)
		}
		return true, nil
	}, ins.OnDup)
	if len(values) == 0 {
		return
	}
	cols := make([]string, len(ins.Columns))
	for i, c := range ins.Columns {
		cols[i] = c.String()
	}
	if len(cols) == 0 {
		if s == nil || s.engine == nil {
			return
		}
		if q := ins.Table.DbQualifier.String(); q != "" {
			db = q
		}
		ti := (&groupCheck{sess: s}).table(db, ins.Table.Name.String())
		if ti == nil {
			return
		}
		for _, c := range ti.Schema.Schema {
			cols = append(cols, c.Name)
		}
	}
	names := make(ast.Columns, len(cols))
	for i := range cols {
		names[i] = ast.NewColIdent(fmt.Sprintf("~v%d", i+1))
	}
	source := ast.NewTableIdent(insertSourceAlias)
	for _, ae := range ins.OnDup {
		for _, v := range values {
			for i, c := range cols {
				if strings.EqualFold(c, v.Name.Name.String()) {
					ae.Expr = ast.ReplaceExpr(ae.Expr, v, &ast.ColName{Name: names[i], Qualifier: ast.TableName{Name: source}})
					break
				}
			}
		}
	}
	ins.Rows = &ast.Select{
		SelectExprs: ast.SelectExprs{&ast.StarExpr{}},
		From: ast.TableExprs{&ast.AliasedTableExpr{Expr: &ast.Subquery{Select: sel, Columns: names}, As: source,
			Auth: ast.AuthInformation{AuthType: ast.AuthType_IGNORE}}},
	}
}
