package sqlserver

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/storage"
)

// Writes by primary key, and BEGIN and COMMIT, skip go-mysql-server's
// planner as reads by key do (pointget.go, rangeplan.go).
//
// The prepared statements compiled here are
//
//	BEGIN | START TRANSACTION | COMMIT
//	UPDATE [db.]t SET col = expr [, …] WHERE pk1 = ? [AND pk2 = ? …]
//	DELETE FROM [db.]t WHERE pk1 = ? [AND pk2 = ? …]
//	UPDATE [db.]t SET col = expr [, …] WHERE <ranges of one column> [ORDER BY it] [LIMIT n]
//	DELETE FROM [db.]t WHERE <ranges of one column> [ORDER BY it] [LIMIT n]
//
// where the WHERE clause names every column of the primary key once, or
// is ranges of a column that leads the primary key or an index in the
// forms of range reads (rangeplan.go: `c BETWEEN ? AND ?`, `c IN (?, …)`,
// comparisons, their OR; rangeWrite), and
// expr is a parameter, a literal, or `c + n` / `c - n` of a signed integer
// column c with a parameter or integer literal n. They run on the storage
// transaction as the planner's execution does: in the session's
// transaction, or in autocommit mode in one of their own committed at the
// end; the row is locked for the write (waiting on others' locking reads)
// before it is changed; the OK packet, ROW_COUNT() and FOUND_ROWS() are
// the planner's. Whatever could make the planner answer differently goes
// the usual way, which also produces every error and warning: a value that
// does not convert exactly to its column, an arithmetic overflow, a
// change of a primary or unique key, a table with triggers, foreign keys,
// CHECK constraints, generated or ON UPDATE columns, a temporary table, a
// read-only transaction or server, a missing privilege, a commit that
// would wait for secondaries, a BEGIN inside a transaction.
// TestKeyWritesMatchThePlanner compares the two paths on random statements.

type writeKind int

const (
	writeBegin writeKind = iota + 1
	writeCommit
	writeUpdate
	writeDelete
	writeInsert
)

// writePlan is a compiled write.
type writePlan struct {
	kind      writeKind
	db, table string
	keyCols   []string
	keyArgs   []string
	// rng: the WHERE clause as ranges of one column (rangeplan.go's
	// forms), for an UPDATE or DELETE not by the whole primary key.
	rng  *selectPlan
	sets []setSpec  // UPDATE's assignments, INSERT's ON DUPLICATE KEY UPDATE
	cols []string   // INSERT: the columns given; nil: all of them, in order
	rows [][]string // INSERT: the parameters of each row, in cols' order
	// lits: INSERT: the values of literals written in its rows, under
	// the names rows give them (literal)
	lits map[string]*querypb.BindVariable
	// folded: the rows of a folded INSERT, whose rows all name the first
	// row's parameters (textfold.go; set on a statement's own copy).
	folded *foldedRows
	// checked: the checks of the table written, kept while the
	// definitions stay (a plan belongs to one connection).
	checked targetCache
}

// setSpec is one assignment of an UPDATE: col = arg | literal | src ± n.
type setSpec struct {
	col  string
	arg  string      // a parameter, "" otherwise
	lit  *ast.SQLVal // a literal, nil otherwise
	src  string      // c of c ± n, "" otherwise
	neg  bool        // c - n
	nArg string      // n as a parameter
	nLit int64       // n as a literal
	ins  string      // ON DUPLICATE KEY UPDATE col = VALUES(ins), "" otherwise
}

// parseWritePlan returns the compiled form of a write, or nil.
func parseWritePlan(query string) *writePlan {
	switch strings.ToUpper(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(query), ";"))) {
	case "BEGIN", "START TRANSACTION", "BEGIN WORK":
		return &writePlan{kind: writeBegin}
	case "COMMIT", "COMMIT WORK":
		return &writePlan{kind: writeCommit}
	}
	stmt, err := ast.Parse(query)
	if err != nil {
		return nil
	}
	switch s := stmt.(type) {
	case *ast.Update:
		if s.With != nil || len(s.TableExprs) != 1 || s.Where == nil || s.Ignore != "" || len(s.Returning) > 0 {
			return nil
		}
		p := &writePlan{kind: writeUpdate}
		if !p.target(s.TableExprs[0]) || !p.where(s.Where.Expr) || !p.orderLimit(s.OrderBy, s.Limit) {
			return nil
		}
		for _, e := range s.Exprs {
			set, ok := parseSet(e)
			if !ok {
				return nil
			}
			p.sets = append(p.sets, set)
		}
		return p
	case *ast.Insert:
		var rows ast.Values
		switch r := s.Rows.(type) {
		case ast.Values:
			rows = r
		case *ast.AliasedValues:
			if !r.As.IsEmpty() || len(r.Columns) > 0 {
				return nil
			}
			rows = r.Values
		default:
			return nil
		}
		if s.Action != ast.InsertStr || s.Ignore != "" || s.With != nil || len(s.Partitions) > 0 ||
			len(rows) == 0 || len(rows) > maxInsertRows || len(s.Returning) > 0 {
			return nil
		}
		p := &writePlan{kind: writeInsert, db: s.Table.DbQualifier.String(), table: s.Table.Name.String()}
		for _, c := range s.Columns {
			p.cols = append(p.cols, c.String())
		}
		for _, row := range rows {
			if len(row) != len(rows[0]) || len(s.Columns) > 0 && len(row) != len(s.Columns) {
				return nil
			}
			args := make([]string, len(row))
			for i, e := range row {
				arg, ok := argName(e)
				if !ok {
					if arg, ok = p.literal(e); !ok {
						return nil
					}
				}
				args[i] = arg
			}
			p.rows = append(p.rows, args)
		}
		for _, e := range s.OnDup {
			set, ok := parseUpsertSet(e)
			if !ok {
				return nil
			}
			p.sets = append(p.sets, set)
		}
		return p
	case *ast.Delete:
		if s.With != nil || len(s.TableExprs) != 1 || len(s.Targets) > 0 || s.Where == nil || s.Partitions != nil || len(s.Returning) > 0 {
			return nil
		}
		p := &writePlan{kind: writeDelete}
		if !p.target(s.TableExprs[0]) || !p.where(s.Where.Expr) || !p.orderLimit(s.OrderBy, s.Limit) {
			return nil
		}
		return p
	}
	return nil
}

func (p *writePlan) target(te ast.TableExpr) bool {
	tn, ok := plainTable(te)
	if !ok {
		return false
	}
	p.db, p.table = tn.DbQualifier.String(), tn.Name.String()
	return true
}

// where reads pk1 = ? AND pk2 = ? … (pointPlan's rule), or ranges of one
// column (selectPlan's), or both: which applies depends on the table.
func (p *writePlan) where(e ast.Expr) bool {
	pp := &pointPlan{}
	if pp.conjuncts(e) {
		p.keyCols, p.keyArgs = pp.keyCols, pp.keyArgs
	}
	if r := (&selectPlan{limitN: -1}); r.disjuncts(e) && len(r.ranges) > 0 {
		p.rng = r
	}
	return p.keyCols != nil || p.rng != nil
}

