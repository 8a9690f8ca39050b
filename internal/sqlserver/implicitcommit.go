package sqlserver

import (
	"context"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// commitsBefore reports whether q is one of the administrative statements
// that commit the session's open transaction before they run, as in
// MySQL and MariaDB: FLUSH (every form), LOCK TABLES, ANALYZE, OPTIMIZE,
// CHECK and REPAIR TABLE, CACHE INDEX, LOAD INDEX INTO CACHE, RESET.
// go-mysql-server commits before DDL only.
func commitsBefore(q string) bool {
	w := sqltext.NewReader(q)
	switch first := w.Next(); {
	case sqltext.IsKeyword(first, "FLUSH"), sqltext.IsKeyword(first, "ANALYZE"), sqltext.IsKeyword(first, "OPTIMIZE"),
		sqltext.IsKeyword(first, "CHECK"), sqltext.IsKeyword(first, "REPAIR"), sqltext.IsKeyword(first, "CACHE"):
		return true
	case sqltext.IsKeyword(first, "LOCK"):
		second := w.Next()
		return sqltext.IsKeyword(second, "TABLES") || sqltext.IsKeyword(second, "TABLE")
	case sqltext.IsKeyword(first, "LOAD"):
		return sqltext.IsKeyword(w.Next(), "INDEX")
	case sqltext.IsKeyword(first, "RESET"):
		return !sqltext.IsKeyword(w.Next(), "PERSIST")
	}
	return false
}

// commitOpen commits the session's open transaction before a statement
// that commits implicitly (commitsBefore), as COMMIT does: its writes
// wait for a global read lock held elsewhere, and a transaction that
// began with START TRANSACTION ends (autocommit applies again).
func (h protocolHandler) commitOpen(ctx context.Context, c *mysql.Conn, sess *Session, q string) error {
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q)
	if err != nil {
		return err
	}
	if err := sess.CommitTransaction(sctx, sctx.GetTransaction()); err != nil {
		return err
	}
	sctx.SetIgnoreAutoCommit(false)
	sctx.SetTransaction(nil)
	return nil
}

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

func viewReadRule(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qf *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qf == nil || !qf.IsSet(sql.QFlagDDL) || plan.IsDDLNode(n) {
		return n, transform.SameTree, nil
	}
	if w, _ := sqltext.ScanStatement(ctx.Query()); len(w) > 0 && rowStatements[w[0].Text] {
		qf.Unset(sql.QFlagDDL)
	}
	return n, transform.SameTree, nil
}
