package sqlserver

import (
	"context"
	"errors"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// sqlStates gives the SQLSTATE MySQL sends with an error code, for the codes
// go-mysql-server sends with the generic HY000.
var sqlStates = map[int]string{
	1022: "23000", // ER_DUP_KEY
	1048: "23000", // ER_BAD_NULL_ERROR
	1049: "42000", // ER_BAD_DB_ERROR
	1050: "42S01", // ER_TABLE_EXISTS_ERROR
	1051: "42S02", // ER_BAD_TABLE_ERROR
	1054: "42S22", // ER_BAD_FIELD_ERROR
	1062: "23000", // ER_DUP_ENTRY
	1064: "42000", // ER_PARSE_ERROR
	1146: "42S02", // ER_NO_SUCH_TABLE
	1213: "40001", // ER_LOCK_DEADLOCK
	1216: "23000", // ER_NO_REFERENCED_ROW
	1217: "23000", // ER_ROW_IS_REFERENCED
	1264: "22003", // ER_WARN_DATA_OUT_OF_RANGE
	1406: "22001", // ER_DATA_TOO_LONG
	1451: "23000", // ER_ROW_IS_REFERENCED_2
	1452: "23000", // ER_NO_REFERENCED_ROW_2
	3819: "HY000", // ER_CHECK_CONSTRAINT_VIOLATED
}

// fixSQLState sets the SQLSTATE MySQL uses for err's code.
func fixSQLState(err error) error {
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		return err
	}
	if st, ok := sqlStates[se.Num]; ok && se.State != st {
		return mysql.NewSQLError(se.Num, st, "%s", se.Message)
	}
	return err
}

// errorHandler is the protocol handler with MySQL's SQLSTATEs on errors.
type errorHandler struct{ mysql.Handler }

func (h errorHandler) ComQuery(ctx context.Context, c *mysql.Conn, q string, cb mysql.ResultSpoolFn) error {
	return fixSQLState(h.Handler.ComQuery(ctx, c, q, cb))
}

func (h errorHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, q string, cb mysql.ResultSpoolFn) (string, error) {
	rest, err := h.Handler.ComMultiQuery(ctx, c, q, cb)
	return rest, fixSQLState(err)
}

func (h errorHandler) ComPrepare(ctx context.Context, c *mysql.Conn, q string, p *mysql.PrepareData) ([]*querypb.Field, error) {
	f, err := h.Handler.ComPrepare(ctx, c, q, p)
	return f, fixSQLState(err)
}

func (h errorHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) error {
	return fixSQLState(h.Handler.ComStmtExecute(ctx, c, p, cb))
}

func listenerFactory(cfg server.Config, lc mysql.ListenerConfig, sel server.ServerEventListener) (server.ProtocolListener, error) {
	lc.Handler = errorHandler{lc.Handler}
	return server.MySQLProtocolListenerFactory(cfg, lc, sel)
}
