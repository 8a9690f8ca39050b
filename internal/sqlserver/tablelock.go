package sqlserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/storage"
)

// Table locks: LOCK TABLES t1 READ, t2 WRITE … until UNLOCK TABLES, as
// MySQL's.
//
// A session's LOCK TABLES is granted once no other session holds a
// conflicting lock on one of its tables (WRITE conflicts with any lock, two
// READ locks do not) and no statement of another session in progress uses
// one of them in a conflicting way (reads or writes a table to be locked
// WRITE, writes one to be locked READ). From then until the session's
// UNLOCK TABLES (or its START TRANSACTION, next LOCK TABLES, or end):
//
//   - another session's statement that uses a WRITE-locked table, or writes
//     a READ-locked one, waits before it starts (lock_wait_timeout: 1205;
//     KILL QUERY: 1317), and so does its COMMIT of writes to a database in
//     which a table is locked; a LOCK TABLES asked for meanwhile is
//     served before the statements that come after it;
//   - the holder uses only the tables it locked (1100) and writes only
//     those it locked WRITE (1099); its statements never wait for a
//     table lock.
//
// Which tables a statement uses is what the parser's privilege annotations
// name (the names the privilege check reads); a view stands for the tables
// it reads as well. A statement whose tables cannot be known from its text
// — CALL, EXECUTE, a write to a database with triggers or foreign keys —
// waits for every table lock of another session: more than MySQL waits
// for, never less. An event's writes wait at their commit. A secondary's
// replication applies what its primary sends whatever the locks.

// lockMode is a table lock's kind.
type lockMode uint8

const (
	lockRead lockMode = iota + 1
	lockWrite
)

// lockedTable names a table: lower-case database and table names.
type lockedTable struct{ db, name string }

// tableUse is one table a statement uses: name is as written (for 1100
// and 1099); create marks the table a CREATE makes.
type tableUse struct {
	ref    lockedTable
	name   string
	write  bool
	create bool
}

// footprint is what a statement uses: its tables, whole databases it
// writes (DROP DATABASE, a COMMIT of writes), or tables it cannot name.
type footprint struct {
	uses []tableUse
	dbs  []string
	// all: the statement may read any table; allWrite: and write it.
	all, allWrite bool
}

// blockedBy reports whether locks (another session's, held or asked for)
// hold back a statement with footprint f.
func (f *footprint) blockedBy(locks map[lockedTable]lockMode) bool {
	if len(locks) == 0 {
		return false
	}
	if f.allWrite {
		return true
	}
	for ref, m := range locks {
		if f.all && m == lockWrite {
			return true
		}
		for _, db := range f.dbs {
			if db == ref.db {
				return true
			}
		}
		for _, u := range f.uses {
			if u.ref.name == ref.name && (u.ref.db == ref.db || u.ref.db == "") && (u.write || m == lockWrite) {
				return true
			}
		}
	}
	return false
}

// sessionLocks is a session's LOCK TABLES: asked for until granted.
type sessionLocks struct {
	tables  map[lockedTable]lockMode
	granted bool
}

// admission is a statement admitted while table locks were held or asked
// for.
type admission struct {
	id uint32
	f  footprint
}

// tableGate is a server's table locks and the statements they hold back.
//
// A statement marks its session (Session.stmt) and then looks at holders;
// a LOCK TABLES adds itself to holders and then looks at the marks: one of
// the two always sees the other. While holders is 0 a statement only
// marks its session.
type tableGate struct {
	holders atomic.Int64 // sessions holding or asking for table locks
	// anon counts the statements in progress of connections that have no
	// session yet (their first), which carry no mark.
	anon atomic.Int64

	mu      sync.Mutex
	locks   map[uint32]*sessionLocks
	running map[*admission]struct{}
	changed chan struct{} // closed and replaced when a lock or an admission goes
	killed  killSwitches
	// sessions calls fn with each session of the server.
	sessions func(fn func(id uint32, s *Session) bool)
	// footprintOf reads the footprint of another session's statement in
	// progress, its database unknown.
	footprintOf func(q string) footprint
}

