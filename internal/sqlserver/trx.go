package sqlserver

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"

	"github.com/miraj-db/miraj/internal/storage"
)

// information_schema.INNODB_TRX lists the open transactions, as InnoDB's
// does, so that a DBA finds the long one, or the one waiting for a row
// lock, and its connection (trx_mysql_thread_id, for KILL):
// trx_state RUNNING or LOCK WAIT (trx_wait_started), trx_started, the
// connection's statement (trx_query), the rows it changed and locked, and
// whether it is read-only. A transaction is listed from its first read or
// write of a database. It needs the PROCESS privilege (1227), as MySQL's.
// go-mysql-server's table had no rows.

// trxIDs numbers the transactions listed.
var trxIDs atomic.Uint64

// attach records that the transaction reached a database through tx.
func (t *txn) attach(tx *storage.Tx) {
	var list []*storage.Tx
	if old := t.txs.Load(); old != nil {
		list = append(list, *old...)
	} else {
		t.id, t.started = trxIDs.Add(1), time.Now()
	}
	list = append(list, tx)
	t.txs.Store(&list)
}

// listAlone lists in INNODB_TRX, until the returned function is called, an
// autocommit statement that runs without the session's transaction (a
// compiled write, writeplan.go): its row locks are o's (nil: none), its
// changes tx's (nil: a row committed alone, CommitRow). A planner's
// autocommit statement is listed through the session's transaction.
func (s *Session) listAlone(o *storage.LockOwner, tx *storage.Tx) (end func()) {
	t := &txn{locks: o, id: trxIDs.Add(1), started: time.Now()}
	list := make([]*storage.Tx, 0, 1)
	if tx != nil {
		list = append(list, tx)
		tx.SetNote(s) // the binary log's (binlog_hook.go)
	}
	t.txs.Store(&list)
	s.trx.Store(t)
	return func() { s.trx.CompareAndSwap(t, nil) }
}

// needProcess: information_schema.INNODB_TRX.
var needProcess = requirement{static: []sql.PrivilegeType{sql.PrivilegeType_Process}, text: "PROCESS"}

// innodbTrxRows reads the open transactions of srv's sessions.
func (s *Server) innodbTrxRows(ctx *sql.Context) (sql.RowIter, error) {
	g := grants{db: s.engine.Analyzer.Catalog.MySQLDb}
	if !g.meets(ctx, needProcess) {
		return nil, g.refuse(needProcess)
	}
	var rows []sql.Row
	s.sessions.Range(func(k, v any) bool {
		id, sess := k.(uint32), v.(*Session)
		t := sess.trx.Load()
		if t == nil {
			return true
		}
		list := t.txs.Load()
		if list == nil {
			return true
		}
		var modified int64
		for _, tx := range *list {
			modified += tx.Modified()
		}
		locked := t.locks.Held()
		state, wait := "RUNNING", any(nil)
		if since, ok := t.locks.WaitingSince(); ok {
			state, wait = "LOCK WAIT", since.UTC()
		}
		var query any
		if q := s.procs.queryOf(id); q != "" {
			if len(q) > 1024 {
				q = q[:1024]
			}
			query = q
		}
		ro := int32(0)
		if t.ro.Load() {
			ro = 1
		}
		rows = append(rows, sql.Row{
			t.id, state, t.started.UTC(), nil, wait, uint64(modified) + uint64(locked), uint64(id), query, nil,
			uint64(0), uint64(0), uint64(min(locked, 1)), uint64(0), uint64(locked), uint64(modified), uint64(0),
			"REPEATABLE READ", int32(1), int32(1), nil, int32(0), uint64(0), ro, int32(0), nil,
		})
		return true
	})
	return sql.RowsToRowIter(rows...), nil
}

// innodbTrxTable is go-mysql-server's INNODB_TRX (its schema) read from
// the server's sessions.
func (s *Server) innodbTrxTable(t sql.Table) sql.Table {
	it, ok := t.(*information_schema.InformationSchemaTable)
	if !ok {
		return t
	}
	w := *it
	w.Reader = func(ctx *sql.Context, _ sql.Catalog) (sql.RowIter, error) { return s.innodbTrxRows(ctx) }
	return &w
}

// isInnodbTrx reports whether name is INNODB_TRX.
func isInnodbTrx(name string) bool { return strings.EqualFold(name, information_schema.InnoDBTrxName) }
