package sqlserver

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// shutdownStatement runs SHUTDOWN (MySQL 8's statement; COM_SHUTDOWN,
// which `mysqladmin shutdown` sends, arrives as it, admincmd.go): with the
// SHUTDOWN privilege (1227 otherwise), the server answers OK and stops as
// it does on SIGTERM — no new connections, a checkpoint of every
// database, the journals closed. The stop begins once the OK packet is
// written: begun before, it closed the connection first now and then, and
// mariadb-admin shutdown said *Lost connection to server during query*.
func (h protocolHandler) shutdownStatement(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	w := sqltext.NewReader(q)
	w.Next()
	w.SkipSpace()
	rest := strings.TrimPrefix(w.Rest, ";")
	if strings.TrimSpace(rest) != "" && (whole || !strings.HasPrefix(w.Rest, ";")) {
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
	stop := h.srv.onShutdown
	if stop == nil {
		stop = h.srv.stop
	}
	if stop == nil {
		return end, true, nil
	}
	if cc := clientOf(c.Conn); cc != nil {
		var once sync.Once
		stopOnce := func() { once.Do(stop) }
		cc.afterWrite.Store(&stopOnce)
		// Should no write come (the client gone), the stop comes anyway.
		time.AfterFunc(shutdownAnswerWait, stopOnce)
		return end, true, nil
	}
	stop()
	return end, true, nil
}

// shutdownAnswerWait bounds the wait for SHUTDOWN's OK packet to be written
// before the server stops.
const shutdownAnswerWait = 2 * time.Second
