package sqlserver

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/show"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// wrappedSQLError matches the text of a MySQL error wrapped into a 1105.
var wrappedSQLError = regexp.MustCompile(`(?s)^(.*) \(errno (\d+)\) \(sqlstate (\w{5})\)$`)

// fixError gives err MySQL's code, SQLSTATE and text (messages.go), for
// the statement q of connection c.
func (h protocolHandler) fixError(c *mysql.Conn, q string, err error) error {
	if err == nil {
		return nil
	}
	err = h.mysqlErrorOf(c, q, err)
	if s := h.srv.session(c.ConnectionID); s != nil {
		s.noteFailed(err) // after afterCommand's noteDiagnostics
	}
	return err
}

// mysqlErrorOf is the error the client gets for err: MySQL's code,
// SQLSTATE and text.
func (h protocolHandler) mysqlErrorOf(c *mysql.Conn, q string, err error) error {
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		return err
	}
	if m := wrappedSQLError.FindStringSubmatch(se.Message); se.Num == mysql.ERUnknownError && m != nil {
		// A MySQL error that go-mysql-server wrapped on its way (a
		// parser's, for one): its own code, SQLSTATE and text.
		code, _ := strconv.Atoi(m[2])
		return mysql.NewSQLError(code, m[3], "%s", m[1])
	}
	mc := mysqlerr.Context{Query: q}
	if s := h.srv.session(c.ConnectionID); s != nil {
		mc.DB = s.GetCurrentDatabase()
		mc.DupIndex = s.lastDupIndex
	}
	mc.FKClause = func(table, name string) string { return h.srv.fkClause(mc.DB, table, name) }
	mc.Columns = h.srv.columnCount
	if dropDatabaseRE.MatchString(q) {
		if m := dbNotFoundRE.FindStringSubmatch(se.Message); m != nil {
			return mysql.NewSQLError(1008, "HY000", "Can't drop database '%s'; database doesn't exist", m[1]+m[2])
		}
	}
	if se.Num == mysql.ERNoSuchTable && mysqlerr.DropTableRE.MatchString(q) {
		if m := tableNotFoundRE.FindStringSubmatch(se.Message); m != nil {
			return mysqlerr.UnknownTable(m[1], mc)
		}
	}
	if mysqlerr.AlterDropRE.MatchString(q) {
		if m := mysqlerr.MissingColumnRE.FindStringSubmatch(se.Message); m != nil {
			return mysqlerr.CantDrop(m[1])
		}
	}
	return mysqlerr.Translate(se, mc)
}

var tableNotFoundRE = regexp.MustCompile(`^table not found: (.*)$`)

var (
	dropDatabaseRE = regexp.MustCompile(`(?i)^\s*DROP\s+(?:DATABASE|SCHEMA)\s`)
	dbNotFoundRE   = regexp.MustCompile(`^(?:database not found: (.*)|Unknown database '(.*)')$`)
)

// protocolHandler wraps go-mysql-server's protocol handler: MySQL's
// SQLSTATEs on errors, point lookups answered without the planner
// (pointget.go), and status flags that tell the session's truth (status.go).
//
// A wrapper is the only place for the flags: the vitess listener copies
// c.StatusFlags into the handshake and into every OK and EOF packet it
// writes, go-mysql-server's handler sets them its own way, and neither can
// be changed here.
type protocolHandler struct {
	mysql.Handler
	srv *Server
}

// NewConnection sets the handshake's flags.
func (h protocolHandler) NewConnection(c *mysql.Conn) {
	h.Handler.NewConnection(c)
	setStatusFlags(c, globalStatusFlags())
	if cc := clientOf(c.Conn); cc != nil {
		// The commands that would make the listener panic (guards.go).
		cc.admin.stmtKnown = func(id uint32) bool { _, ok := c.PrepareData[id]; return ok }
		_, serves := any(h).(mysql.BinlogReplicaHandler)
		cc.admin.noBinlog = !serves
		cc.admin.binlog = h.srv.binlogCommandsFor(c.ConnectionID) // binlog_dump.go
	}
}

