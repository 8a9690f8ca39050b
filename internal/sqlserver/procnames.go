package sqlserver

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
)

// The parser names a statement's columns by their text (InputExpression),
// but not those of the statements in a procedure's body, which
// go-mysql-server parses again at each CALL: their columns were named by
// what the expression became once the procedure's variables were put in
// (SELECT x, x + 1 in a procedure called with 4 named its columns "4" and
// "(4 + 1)"; MySQL and MariaDB name them "x" and "x+1"). nameBodyColumns
// gives those columns the names the parser gives a statement's own.

// nameBodyColumns names the select expressions of the body of the CREATE
// PROCEDURE stmt from text, the query the parser read: an expression by
// its text (as the client wrote it, assigned), a parameter or a declared
// variable by its name.
func nameBodyColumns(stmt ast.Statement, text string, assigned rules.Assignments) {
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.ProcedureSpec == nil || ddl.ProcedureSpec.Body == nil {
		return
	}
	vars := map[string]bool{}
	for _, p := range ddl.ProcedureSpec.Params {
		vars[strings.ToLower(p.Name)] = true
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Declare:
			if n.Variables != nil {
				for _, v := range n.Variables.Names {
					vars[v.Lowered()] = true
				}
			}
		case *ast.AliasedExpr:
			if !n.As.IsEmpty() || n.InputExpression != "" {
				return true, nil
			}
			if c, isCol := n.Expr.(*ast.ColName); isCol {
				if c.Qualifier.IsEmpty() && vars[c.Name.Lowered()] {
					n.InputExpression = c.Name.String()
				}
			} else if n.StartParsePos >= 0 && n.EndParsePos > n.StartParsePos && n.EndParsePos <= len(text) {
				n.InputExpression = unquoted(trimLeadingNoise(strings.TrimSpace(text[n.StartParsePos:n.EndParsePos])))
				assigned.RestoreName(n)
			}
		}
		return true, nil
	}, ddl.ProcedureSpec.Body)
}

// unquoted returns s without the quotes around it when s is one quoted
// string or name ('abc', "abc", `abc`), as the parser names such columns.
func unquoted(s string) string {
	if len(s) < 2 || s[0] != s[len(s)-1] || (s[0] != '\'' && s[0] != '"' && s[0] != '`') {
		return s
	}
	q := s[0]
	escaped := false
	for i := 1; i < len(s)-1; i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == q:
			if i+1 < len(s)-1 && s[i+1] == q {
				i++ // a doubled quote
				continue
			}
			return s
		}
	}
	return s[1 : len(s)-1]
}
