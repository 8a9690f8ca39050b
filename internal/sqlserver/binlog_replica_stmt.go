package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/miraj-db/miraj/internal/binlog/replica"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// Miraj as a replica of a binary log source (§17.13.4): the statements
// (CHANGE MASTER TO, START / STOP / RESET SLAVE, SHOW SLAVE STATUS),
// answered before go-mysql-server's parser, which knows none of MariaDB's
// spellings; the variables gtid_slave_pos, sql_slave_skip_counter and
// slave_skip_errors; MASTER_GTID_WAIT() and MASTER_POS_WAIT(). The
// replica itself (threads, position, configuration) is
// internal/binlog/replica; it applies through replicaTarget.

// binlogReplicaState is the Server's part for the replica.
type binlogReplicaState struct {
	once sync.Once
	r    *replica.Replica
}

// activeReplica is the running server's replica, for the variables and
// functions, which go-mysql-server's registries hold process-wide (as
// clusterNode).
var activeReplica atomic.Pointer[replica.Replica]

// binlogReplica returns the server's replica, made at the first call.
func (s *Server) binlogReplica() *replica.Replica {
	s.replica.once.Do(func() {
		s.replica.r = replica.New(replica.Options{Dir: StateDir(s.cfg.Root), Target: &replicaTarget{srv: s}, Logger: s.log})
		activeReplica.Store(s.replica.r)
	})
	return s.replica.r
}

// runBinlogReplica opens the replica (its configuration and position
// loaded before the first client statement; the threads that ran at the
// last shutdown started again); the channel is closed once ctx has ended
// and its threads have stopped.
func (s *Server) runBinlogReplica(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	r := s.binlogReplica()
	if err := r.Open(ctx); err != nil {
		s.log.Error("replica: not started", "err", err)
	}
	go func() {
		defer close(done)
		r.Wait()
	}()
	return done
}

var (
	// needReplicaAdmin: CHANGE MASTER, START / STOP / RESET SLAVE.
	needReplicaAdmin = requirement{static: []sql.PrivilegeType{sql.PrivilegeType_Super}, text: "SUPER"}
	// needReplicaStatus: SHOW SLAVE STATUS.
	needReplicaStatus = requirement{static: []sql.PrivilegeType{sql.PrivilegeType_ReplicationClient, sql.PrivilegeType_Super},
		text: "SUPER, REPLICATION CLIENT"}
)

// binlogReplicaStatement answers q's first statement if it is a replica
// statement (done false when it is not one), giving cb its result and
// where the statement ends in q.
func (h protocolHandler) binlogReplicaStatement(ctx context.Context, c *mysql.Conn, q string, cb func(r *sqltypes.Result, end int) error) (done bool, err error) {
	st, end, ok, perr := replica.Parse(q)
	if !ok {
		return false, nil
	}
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q[:end])
	if err != nil {
		return true, err
	}
	if perr != nil {
		return true, replicaSQLError(perr)
	}
	g := grants{db: h.srv.engine.Analyzer.Catalog.MySQLDb}
	need := needReplicaAdmin
	if st.Kind == replica.StmtShow {
		need = needReplicaStatus
	}
	if !g.meets(sctx, need) {
		return true, g.refuse(need)
	}
	r := h.srv.binlogReplica()
	note := func(msg string) {
		if msg != "" {
			sctx.Session.Warn(&sql.Warning{Level: "Note", Code: 1254, Message: msg})
		}
	}
	switch st.Kind {
	case replica.StmtChange:
		warnings, err := r.Change(st)
		if err != nil {
			return true, replicaSQLError(err)
		}
		for _, w := range warnings {
			sctx.Session.Warn(&sql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet, Message: w})
		}
	case replica.StmtStart:
		msg, err := r.Start(st)
		if err != nil {
			return true, replicaSQLError(err)
		}
		note(msg)
	case replica.StmtStop:
		msg, err := r.Stop(st)
		if err != nil {
			return true, replicaSQLError(err)
		}
		note(msg)
	case replica.StmtReset:
		if err := r.Reset(st); err != nil {
			return true, replicaSQLError(err)
		}
	case replica.StmtShow:
		return true, cb(statusResult(r.Status(st.All)), end)
	}
	return true, cb(&sqltypes.Result{}, end)
}