// statusFlags are the flags of c's session now.
func (h protocolHandler) statusFlags(c *mysql.Conn) uint16 {
	if sess := h.srv.session(c.ConnectionID); sess != nil {
		return sess.statusFlags()
	}
	return globalStatusFlags()
}

// endFailedStatement ends the implicit transaction of a statement that
// failed in autocommit mode. go-mysql-server commits an autocommit
// statement when it completes, but leaves the transaction of one that
// fails attached to the session (or never hands it one when the statement
// failed in analysis, after the snapshot was taken): the session's next statements would then
// read that transaction's snapshot and never see later commits. Inside
// START TRANSACTION, or with autocommit off, a failed statement is undone
// alone and the transaction goes on, as in MySQL.
func (h protocolHandler) endFailedStatement(c *mysql.Conn, err error) {
	if err == nil {
		return
	}
	h.endImplicitTransaction(c)
}

// endImplicitTransaction drops, in autocommit mode outside START
// TRANSACTION, the transaction a command left behind without a statement
// to commit it: a failed statement's, or the one COM_STMT_PREPARE opened
// when it resolved the tables (its snapshot would otherwise be read by
// the first execution, however much later it came).
func (h protocolHandler) endImplicitTransaction(c *mysql.Conn) {
	s := h.srv.session(c.ConnectionID)
	if s == nil || s.GetIgnoreAutoCommit() || !s.autocommit() {
		return
	}
	// Our transaction may exist without go-mysql-server's: a statement
	// that failed in analysis (1146) had already taken the snapshot of
	// the databases it resolved.
	if s.txn != nil || s.GetTransaction() != nil {
		s.Rollback(nil, nil)
		s.SetTransaction(nil)
	}
}

// afterCommand sets the flags of the packets that end a command: the OK
// packet of COM_INIT_DB, COM_PING, COM_RESET_CONNECTION…, and the EOF (or
// OK) that ends a result set, written by the listener once the handler has
// returned.
func (h protocolHandler) afterCommand(c *mysql.Conn) {
	sess := h.srv.session(c.ConnectionID)
	if sess == nil {
		setStatusFlags(c, globalStatusFlags())
		return
	}
	setStatusFlags(c, sess.statusFlags())
	sess.noteDiagnostics()
	sess.noteWaitTimeout(emptyContext)
}

// emptyContext is a context for reading a session's variables, which
// need none.
var emptyContext = sql.NewEmptyContext()

// okFlags sets the flags of the OK packet a statement without a result set
// ends with, which the listener writes inside the callback. Only such
// results are looked at: go-mysql-server sends them from the connection's
// goroutine once the statement is over, whereas rows may be streamed while
// the statement still runs on another goroutine (their EOF is handled by
// afterCommand). text says the OK packet is the text protocol's, which
// carries the info string; COM_STMT_EXECUTE's does not (vitess leaves it
// out), and a correction waiting for it would wait for ever; vitess
// writes its warning count as 0, which the connection corrects.
func (h protocolHandler) okFlags(c *mysql.Conn, r *sqltypes.Result, text bool) {
	if len(r.Fields) == 0 {
		setStatusFlags(c, h.statusFlags(c))
		switch {
		case text && r.Info != "":
			fixOKInfo(c, r)
		case !text:
			fixOKWarnings(c, r, c.StatusFlags, h.WarningCount(c))
		}
	}
}

func (h protocolHandler) ComResetConnection(c *mysql.Conn) error {
	if h.srv.session(c.ConnectionID) == nil {
		// Before the first statement there is no session to reset (and
		// go-mysql-server's handler would dereference the missing one).
		h.afterCommand(c)
		return nil
	}
	h.srv.readLock.unlock(c.ConnectionID)
	h.srv.tables.unlock(c.ConnectionID)
	err := h.Handler.ComResetConnection(c)
	h.afterCommand(c)
	return err
}

