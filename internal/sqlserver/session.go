package sqlserver

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/storage"
)

// Session is a client connection's state: go-mysql-server's base session plus
// the storage transactions of its current transaction, one per database.
type Session struct {
	*sql.BaseSession
	// observer times the session's commits (observe.go); nil: none.
	observer Observer
	// causal is the session's position token (causal.go).
	causal causalState
	// hints are the indexes the hints of the statement last parsed name,
	// for its analysis to check (indexhint.go).
	hints []indexHint
	// client is the connection's socket (nil for an internal session):
	// its bytes are the session's Bytes_received and Bytes_sent.
	client *clientConn
	// flushedReceived and flushedSent are the client's byte counts at the
	// session's last FLUSH STATUS.
	flushedReceived, flushedSent uint64
	// diag: the conditions of the previous statement (diagnostics.go).
	diag diagState
	// repl: what a binary-log replica's SQL thread marks its session with
	// (binlog_hook.go).
	repl applierState
	// serverID is what SET SESSION server_id set (0: none): the server
	// id of the session's groups in the binary log (sessionServerID). The
	// commit hook reads it from the committing goroutine.
	serverID atomic.Uint32
	// readLock is the server's global read lock, which gates the
	// session's commits of writes (nil: not gated).
	readLock *readLockGate
	// next holds what SET TRANSACTION without a scope changed, until the
	// next transaction takes it (StartTransaction).
	next *characteristics
	// trx is the open transaction once it has reached a database, for
	// information_schema.INNODB_TRX (read from other sessions).
	trx atomic.Pointer[txn]
	// tables is the server's table locks, which gate the session's
	// commits of writes made outside an admitted statement (nil: not
	// gated); stmt is the text of the client's statement in progress
	// once the table locks admitted it (tablelock.go).
	tables *tableGate
	stmt   atomic.Pointer[string]
	engine *storage.Engine
	txn    *txn
	// cluster is the server's replication node (nil: a session without a
	// server, as go-mysql-server's engine suites make).
	cluster *clusterRef
	// temp holds the session's temporary tables, per database (lower-case
	// name): in memory only, gone with the session.
	temp map[string]*storage.DB
	// viewDB works around go-mysql-server v0.20 binding a view's query
	// only when the session has a current database: while a view is
	// resolved in a session without one, the view's database stands in.
	viewDB string
	// frozen holds, while a statement writes a table, the table as it was
	// when the statement began: the statement's own scans of it read that,
	// as in MySQL (an UPDATE … JOIN updates each row once). Counted: two
	// editors of one statement may freeze the same table.
	frozen map[frozenKey]*frozenTable
	// preparing: the statement is being prepared (COM_STMT_PREPARE), which
	// resolves names in definitions without taking a snapshot (defs).
	preparing bool
	// conflicted: the commit of an autocommit statement's own transaction
	// failed because another commit wrote the same rows first (1213); the
	// statement is run again (protocolHandler.againOnConflict).
	conflicted bool
	// writing counts the editors between StatementBegin and the end of
	// their statement. A commit asked for meanwhile comes from a stored
	// procedure run by a trigger: MySQL does not commit inside a
	// statement, so neither do we (the statement's own commit will).
	writing int
	// lock caches the locking clause of the statement last asked about
	// (lockclause.go).
	lock lockCache
	// delayed is INSERT or REPLACE when the statement parsed last was one
	// with DELAYED, which its execution warns of (modifiers.go).
	delayed string
	// syncOwn: the session set its own @@cluster_sync_commit; otherwise
	// it follows the server's.
	syncOwn bool
	// connKilled: KILL CONNECTION named this session's connection.
	connKilled atomic.Bool
	// lastDupIndex names the unique key of the last duplicate entry the
	// session's statements ran into ("PRIMARY" for the primary key):
	// go-mysql-server's error carries the values only, MySQL's 1062 names
	// the key too.
	lastDupIndex string
	// mysql is set for a client connection's session: its warnings are
	// written with MySQL's levels and texts (messages.go), SUM and AVG of
	// exact numbers are exact DECIMALs (exactsum.go), and its commits wait
	// for secondaries when it asks (§17.8.2: scheduled events never wait).
	// Sessions of tools and of go-mysql-server's engine suites keep
	// go-mysql-server's behaviour, which those suites assert.
	mysql bool
	// ins: the INSERT or REPLACE being built and run (insertinfo.go).
	ins insertState
	// del: the multi-table DELETE being built and run (multidelete.go).
	del deleteState
	// trig: the INSERT with triggers being built (triggerexec.go).
	trig triggerState
	// rt: the stored routines running (routine.go).
	rt routineState
	// viewChecks are the CHECK OPTIONs of views that statements write
	// through, by statement text (viewdml.go).
	viewChecks map[string][]viewCheck
}

