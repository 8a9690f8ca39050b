package sqlserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/storage"
)

// Point lookups by primary key skip go-mysql-server's planner.
//
// A prepared statement of the form
//
//	SELECT col, … | * FROM [db.]t WHERE pk1 = ? [AND pk2 = ? …]
//
// that names every column of t's primary key with = is answered by one
// B-tree lookup, in the session's transaction (or, in autocommit outside a
// transaction, on the committed state). Planning costs several times the
// lookup itself: this is the statement OLTP applications run most.
// Anything else — another shape, a view, a temporary table, a missing
// privilege, a parameter whose type differs from the column's, a
// transaction that would have to start — goes the usual way, which also
// produces every error message.

// pointPlan is what a prepared statement's text says, checked once.
type pointPlan struct {
	db, table string
	star      bool
	cols      []string // projected column names, when not star
	keyCols   []string
	keyArgs   []string // bind variable names (":v1" → "v1")

	enc atomic.Pointer[encoding] // the result columns, as last made
}

// parsePointPlan returns the plan of a point lookup, or nil.
func parsePointPlan(query string) *pointPlan {
	stmt, err := ast.Parse(query)
	if err != nil {
		return nil
	}
	sel, ok := stmt.(*ast.Select)
	if !ok || sel.With != nil || sel.QueryOpts.Distinct || len(sel.GroupBy) > 0 || sel.Having != nil || len(sel.OrderBy) > 0 ||
		sel.Limit != nil || sel.Lock != "" || sel.Into != nil || sel.Where == nil || len(sel.From) != 1 || len(sel.Window) > 0 {
		return nil
	}
	if sel.QueryOpts.SQLCalcFoundRows {
		return nil
	}
	tn, ok := plainTable(sel.From[0])
	if !ok {
		return nil
	}
	p := &pointPlan{db: tn.DbQualifier.String(), table: tn.Name.String()}
	for _, e := range sel.SelectExprs {
		switch x := e.(type) {
		case *ast.StarExpr:
			if !x.TableName.IsEmpty() || len(sel.SelectExprs) != 1 {
				return nil
			}
			p.star = true
		case *ast.AliasedExpr:
			col, ok := x.Expr.(*ast.ColName)
			if !ok || !x.As.IsEmpty() || !col.Qualifier.IsEmpty() {
				return nil
			}
			p.cols = append(p.cols, col.Name.String())
		default:
			return nil
		}
	}
	if !p.conjuncts(sel.Where.Expr) {
		return nil
	}
	return p
}

// plainTable is the table of a FROM (or UPDATE, DELETE) clause that names
// one table, without alias, hints or AS OF.
func plainTable(te ast.TableExpr) (ast.TableName, bool) {
	at, ok := te.(*ast.AliasedTableExpr)
	if !ok || !at.As.IsEmpty() || at.Hints != nil || at.AsOf != nil {
		return ast.TableName{}, false
	}
	tn, ok := at.Expr.(ast.TableName)
	return tn, ok
}

// primaryKey converts the parameters of pk1 = ? AND … to the key of a row
// of sch (nil where the column is not part of it); false when they do not
// name every column of the key once, or a parameter is not of its
// column's kind.
func primaryKey(ctx *sql.Context, sch sql.Schema, pkLen int, cols, args []string, vars map[string]*querypb.BindVariable) ([]any, bool) {
	if pkLen == 0 || len(cols) != pkLen {
		return nil, false
	}
	key := make([]any, len(sch))
	seen := make([]bool, len(sch))
	for i, name := range cols {
		pos := sch.IndexOfColName(name)
		if pos < 0 || seen[pos] || !sch[pos].PrimaryKey {
			return nil, false
		}
		seen[pos] = true
		bv, ok := vars[args[i]]
		if !ok {
			return nil, false
		}
		val, ok := keyValue(ctx, sch[pos].Type, bv)
		if !ok {
			return nil, false
		}
		key[pos] = val
	}
	return key, true
}