func (h protocolHandler) ComQuery(ctx context.Context, c *mysql.Conn, q string, cb mysql.ResultSpoolFn) error {
	query := func(q string) error {
		if err := h.beginStatement(ctx, c, q); err != nil {
			return err
		}
		h.srv.session(c.ConnectionID).forgetViewChecks(q) // viewdml.go
		// Counted once run: the connection's first statement makes its
		// session.
		defer h.countCommand(c, q, h.srv.statementStart())
		withFlags := func(r *sqltypes.Result, more bool) error {
			h.okFlags(c, r, true)
			h.timestampDigits(c, r.Fields)
			show.ShowLikeHeader(q, r)
			funcs.MySQLDoubles(r)
			padFractions(r)
			return cb(r, more)
		}
		if done, err := h.binlogQuery(ctx, c, q, withFlags); done { // binlog_stmt.go
			return err
		}
		if _, done, err := h.answerHere(ctx, c, q, true); done {
			if err != nil {
				return err
			}
			return withFlags(&sqltypes.Result{}, false)
		}
		if done, err := h.binlogReplicaStatement(ctx, c, q, func(r *sqltypes.Result, _ int) error { return withFlags(r, false) }); done { // binlog_replica_stmt.go
			return err
		}
		if sel, ok, err := h.accountQuery(ctx, c, q); ok {
			if err != nil {
				return err
			}
			return h.Handler.ComQuery(ctx, c, sel, withFlags)
		}
		ctx, adm, err := h.admit(ctx, c, &q)
		if err != nil {
			return err
		}
		defer h.release(adm)
		return h.againOnConflict(c, q, &withFlags, func() error {
			if done, err := h.srv.points.tryText(ctx, h.Handler, c, q, func(r *sqltypes.Result) error { return withFlags(r, false) }); done {
				return err
			}
			if setsNextTransaction(q) {
				return h.nextTransaction(ctx, c, q, func() error { return h.Handler.ComQuery(ctx, c, q, withFlags) })
			}
			return h.Handler.ComQuery(ctx, c, q, withFlags)
		})
	}
	written := q
	q, _ = rules.RewriteQuantified(show.ShowSchemasText(q))
	err := h.withSetStatement(ctx, c, q, query)
	h.endFailedStatement(c, err)
	h.afterCommand(c)
	return h.fixError(c, written, err)
}

func (h protocolHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, q string, cb mysql.ResultSpoolFn) (string, error) {
	var rest string
	query := func(q string) (err error) {
		if err := h.beginStatement(ctx, c, q); err != nil {
			return err
		}
		h.srv.session(c.ConnectionID).forgetViewChecks(q) // viewdml.go
		defer h.countCommand(c, q, h.srv.statementStart())
		withFlags := func(r *sqltypes.Result, more bool) error {
			h.okFlags(c, r, true)
			h.timestampDigits(c, r.Fields)
			show.ShowLikeHeader(q, r)
			funcs.MySQLDoubles(r)
			padFractions(r)
			return cb(r, more)
		}
		if done, err := h.binlogMultiQuery(ctx, c, q, &rest, withFlags); done { // binlog_stmt.go
			return err
		}
		if end, done, err := h.answerHere(ctx, c, q, false); done {
			rest = strings.TrimSpace(q[end:])
			if err != nil {
				return err
			}
			return withFlags(&sqltypes.Result{}, rest != "")
		}
		if done, err := h.binlogReplicaStatement(ctx, c, q, multiResult(q, &rest, withFlags)); done { // binlog_replica_stmt.go
			return err
		}
		if sel, ok, err := h.accountQuery(ctx, c, q); ok {
			rest = ""
			if err != nil {
				return err
			}
			return h.Handler.ComQuery(ctx, c, sel, func(r *sqltypes.Result, _ bool) error { return withFlags(r, false) })
		}
		ctx, adm, err := h.admit(ctx, c, &q)
		if err != nil {
			return err
		}
		defer h.release(adm)
		return h.againOnConflict(c, q, &withFlags, func() error {
			// One statement (no ';' but a last one): compiled if it can be.
			if i := strings.IndexByte(q, ';'); i < 0 || strings.TrimSpace(q[i+1:]) == "" {
				if done, err := h.srv.points.tryText(ctx, h.Handler, c, q, func(r *sqltypes.Result) error { return withFlags(r, false) }); done {
					rest = ""
					return err
				}
			}
			if setsNextTransaction(q) {
				return h.nextTransaction(ctx, c, q, func() error {
					rest, err = h.Handler.ComMultiQuery(ctx, c, q, withFlags)
					return err
				})
			}
			rest, err = h.Handler.ComMultiQuery(ctx, c, q, withFlags)
			return err
		})
	}
	q, _ = rules.RewriteQuantified(show.ShowSchemasText(q))
	err := h.withSetStatement(ctx, c, q, query)
	h.endFailedStatement(c, err)
	h.afterCommand(c)
	return rest, h.fixError(c, q[:len(q)-len(rest)], err)
}