// Warn records a warning of the current statement, in MySQL's words for a
// client connection: MySQL raises an ignored error (INSERT IGNORE's
// duplicate, a value out of range) as a Warning, where go-mysql-server
// writes a Note.
func (s *Session) Warn(w *sql.Warning) {
	if s.mysql && w != nil {
		if w = databaseCharsetWarning(s, w); w == nil {
			return
		}
	}
	if s.mysql && w != nil && w.Code == erDuplicatedIndex && !s.duplicateIndex(w.Message) {
		return
	}
	if s.mysql && w != nil {
		c := *w
		if se := s.ins.row.valueErrorOrNil(c.Message); se != nil {
			c.Code, c.Message = se.Num, se.Message
		} else {
			c.Message = mysqlerr.WarningText(c.Code, c.Message, mysqlerr.Context{DB: s.GetCurrentDatabase(), DupIndex: s.lastDupIndex})
		}
		if c.Level == "Note" && ignoredErrorCodes[c.Code] {
			c.Level = "Warning"
		}
		w = &c
	}
	s.BaseSession.Warn(w)
}

// Warnings returns the warnings of the last statement. For a client
// connection they come in the order they were raised, as MySQL's SHOW
// WARNINGS lists them; go-mysql-server's session returns them newest first,
// and its engine, which keeps the warnings raised while a statement is
// planned by slicing that list as if it were oldest first, then kept the
// previous statement's warnings and dropped the new ones (DROP TABLE IF
// EXISTS after a statement with a warning showed that warning, not its
// Note 1051).
func (s *Session) Warnings() []*sql.Warning {
	w := s.BaseSession.Warnings()
	if s.mysql {
		slices.Reverse(w)
	}
	return w
}

// erDuplicatedIndex is ER_DUP_INDEX, "Duplicate index 'k' defined on the
// table": go-mysql-server v0.20 raises it for every new index with as many
// columns as another index (its check of the columns does not stop at a
// difference), so it is checked again here.
const erDuplicatedIndex = 1831

var duplicateIndexRE = regexp.MustCompile(`^Duplicate index '(.*)' defined on the table '(.*)\.(.*)'\.`)

// duplicateIndex says whether the index a 1831 warning names has the same
// kind (unique or not), columns, in the same order, and column prefixes
// as another secondary index of its table (the warning is then MySQL's
// too: KEY (a) beside UNIQUE (a) is no duplicate). The table is read in
// the session's transaction on its database when it has one, where the
// index was just made, else in the last committed state.
func (s *Session) duplicateIndex(msg string) bool {
	m := duplicateIndexRE.FindStringSubmatch(msg)
	if m == nil {
		return true
	}
	db, ok := s.engine.Database(m[2])
	if !ok {
		return true
	}
	var t *storage.Table
	if tx, ok := s.openTx(db); ok {
		t, ok = tx.Table(m[3])
	} else {
		t, ok = db.Latest().Table(m[3]) // the definition only
	}
	if !ok {
		return true
	}
	ti, err := tabledef.Decode(t.Def())
	if err != nil {
		return true
	}
	idx := ti.Meta.Indexes
	for _, a := range idx {
		if !strings.EqualFold(a.Name, m[1]) {
			continue
		}
		for _, b := range idx {
			if b.Name != a.Name && b.Unique == a.Unique && slices.EqualFunc(a.Columns, b.Columns, strings.EqualFold) &&
				slices.Equal(prefixesOf(a), prefixesOf(b)) {
				return true
			}
		}
		return false
	}
	return true
}

// prefixesOf is the prefix length of each column of ix (0: the whole
// column), whether or not its definition lists them.
func prefixesOf(ix tabledef.IndexDef) []uint16 {
	out := make([]uint16, len(ix.Columns))
	copy(out, ix.Prefixes)
	return out
}

// defsIn returns the catalog whose definitions the session sees in db,
// without starting a transaction or taking a snapshot: its transaction's
// (Meta) when it has one there, else the committed catalog.
func (s *Session) defsIn(db *storage.DB) *storage.Catalog {
	if tx, ok := s.openTx(db); ok {
		return tx.Meta()
	}
	return db.Latest()
}