func (p *pointPlan) conjuncts(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.AndExpr:
		return p.conjuncts(x.Left) && p.conjuncts(x.Right)
	case *ast.ComparisonExpr:
		if x.Operator != ast.EqualStr || x.Escape != nil {
			return false
		}
		col, ok := x.Left.(*ast.ColName)
		arg, ok2 := x.Right.(*ast.SQLVal)
		if !ok || !ok2 {
			col, ok = x.Right.(*ast.ColName)
			arg, ok2 = x.Left.(*ast.SQLVal)
		}
		if !ok || !ok2 || arg.Type != ast.ValArg || !col.Qualifier.IsEmpty() {
			return false
		}
		p.keyCols = append(p.keyCols, col.Name.String())
		p.keyArgs = append(p.keyArgs, strings.TrimPrefix(string(arg.Val), ":"))
		return true
	}
	return false
}

// pointGets answers eligible prepared statements; it sits in the protocol
// handler, which knows connections, and finds sessions by connection id.
type pointGets struct {
	srv        *Server
	answered   atomic.Int64 // point lookups answered here (tests read it)
	ranged     atomic.Int64 // range reads answered here (rangeplan.go)
	written    atomic.Int64 // writes, BEGIN and COMMIT answered here (writeplan.go)
	compiles   atomic.Int64 // prepared statements' texts compiled (tests read it)
	reprepared atomic.Int64 // prepares answered by preparedBefore (tests read it)
	textParses atomic.Int64 // text statements parsed for their shape (textplan.go; tests read it)
	// pids numbers the compiled statements in the process list, apart
	// from go-mysql-server's own numbers.
	pids atomic.Uint64
	// off sends every statement to the planner (tests compare the two).
	off atomic.Bool
	// conns: connection id → its plans (*connPlans). A connection runs one
	// command at a time, so its plans need no lock; the map of
	// connections is read without one.
	conns sync.Map
}

// connPlans is what one connection compiled.
type connPlans struct {
	plans map[uint32]*compiled // statement → plan
	// prepared: a prepared statement's text → its plan, for a client that
	// prepares the same statements again (go-sql-driver prepares, executes
	// and closes each statement with arguments).
	prepared map[string]*compiled
	// preparedOK: a compiled statement's text → what its last prepare
	// through the planner gave and depended on (preparedBefore).
	preparedOK map[string]preparedEntry
	texts      map[string]*compiled // normalized text → plan (textplan.go)
	// shapes: a statement's text without its literals → what parsing it
	// gave (textshape.go)
	shapes map[string]*textShape
	// longTexts and longShapes are texts and shapes of statements longer
	// than maxTextLen (INSERTs of many rows), kept apart and fewer.
	longTexts  map[string]*compiled
	longShapes map[string]*textShape
}

// conn returns the plans of connection id.
func (g *pointGets) conn(id uint32) *connPlans {
	if v, ok := g.conns.Load(id); ok {
		return v.(*connPlans)
	}
	v, _ := g.conns.LoadOrStore(id, &connPlans{plans: map[uint32]*compiled{}, texts: map[string]*compiled{}, shapes: map[string]*textShape{}})
	return v.(*connPlans)
}

// compiled is what a prepared statement compiles to: at most one of the
// forms is set (none: not eligible).
type compiled struct {
	text  string // the statement's text (an id may be reused)
	point *pointPlan
	sel   *selectPlan
	write *writePlan
}

func newPointGets(s *Server) *pointGets {
	g := &pointGets{srv: s}
	g.pids.Store(1 << 62)
	return g
}

func (g *pointGets) plan(c *mysql.Conn, prep *mysql.PrepareData) *compiled {
	cp := g.conn(c.ConnectionID)
	p, seen := cp.plans[prep.StatementID]
	if !seen || p.text != prep.PrepareStmt {
		if p = cp.prepared[prep.PrepareStmt]; p == nil {
			g.compiles.Add(1)
			p = compile(prep.PrepareStmt)
			bounded(&cp.prepared, maxTextPlans)[prep.PrepareStmt] = p
		}
		if len(cp.plans) >= 2*len(c.PrepareData)+64 {
			// COM_STMT_CLOSE drops a statement from c.PrepareData
			// (vitess answers it without the handler): the plans of
			// closed statements go.
			for id := range cp.plans {
				if _, open := c.PrepareData[id]; !open {
					delete(cp.plans, id)
				}
			}
		}
		cp.plans[prep.StatementID] = p
	}
	return p
}