func (h protocolHandler) ComInitDB(c *mysql.Conn, db string) error {
	err := h.Handler.ComInitDB(c, db)
	h.count(c, "Com_change_db")
	h.afterCommand(c)
	return h.fixError(c, "", err)
}

func (h protocolHandler) ComPrepare(ctx context.Context, c *mysql.Conn, q string, p *mysql.PrepareData) ([]*querypb.Field, error) {
	if cc := clientOf(c.Conn); cc != nil {
		cc.holdWrites() // the response's packets go out together
	}
	h.beginStatement(ctx, c, "") // a prepare commits nothing
	if lock, unlock, _ := readLockCommand(q); lock || unlock || isLockTables(q) {
		h.afterCommand(c)
		return nil, mysql.NewSQLError(1295, "HY000", "This command is not supported in the prepared statement protocol yet")
	}
	written := q
	if rq, ok := rules.RewriteQuantified(q); ok {
		q = rq
		p.PrepareStmt = rq
	}
	sess := h.srv.session(c.ConnectionID)
	if sess != nil {
		if f, ok := h.srv.points.preparedBefore(ctx, c, sess, q); ok {
			h.count(c, "Com_stmt_prepare")
			h.afterCommand(c)
			return f, nil
		}
	}
	var before [3]uint64
	if sess != nil {
		for i, name := range bindCounted {
			before[i] = sessionCounter(sess, name)
		}
	}
	if sess != nil {
		sess.preparing = true
	}
	f, err := h.Handler.ComPrepare(ctx, c, q, p)
	h.timestampDigits(c, f)
	if sess != nil {
		sess.preparing = false
		if err == nil {
			h.srv.points.notePrepared(c, sess, q, f)
		}
		// A prepare is not an execution: what the planner counted in
		// Com_insert, Com_update or Com_delete while it bound the
		// statement is taken back, so that they count executions, as
		// MySQL's do.
		sctx := sql.NewContext(ctx, sql.WithSession(sess))
		for i, name := range bindCounted {
			if n := sessionCounter(sess, name) - before[i]; n > 0 {
				sql.IncrementStatusVariable(sctx, name, -int(n))
			}
		}
	}
	h.count(c, "Com_stmt_prepare")
	h.endImplicitTransaction(c)
	h.afterCommand(c)
	return f, h.fixError(c, written, err)
}

// admittance is what admit let in, for release.
type admittance struct {
	tables tableTicket
	read   bool
}

