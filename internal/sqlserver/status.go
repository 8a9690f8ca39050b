package sqlserver

import (
	"math"
	"strings"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
)

// Status flags of the handshake and of every OK and EOF packet
// (SERVER_STATUS_* in MySQL's include/mysql_com.h). Drivers manage
// transactions by them, not by asking the server:
//
//   - PyMySQL, MySQLdb and MariaDB Connector/J read AUTOCOMMIT from the
//     handshake and send SET autocommit=0 only when it says autocommit is on:
//     a handshake without it leaves a DB-API "transaction" autocommitting,
//     and rollback() undoes nothing;
//   - MariaDB Connector/J sends COMMIT and ROLLBACK only while IN_TRANS is
//     set: without it, commit() is skipped and the work is lost at close.
//
// go-mysql-server sets AUTOCOMMIT and IN_TRANS after each query, but not in
// the handshake, and its IN_TRANS means "the engine holds a transaction
// object", which with autocommit off is true after any statement (SET
// autocommit=0 itself, SELECT 1), unlike MySQL. The protocol handler
// (protocol.go) therefore rewrites these bits from the session after every
// command and before every OK packet.
//
// SERVER_SESSION_STATE_CHANGED (0x4000) is never set: it announces
// session-state data at the end of the OK packet, which only clients that
// negotiated CLIENT_SESSION_TRACK parse, and the vitess listener neither
// offers that capability nor writes that data (its OK packets end at the
// warning count). @@session_track_* can be set but track nothing.
const (
	// statusInTrans: a transaction is open. Set by START TRANSACTION/BEGIN
	// at once, and with autocommit off by the first statement that reads or
	// writes a table (as MySQL, which sets it when a storage engine joins
	// the transaction: SELECT 1 or SET leave it clear). Cleared by COMMIT,
	// ROLLBACK, an implicit commit or a failed commit (1213).
	statusInTrans = uint16(mysql.ServerInTransaction) // 0x0001
	// statusAutocommit mirrors @@autocommit of the session.
	statusAutocommit = uint16(mysql.ServerStatusAutocommit) // 0x0002
	// statusInTransReadOnly: the open transaction began with START
	// TRANSACTION READ ONLY (vitess has no name for it).
	statusInTransReadOnly = uint16(0x2000)

	// statusSessionFlags are the bits owned by the session; the others
	// (more results, cursor) are the listener's, per packet.
	statusSessionFlags = statusInTrans | statusAutocommit | statusInTransReadOnly
)

// statusFlags returns the session's transaction status bits.
func (s *Session) statusFlags() uint16 {
	var f uint16
	auto := s.autocommit()
	if auto {
		f |= statusAutocommit
	}
	// An explicit transaction (START TRANSACTION, BEGIN) is open from its
	// first statement on; go-mysql-server tells it by ignoring autocommit
	// until COMMIT or ROLLBACK. Without one, autocommit off keeps the
	// statements' transaction open once a table was touched.
	explicit := s.GetIgnoreAutoCommit()
	if explicit || (!auto && s.txn != nil && len(s.txn.dbs) > 0) {
		f |= statusInTrans
	}
	if explicit && s.txn != nil && s.txn.readOnly {
		f |= statusInTransReadOnly
	}
	return f
}

// autocommit reports the session's @@autocommit.
func (s *Session) autocommit() bool {
	v, err := s.BaseSession.GetSessionVariable(nil, sql.AutoCommitSessionVar)
	if err != nil {
		// Every session is created with all system variables.
		panic("sqlserver: session without @@autocommit: " + err.Error())
	}
	return boolValue(v)
}

// boolValue is a boolean system variable's value: go-mysql-server stores
// them as int8 (SystemBoolType); other types go through its conversion.
func boolValue(v any) bool {
	if b, ok := v.(int8); ok {
		return b != 0
	}
	on, _ := sql.ConvertToBool(sql.NewEmptyContext(), v)
	return on
}