// openTx is the session's transaction on db, if it has one.
func (s *Session) openTx(db *storage.DB) (*storage.Tx, bool) {
	if s.txn == nil || db.Journal() == nil {
		return nil, false
	}
	key := strings.ToLower(db.Name())
	tx, ok := s.txn.dbs[key]
	if ok {
		s.txn.fresh(key, tx)
	}
	return tx, ok
}

// ignoredErrorCodes are the errors that IGNORE (INSERT IGNORE, UPDATE
// IGNORE) turns into warnings of level Warning in MySQL.
var ignoredErrorCodes = map[int]bool{
	1048: true, 1062: true, 1242: true, 1264: true, 1265: true, 1292: true,
	1366: true, 1406: true, 1451: true, 1452: true, 3819: true,
}

type frozenKey struct {
	tx    *storage.Tx
	table string // lower-case
}

type frozenTable struct {
	t    *storage.Table
	refs int
}

func (s *Session) freeze(k frozenKey, t *storage.Table) {
	if s.frozen == nil {
		s.frozen = map[frozenKey]*frozenTable{}
	}
	if f, ok := s.frozen[k]; ok {
		f.refs++
		return
	}
	s.frozen[k] = &frozenTable{t: t.Snapshot(), refs: 1}
}

func (s *Session) unfreeze(k frozenKey) {
	if f, ok := s.frozen[k]; ok {
		if f.refs--; f.refs <= 0 {
			delete(s.frozen, k)
		}
	}
}

func (s *Session) frozenTable(k frozenKey) (*storage.Table, bool) {
	f, ok := s.frozen[k]
	if !ok {
		return nil, false
	}
	return f.t, true
}

// GetCurrentDatabase is the session's database, or the database of the view
// being resolved when the session has none (see viewDB).
func (s *Session) GetCurrentDatabase() string {
	if db := s.BaseSession.GetCurrentDatabase(); db != "" || s.viewDB == "" {
		return db
	}
	return s.viewDB
}

var _ sql.TransactionSession = (*Session)(nil)
var _ sql.LifecycleAwareSession = (*Session)(nil)

// txn is a SQL transaction: it may span databases; each database has its
// own storage transaction, begun at the first access to that database.
type txn struct {
	dbs        map[string]*storage.Tx // key: lower-case database name
	savepoints []savepoint
	readOnly   bool
	// locks holds the row locks of the transaction in every database,
	// released when it ends (after its commit is published).
	locks *storage.LockOwner
	// restore: SET TRANSACTION without a scope set the characteristics
	// for this transaction alone; the session's come back at its end.
	restore *characteristics
	// id, started and txs are what information_schema.INNODB_TRX shows
	// of the transaction from other sessions (trx.go): set when it first
	// reaches a database.
	id      uint64
	started time.Time
	txs     atomic.Pointer[[]*storage.Tx]
	ro      atomic.Bool
	// readCommitted: the transaction runs at READ COMMITTED (or READ
	// UNCOMMITTED), as transaction_isolation was when it began: each
	// statement reads the newest commits (isolation.go). stale lists its
	// databases whose snapshot the statement under way has not yet
	// moved (lower-case keys of dbs).
	readCommitted bool
	stale         map[string]bool
}

// newTxn starts a SQL transaction's state. Its lock owner's age is its
// start: a deadlock refuses the transaction that began last.
func (s *Session) newTxn() *txn {
	t := &txn{dbs: map[string]*storage.Tx{}, readCommitted: s.readCommittedLevel()}
	if s.engine != nil {
		t.locks = s.engine.NewLockOwner()
	}
	return t
}

// wrote reports whether the transaction has written anything.
func (t *txn) wrote() bool {
	for _, tx := range t.dbs {
		if tx.Writes() {
			return true
		}
	}
	return false
}

// written lists the databases the transaction wrote (lower-case names).
func (t *txn) written() []string {
	var dbs []string
	for key, tx := range t.dbs {
		if tx.Writes() {
			dbs = append(dbs, key)
		}
	}
	return dbs
}

// end releases what the transaction holds once its storage transactions
// have ended.
func (t *txn) end() { t.locks.Release() }

type savepoint struct {
	name string
	at   map[string]storage.Savepoint
}