// admit waits until the table locks of other sessions let statement *q
// start (tablelock.go) and, for a statement that writes or commits
// writes, until no other session holds the global read lock
// (readlock.go). It returns the context to run it with and what to
// release once it has run (unless it fails).
func (h protocolHandler) admit(ctx context.Context, c *mysql.Conn, q *string) (context.Context, admittance, error) {
	sess := h.srv.session(c.ConnectionID)
	if sess != nil {
		sess.forgetProcParams()
		sess.delayed = ""
	}
	if err := h.readOnlyRefusal(ctx, c, *q, sess); err != nil { // binlog_replica_readonly.go
		return ctx, admittance{}, err
	}
	// A KILL QUERY from before this statement does not end its waits.
	h.srv.tables.forgetKill(c.ConnectionID)
	h.srv.readLock.forgetKill(c.ConnectionID)
	if h.srv.tables.holders.Load() > 0 && startsTransaction(*q) {
		// START TRANSACTION gives the table locks back, as MySQL's.
		h.srv.tables.unlock(c.ConnectionID)
	}
	var adm admittance
	var err error
	if h.srv.tables.holders.Load() > 0 || h.srv.readLock.holders.Load() > 0 {
		// A lock may hold the statement back: the process list shows it
		// waiting meanwhile.
		state := "Waiting for table metadata lock"
		if h.srv.tables.holders.Load() == 0 {
			state = "Waiting for global read lock"
		}
		defer h.srv.procs.waitFor(c.ConnectionID, *q, state)()
	}
	adm.tables, err = h.srv.tables.enter(ctx, c.ConnectionID, sess, q, func() footprint {
		return footprintReader{srv: h.srv, sess: sess}.statement(*q)
	})
	if err != nil {
		return ctx, adm, err
	}
	if !gatedStatement(*q, sess) {
		return ctx, adm, nil
	}
	adm.read, err = h.srv.readLock.enter(ctx, c.ConnectionID)
	if err != nil {
		h.srv.tables.exit(adm.tables)
		return ctx, admittance{}, err
	}
	if adm.read {
		ctx = admitted(ctx)
	}
	return ctx, adm, nil
}

// release ends what admit let in.
func (h protocolHandler) release(adm admittance) {
	if adm.read {
		h.srv.readLock.exit()
	}
	h.srv.tables.exit(adm.tables)
}

// nextTransaction runs SET TRANSACTION without a scope (run) for the
// session's next transaction alone (Session.nextTransaction).
func (h protocolHandler) nextTransaction(ctx context.Context, c *mysql.Conn, q string, run func() error) error {
	// The session is made here if this is the connection's first
	// statement.
	if _, err := h.srv.sm.NewContextWithQuery(ctx, c, q); err != nil {
		return err
	}
	sess := h.srv.session(c.ConnectionID)
	if sess == nil {
		return run()
	}
	return sess.nextTransaction(run)
}

// setsNextTransaction reports whether q is SET TRANSACTION without GLOBAL
// or SESSION, which sets the next transaction's characteristics.
func setsNextTransaction(q string) bool {
	w := sqltext.NewReader(q)
	return sqltext.IsKeyword(w.Next(), "SET") && sqltext.IsKeyword(w.Next(), "TRANSACTION")
}

// startsTransaction reports whether q is BEGIN or START TRANSACTION.
func startsTransaction(q string) bool {
	w := sqltext.NewReader(q)
	first := w.Next()
	return sqltext.IsKeyword(first, "BEGIN") || sqltext.IsKeyword(first, "START") && sqltext.IsKeyword(w.Next(), "TRANSACTION")
}

// beginStatement does what each statement does first, with one look at
// the session: it clears the conditions of the statement before, unless
// q reads them (diagnostics.go; go-mysql-server clears them once it has
// bound a statement, so one that fails before, on a missing table, would
// list the previous statement's with its own), and commits the open transaction before
// a statement that commits implicitly (implicitcommit.go).
func (h protocolHandler) beginStatement(ctx context.Context, c *mysql.Conn, q string) error {
	sess := h.srv.session(c.ConnectionID)
	if sess == nil {
		return nil // the connection's first statement: nothing before it
	}
	if q != "" {
		if err := sess.readAfter(ctx, q); err != nil { // causal.go
			return err
		}
	}
	sess.diag.running = isDiagnosticStatement(q)
	sess.hints = nil // indexhint.go
	sess.statementSnapshot()
	if !sess.diag.running {
		sess.ClearWarnings()
	}
	if sess.txn == nil && sess.GetTransaction() == nil || !commitsBefore(q) {
		return nil
	}
	return h.commitOpen(ctx, c, sess, q)
}

