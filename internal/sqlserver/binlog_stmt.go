package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/miraj-db/miraj/internal/binlog"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// The statements that inspect and maintain the binary log (§17.13.2),
// answered before the planner, which knows none of them:
//
//	SHOW MASTER STATUS | SHOW BINARY LOG STATUS
//	SHOW BINARY LOGS | SHOW MASTER LOGS
//	SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] count]
//	PURGE BINARY | MASTER LOGS TO 'file' | BEFORE expr
//	RESET MASTER [TO n]
//	SHOW SLAVE HOSTS | SHOW REPLICA HOSTS
//
// (FLUSH BINARY LOGS is flush.go's; BINLOG_GTID_POS() a function.)
// Privileges: REPLICATION CLIENT or SUPER for the SHOW statements, SUPER
// for PURGE and RESET MASTER (1227). Log disabled: SHOW BINARY LOGS and
// PURGE 1381, RESET MASTER 1186, SHOW MASTER STATUS and SHOW BINLOG EVENTS
// no rows.

var (
	showMasterStatusRE = regexp.MustCompile(`(?is)^SHOW\s+(?:MASTER|BINARY\s+LOG)\s+STATUS$`)
	showBinaryLogsRE   = regexp.MustCompile(`(?is)^SHOW\s+(?:BINARY|MASTER)\s+LOGS$`)
	showBinlogEventsRE = regexp.MustCompile(`(?is)^SHOW\s+BINLOG\s+EVENTS(?:\s+IN\s+'([^']*)')?(?:\s+FROM\s+(\d+))?(?:\s+LIMIT\s+(\d+)(?:\s*,\s*(\d+))?)?$`)
	purgeToRE          = regexp.MustCompile(`(?is)^PURGE\s+(?:BINARY|MASTER)\s+LOGS\s+TO\s+'([^']*)'$`)
	purgeBeforeRE      = regexp.MustCompile(`(?is)^PURGE\s+(?:BINARY|MASTER)\s+LOGS\s+BEFORE\s+(.+)$`)
	resetMasterRE      = regexp.MustCompile(`(?is)^RESET\s+MASTER(?:\s+TO\s+(\d+))?$`)
	showSlaveHostsRE   = regexp.MustCompile(`(?is)^SHOW\s+(?:SLAVE|REPLICA)\s+HOSTS$`)
)

var (
	needReplicationClient = requirement{static: []sql.PrivilegeType{sql.PrivilegeType_ReplicationClient, sql.PrivilegeType_Super},
		text: "SUPER, REPLICATION CLIENT"}
	needSuper = requirement{static: []sql.PrivilegeType{sql.PrivilegeType_Super}, text: "SUPER"}
)

func errNoBinaryLogging() error {
	return mysql.NewSQLError(1381, "HY000", "You are not using binary logging")
}