// globalStatusFlags are the flags of a connection without a session yet
// (the handshake, and the OK packet that ends authentication when the
// client named no database): its session will start with @@global.autocommit
// and no transaction.
func globalStatusFlags() uint16 {
	_, v, ok := sql.SystemVariables.GetGlobal(sql.AutoCommitSessionVar)
	if ok && boolValue(v) {
		return statusAutocommit
	}
	return 0
}

// setStatusFlags replaces the session's bits of c.StatusFlags, which the
// listener copies into the next OK or EOF packet it writes.
func setStatusFlags(c *mysql.Conn, flags uint16) {
	c.StatusFlags = c.StatusFlags&^statusSessionFlags | flags
}

// mirajStatus adds Miraj's own counters to SHOW [GLOBAL] STATUS, read each
// time: the storage engine's (Miraj_commits, Miraj_journal_fsyncs,
// Miraj_commits_in_place, Miraj_journal_group_waits_missed, and the
// Miraj_stream* counters of large transactions, streams.go) always,
// the Miraj_cluster_sync_* ones (§17.8.5) under active replication only,
// and raft mode's (Miraj_cluster_term, _leader, _vote, _election*) in raft
// mode.
type mirajStatus struct{ sql.StatusVariableRegistry }

// statusEngine is the storage engine whose counters SHOW STATUS reports.
var statusEngine atomic.Pointer[storage.Engine]

func statusVariable(name string, v any) sql.StatusVariable {
	if _, text := v.(string); text {
		return &sql.MySQLStatusVariable{Name: name, Scope: sql.StatusVariableScope_Global,
			Type: types.NewSystemStringType(name), Default: ""}
	}
	if _, ms := v.(float64); ms {
		return &sql.MySQLStatusVariable{Name: name, Scope: sql.StatusVariableScope_Global,
			Type: types.NewSystemDoubleType(name, 0, math.MaxFloat64), Default: 0.0}
	}
	return &sql.MySQLStatusVariable{Name: name, Scope: sql.StatusVariableScope_Global,
		Type: types.NewSystemUintType(name, 0, 1<<63), Default: uint64(0)}
}

// mirajStatusValues returns the counters as name/value pairs.
func mirajStatusValues() []repl.SyncStatusVar {
	var out []repl.SyncStatusVar
	if e := statusEngine.Load(); e != nil {
		c := e.Counts()
		out = append(out, repl.SyncStatusVar{Name: "Miraj_commits", Value: c.Commits},
			repl.SyncStatusVar{Name: "Miraj_journal_fsyncs", Value: c.Fsyncs},
			repl.SyncStatusVar{Name: "Miraj_commits_in_place", Value: c.InPlace},
			repl.SyncStatusVar{Name: "Miraj_journal_group_waits_missed", Value: c.GroupWaitsMissed})
		out = append(out, streamStatusValues(e)...) // streams.go
	}
	if n := processCluster.node(); n != nil {
		out = append(out, n.SyncStatus()...)
	}
	return out
}

func (r mirajStatus) NewGlobalMap() map[string]sql.StatusVarValue {
	m := r.StatusVariableRegistry.NewGlobalMap()
	for _, v := range mirajStatusValues() {
		m[v.Name] = &sql.ImmutableStatusVarValue{Var: statusVariable(v.Name, v.Value), Val: v.Value}
	}
	return m
}

func (r mirajStatus) GetGlobal(name string) (sql.StatusVariable, interface{}, bool) {
	for _, v := range mirajStatusValues() {
		if strings.EqualFold(v.Name, name) {
			return statusVariable(v.Name, v.Value), v.Value, true
		}
	}
	return r.StatusVariableRegistry.GetGlobal(name)
}

func registerMirajStatus() {
	if _, done := sql.StatusVariables.(mirajStatus); !done && sql.StatusVariables != nil {
		sql.StatusVariables = mirajStatus{sql.StatusVariables}
	}
}