// orderLimit reads an UPDATE's or DELETE's ORDER BY and LIMIT: ORDER BY the
// range's column, ascending, and LIMIT n or LIMIT ? (rangeWrite checks
// the column). Either makes the statement a range write only.
func (p *writePlan) orderLimit(order ast.OrderBy, limit *ast.Limit) bool {
	if len(order) == 0 && limit == nil {
		return true
	}
	if p.rng == nil || len(order) > 1 {
		return false
	}
	p.keyCols, p.keyArgs = nil, nil
	for _, o := range order {
		c, ok := o.Expr.(*ast.ColName)
		if !ok || !c.Qualifier.IsEmpty() || o.Direction == ast.DescScr {
			return false
		}
		p.rng.order = append(p.rng.order, orderSpec{col: c.Name.String()})
	}
	return p.rng.parseLimit(limit)
}

func parseSet(e *ast.AssignmentExpr) (setSpec, bool) {
	if !e.Name.Qualifier.IsEmpty() {
		return setSpec{}, false
	}
	s := setSpec{col: e.Name.Name.String()}
	switch x := e.Expr.(type) {
	case *ast.SQLVal:
		switch x.Type {
		case ast.ValArg:
			s.arg = strings.TrimPrefix(string(x.Val), ":")
		case ast.IntVal, ast.StrVal:
			s.lit = x
		default:
			return setSpec{}, false
		}
		return s, true
	case *ast.BinaryExpr:
		if x.Operator != ast.PlusStr && x.Operator != ast.MinusStr {
			return setSpec{}, false
		}
		c, ok := x.Left.(*ast.ColName)
		if !ok || !c.Qualifier.IsEmpty() {
			return setSpec{}, false
		}
		s.src, s.neg = c.Name.String(), x.Operator == ast.MinusStr
		v, ok := x.Right.(*ast.SQLVal)
		if !ok {
			return setSpec{}, false
		}
		switch v.Type {
		case ast.ValArg:
			s.nArg = strings.TrimPrefix(string(v.Val), ":")
		case ast.IntVal:
			n, err := strconv.ParseInt(string(v.Val), 10, 64)
			if err != nil {
				return setSpec{}, false
			}
			s.nLit = n
		default:
			return setSpec{}, false
		}
		return s, true
	}
	return setSpec{}, false
}

// literal names an integer or string literal of an INSERT's row (a
// prepared statement's text keeps them), kept in p.lits as a parameter
// would be bound.
func (p *writePlan) literal(e ast.Expr) (string, bool) {
	v, ok := e.(*ast.SQLVal)
	if !ok {
		return "", false
	}
	bv, ok := literalBindVar(v)
	if !ok {
		return "", false
	}
	if p.lits == nil {
		p.lits = map[string]*querypb.BindVariable{}
	}
	name := "\x00lit" + strconv.Itoa(len(p.lits))
	p.lits[name] = bv
	return name, true
}

// parseUpsertSet reads an assignment of ON DUPLICATE KEY UPDATE: an
// UPDATE's forms (parseSet), or col = VALUES(c), the value the row would
// have inserted into c.
func parseUpsertSet(e *ast.AssignmentExpr) (setSpec, bool) {
	v, ok := e.Expr.(*ast.ValuesFuncExpr)
	if !ok {
		return parseSet(e)
	}
	if !e.Name.Qualifier.IsEmpty() || v.Name == nil || !v.Name.Qualifier.IsEmpty() {
		return setSpec{}, false
	}
	return setSpec{col: e.Name.Name.String(), ins: v.Name.Name.String()}, true
}

// counter is the Com_ status variable the planner counts a statement of
// kind k in ("" for BEGIN and COMMIT, which it does not count).
func (k writeKind) counter() string {
	switch k {
	case writeInsert:
		return "Com_insert"
	case writeUpdate:
		return "Com_update"
	case writeDelete:
		return "Com_delete"
	}
	return ""
}

// tryWrite answers a compiled write; ok false sends it the usual way. ctx
// is the statement's, in the process list (run).
func (g *pointGets) tryWrite(ctx *sql.Context, c *mysql.Conn, prep *mysql.PrepareData, p *writePlan, callback func(*sqltypes.Result) error) (bool, error) {
	sess := g.srv.session(c.ConnectionID)
	if sess == nil || len(sess.temp) > 0 {
		return false, nil
	}
	ok, err := g.write(ctx, c, prep, p, sess, callback)
	if ok {
		g.written.Add(1)
		countStatement(ctx, p.kind.counter())
	}
	return ok, err
}

func (g *pointGets) write(ctx *sql.Context, c *mysql.Conn, prep *mysql.PrepareData, p *writePlan, sess *Session, callback func(*sqltypes.Result) error) (bool, error) {
	if v, err := sess.GetSessionVariable(ctx, "transaction_read_only"); err != nil || boolValue(v) {
		return false, nil // the planner refuses the writes (1792)
	}
	switch p.kind {
	case writeBegin:
		if sess.txn != nil || sess.GetTransaction() != nil {
			return false, nil // the open transaction commits first
		}
		tx, err := sess.StartTransaction(ctx, sql.ReadWrite)
		if err != nil {
			return false, nil
		}
		sess.ClearWarnings()
		sess.SetTransaction(tx)
		sess.SetIgnoreAutoCommit(true)
		noRows(sess)
		return true, callback(&sqltypes.Result{})
	case writeCommit:
		if !g.commitsWithoutWait(ctx, sess) {
			return false, nil
		}
		sess.ClearWarnings()
		if tx := sess.GetTransaction(); tx != nil {
			if err := sess.CommitTransaction(ctx, tx); err != nil {
				return true, err
			}
		} else if sess.txn != nil {
			return false, nil
		}
		sess.SetIgnoreAutoCommit(false)
		sess.SetTransaction(nil)
		noRows(sess)
		return true, callback(&sqltypes.Result{})
	}
	if p.kind == writeInsert && len(p.sets) > 0 {
		return g.tryUpsert(ctx, c, prep, p, sess, callback)
	}
	if p.kind == writeInsert {
		return g.tryInsert(ctx, prep, p, sess, callback)
	}
	return g.tryRowWrite(ctx, c, prep, p, sess, callback)
}

// noRows sets ROW_COUNT() and FOUND_ROWS() as the planner does after a
// statement that returns no rows and changes none (BEGIN, COMMIT).
func noRows(sess *Session) {
	sess.SetLastQueryInfoInt(sql.RowCount, -1)
	sess.SetLastQueryInfoInt(sql.FoundRows, 0)
}

// commitsWithoutWait says whether a commit of the session returns at once
// (no semi-synchronous wait, which the planner's path runs cancellably).
func (g *pointGets) commitsWithoutWait(ctx *sql.Context, sess *Session) bool {
	return sess.cluster.node() == nil || !sess.mysql || sess.syncRequest(ctx).Level == repl.SyncOff
}