// multiResult passes a replica statement's result on within a
// multi-statement text q, setting *rest to what follows it.
func multiResult(q string, rest *string, cb func(*sqltypes.Result, bool) error) func(*sqltypes.Result, int) error {
	return func(r *sqltypes.Result, end int) error {
		*rest = strings.TrimSpace(q[end:])
		return cb(r, *rest != "")
	}
}

// statusResult is SHOW SLAVE STATUS's result set: one row, or none.
func statusResult(cols []replica.StatusColumn, ok bool) *sqltypes.Result {
	res := &sqltypes.Result{}
	row := make([]sqltypes.Value, len(cols))
	for i, col := range cols {
		f := &querypb.Field{Name: col.Name, Type: sqltypes.VarChar, Charset: uint32(sql.CharacterSet_utf8mb4), ColumnLength: 512}
		if col.Number {
			f.Type, f.Charset, f.ColumnLength = sqltypes.Uint64, uint32(sql.Collation_binary), 20
		}
		res.Fields = append(res.Fields, f)
		switch v := col.Value.(type) {
		case nil:
			row[i] = sqltypes.NULL
		case string:
			row[i] = sqltypes.MakeTrusted(f.Type, []byte(v))
		case int64:
			row[i] = sqltypes.MakeTrusted(f.Type, []byte(strconv.FormatInt(v, 10)))
		case uint64:
			row[i] = sqltypes.MakeTrusted(f.Type, []byte(strconv.FormatUint(v, 10)))
		default:
			row[i] = sqltypes.MakeTrusted(f.Type, []byte(fmt.Sprint(v)))
		}
	}
	if ok {
		res.Rows = [][]sqltypes.Value{row}
	}
	return res
}

// replicaSQLError is a replica error as the client's error packet.
func replicaSQLError(err error) error {
	var re *replica.Error
	if errors.As(err, &re) {
		return mysql.NewSQLError(int(re.Code), re.State, "%s", re.Message)
	}
	return err
}

// Variable names of the replica (§17.13.1's table).
const (
	varGTIDSlavePos    = "gtid_slave_pos"
	varSkipCounter     = "sql_slave_skip_counter"
	varSlaveSkipErrors = "slave_skip_errors"
)

// registerBinlogReplicaVariables adds the replica's variables, read live
// from the replica and set through it.
func registerBinlogReplicaVariables() {
	live := func(fn func(r *replica.Replica) any, none any) func() any {
		return func() any {
			if r := activeReplica.Load(); r != nil {
				return fn(r)
			}
			return none
		}
	}
	liveVariables[varGTIDSlavePos] = live(func(r *replica.Replica) any { return r.GTIDSlavePos() }, "")
	liveVariables[varSkipCounter] = live(func(r *replica.Replica) any { return r.SkipCounter() }, uint64(0))
	liveVariables[varSlaveSkipErrors] = live(func(r *replica.Replica) any { return r.SkipErrors() }, "OFF")
	noReplica := func() error {
		return mysql.NewSQLError(mysql.ERUnknownError, "HY000", "The replica is not running yet")
	}
	global := sql.GetMysqlScope(sql.SystemVariableScope_Global)
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{
		&sql.MysqlSystemVariable{Name: varGTIDSlavePos, Scope: global, Dynamic: true, Type: types.NewSystemStringType(varGTIDSlavePos), Default: "",
			NotifyChanged: func(ctx *sql.Context, _ sql.SystemVariableScope, v sql.SystemVarValue) error {
				r := activeReplica.Load()
				if r == nil {
					return noReplica()
				}
				return replicaSQLError(r.SetGTIDSlavePos(ctx, fmt.Sprint(v.Val)))
			}},
		&sql.MysqlSystemVariable{Name: varSkipCounter, Scope: global, Dynamic: true, Type: types.NewSystemUintType(varSkipCounter, 0, 1<<32-1), Default: uint64(0),
			NotifyChanged: func(ctx *sql.Context, _ sql.SystemVariableScope, v sql.SystemVarValue) error {
				r := activeReplica.Load()
				if r == nil {
					return noReplica()
				}
				n, _, err := types.Uint64.Convert(ctx, v.Val)
				if err != nil {
					return err
				}
				r.SetSkipCounter(n.(uint64))
				return nil
			}},
		&sql.MysqlSystemVariable{Name: varSlaveSkipErrors, Scope: global, Dynamic: true, Type: types.NewSystemStringType(varSlaveSkipErrors), Default: "OFF",
			NotifyChanged: func(ctx *sql.Context, _ sql.SystemVariableScope, v sql.SystemVarValue) error {
				r := activeReplica.Load()
				if r == nil {
					return noReplica()
				}
				return replicaSQLError(r.SetSkipErrors(fmt.Sprint(v.Val)))
			}},
	})
}