func newTableGate(sessions func(fn func(id uint32, s *Session) bool), footprintOf func(q string) footprint) *tableGate {
	return &tableGate{
		locks: map[uint32]*sessionLocks{}, running: map[*admission]struct{}{},
		changed:  make(chan struct{}),
		sessions: sessions, footprintOf: footprintOf,
	}
}

// tableTicket is what enter admitted, for exit.
type tableTicket struct {
	sess *Session
	anon bool
	a    *admission
}

// enter admits statement q of connection id (session s, nil for its
// first): at once while no session holds or asks for table locks;
// otherwise it checks the holder's own statement against its locks, and
// holds another's back while a lock stands in its way. f gives the
// statement's footprint (read only when a lock is held or asked for).
func (g *tableGate) enter(ctx context.Context, id uint32, s *Session, q *string, f func() footprint) (tableTicket, error) {
	if s == nil {
		g.anon.Add(1)
	} else {
		s.stmt.Store(q)
	}
	if g.holders.Load() == 0 {
		return tableTicket{sess: s, anon: s == nil}, nil
	}
	if s == nil {
		g.anon.Add(-1)
	} else {
		s.stmt.Store(nil)
	}
	a := &admission{id: id, f: f()}
	deadline := time.Now().Add(s.tableLockWait(nil))
	g.mu.Lock()
	for {
		if own := g.locks[id]; own != nil && own.granted {
			if err := checkHolder(own.tables, &a.f); err != nil {
				g.mu.Unlock()
				return tableTicket{}, err
			}
			break
		}
		if !g.statementBlocked(id, &a.f) {
			break
		}
		if err := g.wait(ctx, id, deadline, 0); err != nil {
			g.mu.Unlock()
			return tableTicket{}, err
		}
	}
	g.running[a] = struct{}{}
	if s != nil {
		s.stmt.Store(q)
	}
	g.mu.Unlock()
	return tableTicket{sess: s, a: a}, nil
}

// exit ends what enter admitted.
func (g *tableGate) exit(t tableTicket) {
	if t.sess != nil {
		t.sess.stmt.Store(nil)
	}
	if t.anon {
		g.anon.Add(-1)
	}
	if t.a != nil {
		g.mu.Lock()
		delete(g.running, t.a)
		g.broadcast()
		g.mu.Unlock()
	}
}

// enterCommit holds back a commit of writes to databases dbs made outside
// a statement the gate admitted (an event's, the implicit commit before a
// statement) while another session holds or asks for a lock in one of
// them.
func (g *tableGate) enterCommit(ctx context.Context, id uint32, dbs []string, wait time.Duration) error {
	if g == nil || g.holders.Load() == 0 {
		return nil
	}
	f := footprint{dbs: dbs}
	deadline := time.Now().Add(wait)
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.statementBlocked(id, &f) {
		if err := g.wait(ctx, id, deadline, 0); err != nil {
			return err
		}
	}
	return nil
}

// statementBlocked reports whether another session's lock, held or asked
// for, holds back a statement of session id with footprint f.
func (g *tableGate) statementBlocked(id uint32, f *footprint) bool {
	for sid, l := range g.locks {
		if sid != id && f.blockedBy(l.tables) {
			return true
		}
	}
	return false
}

// lock takes the table locks want for session id, giving back those it
// held first.
func (g *tableGate) lock(ctx context.Context, id uint32, want map[lockedTable]lockMode, wait time.Duration) error {
	g.unlock(id)
	own := &sessionLocks{tables: want}
	deadline := time.Now().Add(wait)
	seen := map[*string]bool{} // statements in progress found in the way
	g.mu.Lock()
	g.locks[id] = own
	g.holders.Add(1)
	for {
		if !g.lockBlocked(id, want) {
			g.mu.Unlock()
			busy := g.busy(id, want, seen)
			g.mu.Lock()
			if !busy && !g.lockBlocked(id, want) {
				own.granted = true
				g.mu.Unlock()
				return nil
			}
			if busy {
				// Statements admitted before the request are not
				// registered: look again shortly.
				if err := g.wait(ctx, id, deadline, time.Millisecond); err != nil {
					g.dropLocked(id)
					g.mu.Unlock()
					return err
				}
				continue
			}
		}
		if err := g.wait(ctx, id, deadline, 0); err != nil {
			g.dropLocked(id)
			g.mu.Unlock()
			return err
		}
	}
}