// compile returns the compiled form of a statement's text (empty when it
// has none).
func compile(text string) *compiled {
	p := &compiled{text: text, point: parsePointPlan(text)}
	if p.point == nil {
		p.sel = parseSelectPlan(text)
	}
	if p.point == nil && p.sel == nil {
		p.write = parseWritePlan(text)
	}
	return p
}

// preparedKey is what the prepare of a compiled statement depends on
// besides its text and the user's privileges: the session's database
// (where an unqualified name resolves), the database of the table the
// statement names and that database's definitions as the session sees
// them, and the character set of results (in which the result columns are
// described).
type preparedKey struct {
	current string
	db      *storage.DB
	defs    uint64
	cs      sql.CharacterSetID
	table   string
}

// preparedEntry is what a prepare through the planner gave: the result
// columns (nil for a write), under the key it was made with.
type preparedEntry struct {
	key    preparedKey
	fields []*querypb.Field
}

// preparedKeyOf returns the preparedKey of the compiled statement cp in
// sess; false for a statement without a table (BEGIN, COMMIT), or when the
// session has temporary tables (which hide others).
func (g *pointGets) preparedKeyOf(sess *Session, cp *compiled) (preparedKey, bool) {
	var name, table string
	switch {
	case cp.point != nil:
		name, table = cp.point.db, cp.point.table
	case cp.sel != nil:
		name, table = cp.sel.db, cp.sel.table
	case cp.write != nil:
		name, table = cp.write.db, cp.write.table
	}
	if table == "" || len(sess.temp) > 0 {
		return preparedKey{}, false
	}
	k := preparedKey{current: sess.GetCurrentDatabase(), cs: sess.GetCharacterSetResults()}
	if name == "" {
		name = k.current
	}
	db, ok := g.srv.storage.Database(name)
	if name == "" || !ok {
		return preparedKey{}, false
	}
	k.db, k.defs, k.table = db, sess.defsIn(db).Defs(), table
	return k, true
}

// preparePrivileges are the privileges on its table that a compiled
// statement's prepare is answered without the planner only with: what its
// execution checks (a superset of what the planner's prepare checks, which
// refuses with 1142 what they lack).
func preparePrivileges(cp *compiled) []sql.PrivilegeType {
	if w := cp.write; w != nil {
		switch w.kind {
		case writeInsert:
			if len(w.sets) > 0 { // ON DUPLICATE KEY UPDATE
				return []sql.PrivilegeType{sql.PrivilegeType_Insert, sql.PrivilegeType_Update, sql.PrivilegeType_Select}
			}
			return []sql.PrivilegeType{sql.PrivilegeType_Insert}
		case writeUpdate:
			return []sql.PrivilegeType{sql.PrivilegeType_Update, sql.PrivilegeType_Select}
		case writeDelete:
			return []sql.PrivilegeType{sql.PrivilegeType_Delete, sql.PrivilegeType_Select}
		}
		return nil
	}
	return []sql.PrivilegeType{sql.PrivilegeType_Select}
}

// preparedBefore returns the result columns of the text q, a compiled
// statement, when it was prepared through the planner on this connection
// with the same preparedKey: preparing it again would parse and bind it to
// the same answer (those columns, no error). A client that prepares each
// statement where it runs it (go-sql-driver) then pays the parse once.
// The user must hold the statement's privileges on its table now
// (preparePrivileges), or the planner prepares it (and refuses it with
// 1142). Texts with double quotes, bars or backslashes, which the SQL mode
// may make the parser read otherwise, are prepared again.
func (g *pointGets) preparedBefore(goctx context.Context, c *mysql.Conn, sess *Session, q string) ([]*querypb.Field, bool) {
	cp := g.conn(c.ConnectionID)
	prev, seen := cp.preparedOK[q]
	p := cp.prepared[q]
	if !seen || p == nil {
		return nil, false
	}
	k, ok := g.preparedKeyOf(sess, p)
	if !ok || k != prev.key {
		return nil, false
	}
	ctx := sql.NewContext(goctx, sql.WithSession(sess))
	subject := sql.PrivilegeCheckSubject{Database: k.db.Name(), Table: k.table}
	mdb := g.srv.engine.Analyzer.Catalog.MySQLDb
	for _, priv := range preparePrivileges(p) {
		if !mdb.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(subject, priv)) {
			return nil, false
		}
	}
	g.reprepared.Add(1)
	return prev.fields, true
}