// binlogQuery answers q if it is one of the statements above, alone.
func (h protocolHandler) binlogQuery(ctx context.Context, c *mysql.Conn, q string, cb func(*sqltypes.Result, bool) error) (bool, error) {
	stmt := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(q), ";"))
	if len(stmt) < 5 {
		return false, nil
	}
	switch strings.ToUpper(stmt[:4]) {
	case "SHOW", "PURG", "RESE":
	default:
		return false, nil
	}
	var run func(sctx *sql.Context, b *binlogServer) (*sqltypes.Result, error)
	need := needReplicationClient
	switch {
	case showMasterStatusRE.MatchString(stmt):
		run = func(_ *sql.Context, b *binlogServer) (*sqltypes.Result, error) {
			r := textResult("File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB")
			if b != nil {
				end := b.log.End()
				r.Fields[1].Type = querypb.Type_UINT64
				r.Rows = append(r.Rows, textRow(end.File, strconv.FormatInt(end.Pos, 10), "", ""))
			}
			return r, nil
		}
	case showBinaryLogsRE.MatchString(stmt):
		run = func(_ *sql.Context, b *binlogServer) (*sqltypes.Result, error) {
			if b == nil {
				return nil, errNoBinaryLogging()
			}
			r := textResult("Log_name", "File_size")
			r.Fields[1].Type = querypb.Type_UINT64
			for _, f := range b.log.Files() {
				r.Rows = append(r.Rows, textRow(f.Name, strconv.FormatInt(f.Size, 10)))
			}
			return r, nil
		}
	case showBinlogEventsRE.MatchString(stmt):
		m := showBinlogEventsRE.FindStringSubmatch(stmt)
		run = func(_ *sql.Context, b *binlogServer) (*sqltypes.Result, error) {
			r := textResult("Log_name", "Pos", "Event_type", "Server_id", "End_log_pos", "Info")
			for _, i := range []int{1, 3, 4} {
				r.Fields[i].Type = querypb.Type_UINT64
			}
			if b == nil {
				return r, nil
			}
			from, _ := strconv.ParseInt(m[2], 10, 64)
			offset, limit := 0, -1
			if m[3] != "" {
				limit, _ = strconv.Atoi(m[3])
				if m[4] != "" {
					offset, limit = limit, 0
					limit, _ = strconv.Atoi(m[4])
				}
			}
			evs, err := b.log.Events(m[1], from, offset, limit)
			if err != nil {
				if errors.Is(err, binlog.ErrNotInIndex) {
					return nil, mysql.NewSQLError(1220, "HY000", "Error when executing command SHOW BINLOG EVENTS: Could not find target log")
				}
				return nil, mysql.NewSQLError(1220, "HY000", "Error when executing command SHOW BINLOG EVENTS: Wrong offset or I/O error")
			}
			for _, e := range evs {
				r.Rows = append(r.Rows, textRow(e.File, strconv.FormatInt(e.Pos, 10), e.Type.String(),
					strconv.FormatUint(uint64(e.ServerID), 10), strconv.FormatInt(e.EndPos, 10), e.Info))
			}
			return r, nil
		}
	case showSlaveHostsRE.MatchString(stmt):
		run = func(_ *sql.Context, b *binlogServer) (*sqltypes.Result, error) {
			r := textResult("Server_id", "Host", "Port", "Master_id")
			if b != nil {
				for _, h := range b.replicas.list() {
					r.Rows = append(r.Rows, textRow(strconv.FormatUint(uint64(h.ServerID), 10), h.Host,
						strconv.FormatUint(uint64(h.Port), 10), strconv.FormatUint(uint64(h.MasterID), 10)))
				}
			}
			return r, nil
		}
	case purgeToRE.MatchString(stmt):
		need = needSuper
		file := purgeToRE.FindStringSubmatch(stmt)[1]
		run = func(_ *sql.Context, b *binlogServer) (*sqltypes.Result, error) {
			if b == nil {
				return nil, errNoBinaryLogging()
			}
			if err := b.log.PurgeTo(file); err != nil {
				if errors.Is(err, binlog.ErrNotInIndex) {
					return nil, mysql.NewSQLError(1373, "HY000", "Target log not found in binlog index")
				}
				return nil, mysql.NewSQLError(1377, "HY000", "Fatal error during log purge: %v", err)
			}
			return &sqltypes.Result{}, nil
		}
	case purgeBeforeRE.MatchString(stmt):
		need = needSuper
		expr := purgeBeforeRE.FindStringSubmatch(stmt)[1]
		run = func(sctx *sql.Context, b *binlogServer) (*sqltypes.Result, error) {
			if b == nil {
				return nil, errNoBinaryLogging()
			}
			t, err := h.evalTime(ctx, c, expr)
			if err != nil {
				return nil, err
			}
			if err := b.log.PurgeBefore(t); err != nil {
				return nil, mysql.NewSQLError(1377, "HY000", "Fatal error during log purge: %v", err)
			}
			return &sqltypes.Result{}, nil
		}
	case resetMasterRE.MatchString(stmt):
		need = needSuper
		m := resetMasterRE.FindStringSubmatch(stmt)
		run = func(_ *sql.Context, b *binlogServer) (*sqltypes.Result, error) {
			if b == nil {
				return nil, mysql.NewSQLError(1186, "HY000", "Binlog closed, cannot RESET MASTER")
			}
			first := 1
			if m[1] != "" {
				n, err := strconv.Atoi(m[1])
				if err != nil || n < 1 || n > 999999 {
					return nil, mysql.NewSQLError(1210, "HY000", "Incorrect arguments to RESET MASTER TO: %s", m[1])
				}
				first = n
			}
			if err := b.log.Reset(first); err != nil {
				return nil, mysql.NewSQLError(1186, "HY000", "Binlog closed, cannot RESET MASTER: %v", err)
			}
			return &sqltypes.Result{}, nil
		}
	default:
		return false, nil
	}
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, stmt)
	if err != nil {
		return true, err
	}
	sql.IncrementStatusVariable(sctx, "Questions", 1)
	g := grants{db: h.srv.engine.Analyzer.Catalog.MySQLDb}
	if !g.meets(sctx, need) {
		return true, mysql.NewSQLError(1227, "42000", "Access denied; you need (at least one of) the %s privilege(s) for this operation", need.text)
	}
	r, err := run(sctx, h.srv.binlog)
	if err != nil {
		return true, err
	}
	return true, cb(r, false)
}