func (t *txn) String() string   { return "miraj transaction" }
func (t *txn) IsReadOnly() bool { return t.readOnly }

func newSession(base *sql.BaseSession, e *storage.Engine) *Session {
	return &Session{BaseSession: base, engine: e}
}

func sessionOf(ctx *sql.Context) *Session {
	s, ok := ctx.Session.(*Session)
	if !ok {
		panic(fmt.Sprintf("sqlserver: session of type %T", ctx.Session))
	}
	return s
}

// storageTx returns the storage transaction of this session on db, starting
// the SQL transaction or the database's part of it as needed.
func (s *Session) storageTx(db *storage.DB) *storage.Tx { return s.dbTx(db, false) }

// pointTx is storageTx for a compiled write by key (writeplan.go): the
// database's part of the transaction, when it starts there, takes its
// snapshot only when a statement first needs one
// (storage.DB.BeginDeferred), so that while the transaction makes only
// writes by key, commits change the committed trees in place.
func (s *Session) pointTx(db *storage.DB) *storage.Tx { return s.dbTx(db, true) }

func (s *Session) dbTx(db *storage.DB, deferred bool) *storage.Tx {
	if s.txn == nil {
		s.txn = s.newTxn()
	}
	key := strings.ToLower(db.Name())
	if db.Journal() == nil {
		key = "\x00temp:" + key
	}
	tx, ok := s.txn.dbs[key]
	if ok {
		s.txn.fresh(key, tx)
	}
	if !ok {
		if deferred {
			tx = db.BeginDeferred()
		} else {
			tx = db.Begin()
		}
		s.streaming(tx) // streams.go
		if s.txn.locks != nil {
			tx.SetLockOwner(s.txn.locks)
		}
		tx.SetNote(s) // the binary log's (binlog_hook.go)
		s.txn.dbs[key] = tx
		s.txn.attach(tx)
		s.trx.Store(s.txn)
	}
	return tx
}

// MySQLAnswers reports whether the session is a client connection's
// (Session.mysql): compat.FromClient asks it.
func (s *Session) MySQLAnswers() bool { return s.mysql }

// tempDB returns the store of this session's temporary tables in database
// db, creating it when create is set (nil otherwise).
func (s *Session) tempDB(db string, create bool) *storage.DB {
	key := strings.ToLower(db)
	t, ok := s.temp[key]
	if !ok && create {
		if s.temp == nil {
			s.temp = map[string]*storage.DB{}
		}
		t = storage.NewScratch(db, tabledef.Bind)
		s.temp[key] = t
	}
	return t
}

// StartTransaction begins a transaction. Snapshots are taken per database at
// the first statement that reads it.
//
// A transaction is read-only when it begins with START TRANSACTION READ
// ONLY, or, unless it begins with START TRANSACTION READ WRITE, when the
// session's transaction_read_only is set (SET [SESSION] TRANSACTION READ
// ONLY, or SET TRANSACTION READ ONLY for this transaction alone:
// nextTransaction).
func (s *Session) StartTransaction(ctx *sql.Context, ch sql.TransactionCharacteristic) (sql.Transaction, error) {
	if s.txn == nil {
		s.txn = s.newTxn()
		s.txn.restore, s.next = s.next, nil
	}
	s.txn.readOnly = ch == sql.ReadOnly || s.readOnlyByDefault() && (ctx == nil || !startReadWriteRE.MatchString(ctx.Query()))
	s.txn.ro.Store(s.txn.readOnly)
	return s.txn, nil
}

// startReadWriteRE matches START TRANSACTION … READ WRITE.
var startReadWriteRE = regexp.MustCompile(`(?is)^\s*start\s+transaction\b.*\bread\s+write\b`)

// readOnlyByDefault reports the session's transaction_read_only.
func (s *Session) readOnlyByDefault() bool {
	v, err := s.BaseSession.GetSessionVariable(nil, "transaction_read_only")
	return err == nil && boolValue(v)
}

// characteristics are a session's transaction_read_only and
// transaction_isolation, as SET TRANSACTION without a scope found them.
type characteristics struct{ readOnly, isolation any }