// writeTarget is the table a compiled write writes, checked for what only
// the planner handles.
type writeTarget struct {
	db       *storage.DB
	def      *storage.TableDef
	ti       *tabledef.Info
	sch      sql.Schema
	implicit bool // autocommit: the statement runs in a transaction of its own
}

func (g *pointGets) writeTarget(ctx *sql.Context, sess *Session, p *writePlan, priv sql.PrivilegeType) (writeTarget, bool) {
	var w writeTarget
	if g.srv.storage.ReadOnly() {
		return w, false
	}
	w.implicit = sess.txn == nil
	if w.implicit {
		if sess.GetTransaction() != nil || !sess.autocommit() || !g.commitsWithoutWait(ctx, sess) {
			return w, false
		}
	} else if sess.txn.readOnly || sess.writing > 0 {
		return w, false
	}
	dbName := p.db
	if dbName == "" {
		dbName = sess.GetCurrentDatabase()
	}
	if dbName == "" {
		return w, false
	}
	db, found := g.srv.storage.Database(dbName)
	if !found {
		return w, false
	}
	// The checks read the definitions of the committed catalog or the
	// transaction's, without starting the transaction when they fail.
	cat := sess.defsIn(db)
	tc := &p.checked
	if tc.db != db || tc.defs != cat.Defs() {
		*tc = targetCache{db: db, defs: cat.Defs()}
		tc.def, tc.ti, tc.sch, tc.ok = plainTarget(cat, db, p)
	}
	if !tc.ok {
		return w, false
	}
	def, ti, sch := tc.def, tc.ti, tc.sch
	mdb := g.srv.engine.Analyzer.Catalog.MySQLDb
	subject := sql.PrivilegeCheckSubject{Database: db.Name(), Table: def.Name}
	if !mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(subject, priv)) {
		return w, false
	}
	if p.kind != writeInsert && !mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(subject, sql.PrivilegeType_Select)) {
		return w, false
	}
	w.db, w.def, w.ti, w.sch = db, def, ti, sch
	return w, true
}

// targetCache keeps what writeTarget works out from the definitions
// alone (plainTarget) for the database and the definitions of the catalog
// (storage.Catalog.Defs) it was worked out on: any DDL, or another
// database, works it out again. Privileges are checked every time.
type targetCache struct {
	db   *storage.DB
	defs uint64
	ok   bool
	def  *storage.TableDef
	ti   *tabledef.Info
	sch  sql.Schema
}

// plainTarget returns the table p writes in cat, and whether it has
// nothing that only the planner handles: no CHECK constraint, foreign key
// (of its own or another table's on it), trigger, generated column or ON
// UPDATE column an UPDATE would set; a primary key.
func plainTarget(cat *storage.Catalog, db *storage.DB, p *writePlan) (*storage.TableDef, *tabledef.Info, sql.Schema, bool) {
	t, found := cat.Table(p.table)
	if !found {
		return nil, nil, nil, false
	}
	def := t.Def()
	ti, err := tabledef.Decode(def)
	if err != nil || len(def.PK) == 0 || len(ti.Meta.Checks) > 0 || len(ti.Meta.ForeignKeys) > 0 {
		return nil, nil, nil, false
	}
	if cat.HasObjects(objTrigger) || referenced(cat, def.Name) {
		return nil, nil, nil, false
	}
	sch := ti.SchemaIn(db.Name()).Schema
	for _, col := range sch {
		if col.Virtual || col.Generated != nil || (p.kind == writeUpdate && col.OnUpdate != nil) {
			return nil, nil, nil, false
		}
	}
	return def, ti, sch, true
}

func (g *pointGets) tryRowWrite(ctx *sql.Context, c *mysql.Conn, prep *mysql.PrepareData, p *writePlan, sess *Session, callback func(*sqltypes.Result) error) (bool, error) {
	priv := sql.PrivilegeType_Delete
	if p.kind == writeUpdate {
		priv = sql.PrivilegeType_Update
	}
	w, ok := g.writeTarget(ctx, sess, p, priv)
	if !ok {
		return false, nil
	}
	db, def, sch, implicit := w.db, w.def, w.sch, w.implicit
	key, ok := primaryKey(ctx, sch, len(def.PK), p.keyCols, p.keyArgs, prep.BindVars)
	if !ok {
		if p.rng != nil {
			return g.rangeWrite(ctx, c, prep, p, sess, w, callback)
		}
		return false, nil
	}
	if implicit {
		return g.rowWriteAlone(ctx, c, prep, p, sess, w, key, callback)
	}
	// The new row of an UPDATE, worked out on the row as the transaction
	// sees it; nothing is written before every value is known to convert.
	tx := sess.pointTx(db)
	st, found := tx.Meta().Table(p.table)
	if !found || st.Def() != def {
		return false, nil
	}
	old, found, err := tx.Get(st, storage.KeyRow(key))
	if err != nil {
		return true, sess.lockError(ctx, err)
	}
	var oldVals, newVals []any
	if found {
		oldVals = old.Values()
	}
	if found && p.kind == writeUpdate {
		if newVals, ok = updatedRow(ctx, sch, def, p, oldVals, prep.BindVars); !ok {
			return false, nil
		}
	}

	sess.ClearWarnings()
	changed := false
	switch {
	case !found:
	case p.kind == writeDelete:
		if err := tx.LockRowForWrite(ctx, st, old, sess.lockWaitTimeout(ctx)); err != nil {
			return true, sess.lockError(ctx, err)
		}
		if err := tx.DeletePoint(st, old); err != nil {
			return true, sess.lockError(ctx, err)
		}
		changed = true
	default:
		equal, err := sql.Row(oldVals).Equals(ctx, sql.Row(newVals), sch)
		if err != nil {
			return false, nil
		}
		if !equal {
			if err := tx.LockRowForWrite(ctx, st, old, sess.lockWaitTimeout(ctx)); err != nil {
				return true, sess.lockError(ctx, err)
			}
			if err := tx.UpdatePoint(st, old, newVals); err != nil {
				return true, sess.lockError(ctx, err)
			}
			changed = true
		}
	}
	return true, callback(rowWriteResult(c, p, sess, found, changed))
}