// notePrepared records that the planner prepared q without error, with the
// result columns fields (preparedBefore).
func (g *pointGets) notePrepared(c *mysql.Conn, sess *Session, q string, fields []*querypb.Field) {
	if strings.ContainsAny(q, "\"|\\") {
		return
	}
	cp := g.conn(c.ConnectionID)
	p := cp.prepared[q]
	if p == nil {
		g.compiles.Add(1)
		p = compile(q)
		bounded(&cp.prepared, maxTextPlans)[q] = p
	}
	if k, ok := g.preparedKeyOf(sess, p); ok {
		bounded(&cp.preparedOK, maxTextPlans)[q] = preparedEntry{key: k, fields: fields}
	}
}

func (g *pointGets) forget(connID uint32) {
	g.conns.Delete(connID)
}

// try answers the statement if it can; ok false sends it the usual way.
func (g *pointGets) try(goctx context.Context, h mysql.Handler, c *mysql.Conn, prep *mysql.PrepareData, callback func(*sqltypes.Result) error) (ok bool, err error) {
	if g.off.Load() {
		return false, nil
	}
	usual := func(cb func(*sqltypes.Result) error) error { return h.ComStmtExecute(goctx, c, prep, cb) }
	return g.run(goctx, c, g.plan(c, prep), prep, prep.PrepareStmt, usual, callback)
}

// run answers a compiled statement with the parameters of prep; usual
// runs it through the planner (which a range read does once to learn its
// result columns). While it runs, the statement is in the process list
// under the text query, as the planner's are: SHOW PROCESSLIST shows a
// write waiting for a row lock, and KILL QUERY interrupts it.
func (g *pointGets) run(goctx context.Context, c *mysql.Conn, cp *compiled, prep *mysql.PrepareData, query string, usual func(func(*sqltypes.Result) error) error, callback func(*sqltypes.Result) error) (bool, error) {
	if cp.point == nil && cp.sel == nil && cp.write == nil {
		return false, nil
	}
	sess := g.srv.session(c.ConnectionID)
	if sess == nil {
		return false, nil
	}
	if strayTransaction(sess) {
		// Left open by a statement that read nothing the planner
		// committed (SHOW WARNINGS): ended, as the planner's next
		// statement would end it, so that this one sees the latest
		// commits. One with writes is the planner's to commit.
		if sess.txn.wrote() {
			return false, nil
		}
		sess.Rollback(nil, nil)
		sess.SetTransaction(nil)
	}
	if cp.point != nil {
		return g.runPoint(goctx, c, prep, cp.point, sess, callback)
	}
	pl := g.srv.procs
	e := pl.entry(c.ConnectionID)
	if e == nil {
		return false, nil
	}
	pid := g.pids.Add(1)
	cctx, kill := context.WithCancel(goctx)
	qctx := sql.NewContext(cctx, sql.WithSession(sess), sql.WithPid(pid), sql.WithQuery(query), sql.WithProcessList(pl),
		sql.WithMemoryManager(g.srv.engine.MemoryManager))
	st := pl.begin(e, sess, pid, query, kill)
	var ok bool
	var err error
	defer func() { pl.end(st, ok) }()
	switch {
	case cp.sel != nil:
		ok, err = g.trySelect(qctx, usual, c, prep, cp.sel, callback)
	case cp.write != nil:
		ok, err = g.tryWrite(qctx, c, prep, cp.write, callback)
	}
	if ok && errors.Is(err, context.Canceled) && qctx.Err() != nil {
		// KILL QUERY during a lock wait.
		err = mysql.NewSQLError(mysql.ERQueryInterrupted, "70100", "Query execution was interrupted")
	}
	return ok, err
}

