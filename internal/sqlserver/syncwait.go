package sqlserver

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
)

// Semi-synchronous commit at the SQL boundary (§17.8): the variables, and
// the wait at the end of a statement that committed.

// errSyncReplication is Miraj's error and warning 9004.
const errSyncReplication = 9004

// errConnectionKilled is ER_CONNECTION_KILLED.
const errConnectionKilled = 1927

const (
	varSyncCommit   = "cluster_sync_commit"
	varSyncReplicas = "cluster_sync_replicas"
	varSyncTimeout  = "cluster_sync_timeout"
	varSyncAction   = "cluster_sync_timeout_action"
)

// syncVariables are the four variables of §17.5.1. cluster_sync_commit has
// a session value; the other three are global only (SET SESSION: 1229).
// Outside a cluster they read OFF, 1, 10000, FALLBACK and setting them has
// no effect.
func syncVariables() []sql.SystemVariable {
	global := sql.GetMysqlScope(sql.SystemVariableScope_Global)
	return []sql.SystemVariable{
		&sql.MysqlSystemVariable{Name: varSyncCommit, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Both), Dynamic: true,
			Type: types.NewSystemEnumType(varSyncCommit, "OFF", "RECEIVED", "APPLIED", "MAJORITY"), Default: "OFF",
			NotifyChanged: func(ctx *sql.Context, scope sql.SystemVariableScope, v sql.SystemVarValue) error {
				if n := clusterOf(ctx); n != nil && scope.IsGlobalOnly() {
					if l, ok := repl.ParseSyncLevel(fmt.Sprint(v.Val)); ok {
						n.SetSyncLevelShown(l)
					}
				}
				return nil
			}},
		&sql.MysqlSystemVariable{Name: varSyncReplicas, Scope: global, Dynamic: true,
			Type: types.NewSystemIntType(varSyncReplicas, 1, 1<<16-1, false), Default: int64(1)},
		&sql.MysqlSystemVariable{Name: varSyncTimeout, Scope: global, Dynamic: true,
			Type: types.NewSystemIntType(varSyncTimeout, 1, 1<<31-1, false), Default: int64(10_000)},
		&sql.MysqlSystemVariable{Name: varSyncAction, Scope: global, Dynamic: true,
			Type: types.NewSystemEnumType(varSyncAction, "FALLBACK", "ERROR", "WAIT"), Default: "FALLBACK"},
	}
}

// setSyncDefaults gives the four variables their initial global values
// from cluster.toml (sync_commit, sync_replicas, sync_timeout_ms,
// sync_timeout_action). A SET GLOBAL later is not persisted.
func setSyncDefaults(d repl.SyncRequest) error {
	ctx := sql.NewEmptyContext()
	for name, v := range map[string]any{
		varSyncCommit:   d.Level.String(),
		varSyncReplicas: int64(d.Replicas),
		varSyncTimeout:  d.Timeout.Milliseconds(),
		varSyncAction:   d.Action.String(),
	} {
		if err := sql.SystemVariables.SetGlobal(ctx, name, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// globalString reads a global variable as a string.
func globalValue(name string) any {
	_, v, _ := sql.SystemVariables.GetGlobal(name)
	return v
}

// syncRequest is what this session's statement asks of the secondaries:
// the session's level (or the server's, for a session that has not set its
// own) and the server's settings.
func (s *Session) syncRequest(ctx *sql.Context) repl.SyncRequest {
	var req repl.SyncRequest
	level := globalValue(varSyncCommit)
	if s.syncOwn {
		if v, err := s.BaseSession.GetSessionVariable(ctx, varSyncCommit); err == nil {
			level = v
		}
	}
	req.Level, _ = repl.ParseSyncLevel(fmt.Sprint(level))
	req.Action, _ = repl.ParseSyncAction(fmt.Sprint(globalValue(varSyncAction)))
	req.Replicas = int(toInt64(globalValue(varSyncReplicas)))
	req.Timeout = time.Duration(toInt64(globalValue(varSyncTimeout))) * time.Millisecond
	return req
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	case uint32:
		return int64(x)
	}
	return 0
}

// setSyncCommit notes whether the session now has its own level: a value
// equal to the server's (SET … = DEFAULT gives the server's) follows the
// server's later SET GLOBAL again, as a session that never set it does.
func (s *Session) setSyncCommit(ctx *sql.Context, value any) error {
	if err := s.BaseSession.SetSessionVariable(ctx, varSyncCommit, value); err != nil {
		return err
	}
	v, err := s.BaseSession.GetSessionVariable(ctx, varSyncCommit)
	if err != nil {
		return err
	}
	s.syncOwn = !strings.EqualFold(fmt.Sprint(v), fmt.Sprint(globalValue(varSyncCommit)))
	return nil
}

// committed is one database's part of a committed transaction: where its
// commit frame ends in the journal.
type committed struct {
	db  string
	lsn journal.LSN
}

// waitForSecondaries runs after a statement's commit (§17.8.2): one wait per
// database the transaction wrote, for a client session of a cluster
// primary whose level is not OFF. The commit stands whatever happens: a
// shortfall or a KILL QUERY is warning 9004, the ERROR action and a
// demotion are error 9004.
func (s *Session) waitForSecondaries(ctx *sql.Context, commits []committed) error {
	n := s.cluster.node()
	if n == nil || !s.mysql || len(commits) == 0 {
		return nil
	}
	req := s.syncRequest(ctx)
	if req.Level == repl.SyncOff {
		return nil
	}
	slices.SortFunc(commits, func(a, b committed) int { return strings.Compare(a.db, b.db) })
	var failed error
	for _, c := range commits {
		r := n.WaitSync(ctx, c.db, c.lsn, req)
		if ctx.Err() != nil && s.connKilled.Load() {
			// KILL CONNECTION: the write stands, the connection closes.
			return mysql.NewSQLError(errConnectionKilled, "70100", "Connection was killed")
		}
		switch r.Outcome {
		case repl.SyncWarned:
			ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: errSyncReplication, Message: r.Message})
		case repl.SyncFailed:
			if failed == nil {
				failed = mysql.NewSQLError(errSyncReplication, "HY000", "%s", r.Message)
			}
		}
	}
	return failed
}