// rowWriteAlone runs an UPDATE or DELETE by primary key in autocommit mode,
// a transaction of its own, without one: the change is worked out on the
// committed row and committed with storage's CommitRow, which applies it
// once. When another commit wrote the row in between, the change is worked
// out again on the newest row, as MySQL's UPDATE reads the newest committed
// row once it holds the row's lock: such a statement never fails with a
// write conflict (1213).
func (g *pointGets) rowWriteAlone(ctx *sql.Context, c *mysql.Conn, prep *mysql.PrepareData, p *writePlan, sess *Session, w writeTarget, key []any, callback func(*sqltypes.Result) error) (bool, error) {
	// locker holds the row's write lock, taken before the first commit
	// attempt (it waits for another transaction's SELECT … FOR UPDATE).
	var locker *storage.LockOwner
	var end func() // its listing in INNODB_TRX
	defer func() {
		if locker != nil {
			locker.Release()
		}
		if end != nil {
			end()
		}
	}()
	for attempt := 0; ; attempt++ {
		if attempt == maxRowAttempts {
			return false, nil // the row keeps changing: the planner's way
		}
		// The row is read from the committed catalog without freezing
		// it, so that the commit can change it in place (DB.Read); t is
		// kept for its definition only.
		var t *storage.Table
		var old *storage.Row
		ok, found := false, false
		w.db.Read(func(cat *storage.Catalog) {
			if t, ok = cat.Table(p.table); ok && t.Def() == w.def {
				old, found = t.Get(storage.KeyRow(key))
			}
		})
		if !ok || t.Def() != w.def {
			return false, nil
		}
		kind := storage.OpDelete
		var oldVals, newVals []any
		if found {
			oldVals = old.Values()
		}
		if found && p.kind == writeUpdate {
			kind = storage.OpUpdate
			if newVals, ok = updatedRow(ctx, w.sch, w.def, p, oldVals, prep.BindVars); !ok {
				return false, nil
			}
			equal, err := sql.Row(oldVals).Equals(ctx, sql.Row(newVals), w.sch)
			if err != nil {
				return false, nil
			}
			if equal { // matched, not written
				sess.ClearWarnings()
				return true, callback(rowWriteResult(c, p, sess, true, false))
			}
		}
		sess.ClearWarnings()
		if !found {
			return true, callback(rowWriteResult(c, p, sess, false, false))
		}
		if locker == nil {
			locker = g.srv.storage.NewLockOwner()
			// Listed in INNODB_TRX once it waits for the lock.
			locker.SetOnWait(func() {
				if end == nil {
					end = sess.listAlone(locker, nil)
				}
			})
			if err := w.db.LockRowForWrite(ctx, locker, t, old, sess.lockWaitTimeout(ctx)); err != nil {
				return true, sess.lockError(ctx, err)
			}
		}
		done := sess.commitTimer(true, true)
		lsn, err := w.db.CommitRow(storage.RowChange{Table: t, Seen: old, Kind: kind, Vals: newVals, Note: sess})
		if errors.Is(err, storage.ErrStale) {
			continue
		}
		if err == nil {
			done()
			if sess != nil {
				sess.causal.noteDB(sess.engine, w.db.Name(), lsn)
			}
		}
		if err != nil {
			return true, mysqlerr.From(err)
		}
		return true, callback(rowWriteResult(c, p, sess, true, true))
	}
}

// maxRowAttempts bounds how often a compiled write works its change out
// again because other commits keep writing the row.
const maxRowAttempts = 8

// updatedRow works out the new row of a compiled UPDATE from old; false
// when a value does not convert exactly (or the statement sets a key
// column), which leaves the statement to the planner.
func updatedRow(ctx *sql.Context, sch sql.Schema, def *storage.TableDef, p *writePlan, old []any, vars map[string]*querypb.BindVariable) ([]any, bool) {
	return updatedRowWith(ctx, sch, def, p.sets, old, nil, vars)
}

// updatedRowWith is updatedRow of the assignments sets, VALUES(c) taking
// c's value in ins (ON DUPLICATE KEY UPDATE: the row that was to be
// inserted).
func updatedRowWith(ctx *sql.Context, sch sql.Schema, def *storage.TableDef, sets []setSpec, old, ins []any, vars map[string]*querypb.BindVariable) ([]any, bool) {
	newVals := append([]any(nil), old...)
	for _, s := range sets {
		pos := sch.IndexOfColName(s.col)
		if pos < 0 || sch[pos].PrimaryKey || inUniqueIndex(def, pos) {
			return nil, false
		}
		v, ok := setValue(ctx, sch, s, old, ins, vars)
		if !ok {
			return nil, false
		}
		if funcs.IsTimeType(sch[pos].Type) && (funcs.TimeBeyondRange(v) || funcs.TimeFraction(v, funcs.TimeDigits(sch[pos].Type))) {
			return nil, false // clamped in silence, or kept, by the conversion (timerange.go)
		}
		out, inRange, err := convertValue(ctx, sch[pos].Type, v)
		if err != nil || inRange != sql.InRange || (out == nil && !sch[pos].Nullable) {
			return nil, false
		}
		if st, ok := sch[pos].Type.(sql.StringType); ok && out != nil {
			if s, ok := out.(string); !ok || int64(len(s)) > st.MaxByteLength() {
				return nil, false
			}
		}
		newVals[pos] = out
	}
	return newVals, true
}

// rowWriteResult is the OK packet of a compiled UPDATE or DELETE that found
// its row or not and changed it or not; it sets ROW_COUNT() and, for an
// UPDATE, FOUND_ROWS() as the planner does.
func rowWriteResult(c *mysql.Conn, p *writePlan, sess *Session, found, changed bool) *sqltypes.Result {
	matched, nchanged := 0, 0
	if found {
		matched = 1
	}
	if changed {
		nchanged = 1
	}
	return writeResult(c, p, sess, matched, nchanged)
}

// writeResult is the OK packet of a compiled UPDATE or DELETE that matched
// and changed so many rows (a DELETE changes what it matches).
func writeResult(c *mysql.Conn, p *writePlan, sess *Session, matched, nchanged int) *sqltypes.Result {
	res := &sqltypes.Result{RowsAffected: uint64(nchanged)}
	if p.kind == writeUpdate {
		if c.Capabilities&mysql.CapabilityClientFoundRows != 0 {
			res.RowsAffected = uint64(matched)
		}
		res.Info = updateInfo(matched, nchanged)
		sess.SetLastQueryInfoInt(sql.FoundRows, int64(matched))
	}
	sess.SetLastQueryInfoInt(sql.RowCount, int64(res.RowsAffected))
	return res
}

// updateInfo is the OK packet's info of an UPDATE, in MySQL's words; an
// UPDATE by key matches at most one row, whose words are made once.
func updateInfo(matched, changed int) string {
	if matched <= 1 && changed <= matched {
		return oneRowInfos[matched][changed]
	}
	return fmt.Sprintf("Rows matched: %d  Changed: %d  Warnings: 0", matched, changed)
}

var oneRowInfos = [2][2]string{
	{"Rows matched: 0  Changed: 0  Warnings: 0"},
	{"Rows matched: 1  Changed: 0  Warnings: 0", "Rows matched: 1  Changed: 1  Warnings: 0"},
}

