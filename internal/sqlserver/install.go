package sqlserver

import (
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/variables"
	"github.com/sirupsen/logrus"

	// The journal's codecs of go-mysql-server's value types (TIME, JSON,
	// spatial): the rows this package writes hold them.

	_ "github.com/miraj-db/miraj/internal/storage/sqlvalues"
)

var installOnce sync.Once

// Install makes the changes this package needs to go-mysql-server's
// process-wide state, once per process: New and OpenInProcess call it, and
// later calls do nothing. It is the only place that changes that state's
// shape (parser, rules, registries, variable definitions); the values a
// server's configuration gives the variables (setServerDefaults,
// setFileDir, announceListener, the TLS variables, the cluster's sync
// defaults) are assigned by New, Run and SetCluster, since tests run
// several servers in one process.
func Install() { installOnce.Do(install) }

func install() {
	// go-mysql-server's per-query warnings repeat what the client is told.
	logrus.SetLevel(logrus.ErrorLevel)
	// go-mysql-server parses some text with its global parser rather than
	// the engine's: a procedure's definition at each CALL, for one. It
	// reads that text as the server reads a statement's (parser.go).
	sql.GlobalParser = newParser(sql.GlobalParser, nil)
	renameStatusComment() // tablesize.go
	addKeepDeleteRule()   // deleteall.go
	// System variables: the cluster's (cluster.go, syncwait.go; and the
	// registry that answers the live ones from the node), the lock wait
	// (lockclause.go), causal reads (causal.go), large transactions
	// (streams.go).
	registerClusterVariables()
	registerBinlogReplicaVariables() // binlog_replica_stmt.go
	registerReadOnlyVariables()      // binlog_replica_readonly.go
	registerLockVariables()
	sql.SystemVariables.AddSystemVariables(causalVariables())
	sql.SystemVariables.AddSystemVariables(streamVariables()) // streams.go
	// Status variables: made before they are wrapped (go-mysql-server
	// makes them at its first engine otherwise, and keeps them after).
	variables.InitStatusVariables()
	installLiveStatus()   // statusvars.go: Uptime, Queries, bytes, TLS
	registerMirajStatus() // status.go: the cluster's Rpl_semi_sync_* and Miraj_* counters
}
