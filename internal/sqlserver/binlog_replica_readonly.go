package sqlserver

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// read_only and super_read_only outside a cluster (§17.13.4): SET GLOBAL
// read_only = 1 refuses the writes of client accounts without SUPER
// (1290), super_read_only = 1 those of every account; the replica's SQL
// thread, an internal session, goes on. On a cluster node read_only is
// the node's (1 on a secondary) and cannot be set.

// standaloneReadOnly and standaloneSuperReadOnly are the settings of a
// server that is not a cluster node. Invariant: super implies read_only.
var standaloneReadOnly, standaloneSuperReadOnly atomic.Bool

// registerReadOnlyVariables makes read_only settable and adds
// super_read_only; it runs after registerClusterVariables, whose live
// read_only it extends.
func registerReadOnlyVariables() {
	liveVariables["read_only"] = func() any {
		if n := processCluster.node(); n != nil {
			if !n.Writable() {
				return int8(1)
			}
			return int8(0)
		}
		return boolInt8(standaloneReadOnly.Load())
	}
	liveVariables["super_read_only"] = func() any {
		if processCluster.node() != nil {
			return int8(0)
		}
		return boolInt8(standaloneSuperReadOnly.Load())
	}
	global := sql.GetMysqlScope(sql.SystemVariableScope_Global)
	set := func(name string, apply func(on bool)) func(*sql.Context, sql.SystemVariableScope, sql.SystemVarValue) error {
		return func(ctx *sql.Context, _ sql.SystemVariableScope, v sql.SystemVarValue) error {
			if processCluster.node() != nil {
				return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'",
					"SET GLOBAL "+name+" on a cluster node: a secondary is read-only, the primary writable (§17.6)")
			}
			n, _, err := types.Int8.Convert(ctx, v.Val)
			if err != nil {
				return mysql.NewSQLError(1231, "42000", "Variable '%s' can't be set to the value of '%v'", name, v.Val)
			}
			apply(n.(int8) != 0)
			return nil
		}
	}
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{
		&sql.MysqlSystemVariable{Name: "read_only", Scope: global, Dynamic: true, Type: types.NewSystemBoolType("read_only"), Default: int8(0),
			NotifyChanged: set("read_only", func(on bool) {
				standaloneReadOnly.Store(on)
				if !on {
					standaloneSuperReadOnly.Store(false)
				}
			})},
		&sql.MysqlSystemVariable{Name: "super_read_only", Scope: global, Dynamic: true, Type: types.NewSystemBoolType("super_read_only"), Default: int8(0),
			NotifyChanged: set("super_read_only", func(on bool) {
				standaloneSuperReadOnly.Store(on)
				if on {
					standaloneReadOnly.Store(true)
				}
			})},
	})
}

func boolInt8(b bool) int8 {
	if b {
		return 1
	}
	return 0
}

// readOnlyRefusal is 1290 for a client's statement q that writes while
// read_only (or super_read_only) is on, nil otherwise.
func (h protocolHandler) readOnlyRefusal(ctx context.Context, c *mysql.Conn, q string, sess *Session) error {
	if !standaloneReadOnly.Load() || h.srv.cluster.node() != nil || !gatedStatement(q, sess) {
		return nil
	}
	if !standaloneSuperReadOnly.Load() {
		sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q)
		if err != nil {
			return err
		}
		if (grants{db: h.srv.engine.Analyzer.Catalog.MySQLDb}).meets(sctx, requirement{static: []sql.PrivilegeType{sql.PrivilegeType_Super}}) {
			return nil
		}
	}
	option := "--read-only"
	if standaloneSuperReadOnly.Load() {
		option = "--super-read-only"
	}
	return mysql.NewSQLError(mysql.EROptionPreventsStatement, "HY000", "%s", fmt.Sprintf("The MySQL server is running with the %s option so it cannot execute this statement", option))
}