// lockBlocked reports whether another session's granted lock, or a
// statement of another session admitted since locks were asked for,
// stands in the way of session id's locks want.
func (g *tableGate) lockBlocked(id uint32, want map[lockedTable]lockMode) bool {
	for sid, l := range g.locks {
		if sid == id || !l.granted {
			continue
		}
		for ref, m := range l.tables {
			if w, ok := want[ref]; ok && (w == lockWrite || m == lockWrite) {
				return true
			}
		}
	}
	for a := range g.running {
		if a.id != id && a.f.blockedBy(want) {
			return true
		}
	}
	return false
}

// busy reports whether a statement admitted while no lock was held or
// asked for, still in progress, uses the tables of want in a conflicting
// way (its session's database unknown, a table it names without one
// stands for that table in every database). seen keeps what was found of
// each statement, looked at again until it ends.
func (g *tableGate) busy(id uint32, want map[lockedTable]lockMode, seen map[*string]bool) bool {
	if g.anon.Load() > 0 {
		return true
	}
	busy := false
	g.sessions(func(sid uint32, s *Session) bool {
		if sid == id {
			return true
		}
		if q := s.stmt.Load(); q != nil {
			in, ok := seen[q]
			if !ok {
				f := g.footprintOf(*q)
				in = f.blockedBy(want)
				seen[q] = in
			}
			if in {
				busy = true
				return false
			}
		}
		return true
	})
	return busy
}

// wait waits, g.mu held (and held again on return), until a lock or an
// admission goes, poll passes (if not 0), KILL QUERY of id (1317), ctx
// ends (1317) or deadline passes (1205).
func (g *tableGate) wait(ctx context.Context, id uint32, deadline time.Time, poll time.Duration) error {
	left := time.Until(deadline)
	if poll > 0 && poll < left {
		left = poll
	}
	timer := time.NewTimer(left)
	defer timer.Stop()
	timedOut, err := g.killed.await(ctx, &g.mu, id, g.changed, timer.C)
	if timedOut && !time.Now().Before(deadline) {
		return errLockWaitTimeout()
	}
	return err
}

// errLockWaitTimeout is MySQL's answer to a wait for a table lock longer
// than lock_wait_timeout.
func errLockWaitTimeout() error {
	return mysql.NewSQLError(mysql.ERLockWaitTimeout, "HY000", "Lock wait timeout exceeded; try restarting transaction")
}

// broadcast wakes the waiters, g.mu held.
func (g *tableGate) broadcast() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// dropLocked removes session id's locks, g.mu held.
func (g *tableGate) dropLocked(id uint32) {
	if _, ok := g.locks[id]; !ok {
		return
	}
	delete(g.locks, id)
	g.holders.Add(-1)
	g.broadcast()
}

// unlock gives session id's table locks back, if it holds any.
func (g *tableGate) unlock(id uint32) {
	if g.holders.Load() == 0 {
		return
	}
	g.mu.Lock()
	g.dropLocked(id)
	g.mu.Unlock()
}

// inUse counts, per table, the table locks held or asked for (SHOW OPEN
// TABLES' In_use); nil when there are none.
func (g *tableGate) inUse() map[lockedTable]int {
	if g == nil || g.holders.Load() == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[lockedTable]int{}
	for _, l := range g.locks {
		for ref := range l.tables {
			out[ref]++
		}
	}
	return out
}

// holds reports whether session id holds table locks.
func (g *tableGate) holds(id uint32) bool {
	if g.holders.Load() == 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.locks[id]
	return l != nil && l.granted
}