// answerHere runs the statement at the start of q if it is one the
// handler answers itself: the global read lock's (readLockStatement) or a
// FLUSH go-mysql-server refuses (flushStatement). It reports where the
// statement ends and whether it was one.
func (h protocolHandler) answerHere(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	w := sqltext.NewReader(q)
	switch first := w.Next(); {
	case sqltext.IsKeyword(first, "FLUSH"):
		if end, done, err := h.readLockStatement(ctx, c, q, whole); done {
			return end, done, err
		}
		return h.flushStatement(ctx, c, q, whole)
	case sqltext.IsKeyword(first, "LOCK"):
		return h.tableLockStatement(ctx, c, q, whole)
	case sqltext.IsKeyword(first, "UNLOCK"):
		return h.readLockStatement(ctx, c, q, whole)
	case sqltext.IsKeyword(first, "DO"):
		return h.doStatement(ctx, c, q, whole)
	case sqltext.IsKeyword(first, "ALTER"):
		if end, done, err := h.notBuiltAnswer(ctx, q); done {
			return end, done, err
		}
		if end, done, err := h.alterInstance(ctx, c, q, whole); done {
			return end, done, err
		}
		if end, done, err := h.alterUserRequire(ctx, c, q, whole); done {
			return end, done, err
		}
		return h.alterUserLock(ctx, c, q, whole)
	case sqltext.IsKeyword(first, "RENAME"):
		return h.renameUser(ctx, c, q, whole)
	case sqltext.IsKeyword(first, "CALL"):
		return h.callWithoutDatabase(ctx, c, q)
	case sqltext.IsKeyword(first, "SHUTDOWN"):
		return h.shutdownStatement(ctx, c, q, whole)
	case sqltext.IsKeyword(first, "CREATE"), sqltext.IsKeyword(first, "DROP"):
		if end, done, err := h.functionStatement(ctx, c, q); done { // storedfunc.go
			return end, done, err
		}
		return h.notBuiltAnswer(ctx, q)
	case sqltext.IsKeyword(first, "SHOW"), sqltext.IsKeyword(first, "HELP"):
		return h.notBuiltAnswer(ctx, q)
	}
	return 0, false, nil
}

// callNameRE reads the procedure a CALL names, and the '.' after it when
// a database comes first.
var callNameRE = regexp.MustCompile("(?is)^\\s*(?:/\\*.*?\\*/\\s*)*call\\s+(`(?:[^`]|``)*`|[\\w$]+)\\s*(\\.)?")

// callWithoutDatabase refuses CALL of a procedure named without its
// database when the session has none (1046, MySQL's answer):
// go-mysql-server's planner dereferenced the missing database, and the
// client lost its connection.
func (h protocolHandler) callWithoutDatabase(ctx context.Context, c *mysql.Conn, q string) (int, bool, error) {
	if m := callNameRE.FindStringSubmatch(q); m == nil || m[2] != "" {
		return 0, false, nil // qualified (or not a name): the planner's
	}
	// The session (made here if this is the connection's first
	// statement) has the database the handshake chose, if any.
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q)
	if err != nil || sctx.GetCurrentDatabase() != "" {
		return 0, false, nil
	}
	return len(q), true, mysql.NewSQLError(mysql.ERNoDb, "3D000", "No database selected")
}

// doStatement runs DO expr [, expr …], which go-mysql-server's parser does
// not know (1064): the expressions are evaluated as the SELECT of them
// would evaluate them (errors and warnings included) and their values
// dropped; the answer is OK, as MySQL's.
func (h protocolHandler) doStatement(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	stmt, end, ok := firstStatement(q, whole)
	if !ok {
		return 0, false, nil
	}
	w := sqltext.NewReader(stmt)
	w.Next()
	exprs := strings.TrimSpace(w.Rest)
	if exprs == "" {
		return 0, false, nil // the parser's 1064
	}
	return end, true, h.Handler.ComQuery(ctx, c, "SELECT "+exprs, func(*sqltypes.Result, bool) error { return nil })
}

