package sqlserver

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// FLUSH statements that go-mysql-server refuses ("STATUS not supported")
// or accepts without doing anything, answered here as MySQL answers them:
//
//   - FLUSH STATUS sets the session's status counters to zero (the global
//     ones already hold them: each count goes to both) and starts
//     Uptime_since_flush_status again;
//   - FLUSH LOGS and FLUSH ENGINE LOGS make every database's journal
//     durable up to its last commit (under save_policy = periodic, what
//     the next fsync would have written; under manual the journal holds
//     nothing);
//   - FLUSH ERROR | GENERAL | SLOW | RELAY | BINARY LOGS and FLUSH HOSTS
//     have nothing to act on: Miraj writes its log to standard error (no
//     file to reopen), keeps no general, slow, relay or binary log, and no
//     host cache (it blocks no host after failed connections);
//   - FLUSH THREADS (MariaDB's; COM_REFRESH's REFRESH_THREADS, admincmd.go)
//     has no thread cache to empty: a connection's goroutine ends with it;
//   - FLUSH PRIVILEGES, in a list with the others, persists the accounts
//     as go-mysql-server's does, and FLUSH TABLES does nothing, as
//     go-mysql-server's (tables are in memory: no open file to close).
//
// Each needs the RELOAD privilege (1227). FLUSH TABLES (with or without
// READ LOCK or a list of tables), FLUSH PRIVILEGES or FLUSH BINARY LOGS
// alone, and what is not listed here go on to the planner.

// flushOptions are the options handled here; the value says whether the
// planner would handle the option alone.
var flushOptions = map[string]bool{
	"STATUS": false, "LOGS": false, "ENGINE LOGS": false, "ERROR LOGS": false,
	"GENERAL LOGS": false, "SLOW LOGS": false, "RELAY LOGS": false, "HOSTS": false,
	"THREADS":     false,
	"BINARY LOGS": true, "PRIVILEGES": true, "TABLES": true, "TABLE": true,
}

// flushCommand reads FLUSH [LOCAL | NO_WRITE_TO_BINLOG] option [, option …]
// at the start of q. It returns the options (upper case, one space between
// words) and the length of q up to the statement's end (its ';' included),
// or false when q is another statement, has an option not handled here,
// or only options the planner handles.
func flushCommand(q string) (opts []string, end int, ok bool) {
	w := sqltext.NewReader(q)
	if !sqltext.IsKeyword(w.Next(), "FLUSH") {
		return nil, 0, false
	}
	rest := w.Rest
	if first := w.Next(); !sqltext.IsKeyword(first, "LOCAL") && !sqltext.IsKeyword(first, "NO_WRITE_TO_BINLOG") {
		w.Rest = rest
	}
	ours := false
	for {
		word := strings.ToUpper(w.Next())
		switch word {
		case "ENGINE", "ERROR", "GENERAL", "SLOW", "RELAY", "BINARY":
			if !sqltext.IsKeyword(w.Next(), "LOGS") {
				return nil, 0, false
			}
			word += " LOGS"
		}
		planner, known := flushOptions[word]
		if !known {
			return nil, 0, false
		}
		opts = append(opts, word)
		ours = ours || !planner
		w.SkipSpace()
		if strings.HasPrefix(w.Rest, ",") {
			w.Rest = w.Rest[1:]
			continue
		}
		break
	}
	switch {
	case w.Rest == "":
	case w.Rest[0] == ';':
		w.Rest = w.Rest[1:]
	default:
		return nil, 0, false // RELAY LOGS FOR CHANNEL …, or something else
	}
	return opts, len(q) - len(w.Rest), ours
}

// flushStatement runs the FLUSH statement at the start of q if it is one
// handled here (flushCommand), and reports where it ends and whether it
// was. With whole, q must hold it alone.
func (h protocolHandler) flushStatement(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	opts, end, ok := flushCommand(q)
	if !ok || whole && strings.TrimSpace(q[end:]) != "" {
		return 0, false, nil
	}
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q[:end])
	if err != nil {
		return end, true, err
	}
	sql.IncrementStatusVariable(sctx, "Questions", 1)
	mdb := h.srv.engine.Analyzer.Catalog.MySQLDb
	if !mdb.UserHasPrivileges(sctx, sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{}, sql.PrivilegeType_Reload)) {
		return end, true, mysql.NewSQLError(1227, "42000", "Access denied; you need (at least one of) the RELOAD privilege(s) for this operation")
	}
	for _, opt := range opts {
		switch opt {
		case "STATUS":
			if sess, ok := sctx.Session.(*Session); ok {
				sess.flushStatus(sctx)
			}
			flushedAt.Store(time.Now().UnixNano())
		case "LOGS", "ENGINE LOGS":
			for _, db := range h.srv.storage.Databases() {
				j := db.Journal()
				if err := j.SyncTo(ctx, j.End()); err != nil {
					return end, true, err
				}
			}
		case "PRIVILEGES":
			if err := persistAccounts(sctx, mdb); err != nil {
				return end, true, err
			}
		}
	}
	return end, true, nil
}

// persistAccounts is go-mysql-server's FLUSH PRIVILEGES.
func persistAccounts(ctx *sql.Context, mdb *mysql_db.MySQLDb) error {
	editor := mdb.Editor()
	defer editor.Close()
	return mdb.Persist(ctx, editor)
}

// flushedAt (Unix nanoseconds) is the last FLUSH STATUS, or the server's
// start: where Uptime_since_flush_status counts from.
var flushedAt atomic.Int64

// flushStatus sets the session's status counters to zero, its byte counts
// included.
func (s *Session) flushStatus(ctx *sql.Context) {
	for name, v := range s.BaseSession.GetAllStatusVariables(ctx) {
		switch v.Value().(type) {
		case uint64:
			s.BaseSession.SetStatusVariable(ctx, name, uint64(0))
		case int64:
			s.BaseSession.SetStatusVariable(ctx, name, int64(0))
		}
	}
	if c := s.client; c != nil {
		s.flushedReceived, s.flushedSent = c.received.Load(), c.sent.Load()
	}
}