// forgetKill drops a KILL QUERY of connection id kept from before its
// statement began (killSwitches).
func (g *tableGate) forgetKill(id uint32) { g.killed.forget(&g.mu, id) }

// interrupt ends connection id's wait, if it waits (KILL QUERY).
func (g *tableGate) interrupt(id uint32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.killed.fire(id)
}

// checkHolder checks a statement of the session holding locks: it may use
// only the tables it locked (1100) and write only those it locked WRITE
// (1099). A table it creates needs no lock; what it cannot name (a
// procedure's tables) is not checked.
func checkHolder(locks map[lockedTable]lockMode, f *footprint) error {
	for _, u := range f.uses {
		if u.create {
			continue
		}
		m, ok := locks[u.ref]
		if !ok {
			return mysql.NewSQLError(mysql.ERTableNotLocked, "HY000", "Table '%s' was not locked with LOCK TABLES", u.name)
		}
		if u.write && m == lockRead {
			return mysql.NewSQLError(mysql.ERTableNotLockedForWrite, "HY000", "Table '%s' was locked with a READ lock and can't be updated", u.name)
		}
	}
	return nil
}

// unlockedSchemas hold no table that LOCK TABLES locks or that a holder
// must lock to read.
var unlockedSchemas = map[string]bool{"information_schema": true, "performance_schema": true, "mysql": true, "sys": true}

// writeAuth are the privilege annotations of a statement that changes a
// table.
var writeAuth = map[string]bool{
	sqlparser.AuthType_INSERT: true, sqlparser.AuthType_UPDATE: true, sqlparser.AuthType_DELETE: true,
	sqlparser.AuthType_REPLACE: true, sqlparser.AuthType_CREATE: true, sqlparser.AuthType_DROP: true,
	sqlparser.AuthType_ALTER: true, sqlparser.AuthType_INDEX: true, sqlparser.AuthType_RENAME: true,
	sqlparser.AuthType_TRIGGER: true,
}

// footprintReader works out statements' footprints for one session.
type footprintReader struct {
	srv *Server
	// sess is the statement's session; nil when unknown (another
	// session's statement in progress, a connection's first): names
	// without a database (and db not set) then stand for the table in
	// every database.
	sess *Session
	// db, when set, is the database of names without one (a view's
	// tables are named from the view's database).
	db string
}

// statement returns the footprint of statement text q.
func (r footprintReader) statement(q string) footprint {
	w := sqltext.NewReader(q)
	switch first := w.Next(); {
	case sqltext.IsKeyword(first, "CALL"), sqltext.IsKeyword(first, "EXECUTE"):
		return footprint{all: true, allWrite: true}
	case sqltext.IsKeyword(first, "COMMIT"), sqltext.IsKeyword(first, "BEGIN"), sqltext.IsKeyword(first, "START"),
		sqltext.IsKeyword(first, "SET") && strings.Contains(strings.ToLower(q), "autocommit"):
		if r.sess == nil {
			// Another session's commit in progress: what it commits
			// is not known here.
			return footprint{all: true, allWrite: true}
		}
		return footprint{dbs: r.written()}
	case sqltext.IsKeyword(first, "SELECT"), sqltext.IsKeyword(first, "WITH"), sqltext.IsKeyword(first, "TABLE"), first == "",
		sqltext.IsKeyword(first, "INSERT"), sqltext.IsKeyword(first, "UPDATE"), sqltext.IsKeyword(first, "DELETE"),
		sqltext.IsKeyword(first, "REPLACE"), sqltext.IsKeyword(first, "LOAD"), sqltext.IsKeyword(first, "CREATE"),
		sqltext.IsKeyword(first, "DROP"), sqltext.IsKeyword(first, "ALTER"), sqltext.IsKeyword(first, "RENAME"),
		sqltext.IsKeyword(first, "TRUNCATE"), sqltext.IsKeyword(first, "VALUES"):
		if len(q) > maxTextLen && sqltext.IsKeyword(first, "INSERT") {
			// Rows written alike name the same tables: its first
			// row's INSERT has its footprint, without parsing the rest.
			q = firstRowOf(q)
		}
		stmt, _, err := sqlparser.ParseOne(context.Background(), q)
		if err != nil {
			return footprint{}
		}
		var f footprint
		r.add(&f, stmt, false, 0)
		return f
	}
	return footprint{}
}