// runPoint answers a primary-key lookup of the plain kind (no locking
// read). It takes no row lock and reads one row from a snapshot, so it
// ends in microseconds whatever other sessions do: it is not entered in
// the process list (whose upkeep, the connection's entry found and
// updated twice, costs about 1 µs, 4 % of a lookup's CPU), so SHOW
// PROCESSLIST shows its connection as idle and KILL QUERY finds nothing to
// interrupt. Threads_running and Slow_queries count it as they count every
// statement.
func (g *pointGets) runPoint(goctx context.Context, c *mysql.Conn, prep *mysql.PrepareData, p *pointPlan, sess *Session, callback func(*sqltypes.Result) error) (bool, error) {
	sql.StatusVariables.IncrementGlobal("Threads_running", 1)
	defer sql.StatusVariables.IncrementGlobal("Threads_running", -1)
	start := time.Now()
	ok, err := g.tryPoint(goctx, c, prep, p, callback)
	if ok {
		countSlow(sess, time.Since(start))
	}
	return ok, err
}

// tryPoint answers a point lookup.
func (g *pointGets) tryPoint(goctx context.Context, c *mysql.Conn, prep *mysql.PrepareData, p *pointPlan, callback func(*sqltypes.Result) error) (bool, error) {
	sess := g.srv.session(c.ConnectionID)
	if sess == nil {
		return false, nil
	}
	if len(sess.temp) > 0 {
		return false, nil // a temporary table could hide the table
	}
	ctx := sql.NewContext(goctx, sql.WithSession(sess), sql.WithMemoryManager(g.srv.engine.MemoryManager))
	t, dbName, ok := g.readTable(ctx, sess, p.db, p.table)
	if !ok {
		return false, nil
	}
	ti, err := tabledef.Decode(t.Def())
	if err != nil {
		return false, nil
	}
	sch := ti.SchemaIn(dbName).Schema
	def := t.Def()
	key, ok := primaryKey(ctx, sch, len(def.PK), p.keyCols, p.keyArgs, prep.BindVars)
	if !ok {
		return false, nil
	}
	cs := ctx.GetCharacterSetResults()
	enc := p.enc.Load()
	if !enc.fits(def, dbName, cs) {
		var ok bool
		if enc, ok = p.encoding(ctx, sch, def, dbName, cs); !ok {
			return false, nil
		}
		p.enc.Store(enc)
	}
	if !g.srv.engine.Analyzer.Catalog.MySQLDb.UserHasPrivileges(ctx,
		sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{Database: dbName, Table: def.Name}, sql.PrivilegeType_Select)) {
		return false, nil
	}

	sess.ClearWarnings()
	res := &sqltypes.Result{Fields: enc.fields}
	if row, found := t.Get(storage.KeyRow(key)); found {
		// The callback writes the values out; the buffer then goes back
		// to the pool (as the planner's results do).
		buf := sql.ByteBufPool.Get().(*sql.ByteBuffer)
		defer func() {
			buf.Reset()
			sql.ByteBufPool.Put(buf)
		}()
		out := make([]sqltypes.Value, len(enc.proj))
		e := enc.encoder(ctx, buf)
		if err := e.encode(row, out); err != nil {
			return false, nil
		}
		res.Rows = [][]sqltypes.Value{out}
	}
	// As after any SELECT: ROW_COUNT() -1, FOUND_ROWS() the rows returned.
	sess.SetLastQueryInfoInt(sql.RowCount, -1)
	sess.SetLastQueryInfoInt(sql.FoundRows, int64(len(res.Rows)))
	g.answered.Add(1)
	countStatement(ctx, "Com_select")
	return true, callback(res)
}

// keyValue converts a parameter to the column's type when the two are of
// the same kind (integers for an integer column, strings for a string
// column); comparisons across kinds follow MySQL's rules, left to the engine.
func keyValue(ctx *sql.Context, typ sql.Type, bv *querypb.BindVariable) (any, bool) {
	v, err := sqltypes.BindVariableToValue(bv)
	if err != nil || v.IsNull() {
		return nil, false
	}
	var raw any
	switch {
	case types.IsInteger(typ) && v.IsSigned():
		n, err := sqltypes.ToInt64(v)
		if err != nil {
			return nil, false
		}
		raw = n
	case types.IsInteger(typ) && v.IsUnsigned():
		n, err := sqltypes.ToUint64(v)
		if err != nil {
			return nil, false
		}
		raw = n
	case types.IsText(typ) && (v.IsText() || v.Type() == sqltypes.VarBinary) && !types.IsBinaryType(typ):
		raw = v.ToString()
	default:
		return nil, false
	}
	out, inRange, err := convertValue(ctx, typ, raw)
	if err != nil || inRange != sql.InRange {
		return nil, false
	}
	return out, true
}