// firstStatement returns the first statement of q and where it ends in q;
// ok is false when q cannot be split, or holds more with whole.
func firstStatement(q string, whole bool) (stmt string, end int, ok bool) {
	stmt, rest, err := sqlparser.SplitStatement(q)
	if err != nil || whole && strings.TrimSpace(rest) != "" {
		return "", 0, false
	}
	return stmt, len(q) - len(rest), true
}

// readLockStatement runs FLUSH TABLES WITH READ LOCK (readlock.go), and
// gives it and the table locks (tablelock.go) back at UNLOCK TABLES before
// the planner runs it. It reports where the statement ends in q and
// whether it was the former, answered here. With whole, q must hold it
// alone (a text of several statements from a client that did not ask for
// them is the planner's to refuse).
func (h protocolHandler) readLockStatement(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	lock, unlock, end := readLockCommand(q)
	if whole && strings.TrimSpace(q[end:]) != "" {
		return 0, false, nil
	}
	switch {
	case lock:
		if h.srv.tables.holds(c.ConnectionID) {
			return end, true, mysql.NewSQLError(mysql.ERLockOrActiveTransaction, "HY000",
				"Can't execute the given command because you have active locked tables or an active transaction")
		}
		// The planner runs the statement first, for its checks (the
		// RELOAD privilege). It locks nothing itself.
		if err := h.Handler.ComQuery(ctx, c, q[:end], func(*sqltypes.Result, bool) error { return nil }); err != nil {
			return end, true, err
		}
		if sess := h.srv.session(c.ConnectionID); sess != nil {
			sess.ClearWarnings()
		}
		return end, true, h.srv.readLock.lock(ctx, c.ConnectionID)
	case unlock:
		if sess := h.srv.session(c.ConnectionID); sess != nil && h.srv.tables.holds(c.ConnectionID) &&
			(sess.txn != nil || sess.GetTransaction() != nil) {
			// UNLOCK TABLES commits the transaction begun under the
			// table locks, as MySQL's, before they go.
			if err := h.commitOpen(ctx, c, sess, q); err != nil {
				return end, true, err
			}
		}
		h.srv.readLock.unlock(c.ConnectionID)
		h.srv.tables.unlock(c.ConnectionID)
	}
	return 0, false, nil
}

// sessionCounter is the session's value of a counting status variable.
func sessionCounter(sess *Session, name string) uint64 {
	v, err := sess.GetStatusVariable(nil, name)
	if err != nil {
		return 0
	}
	n, _ := v.(uint64)
	return n
}

func (h protocolHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) error {
	start := h.srv.statementStart()
	if err := h.beginStatement(ctx, c, p.PrepareStmt); err != nil {
		h.afterCommand(c)
		return h.fixError(c, p.PrepareStmt, err)
	}
	withFlags := func(r *sqltypes.Result) error {
		h.okFlags(c, r, false)
		h.timestampDigits(c, r.Fields)
		return cb(r)
	}
	ctx, adm, err := h.admit(ctx, c, &p.PrepareStmt)
	if err == nil {
		sent := false
		withSent := func(r *sqltypes.Result) error {
			sent = true
			return withFlags(r)
		}
		err = h.againOnConflictSent(c, p.PrepareStmt, &sent, func() error { return h.execute(ctx, c, p, withSent) })
		h.release(adm)
	}
	h.count(c, "Com_stmt_execute", comCounter(p.PrepareStmt))
	h.srv.observeStatement(p.PrepareStmt, comCounter(p.PrepareStmt), start)
	h.endFailedStatement(c, err)
	h.afterCommand(c)
	return h.fixError(c, p.PrepareStmt, err)
}

