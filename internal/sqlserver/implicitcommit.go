package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// go-mysql-server v0.20 binds a view by building its CREATE VIEW
// statement, which marks the query in which the view is read as DDL, and a
// DDL statement commits the open transaction: START TRANSACTION; INSERT
// …; SELECT … FROM a_view; ROLLBACK kept the INSERT, a savepoint was gone
// after the SELECT (mariadb-dump --single-transaction failed on the first
// view with "SAVEPOINT sp does not exist"), and row locks were released.
// viewReadRule takes the mark off a statement that reads or writes rows.

// rowStatements are the first words of statements that never commit
// implicitly.
var rowStatements = map[string]bool{
	"SELECT": true, "WITH": true, "(": true, "TABLE": true, "VALUES": true,
	"SHOW": true, "DESC": true, "DESCRIBE": true, "EXPLAIN": true,
	"INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true,
}

const viewReadRuleID analyzer.RuleId = 10_001

func viewReadRule(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qf *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qf == nil || !qf.IsSet(sql.QFlagDDL) || plan.IsDDLNode(n) {
		return n, transform.SameTree, nil
	}
	if w, _ := scanStatement(ctx.Query()); len(w) > 0 && rowStatements[w[0].text] {
		qf.Unset(sql.QFlagDDL)
	}
	return n, transform.SameTree, nil
}