// nextTransaction runs SET TRANSACTION … without GLOBAL or SESSION (run):
// MySQL's applies to the session's next transaction only. It fails with
// 1568 inside a transaction; otherwise the session's values come back
// once the next transaction ends.
func (s *Session) nextTransaction(run func() error) error {
	if s.txn != nil && (s.GetIgnoreAutoCommit() || !s.autocommit()) {
		return mysql.NewSQLError(1568, "25001", "Transaction characteristics can't be changed while a transaction is in progress")
	}
	saved := s.next
	if saved == nil {
		ro, _ := s.BaseSession.GetSessionVariable(nil, "transaction_read_only")
		iso, _ := s.BaseSession.GetSessionVariable(nil, "transaction_isolation")
		saved = &characteristics{readOnly: ro, isolation: iso}
	}
	if err := run(); err != nil {
		return err
	}
	s.next = saved
	return nil
}

// restoreCharacteristics gives the session back the values SET
// TRANSACTION changed for transaction t alone, as t ends. A statement's
// transaction that touched no table (SELECT @@…, the one START
// TRANSACTION ends before it begins its own) leaves them to the next.
func (s *Session) restoreCharacteristics(t *txn) {
	if t == nil || t.restore == nil {
		return
	}
	if len(t.dbs) == 0 && !s.GetIgnoreAutoCommit() && s.autocommit() {
		if s.next == nil {
			s.next = t.restore
		}
		t.restore = nil
		return
	}
	ctx := sql.NewEmptyContext()
	s.BaseSession.SetSessionVariable(ctx, "transaction_read_only", t.restore.readOnly)
	s.BaseSession.SetSessionVariable(ctx, "transaction_isolation", t.restore.isolation)
	t.restore = nil
}

// CommitTransaction commits each database's part of the transaction. A
// conflict (1213) rolls back the whole transaction.
func (s *Session) CommitTransaction(ctx *sql.Context, tx sql.Transaction) error {
	if s.writing > 0 {
		return nil
	}
	t := s.txn
	if t == nil {
		s.frozen = nil
		return nil
	}
	implicit := !s.GetIgnoreAutoCommit() && s.autocommit()
	defer s.commitTimer(t.wrote(), implicit)()
	if t.wrote() {
		entered, err := s.readLock.enter(ctx, s.ID())
		if err == nil && s.stmt.Load() == nil {
			// Not a client's statement the table locks admitted: an
			// event's, or the commit before a statement that commits
			// implicitly.
			if err = s.tables.enterCommit(ctx, s.ID(), t.written(), s.tableLockWait(ctx)); err != nil && entered {
				s.readLock.exit()
				entered = false
			}
		}
		if err != nil {
			if s.GetIgnoreAutoCommit() || !s.autocommit() {
				// An explicit transaction stays open: it may be
				// committed once the lock is gone, or rolled back.
				return err
			}
			// An autocommit statement's writes are undone.
			s.Rollback(ctx, tx)
			return err
		}
		if entered {
			defer s.readLock.exit()
		}
	}
	s.txn = nil
	s.trx.Store(nil)
	s.frozen = nil
	var first error
	var commits []committed
	for key, dtx := range t.dbs {
		if first != nil {
			dtx.Rollback()
			continue
		}
		if err := dtx.Commit(ctx); err != nil {
			first = err
			continue
		}
		if lsn, ok := dtx.Logged(); ok && !strings.HasPrefix(key, "\x00") {
			commits = append(commits, committed{db: key, lsn: lsn})
		}
	}
	t.end()
	s.restoreCharacteristics(t)
	if first != nil {
		// The transaction is over (rolled back): the next statement
		// starts afresh, with autocommit as the session has it.
		ctx.SetTransaction(nil)
		s.SetIgnoreAutoCommit(false)
		s.conflicted = implicit && errors.Is(first, storage.ErrConflict)
		return mysqlerr.From(first)
	}
	s.causal.note(s.engine, commits)
	return s.waitForSecondaries(ctx, commits)
}

// Rollback discards the transaction.
func (s *Session) Rollback(ctx *sql.Context, tx sql.Transaction) error {
	s.frozen = nil
	if s.txn != nil {
		for _, dtx := range s.txn.dbs {
			dtx.Rollback()
		}
		s.txn.end()
		s.restoreCharacteristics(s.txn)
	}
	s.txn = nil
	s.trx.Store(nil)
	return nil
}