// againOnConflict runs run, a client's statement that answers through
// *answer, again when it failed only because, in autocommit mode, its
// commit met another's write to the same rows (first committer wins,
// 1213): MySQL's statement would have waited for the other's row lock and
// gone on with the newest rows; this one begins again on them, up to
// maxRowAttempts times. Only INSERT, UPDATE, DELETE and REPLACE are run
// again (not LOAD DATA, whose file the client sent once, nor CALL), and
// not one that answered anything before it failed: *answer is wrapped to
// see that.
func (h protocolHandler) againOnConflict(c *mysql.Conn, q string, answer *func(*sqltypes.Result, bool) error, run func() error) error {
	sent := false
	inner := *answer
	*answer = func(r *sqltypes.Result, more bool) error {
		sent = true
		return inner(r, more)
	}
	return h.againOnConflictSent(c, q, &sent, run)
}

// againOnConflictSent is againOnConflict for a statement whose answers
// set *sent.
func (h protocolHandler) againOnConflictSent(c *mysql.Conn, q string, sent *bool, run func() error) error {
	sess := h.srv.session(c.ConnectionID)
	if !rerunnable(q) {
		return run()
	}
	if sess != nil && (sess.txn != nil || sess.GetTransaction() != nil) {
		// A transaction was open before the statement: a conflict at a
		// commit the statement makes (SET autocommit = 1, a DDL's
		// implicit commit) is that transaction's, reported as it is.
		return run()
	}
	var before [len(rerunCounted)]uint64
	for attempt := 1; ; attempt++ {
		// The statement counts once, however many times it runs: a run
		// after the first takes back what it counted (read only then,
		// not on every statement's way).
		again := attempt > 1 && sess != nil
		if sess != nil {
			sess.conflicted = false
		}
		if again {
			for i, name := range rerunCounted {
				before[i] = sessionCounter(sess, name)
			}
		}
		err := run()
		if again {
			sctx := sql.NewContext(context.Background(), sql.WithSession(sess))
			for i, name := range rerunCounted {
				if n := sessionCounter(sess, name) - before[i]; n > 0 {
					sql.IncrementStatusVariable(sctx, name, -int(n))
				}
			}
		}
		if err == nil || sess == nil || !sess.conflicted || *sent || attempt == maxRowAttempts {
			return err
		}
	}
}

// rerunnable reports whether statement q (its first, for several) may be
// run again by againOnConflict: one of the writes that touch nothing but
// rows.
func rerunnable(q string) bool {
	for _, verb := range []string{"insert", "update", "delete", "replace"} {
		if startsWithFold(q, verb) {
			return true
		}
	}
	return false
}

// rerunCounted are the status counters a statement's run moves, which a
// statement run again (againOnConflict) takes back.
var rerunCounted = [...]string{"Questions", "Com_insert", "Com_update", "Com_delete", "Com_replace", "Com_insert_select", "Com_update_multi", "Com_delete_multi"}

func (h protocolHandler) execute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) error {
	if done, err := h.srv.points.try(ctx, h.Handler, c, p, cb); done {
		return err
	}
	return h.Handler.ComStmtExecute(ctx, c, p, cb)
}

func (h protocolHandler) ConnectionClosed(c *mysql.Conn) {
	h.srv.readLock.unlock(c.ConnectionID)
	h.srv.tables.unlock(c.ConnectionID)
	h.srv.points.forget(c.ConnectionID)
	h.Handler.ConnectionClosed(c)
	h.srv.sessions.Delete(c.ConnectionID)
}

func (s *Server) listenerFactory(cfg server.Config, lc mysql.ListenerConfig, sel server.ServerEventListener) (server.ProtocolListener, error) {
	lc.Handler = protocolHandler{Handler: lc.Handler, srv: s}
	lc.AuthServer = loginErrors{AuthServer: lc.AuthServer, grants: grants{db: s.engine.Analyzer.Catalog.MySQLDb}, reqs: s.acctTLS}
	return server.MySQLProtocolListenerFactory(cfg, lc, sel)
}

// session returns the session of connection id, or nil before its first
// command and after its end.
func (s *Server) session(id uint32) *Session {
	v, ok := s.sessions.Load(id)
	if !ok {
		return nil
	}
	return v.(*Session)
}