// evalTime evaluates a PURGE … BEFORE expression as a DATETIME (in the
// session's time zone, UTC here).
func (h protocolHandler) evalTime(ctx context.Context, c *mysql.Conn, expr string) (time.Time, error) {
	var val string
	var got bool
	err := h.Handler.ComQuery(ctx, c, "SELECT CAST(("+expr+") AS DATETIME(6))", func(r *sqltypes.Result, _ bool) error {
		if len(r.Rows) == 1 && len(r.Rows[0]) == 1 && !r.Rows[0][0].IsNull() {
			val, got = r.Rows[0][0].ToString(), true
		}
		return nil
	})
	if err != nil {
		return time.Time{}, err
	}
	if !got {
		return time.Time{}, mysql.NewSQLError(1210, "HY000", "Incorrect arguments to PURGE LOGS BEFORE")
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999", val, time.Local)
	if err != nil {
		return time.Time{}, mysql.NewSQLError(1210, "HY000", "Incorrect arguments to PURGE LOGS BEFORE")
	}
	return t, nil
}

func textResult(names ...string) *sqltypes.Result {
	r := &sqltypes.Result{}
	for _, n := range names {
		r.Fields = append(r.Fields, &querypb.Field{Name: n, Type: querypb.Type_VARCHAR, Charset: 33})
	}
	return r
}

func textRow(vals ...string) []sqltypes.Value {
	row := make([]sqltypes.Value, len(vals))
	for i, v := range vals {
		row[i] = sqltypes.MakeTrusted(querypb.Type_VARCHAR, []byte(v))
	}
	return row
}

// rotateBinlog is FLUSH BINARY LOGS: nothing without a binary log.
func (s *Server) rotateBinlog() error {
	if s.binlog == nil {
		return nil
	}
	if err := s.binlog.log.Rotate(); err != nil {
		return mysql.NewSQLError(1105, "HY000", "FLUSH BINARY LOGS: %v", err)
	}
	return nil
}

// binlogGTIDPosFunction is BINLOG_GTID_POS(file, pos): the GTID position
// at an offset of a file of the log; NULL when the log is off, the file
// unknown or the offset not the start of an event.
func binlogGTIDPosFunction() sql.Function {
	return sql.Function2{Name: "binlog_gtid_pos", Fn: func(file, pos sql.Expression) sql.Expression {
		return &funcs.Scalar{Name: "BINLOG_GTID_POS", Args: []sql.Expression{file, pos}, Volatile: true,
			TypeOf: func([]sql.Expression) sql.Type { return types.LongText },
			EvalArgs: func(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
				b := activeBinlog.Load()
				if b == nil || vals[0] == nil || vals[1] == nil {
					return nil, nil
				}
				p, err := strconv.ParseInt(fmt.Sprint(vals[1]), 10, 64)
				if err != nil {
					return nil, nil
				}
				gp, err := b.log.GTIDPosAt(fmt.Sprint(vals[0]), p)
				if err != nil {
					return nil, nil
				}
				return gp.String(), nil
			}}
	}}
}

// binlogMultiQuery is binlogQuery for the first statement of q, a text of
// several: *rest is set to what follows it.
func (h protocolHandler) binlogMultiQuery(ctx context.Context, c *mysql.Conn, q string, rest *string, cb func(*sqltypes.Result, bool) error) (bool, error) {
	stmt, end, ok := firstStatement(q, false)
	if !ok {
		return false, nil
	}
	after := strings.TrimSpace(q[end:])
	done, err := h.binlogQuery(ctx, c, stmt, func(r *sqltypes.Result, _ bool) error { return cb(r, after != "") })
	if done {
		*rest = after
	}
	return done, err
}