// written lists the databases the session's open transaction wrote.
func (r footprintReader) written() []string {
	if r.sess == nil || r.sess.txn == nil {
		return nil
	}
	return r.sess.txn.written()
}

// maxViewDepth bounds the views read through views; deeper, a statement's
// tables are taken as unknown.
const maxViewDepth = 8

// add adds what node uses to f: tables it reads, or writes with write
// (a view written through writes its tables).
func (r footprintReader) add(f *footprint, node sqlparser.SQLNode, write bool, depth int) {
	// The statements whose annotations do not name their tables, or name
	// read tables as written.
	switch n := node.(type) {
	case *sqlparser.DDL:
		switch {
		case n.Action == sqlparser.CreateStr && n.Temporary:
		case n.Action == sqlparser.CreateStr:
			r.use(f, n.Table.DbQualifier.String(), n.Table.Name.String(), true, true, depth)
			if n.OptLike != nil {
				for _, t := range n.OptLike.LikeTables {
					r.use(f, t.DbQualifier.String(), t.Name.String(), false, false, depth)
				}
			}
			if n.OptSelect != nil {
				r.add(f, n.OptSelect.Select, false, depth)
			}
			return
		case n.Action == sqlparser.RenameStr:
			for i, ts := range []sqlparser.TableNames{n.FromTables, n.ToTables} {
				for _, t := range ts {
					r.use(f, t.DbQualifier.String(), t.Name.String(), true, i == 1, depth)
				}
			}
			return
		}
	case *sqlparser.DBDDL:
		if n.Action == sqlparser.DropStr || n.Action == sqlparser.AlterStr {
			f.dbs = append(f.dbs, strings.ToLower(n.DBName))
		}
		return
	case *sqlparser.Load:
		r.use(f, n.Table.DbQualifier.String(), n.Table.Name.String(), true, false, depth)
		return
	case *sqlparser.Delete:
		if len(n.Targets) > 0 {
			// DELETE t FROM t JOIN u …: u is only read.
			before := len(f.uses)
			r.walk(f, node, write, depth)
			for i := before; i < len(f.uses); i++ {
				f.uses[i].write = write || namedIn(f.uses[i].name, n.Targets)
			}
			return
		}
	case *sqlparser.Update:
		if len(n.TableExprs) > 1 || !isSingleTable(n.TableExprs) {
			// UPDATE t JOIN u … SET t.c = …: u is only read, unless
			// assigned (or a column is assigned without its table).
			targets := map[string]bool{}
			for _, e := range n.Exprs {
				targets[strings.ToLower(e.Name.Qualifier.Name.String())] = true
			}
			before := len(f.uses)
			r.walk(f, node, write, depth)
			aliases := tableAliases(n.TableExprs)
			for i := before; i < len(f.uses); i++ {
				u := &f.uses[i]
				u.write = write || targets[strings.ToLower(u.name)] || targets[""]
				for alias, name := range aliases {
					if targets[alias] && strings.EqualFold(name, u.name) {
						u.write = true
					}
				}
			}
			return
		}
	}
	r.walk(f, node, write, depth)
}

// namedIn reports whether table name is one of names.
func namedIn(name string, names sqlparser.TableNames) bool {
	for _, t := range names {
		if strings.EqualFold(t.Name.String(), name) {
			return true
		}
	}
	return false
}

// isSingleTable reports whether exprs is one table, without a join.
func isSingleTable(exprs sqlparser.TableExprs) bool {
	if len(exprs) != 1 {
		return false
	}
	_, ok := exprs[0].(*sqlparser.AliasedTableExpr)
	return ok
}

