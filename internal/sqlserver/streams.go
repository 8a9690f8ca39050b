package sqlserver

import (
	"fmt"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
)

// Large transactions at the SQL boundary (docs/large-transactions.md):
// the variable that says when a session's transactions stream to the
// journal as they run (storage.Tx.SetStreamBytes), the table of the
// transactions open in the journals, information_schema.MIRAJ_STREAMS,
// and the Miraj_stream* status counters.
//
// MIRAJ_STREAMS is a table of its own rather than columns of
// MIRAJ_REPLICATION: that table has one row per node and database and only
// under active replication (§17.5.3), while a database has any number of
// open transactions, and a standalone server streams its own too.

// varStreamMB is the system variable of the threshold, in MiB.
const varStreamMB = "stream_transaction_mb"

// streamVariables is stream_transaction_mb: GLOBAL and SESSION, dynamic,
// an integer of MiB from 0 (never stream) to config.MaxStreamTransactionMB.
// A session starts with the global value; a value outside the range is
// 1231, one that is not an integer 1232 (varmessages.go).
func streamVariables() []sql.SystemVariable {
	return []sql.SystemVariable{
		&sql.MysqlSystemVariable{Name: varStreamMB, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Both), Dynamic: true,
			Type:    types.NewSystemIntType(varStreamMB, 0, config.MaxStreamTransactionMB, false),
			Default: int64(config.DefaultStreamTransactionMB)},
	}
}

// setStreamDefault gives @@GLOBAL.stream_transaction_mb the server's
// setting (Config.StreamTransactionMB; nil: the default). A SET GLOBAL
// later is not persisted.
func setStreamDefault(mb *int64) error {
	v := int64(storage.DefaultStreamBytes >> 20)
	if mb != nil {
		v = *mb
	}
	if err := sql.SystemVariables.SetGlobal(sql.NewEmptyContext(), varStreamMB, v); err != nil {
		return fmt.Errorf("%s: %w", varStreamMB, err)
	}
	return nil
}

// streamBytes is the threshold the session's storage transactions take
// when they begin: @@SESSION.stream_transaction_mb in bytes (0: never).
func (s *Session) streamBytes() int {
	v, err := s.BaseSession.GetSessionVariable(nil, varStreamMB)
	if err != nil {
		// A base session made before Install registered the variable
		// (OpenInProcess's callers make their own): the server's value.
		v = globalValue(varStreamMB)
	}
	return int(toInt64(v)) << 20
}

// streaming sets the session's threshold on tx, which it just began, and
// returns it. Every storage transaction a session begins on a database
// goes through here.
func (s *Session) streaming(tx *storage.Tx) *storage.Tx {
	tx.SetStreamBytes(s.streamBytes())
	return tx
}

// Streams returns the transactions open in each database's journal,
// oldest first: streaming from this node, or received (from the primary,
// or left open by a crash) and not ended yet. Every open database has an
// entry, an empty one when it has none (the metrics export zeros).
func (s *Server) Streams() map[string][]storage.StreamInfo {
	out := map[string][]storage.StreamInfo{}
	for _, db := range s.storage.Databases() {
		out[db.Name()] = db.Streams()
	}
	return out
}

// streamOrigin is the ORIGIN of a row of MIRAJ_STREAMS.
func streamOrigin(si storage.StreamInfo) string {
	if si.Local {
		return "local"
	}
	return "received"
}

// streamsTable is information_schema.MIRAJ_STREAMS, one row per open
// transaction per database, oldest first within a database; for the
// accounts of SHOW CLUSTER STATUS (PROCESS or REPLICATION CLIENT), empty
// for the others.
func streamsTable(g grants, e *storage.Engine) *clusterTable {
	const tn = "MIRAJ_STREAMS"
	str := types.LongText
	return &clusterTable{name: tn, grants: g, schema: sql.Schema{
		col(tn, "DATABASE", str, false), col(tn, "TXN_ID", types.Uint64, false), col(tn, "ORIGIN", str, false),
		col(tn, "START_LSN", types.Uint64, false), col(tn, "BYTES", types.Int64, false), col(tn, "ROWS_WRITTEN", types.Int64, false),
		col(tn, "STARTED", types.DatetimeMaxPrecision, false), col(tn, "AGE_SECONDS", types.Float64, false),
		col(tn, "APPLYING", str, false),
	}, rows: func() []sql.Row {
		now := time.Now()
		var out []sql.Row
		for _, db := range e.Databases() {
			for _, si := range db.Streams() {
				applying := "NO"
				if si.Applying {
					applying = "YES"
				}
				age := max(now.Sub(si.Began).Seconds(), 0)
				out = append(out, sql.Row{db.Name(), si.Txn, streamOrigin(si), uint64(si.Start), si.Bytes, si.Rows,
					si.Began.UTC(), float64(int64(age*1000)) / 1000, applying})
			}
		}
		return out
	}}
}

// streamStatusValues are the counters of streamed transactions summed over
// the open databases (a dropped database's leave the sums).
func streamStatusValues(e *storage.Engine) []repl.SyncStatusVar {
	var c storage.StreamCounts
	for _, db := range e.Databases() {
		c.Add(db.StreamCounts())
	}
	return []repl.SyncStatusVar{
		{Name: "Miraj_streamed_transactions", Value: c.Started},
		{Name: "Miraj_streamed_bytes", Value: c.Bytes},
		{Name: "Miraj_streamed_aborted", Value: c.Aborted},
		{Name: "Miraj_stream_workers", Value: c.Workers},
		{Name: "Miraj_stream_published", Value: c.Published},
		{Name: "Miraj_stream_replayed", Value: c.Replayed},
		{Name: "Miraj_stream_rolled_back", Value: c.RolledBack},
	}
}