// SetSessionVariable commits the open transaction when @@autocommit goes
// from 0 to 1, as MySQL does, START TRANSACTION or not. go-mysql-server
// commits at the end of the SET statement only outside START TRANSACTION
// (inside, the transaction stayed open, autocommit on and the flags saying
// so), and when that commit failed it left autocommit on. Here, as in
// MySQL, a commit that fails (1213) fails the statement and leaves
// autocommit off; the transaction is rolled back.
func (s *Session) SetSessionVariable(ctx *sql.Context, name string, value any) error {
	if strings.EqualFold(name, varSyncCommit) {
		return s.setSyncCommit(ctx, value)
	}
	if _, ok := s.diagnosticsVariable(name); ok {
		return sql.ErrSystemVariableReadOnly.New(name)
	}
	if err := checkGTIDSeqNo(ctx, s, name, value); err != nil { // binlog_server.go
		return err
	}
	if strings.EqualFold(name, "server_id") {
		if err := s.BaseSession.SetSessionVariable(ctx, name, value); err != nil {
			return err
		}
		v, err := s.BaseSession.GetSessionVariable(ctx, name)
		if err != nil {
			return err
		}
		id, _ := strconv.ParseUint(fmt.Sprint(v), 10, 32)
		s.serverID.Store(uint32(id))
		return nil
	}
	if !strings.EqualFold(name, sql.AutoCommitSessionVar) {
		return s.BaseSession.SetSessionVariable(ctx, name, value)
	}
	was := s.autocommit()
	if err := s.BaseSession.SetSessionVariable(ctx, name, value); err != nil {
		return err
	}
	tx := ctx.GetTransaction()
	// Inside a writing statement (a trigger's procedure) nothing commits,
	// as in CommitTransaction; the statement's own end does.
	if was || !s.autocommit() || tx == nil || s.writing > 0 {
		return nil
	}
	if err := s.CommitTransaction(ctx, tx); err != nil {
		if rerr := s.BaseSession.SetSessionVariable(ctx, name, int8(0)); rerr != nil {
			panic(fmt.Sprintf("sqlserver: autocommit back to 0: %v", rerr))
		}
		return err
	}
	ctx.SetTransaction(nil)
	ctx.SetIgnoreAutoCommit(false)
	return nil
}

// CreateSavepoint records every database's state under name.
func (s *Session) CreateSavepoint(ctx *sql.Context, tx sql.Transaction, name string) error {
	if s.txn == nil {
		s.txn = s.newTxn()
	}
	sp := savepoint{name: name, at: map[string]storage.Savepoint{}}
	for k, dtx := range s.txn.dbs {
		sp.at[k] = dtx.Savepoint()
	}
	s.dropSavepoint(name)
	s.txn.savepoints = append(s.txn.savepoints, sp)
	return nil
}

func (s *Session) findSavepoint(name string) int {
	if s.txn == nil {
		return -1
	}
	for i := len(s.txn.savepoints) - 1; i >= 0; i-- {
		if strings.EqualFold(s.txn.savepoints[i].name, name) {
			return i
		}
	}
	return -1
}

func (s *Session) dropSavepoint(name string) {
	if i := s.findSavepoint(name); i >= 0 {
		s.txn.savepoints = append(s.txn.savepoints[:i], s.txn.savepoints[i+1:]...)
	}
}

// RollbackToSavepoint returns every database to its state at the savepoint;
// later savepoints are forgotten, as in MySQL.
func (s *Session) RollbackToSavepoint(ctx *sql.Context, tx sql.Transaction, name string) error {
	i := s.findSavepoint(name)
	if i < 0 {
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	sp := s.txn.savepoints[i]
	for k, dtx := range s.txn.dbs {
		if at, ok := sp.at[k]; ok {
			dtx.RollbackTo(at)
		} else {
			dtx.RollbackTo(dtx.Initial())
		}
	}
	s.txn.savepoints = s.txn.savepoints[:i+1]
	return nil
}

// ReleaseSavepoint forgets a savepoint.
func (s *Session) ReleaseSavepoint(ctx *sql.Context, tx sql.Transaction, name string) error {
	if s.findSavepoint(name) < 0 {
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	s.dropSavepoint(name)
	return nil
}

// CommandBegin, CommandEnd and SessionEnd are connection lifecycle hooks.
func (s *Session) CommandBegin() error { return nil }
func (s *Session) CommandEnd()         { s.viewDB = ""; s.frozen = nil; s.writing = 0 }

// SessionEnd rolls back what the connection left open.
func (s *Session) SessionEnd() {
	if s.txn != nil {
		for _, dtx := range s.txn.dbs {
			dtx.Rollback()
		}
		s.txn.end()
		s.txn = nil
		s.trx.Store(nil)
	}
	s.temp = nil
}