// binlogReplicaFunctions are MASTER_GTID_WAIT(gtids [, timeout]) and
// MASTER_POS_WAIT(file, pos [, timeout]): 0 once the replica has applied
// that far, -1 at the timeout (seconds; none when negative or absent).
var binlogReplicaFunctions = []sql.Function{
	sql.FunctionN{Name: "master_gtid_wait", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		if len(args) < 1 || len(args) > 2 {
			return nil, sql.ErrInvalidArgumentNumber.New("MASTER_GTID_WAIT", "1 or 2", len(args))
		}
		return &funcs.Scalar{Name: "MASTER_GTID_WAIT", Args: args, Volatile: true, TypeOf: func([]sql.Expression) sql.Type { return types.Int64 },
			EvalArgs: func(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
				if vals[0] == nil {
					return nil, nil
				}
				r := activeReplica.Load()
				if r == nil {
					return nil, nil
				}
				n, err := r.WaitGTID(ctx, fmt.Sprint(vals[0]), waitTimeout(ctx, vals, 1))
				if err != nil {
					return nil, replicaSQLError(err)
				}
				return int64(n), nil
			}}, nil
	}},
	sql.FunctionN{Name: "master_pos_wait", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		if len(args) < 2 || len(args) > 4 {
			return nil, sql.ErrInvalidArgumentNumber.New("MASTER_POS_WAIT", "2 to 4", len(args))
		}
		return &funcs.Scalar{Name: "MASTER_POS_WAIT", Args: args, Volatile: true, TypeOf: func([]sql.Expression) sql.Type { return types.Int64 },
			EvalArgs: func(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
				if vals[0] == nil || vals[1] == nil {
					return nil, nil
				}
				r := activeReplica.Load()
				if r == nil {
					return nil, nil
				}
				pos, _, err := types.Uint64.Convert(ctx, vals[1])
				if err != nil {
					return nil, nil
				}
				n, ok, err := r.WaitPos(ctx, fmt.Sprint(vals[0]), pos.(uint64), waitTimeout(ctx, vals, 2))
				if err != nil {
					return nil, replicaSQLError(err)
				}
				if !ok {
					return nil, nil
				}
				return int64(n), nil
			}}, nil
	}},
}

// waitTimeout reads the timeout argument vals[i] in seconds; absent or
// negative: none (-1).
func waitTimeout(ctx *sql.Context, vals []any, i int) time.Duration {
	if i >= len(vals) || vals[i] == nil {
		return -1
	}
	f, _, err := types.Float64.Convert(ctx, vals[i])
	if err != nil || f.(float64) < 0 {
		return -1
	}
	return time.Duration(f.(float64) * float64(time.Second))
}