// tableAliases maps the lower-case aliases of the tables in exprs to the
// tables' names.
func tableAliases(exprs sqlparser.TableExprs) map[string]string {
	out := map[string]string{}
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		if a, ok := node.(*sqlparser.AliasedTableExpr); ok && !a.As.IsEmpty() {
			if tn, ok := a.Expr.(sqlparser.TableName); ok {
				out[strings.ToLower(a.As.String())] = tn.Name.String()
			}
		}
		return true, nil
	}, exprs)
	return out
}

// walk adds the tables the privilege annotations of node name.
func (r footprintReader) walk(f *footprint, node sqlparser.SQLNode, write bool, depth int) {
	sqlparser.WalkAuthNodes(node, func(_ sqlparser.AuthNode, ai sqlparser.AuthInformation) {
		isWrite := writeAuth[ai.AuthType]
		if !isWrite && ai.AuthType != sqlparser.AuthType_SELECT && ai.AuthType != sqlparser.AuthType_FOREIGN_KEY {
			return
		}
		switch ai.TargetType {
		case sqlparser.AuthTargetType_SingleTableIdentifier, sqlparser.AuthTargetType_MultipleTableIdentifiers:
			for i := 0; i+1 < len(ai.TargetNames); i += 2 {
				r.use(f, ai.TargetNames[i], ai.TargetNames[i+1], isWrite || write, ai.AuthType == sqlparser.AuthType_CREATE, depth)
			}
		case sqlparser.AuthTargetType_DatabaseIdentifiers:
			if isWrite {
				for _, db := range ai.TargetNames {
					f.dbs = append(f.dbs, strings.ToLower(db))
				}
			}
		}
	})
}

// use adds table db.name to f: a view adds the tables it reads too; a
// write to a database with triggers or foreign keys makes f unknown.
func (r footprintReader) use(f *footprint, db, name string, write, create bool, depth int) {
	if name == "" {
		return // CREATE VIEW: the view is not a table yet
	}
	label := name
	switch {
	case db != "":
	case r.db != "":
		db = r.db
	case r.sess != nil:
		db = r.sess.GetCurrentDatabase()
	}
	ref := lockedTable{db: strings.ToLower(db), name: strings.ToLower(name)}
	if unlockedSchemas[ref.db] {
		return
	}
	if r.sess != nil && ref.db != "" {
		if t := r.sess.tempDB(ref.db, false); t != nil {
			if _, ok := t.Snapshot().Table(ref.name); ok {
				return // the session's temporary table
			}
		}
	}
	f.uses = append(f.uses, tableUse{ref: ref, name: label, write: write, create: create})
	if r.srv == nil || create {
		return
	}
	if ref.db != "" {
		if sdb, ok := r.srv.storage.Database(ref.db); ok {
			r.objects(f, sdb.Snapshot(), ref, write, depth)
		}
		return
	}
	// The database is not known: a view of that name in any database
	// counts.
	for _, sdb := range r.srv.storage.Databases() {
		r.objects(f, sdb.Snapshot(), lockedTable{db: strings.ToLower(sdb.Name()), name: ref.name}, write, depth)
	}
}

// objects adds to f what table ref of catalog cat stands for beyond its
// name: a view's tables; for a write where triggers or foreign keys may
// reach other tables, every table.
func (r footprintReader) objects(f *footprint, cat *storage.Catalog, ref lockedTable, write bool, depth int) {
	if o, ok := cat.Object(objView, ref.name); ok {
		if depth >= maxViewDepth {
			f.all, f.allWrite = true, f.allWrite || write
			return
		}
		stmt, _, err := sqlparser.ParseOne(context.Background(), viewDef(o).TextDefinition)
		if err != nil {
			f.all, f.allWrite = true, f.allWrite || write
			return
		}
		// The view's tables are named from its own database.
		footprintReader{srv: r.srv, sess: r.sess, db: ref.db}.add(f, stmt, write, depth+1)
		return
	}
	if write && !f.allWrite && hasTriggersOrForeignKeys(cat) {
		f.all, f.allWrite = true, true
	}
}

