package sqlserver

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// shutdownStatement runs SHUTDOWN (MySQL 8's statement; COM_SHUTDOWN,
// which `mysqladmin shutdown` sends, arrives as it, admincmd.go): with the
// SHUTDOWN privilege (1227 otherwise), the server answers OK and stops as
// it does on SIGTERM — no new connections, a checkpoint of every
// database, the journals closed.
func (h protocolHandler) shutdownStatement(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	w := words{s: q}
	w.next()
	w.skipSpace()
	rest := strings.TrimPrefix(w.s, ";")
	if strings.TrimSpace(rest) != "" && (whole || !strings.HasPrefix(w.s, ";")) {
		return 0, false, nil // SHUTDOWN with more: the parser's 1064
	}
	end := len(q) - len(rest)
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q[:end])
	if err != nil {
		return end, true, err
	}
	sql.IncrementStatusVariable(sctx, "Questions", 1)
	mdb := h.srv.engine.Analyzer.Catalog.MySQLDb
	if !mdb.UserHasPrivileges(sctx, sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{}, sql.PrivilegeType_Shutdown)) {
		return end, true, mysql.NewSQLError(1227, "42000", "Access denied; you need (at least one of) the SHUTDOWN privilege(s) for this operation")
	}
	client := sctx.Session.Client()
	h.srv.log.Info("shutdown requested by SHUTDOWN", "user", client.User, "host", client.Address, "connection", c.ConnectionID)
	switch {
	case h.srv.onShutdown != nil:
		h.srv.onShutdown()
	case h.srv.stop != nil:
		h.srv.stop()
	}
	return end, true, nil
}