// encoding makes the result columns of the lookup for the table
// definition def in database db, its rows' schema sch, and the results'
// character set cs; false if a column cannot be read here.
func (p *pointPlan) encoding(ctx *sql.Context, sch sql.Schema, def *storage.TableDef, db string, cs sql.CharacterSetID) (*encoding, bool) {
	var proj []int
	if p.star {
		for i, col := range sch {
			if col.Virtual {
				return nil, false
			}
			proj = append(proj, i)
		}
	} else {
		for _, name := range p.cols {
			pos := sch.IndexOfColName(name)
			if pos < 0 || sch[pos].Virtual {
				return nil, false
			}
			proj = append(proj, pos)
		}
	}
	outSch := make(sql.Schema, len(proj))
	for i, pos := range proj {
		col := *sch[pos]
		if !p.star {
			col.Name = p.cols[i] // as the client wrote it
		}
		outSch[i] = &col
	}
	return &encoding{def: def, db: db, cs: cs, proj: proj, cols: encodeCols(sch, proj, cs), fields: resultFields(ctx, outSch)}, true
}

// resultFields describes result columns as go-mysql-server's handler does.
func resultFields(ctx *sql.Context, s sql.Schema) []*querypb.Field {
	charSetResults := ctx.GetCharacterSetResults()
	fields := make([]*querypb.Field, len(s))
	for i, c := range s {
		charset := uint32(sql.Collation_Default.CharacterSet())
		if ct, ok := c.Type.(sql.TypeWithCollation); ok {
			charset = uint32(ct.Collation().CharacterSet())
		}
		if types.IsBinaryType(c.Type) {
			charset = uint32(sql.Collation_binary)
		} else if charSetResults != sql.CharacterSet_Unspecified {
			charset = uint32(charSetResults)
		}
		var flags querypb.MySqlFlag
		if !c.Nullable {
			flags |= querypb.MySqlFlag_NOT_NULL_FLAG
		}
		if c.AutoIncrement {
			flags |= querypb.MySqlFlag_AUTO_INCREMENT_FLAG
		}
		if c.PrimaryKey {
			flags |= querypb.MySqlFlag_PRI_KEY_FLAG
		}
		if types.IsUnsigned(c.Type) {
			flags |= querypb.MySqlFlag_UNSIGNED_FLAG
		}
		fields[i] = &querypb.Field{Name: c.Name, OrgName: c.Name, Table: c.Source, OrgTable: c.Source,
			Database: c.DatabaseSource, Type: c.Type.Type(), Charset: charset,
			ColumnLength: c.Type.MaxTextResponseByteLength(ctx), Flags: uint32(flags)}
		if types.IsDecimal(c.Type) {
			fields[i].Decimals = uint32(c.Type.(sql.DecimalType).Scale())
		} else if types.IsDatetimeType(c.Type) || types.IsTimestampType(c.Type) {
			fields[i].Decimals = uint32(c.Type.(sql.DatetimeType).Precision())
		}
	}
	return fields
}

// countStatement counts a compiled statement in the status variables the
// planner's path counts (Questions; Com_select for a read; Com_insert,
// Com_update or Com_delete for a write), which monitoring reads for the
// server's query rate. com is the Com_ variable, "" for none.
func countStatement(ctx *sql.Context, com string) {
	sql.IncrementStatusVariable(ctx, "Questions", 1)
	if com != "" {
		sql.IncrementStatusVariable(ctx, com, 1)
	}
}

// bindCounted are the statement counters go-mysql-server counts when it
// binds a statement (planbuilder), so at PREPARE as well as at each
// execution; MySQL counts executions only (see ComPrepare).
var bindCounted = []string{"Com_insert", "Com_update", "Com_delete"}