// referenced says whether a foreign key of some table of the catalog
// names table.
func referenced(cat *storage.Catalog, table string) bool {
	found := false
	cat.EachTable(func(t *storage.Table) bool {
		ti, err := tabledef.Decode(t.Def())
		if err != nil {
			found = true
			return false
		}
		for _, fk := range ti.Meta.ForeignKeys {
			if strings.EqualFold(fk.ParentTable, table) || strings.EqualFold(fk.Table, table) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

func inUniqueIndex(def *storage.TableDef, col int) bool {
	for _, ix := range def.Indexes {
		if !ix.Unique {
			continue
		}
		for _, c := range ix.Cols {
			if c == col {
				return true
			}
		}
	}
	return false
}

// setValue is the value an assignment gives, before conversion to the
// column; false when only the planner can say (a NULL in arithmetic, an
// overflow, a column of another kind).
func setValue(ctx *sql.Context, sch sql.Schema, s setSpec, row, ins []any, vars map[string]*querypb.BindVariable) (any, bool) {
	switch {
	case s.ins != "":
		pos := sch.IndexOfColName(s.ins)
		if pos < 0 || ins == nil {
			return nil, false
		}
		return ins[pos], true
	case s.arg != "":
		bv, ok := vars[s.arg]
		pos := sch.IndexOfColName(s.col)
		if !ok || pos < 0 {
			return nil, false
		}
		if v, err := sqltypes.BindVariableToValue(bv); err == nil && v.IsNull() {
			return nil, true // updatedRowWith checks the column takes it
		}
		return paramValue(bv, sch[pos].Type)
	case s.lit != nil:
		switch s.lit.Type {
		case ast.IntVal:
			n, err := strconv.ParseInt(string(s.lit.Val), 10, 64)
			return n, err == nil
		case ast.StrVal:
			return string(s.lit.Val), true
		}
		return nil, false
	}
	pos := sch.IndexOfColName(s.src)
	if pos < 0 || !types.IsSigned(sch[pos].Type) {
		return nil, false
	}
	cur, ok := funcs.AsInt64(row[pos])
	if !ok || row[pos] == nil {
		return nil, false
	}
	n := s.nLit
	if s.nArg != "" {
		bv, ok := vars[s.nArg]
		if !ok {
			return nil, false
		}
		v, err := sqltypes.BindVariableToValue(bv)
		if err != nil || !v.IsSigned() {
			return nil, false
		}
		if n, err = sqltypes.ToInt64(v); err != nil {
			return nil, false
		}
	}
	if s.neg {
		if n == math.MinInt64 {
			return nil, false
		}
		n = -n
	}
	sum := cur + n
	if (n > 0 && sum < cur) || (n < 0 && sum > cur) {
		return nil, false
	}
	return sum, true
}

// paramValue is a parameter for a column of type typ: an integer as int64
// or uint64, text or bytes as a string for a string column; other kinds,
// and text for a column of another type (a conversion that may warn), are
// left to the planner.
func paramValue(bv *querypb.BindVariable, typ sql.Type) (any, bool) {
	v, err := sqltypes.BindVariableToValue(bv)
	if err != nil || v.IsNull() {
		return nil, false
	}
	switch {
	case v.IsSigned():
		n, err := sqltypes.ToInt64(v)
		return n, err == nil
	case v.IsUnsigned():
		n, err := sqltypes.ToUint64(v)
		return n, err == nil
	case (v.IsText() || v.Type() == sqltypes.VarBinary) && types.IsTextOnly(typ):
		return v.ToString(), true
	}
	return nil, false
}

// bulkRows: a compiled INSERT of more rows writes them into its
// transaction's view at once (Tx.Insert), not as pending point writes, which
// are brought into the view every few dozen (storage.maxPending) and each
// looked up among the others.
const bulkRows = 64

// maxInsertRows bounds the rows of a compiled INSERT … VALUES; a longer
// one goes to the planner.
const maxInsertRows = 1000

// tryInsert answers INSERT INTO t [(cols)] VALUES (?, …), (?, …) …: every
// other column takes its literal default (or NULL), an AUTO_INCREMENT
// column left out, NULL or 0 takes the next value, as
// expression.AutoIncrement does. A statement of several rows writes all of
// them or none: one meeting a duplicate key sends the statement to the
// planner (which says which key, in MySQL's words) with nothing written;
// on a table with an AUTO_INCREMENT column, either each of its rows takes
// the next value (consecutive values, none taken for a statement the
// planner then runs) or each gives its own (the counter moved past each
// as it is written); a mix is the planner's.
func (g *pointGets) tryInsert(ctx *sql.Context, prep *mysql.PrepareData, p *writePlan, sess *Session, callback func(*sqltypes.Result) error) (bool, error) {
	w, ok := g.writeTarget(ctx, sess, p, sql.PrivilegeType_Insert)
	if !ok {
		return false, nil
	}
	def, sch := w.def, w.sch
	for _, ix := range def.Indexes {
		if ix.Unique {
			return false, nil // a duplicate would have taken an AUTO_INCREMENT value
		}
	}
	auto := -1
	for pos, col := range sch {
		if col.AutoIncrement {
			auto = pos
		}
	}
	rows := make([][]any, len(p.rows))
	generated := false
	for r, args := range p.rows {
		vals, gen, ok := insertedRow(ctx, sch, p.cols, args, p.rowVars(prep, r), p.lits, auto)
		if !ok || r > 0 && gen != generated {
			return false, nil // values taken for some rows, given for others
		}
		rows[r], generated = vals, gen
	}

	// In autocommit mode a row is committed on its own with CommitRow,
	// checked against the committed table, and several rows in a
	// transaction of their own; in a transaction they go into its view.
	var tx *storage.Tx
	var st *storage.Table
	found := false
	switch {
	case !w.implicit:
		tx = sess.pointTx(w.db)
		st, found = tx.Meta().Table(p.table)
	case len(rows) == 1:
		st, found = w.db.Latest().Table(p.table) // its definition and counters
	default:
		tx = sess.streaming(w.db.BeginDeferred())
		defer sess.listAlone(nil, tx)()
		st, found = tx.Meta().Table(p.table)
	}
	if !found || st.Def() != def {
		if w.implicit && tx != nil {
			tx.Rollback()
		}
		return false, nil
	}
	var first int64
	if auto >= 0 {
		var next uint64
		if generated {
			next = st.TakeAutos(uint64(len(rows)))
		}
		for _, vals := range rows {
			v := vals[auto]
			if generated {
				v, next = next, next+1
			} else if n := v.(int64); n > 0 && len(rows) == 1 {
				st.BumpAuto(uint64(n) + 1) // several rows: as each is written
			}
			out, ok := convertExact(ctx, sch[auto].Type, v)
			if !ok {
				// The counter ran past the column's range: what to
				// do is the planner's.
				if w.implicit && tx != nil {
					tx.Rollback()
				}
				return false, nil
			}
			vals[auto] = out
		}
		first, _ = funcs.AsInt64(rows[0][auto])
	}
	sess.ClearWarnings()
	given := -1 // the AUTO_INCREMENT column, when the rows give its values
	if auto >= 0 && !generated && len(rows) > 1 {
		given = auto
	}
	if planner, err := writeInsertRows(ctx, w, tx, st, rows, given); planner || err != nil {
		if planner {
			return false, nil
		}
		if w.implicit {
			return true, mysqlerr.From(err)
		}
		return true, sess.lockError(ctx, err)
	}
	res := &sqltypes.Result{RowsAffected: uint64(len(rows))}
	if auto >= 0 {
		res.InsertID = uint64(first)
		if generated {
			sess.SetLastQueryInfoInt(sql.LastInsertId, first)
		}
	}
	if len(rows) > 1 {
		res.Info = fmt.Sprintf("Records: %d  Duplicates: 0  Warnings: 0", len(rows))
	}
	sess.SetLastQueryInfoInt(sql.RowCount, int64(len(rows)))
	return true, callback(res)
}

// insertedRow works out the values of one row of a compiled INSERT: the
// parameters args of the columns cols (bound in vars, or literals in
// lits), the literal defaults of the others.
// The AUTO_INCREMENT column's (auto; -1: none) is left as given, an int64,
// or nil with generated set when the row takes the next value. False: the
// row is the planner's (a value that does not convert exactly, a missing
// value without a default, a default that is an expression).
func insertedRow(ctx *sql.Context, sch sql.Schema, cols, args []string, vars, lits map[string]*querypb.BindVariable, auto int) (vals []any, generated, ok bool) {
	vals = make([]any, len(sch))
	given := make([]bool, len(sch))
	if cols == nil && len(args) != len(sch) {
		return nil, false, false // the planner's 1136
	}
	for i := range args {
		pos := i
		if cols != nil {
			pos = sch.IndexOfColName(cols[i])
		}
		if pos < 0 || given[pos] {
			return nil, false, false
		}
		given[pos] = true
		bv, ok := vars[args[i]]
		if !ok {
			if bv, ok = lits[args[i]]; !ok {
				return nil, false, false
			}
		}
		v, err := sqltypes.BindVariableToValue(bv)
		if err != nil {
			return nil, false, false
		}
		if v.IsNull() {
			if pos != auto && !sch[pos].Nullable {
				return nil, false, false // the planner's error or warning
			}
			continue // NULL, or the next AUTO_INCREMENT value
		}
		raw, ok := paramValue(bv, sch[pos].Type)
		if !ok {
			return nil, false, false
		}
		vals[pos] = raw
	}
	for pos, col := range sch {
		if pos == auto {
			continue
		}
		if !given[pos] {
			if col.Default == nil {
				if !col.Nullable {
					return nil, false, false // no default: the planner's error or implicit value
				}
				continue
			}
			if !col.Default.IsLiteral() {
				return nil, false, false
			}
			d, err := col.Default.Eval(ctx, nil)
			if err != nil {
				return nil, false, false
			}
			vals[pos] = d
		}
		if vals[pos] == nil {
			if !col.Nullable {
				return nil, false, false
			}
			continue
		}
		out, ok := convertExact(ctx, col.Type, vals[pos])
		if !ok {
			return nil, false, false
		}
		vals[pos] = out
	}
	if auto < 0 {
		return vals, false, true
	}
	v := vals[auto]
	if v != nil {
		n, isInt := v.(int64)
		if !isInt {
			return nil, false, false
		}
		switch {
		case n < 0:
		case n == 0:
			if compat.SQLMode(ctx).ModeEnabled(sql.NoAutoValueOnZero) {
				break
			}
			v = nil
		}
	}
	if _, ok := convertExact(ctx, sch[auto].Type, orZero(v)); !ok {
		return nil, false, false
	}
	vals[auto] = v
	return vals, v == nil, true
}

// writeInsertRows writes the rows of a compiled INSERT to st: in autocommit
// mode one row with CommitRow, several in tx, their own transaction,
// committed here; in a transaction, into tx, the statement undone alone if
// a row fails. planner says the statement goes to the planner with nothing
// written (a duplicate key, a row committed at a key meanwhile, a table
// redefined).
func writeInsertRows(ctx *sql.Context, w writeTarget, tx *storage.Tx, st *storage.Table, rows [][]any, given int) (planner bool, err error) {
	if tx == nil {
		sess := sessionOf(ctx)
		done := sess.commitTimer(true, true)
		var lsn journal.LSN
		lsn, err = w.db.CommitRow(storage.RowChange{Table: st, Kind: storage.OpInsert, Vals: rows[0], Note: sess})
		if err == nil {
			done()
			if sess != nil {
				sess.causal.noteDB(sess.engine, w.db.Name(), lsn)
			}
		}
		if errors.Is(err, storage.ErrStale) {
			// A row with this key was committed since the snapshot (the
			// planner reports the duplicate), or the table was redefined.
			return true, nil
		}
		return isDuplicate(err), err
	}
	var sp storage.Savepoint
	if !w.implicit && len(rows) > 1 {
		sp = tx.Savepoint()
	}
	name := st.Name()
	for _, vals := range rows {
		// The table as Meta has it now: a savepoint, or a row past the
		// pending writes' bound, brings the view up to date.
		t, ok := tx.Meta().Table(name)
		if !ok || t.Def() != st.Def() {
			err = fmt.Errorf("%w: table %s was redefined", storage.ErrConflict, name)
			break
		}
		if given >= 0 {
			// A value given for the AUTO_INCREMENT column moves its
			// counter past it as the row is written, as the planner
			// does row by row: a statement that fails leaves it moved
			// by the rows before the failing one.
			if n, _ := funcs.AsInt64(vals[given]); n > 0 {
				t.BumpAuto(uint64(n) + 1)
			}
		}
		if len(rows) > bulkRows {
			_, err = tx.Insert(name, vals)
		} else {
			_, err = tx.InsertPoint(t, vals)
		}
		if err != nil {
			break
		}
	}
	switch {
	case err != nil && w.implicit:
		tx.Rollback()
		return isDuplicate(err) || errors.Is(err, storage.ErrConflict), err
	case err != nil:
		if len(rows) > 1 {
			tx.RollbackTo(sp)
		}
		return isDuplicate(err), err
	case !w.implicit:
		return false, nil
	}
	err = tx.Commit(ctx)
	return errors.Is(err, storage.ErrConflict), err
}

// tryUpsert answers INSERT … VALUES … ON DUPLICATE KEY UPDATE with the
// assignments of a compiled UPDATE (col = ?, a literal, col ± n) or col =
// VALUES(c): each row is inserted or, when a row has its primary key
// already (one written by an earlier row of the statement included), that
// row is updated as the assignments say, worked out on it. The counts are
// MySQL's: 1 for a row inserted, 2 for a row changed, 0 for one the
// assignments leave as it was (1 with CLIENT_FOUND_ROWS). All rows are
// written or none, as for tryInsert. A table with an AUTO_INCREMENT
// column, a unique secondary index (whose duplicates update too) or an ON
// UPDATE column is the planner's, as is an assignment to a key column.
func (g *pointGets) tryUpsert(ctx *sql.Context, c *mysql.Conn, prep *mysql.PrepareData, p *writePlan, sess *Session, callback func(*sqltypes.Result) error) (bool, error) {
	w, ok := g.writeTarget(ctx, sess, p, sql.PrivilegeType_Insert)
	if !ok {
		return false, nil
	}
	mdb := g.srv.engine.Analyzer.Catalog.MySQLDb
	subject := sql.PrivilegeCheckSubject{Database: w.db.Name(), Table: w.def.Name}
	for _, priv := range []sql.PrivilegeType{sql.PrivilegeType_Update, sql.PrivilegeType_Select} {
		if !mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(subject, priv)) {
			return false, nil
		}
	}
	def, sch := w.def, w.sch
	for _, ix := range def.Indexes {
		if ix.Unique {
			return false, nil
		}
	}
	for _, col := range sch {
		if col.AutoIncrement || col.OnUpdate != nil {
			return false, nil
		}
	}
	rows := make([][]any, len(p.rows))
	for r, args := range p.rows {
		vals, _, ok := insertedRow(ctx, sch, p.cols, args, p.rowVars(prep, r), p.lits, -1)
		if !ok {
			return false, nil
		}
		rows[r] = vals
	}

	affected, ok, err := upsertRows(ctx, c, prep, p, sess, w, rows)
	if !ok || err != nil {
		return ok, err
	}
	sess.SetLastQueryInfoInt(sql.RowCount, int64(affected))
	return true, callback(&sqltypes.Result{RowsAffected: uint64(affected)})
}

// upsertRows writes the rows of tryUpsert and returns the rows affected;
// ok false says the statement goes to the planner with nothing written.
// In autocommit mode the statement is a transaction of its own; when a
// commit wrote one of its keys first (two clients inserting the same new
// key) it fails with 1213 marked as a lost autocommit, which the protocol
// handler runs again on the newest rows (againOnConflict), so that, as in
// MySQL, it does not fail.
func upsertRows(ctx *sql.Context, c *mysql.Conn, prep *mysql.PrepareData, p *writePlan, sess *Session, w writeTarget, rows [][]any) (affected int, ok bool, err error) {
	def, sch := w.def, w.sch
	var tx *storage.Tx
	var sp storage.Savepoint
	if w.implicit {
		tx = sess.streaming(w.db.BeginDeferred())
		defer sess.listAlone(tx.LockOwner(), tx)()
	} else {
		tx = sess.pointTx(w.db)
		if len(rows) > 1 {
			sp = tx.Savepoint()
		}
	}
	// fail ends the statement with nothing of it written: to the planner
	// (err nil), or with err.
	fail := func(err error) (int, bool, error) {
		switch {
		case w.implicit:
			tx.Rollback()
		case len(rows) > 1:
			tx.RollbackTo(sp)
		}
		switch {
		case err == nil || isDuplicate(err):
			return 0, false, nil
		case w.implicit:
			return 0, true, mysqlerr.From(err)
		}
		return 0, true, sess.lockError(ctx, err)
	}
	sess.ClearWarnings()
	foundRows := c.Capabilities&mysql.CapabilityClientFoundRows != 0
	for _, vals := range rows {
		t, ok := tx.Meta().Table(p.table)
		if !ok || t.Def() != def {
			return fail(nil)
		}
		old, found, err := tx.Get(t, storage.KeyRow(vals))
		if err != nil {
			return fail(err)
		}
		if !found {
			if _, err := tx.InsertPoint(t, vals); err != nil {
				return fail(err)
			}
			affected++
			continue
		}
		oldVals := old.Values()
		newVals, ok := updatedRowWith(ctx, sch, def, p.sets, oldVals, vals, prep.BindVars)
		if !ok {
			return fail(nil)
		}
		equal, err := sql.Row(oldVals).Equals(ctx, sql.Row(newVals), sch)
		if err != nil {
			return fail(nil)
		}
		if equal && foundRows {
			affected++
		}
		if equal && sameValues(oldVals, newVals) {
			continue
		}
		// Values that compare equal but differ (a letter's case under a
		// _ci collation) are written and counted unchanged, as the
		// planner's statement does.
		if err := tx.LockRowForWrite(ctx, t, old, sess.lockWaitTimeout(ctx)); err != nil {
			return fail(err)
		}
		if err := tx.UpdatePoint(t, old, newVals); err != nil {
			return fail(err)
		}
		if !equal {
			affected += 2
		}
	}
	if w.implicit {
		if err := tx.Commit(ctx); err != nil {
			sess.conflicted = errors.Is(err, storage.ErrConflict)
			return 0, true, mysqlerr.From(err)
		}
	}
	return affected, true, nil
}

// sameValues reports whether a and b hold the same values, not only ones
// that compare equal: false when unsure.
func sameValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		switch x := a[i].(type) {
		case nil:
			if b[i] != nil {
				return false
			}
		case string:
			if y, ok := b[i].(string); !ok || x != y {
				return false
			}
		case int64, int32, int16, int8, int, uint64, uint32, uint16, uint8, uint, float64, float32, bool:
			if a[i] != b[i] {
				return false
			}
		case []byte:
			if y, ok := b[i].([]byte); !ok || !bytes.Equal(x, y) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isDuplicate reports a duplicate key, which the planner reports in MySQL's
// words.
func isDuplicate(err error) bool {
	var dup *storage.DuplicateError
	return errors.As(err, &dup)
}

func orZero(v any) any {
	if v == nil {
		return int64(0)
	}
	return v
}

// convertExact converts v to typ when the value fits without loss, as the
// planner would store it; false leaves the statement to the planner.
func convertExact(ctx *sql.Context, typ sql.Type, v any) (any, bool) {
	if funcs.IsTimeType(typ) && (funcs.TimeBeyondRange(v) || funcs.TimeFraction(v, funcs.TimeDigits(typ))) {
		return nil, false // clamped in silence, or kept, by the conversion (timerange.go)
	}
	out, inRange, err := convertValue(ctx, typ, v)
	if err != nil || inRange != sql.InRange || out == nil {
		return nil, false
	}
	if st, ok := typ.(sql.StringType); ok {
		s, ok := out.(string)
		if !ok || int64(len(s)) > st.MaxByteLength() {
			return nil, false
		}
	}
	return out, true
}

// convertValue is typ.Convert(ctx, v), without its two copies of a string
// that a character column takes as it is (sameText).
func convertValue(ctx *sql.Context, typ sql.Type, v any) (any, sql.ConvertInRange, error) {
	if s, ok := v.(string); ok && sameText(typ, s) {
		return s, sql.InRange, nil
	}
	return typ.Convert(ctx, v)
}

// sameText reports whether go-mysql-server's conversion of s to typ gives
// s back: typ is a CHAR, VARCHAR or TEXT column (not binary), s is valid
// UTF-8 (the conversion decodes only what is not) and within the column's
// length (in bytes: a string no longer in bytes than the column in
// characters fits whatever its characters). Otherwise the conversion
// decides, and reports what does not fit.
func sameText(typ sql.Type, s string) bool {
	st, ok := typ.(sql.StringType)
	if !ok {
		return false
	}
	switch typ.Type() {
	case sqltypes.Char, sqltypes.VarChar:
		if int64(len(s)) > st.MaxCharacterLength() {
			return false
		}
	case sqltypes.Text:
		if int64(len(s)) > st.MaxByteLength() {
			return false
		}
	default:
		return false
	}
	return utf8.ValidString(s)
}

// strayTransaction reports a transaction open in autocommit mode outside
// START TRANSACTION, which the planner's statement would commit at its
// end: such a statement is left to the planner.
func strayTransaction(sess *Session) bool {
	return sess.txn != nil && !sess.GetIgnoreAutoCommit() && sess.autocommit()
}

// rangeWrite runs a compiled UPDATE or DELETE of the rows whose column
// p.rng.col is in the statement's ranges (rangeplan.go's forms, on a column
// that leads the primary key or an index), on a snapshot as the planner's
// does: the rows matched are read first (each is written once, whatever
// the statement does to the column), every new row is worked out (a value
// the planner would convert otherwise, or warn about, sends the statement
// there with nothing written), the rows to change are locked (waiting on
// others' locking reads), then written. In a transaction it runs on the
// transaction's snapshot, and a failure undoes the statement alone; in
// autocommit mode it is a transaction of its own, begun again on the
// newest rows when a commit wrote one of its rows first, so that, as in
// MySQL, it does not fail with 1213.
func (g *pointGets) rangeWrite(ctx *sql.Context, c *mysql.Conn, prep *mysql.PrepareData, p *writePlan, sess *Session, w writeTarget, callback func(*sqltypes.Result) error) (bool, error) {
	pos := w.sch.IndexOfColName(p.rng.col)
	if pos < 0 || w.sch[pos].Virtual {
		return false, nil
	}
	ix, ok := leadingIndex(w.def, pos)
	if !ok {
		return false, nil
	}
	// ORDER BY is the range's column, whose index gives the rows in its
	// order (ties by primary key, as the planner's stable sort of them);
	// a LIMIT without ORDER BY takes the rows in the primary key's order
	// (the planner's scan), so the range must be on it.
	if o := p.rng.order; len(o) > 0 && !strings.EqualFold(o[0].col, p.rng.col) || len(o) == 0 && p.rng.limited() && ix != -1 {
		return false, nil
	}
	limit, ok := p.rng.limit(prep.BindVars)
	if !ok {
		return false, nil
	}
	for attempt := 0; attempt < maxRowAttempts; attempt++ {
		var tx *storage.Tx
		end := func() {}
		if w.implicit {
			tx = sess.streaming(w.db.Begin()) // its own row locks, released when it ends
			end = sess.listAlone(tx.LockOwner(), tx)
		} else {
			tx = sess.storageTx(w.db)
		}
		t, found := tx.Table(p.table)
		if !found || t.Def() != w.def {
			if w.implicit {
				tx.Rollback()
			}
			end()
			return false, nil
		}
		matched, changes, ok, err := rangeChanges(ctx, p, w, t, ix, pos, limit, prep.BindVars)
		if err != nil || !ok {
			if w.implicit {
				tx.Rollback()
			}
			end()
			return err != nil, err
		}
		sess.ClearWarnings()
		done, err := applyRangeChanges(ctx, sess, p, w, tx, t, changes)
		end()
		if !done {
			continue // autocommit: a commit wrote one of the rows first
		}
		if err != nil {
			return true, err
		}
		return true, callback(writeResult(c, p, sess, matched, len(changes)))
	}
	return false, nil // the rows keep changing: the planner's way
}

// rangeChange is a row a compiled range write changes: its new values
// (nil: deleted).
type rangeChange struct {
	old  *storage.Row
	vals []any
}

// rangeChanges reads the rows of t in p's ranges (the first limit of them
// when limit is not -1) and works out what the statement does to each:
// how many it matched and the ones it changes; false when the planner has
// to say; the context's error when it ended (KILL QUERY).
func rangeChanges(ctx *sql.Context, p *writePlan, w writeTarget, t *storage.Table, ix, pos int, limit int64, vars map[string]*querypb.BindVariable) (int, []rangeChange, bool, error) {
	ranges, ok := p.rng.bind(ctx, t, w.sch[pos].Type, pos, vars)
	if !ok {
		return 0, nil, false, nil
	}
	var matched []*storage.Row
	if err := scanRanges(ctx, t, ix, pos, ranges, false, func(r *storage.Row) { matched = append(matched, r) }); err != nil {
		return 0, nil, false, err
	}
	if limit >= 0 && int64(len(matched)) > limit {
		matched = matched[:limit]
	}
	changes := make([]rangeChange, 0, len(matched))
	var sc scanning
	for _, r := range matched {
		if p.kind == writeDelete {
			changes = append(changes, rangeChange{old: r})
			continue
		}
		if err := sc.step(ctx, 1); err != nil {
			return 0, nil, false, err
		}
		oldVals := r.Values()
		newVals, ok := updatedRow(ctx, w.sch, w.def, p, oldVals, vars)
		if !ok {
			return 0, nil, false, nil
		}
		equal, err := sql.Row(oldVals).Equals(ctx, sql.Row(newVals), w.sch)
		if err != nil {
			return 0, nil, false, nil
		}
		if !equal {
			changes = append(changes, rangeChange{old: r, vals: newVals})
		}
	}
	return len(matched), changes, true, nil
}

// applyRangeChanges locks and writes the changes in tx, then, in autocommit
// mode, commits tx. It returns false when an autocommit transaction is to
// begin again (a commit wrote one of its rows first).
func applyRangeChanges(ctx *sql.Context, sess *Session, p *writePlan, w writeTarget, tx *storage.Tx, t *storage.Table, changes []rangeChange) (bool, error) {
	fail := func(err error) (bool, error) {
		if w.implicit {
			tx.Rollback()
			return true, mysqlerr.From(err)
		}
		return true, sess.lockError(ctx, err)
	}
	for _, ch := range changes {
		if err := tx.LockRowForWrite(ctx, t, ch.old, sess.lockWaitTimeout(ctx)); err != nil {
			return fail(err)
		}
	}
	var sp storage.Savepoint
	if !w.implicit && len(changes) > 0 {
		sp = tx.Savepoint()
	}
	sc := scanning{writes: true}
	for _, ch := range changes {
		err := sc.step(ctx, 1) // KILL QUERY undoes the statement
		switch {
		case err != nil:
		case ch.vals == nil:
			err = tx.DeleteRow(t, ch.old)
		default:
			err = tx.UpdateRow(t, ch.old, ch.vals)
		}
		if err != nil {
			if !w.implicit {
				tx.RollbackTo(sp) // the statement alone is undone
			}
			return fail(err)
		}
	}
	if !w.implicit {
		return true, nil
	}
	err := tx.Commit(ctx)
	if errors.Is(err, storage.ErrConflict) {
		return false, nil
	}
	if err != nil {
		return true, mysqlerr.From(err)
	}
	return true, nil
}