// hasTriggersOrForeignKeys reports whether a database has a trigger or a
// foreign key: a write there may read or write tables its statement does
// not name.
func hasTriggersOrForeignKeys(cat *storage.Catalog) bool {
	if cat.HasObjects(objTrigger) {
		return true
	}
	found := false
	cat.EachTable(func(t *storage.Table) bool {
		ti, err := tabledef.Decode(t.Def())
		found = err != nil || len(ti.Meta.ForeignKeys) > 0
		return !found
	})
	return found
}

// lockList reads LOCK TABLES' list: each table (a view: its tables too)
// with its mode, WRITE where a table is named twice.
func (r footprintReader) lockList(lt *sqlparser.LockTables) map[lockedTable]lockMode {
	want := map[lockedTable]lockMode{}
	for _, t := range lt.Tables {
		mode := lockRead
		if t.Lock == sqlparser.LockWrite || t.Lock == sqlparser.LockLowPriorityWrite {
			mode = lockWrite
		}
		ate, ok := t.Table.(*sqlparser.AliasedTableExpr)
		if !ok {
			continue
		}
		tn, ok := ate.Expr.(sqlparser.TableName)
		if !ok {
			continue
		}
		var f footprint
		r.use(&f, tn.DbQualifier.String(), tn.Name.String(), false, false, 0)
		for _, u := range f.uses {
			if want[u.ref] < mode {
				want[u.ref] = mode
			}
		}
	}
	return want
}

// tableLockStatement runs LOCK TABLES: the planner first, for its checks
// (the LOCK TABLES and SELECT privileges, 1044 and 1142; the tables exist,
// 1146), then the locks. It reports where the statement ends in q and
// whether it was one. With whole, q must hold it alone.
func (h protocolHandler) tableLockStatement(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	stmt, end, err := sqlparser.ParseOne(ctx, q)
	if err != nil {
		return 0, false, nil
	}
	lt, ok := stmt.(*sqlparser.LockTables)
	if !ok || whole && strings.TrimSpace(q[end:]) != "" {
		return 0, false, nil
	}
	if end < len(q) && q[end] == ';' {
		end++
	}
	writes := false
	for _, t := range lt.Tables {
		writes = writes || t.Lock == sqlparser.LockWrite || t.Lock == sqlparser.LockLowPriorityWrite
	}
	id := c.ConnectionID
	// The locks held are given back first, whatever comes next.
	h.srv.tables.unlock(id)
	if err := h.Handler.ComQuery(ctx, c, q[:end], func(*sqltypes.Result, bool) error { return nil }); err != nil {
		return end, true, err
	}
	sess := h.srv.session(id)
	if sess == nil {
		return end, true, nil
	}
	sess.ClearWarnings()
	if writes {
		if node := h.srv.cluster.node(); node != nil && node.Role() != repl.RolePrimary {
			return end, true, errReadOnly()
		}
		if h.srv.readLock.heldBy(id) {
			return end, true, errReadLocked()
		}
	}
	want := footprintReader{srv: h.srv, sess: sess}.lockList(lt)
	sctx := sql.NewContext(ctx, sql.WithSession(sess))
	return end, true, h.srv.tables.lock(ctx, id, want, sess.tableLockWait(sctx))
}

// isLockTables reports whether q is LOCK TABLES.
func isLockTables(q string) bool {
	w := sqltext.NewReader(q)
	if !sqltext.IsKeyword(w.Next(), "LOCK") {
		return false
	}
	second := w.Next()
	return sqltext.IsKeyword(second, "TABLES") || sqltext.IsKeyword(second, "TABLE")
}

// tableLockWait is the session's lock_wait_timeout: how long a statement
// waits for a table lock.
func (s *Session) tableLockWait(ctx *sql.Context) time.Duration {
	if s == nil {
		return 31536000 * time.Second
	}
	v, err := s.GetSessionVariable(ctx, "lock_wait_timeout")
	if n, ok := v.(int64); err == nil && ok {
		return time.Duration(n) * time.Second
	}
	return 31536000 * time.Second
}
