package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/procedures"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// Stored functions. go-mysql-server v0.20 has none, and its parser does
// not read CREATE FUNCTION. Miraj reads the statement's head itself
// (name, parameters, RETURNS, characteristics) and its body as the body
// of a procedure with the same parameters, which the parser reads
// (RETURN included); the function is a catalog object of its database
// (objFunction: journaled and replicated like a procedure), and a call
// f(args) in any expression, where no built-in function has that name,
// runs its body with routineRun (routine.go) in the caller's transaction
// and statement, and gives the RETURN value converted to the RETURNS type.
//
// Statements: CREATE [DEFINER = …] FUNCTION [IF NOT EXISTS], DROP
// FUNCTION [IF EXISTS], SHOW CREATE FUNCTION. Not built (said so with
// 1235): CREATE AGGREGATE FUNCTION (loadable functions).

const objFunction = "function"

// functionData is a stored function as it is kept.
type functionData struct {
	Name string `json:"name"`
	// Create is the statement as the client wrote it (SHOW CREATE
	// FUNCTION); Proc the procedure the parser reads for the body:
	// CREATE PROCEDURE name(params) body.
	Create  string    `json:"create"`
	Proc    string    `json:"proc"`
	Returns string    `json:"returns"`
	SQLMode string    `json:"sql_mode"`
	Created time.Time `json:"created"`
	// Definer is the DEFINER written, or the account that created it
	// (user@host).
	Definer string `json:"definer,omitempty"`
}

// functionHead is what parseFunctionHead reads of CREATE FUNCTION.
type functionHead struct {
	db, name    string
	ifNotExists bool
	params      string // the text between the parentheses
	returns     string // the RETURNS type, as written
	body        string
}

// parseFunctionHead reads CREATE [DEFINER = …] FUNCTION [IF NOT EXISTS]
// [db.]name (params) RETURNS type [characteristic …] body; ok is false
// when q is not one (the parser then reports the syntax error).
func parseFunctionHead(q string) (h functionHead, ok bool) {
	w := sqltext.Scan(q, false)
	i := 0
	next := func(text string) bool {
		if i < len(w) && w[i].Text == text {
			i++
			return true
		}
		return false
	}
	if !next("CREATE") {
		return h, false
	}
	if next("DEFINER") {
		if !next("=") {
			return h, false
		}
		// user, 'user', `user`, then @host; CURRENT_USER[()]
		for i < len(w) && w[i].Text != "FUNCTION" {
			i++
		}
	}
	if !next("FUNCTION") {
		return h, false
	}
	if i+2 < len(w) && w[i].Text == "IF" && w[i+1].Text == "NOT" && w[i+2].Text == "EXISTS" {
		h.ifNotExists, i = true, i+3
	}
	name := func(x sqltext.Word) string {
		if q[x.Start] == '`' {
			return x.Text
		}
		return q[x.Start:x.End]
	}
	if i >= len(w) || !w[i].IsWord {
		return h, false
	}
	h.name = name(w[i])
	i++
	if i+1 < len(w) && w[i].Text == "." && w[i+1].IsWord {
		h.db, h.name = h.name, name(w[i+1])
		i += 2
	}
	if i >= len(w) || w[i].Text != "(" {
		return h, false
	}
	open := w[i].End
	depth := 0
	for ; i < len(w); i++ {
		if w[i].Text == "(" {
			depth++
		} else if w[i].Text == ")" {
			if depth--; depth == 0 {
				break
			}
		}
	}
	if i >= len(w) {
		return h, false
	}
	h.params = q[open:w[i].Start]
	i++
	if !next("RETURNS") || i >= len(w) || !w[i].IsWord {
		return h, false
	}
	typeStart := w[i].Start
	i++
	if i < len(w) && w[i].Text == "(" {
		for i < len(w) && w[i].Text != ")" {
			i++
		}
		i++
	}
	for i < len(w) {
		switch w[i].Text {
		case "UNSIGNED", "SIGNED", "ZEROFILL", "BINARY":
			i++
			continue
		case "CHARSET", "COLLATE":
			i += 2
			continue
		case "CHARACTER":
			i += 3
			continue
		}
		break
	}
	if i > len(w) {
		return h, false
	}
	typeEnd := len(q)
	if i < len(w) {
		typeEnd = w[i].Start
	}
	h.returns = strings.TrimSpace(q[typeStart:typeEnd])
	// Characteristics.
	for i < len(w) {
		switch {
		case w[i].Text == "COMMENT" && i+1 < len(w):
			i += 2
		case w[i].Text == "LANGUAGE" && i+1 < len(w):
			i += 2
		case w[i].Text == "DETERMINISTIC":
			i++
		case w[i].Text == "NOT" && i+1 < len(w) && w[i+1].Text == "DETERMINISTIC":
			i += 2
		case w[i].Text == "CONTAINS" || w[i].Text == "NO":
			i += 2
		case (w[i].Text == "READS" || w[i].Text == "MODIFIES") && i+2 < len(w):
			i += 3
		case w[i].Text == "SQL" && i+2 < len(w) && w[i+1].Text == "SECURITY":
			i += 3
		default:
			h.body = strings.TrimRight(strings.TrimSpace(q[w[i].Start:]), ";")
			return h, h.body != ""
		}
	}
	return h, false
}

// functionDef is a stored function ready to run: its parameters and
// return type, and its body's text (parsed at each call's first run).
type functionDef struct {
	db, name string
	params   []functionParam
	returns  sql.Type
	proc     string
}

type functionParam struct {
	name string // lower-case
	typ  sql.Type
}

// buildFunction reads fd (the procedure text and the return type).
func buildFunction(ctx *sql.Context, db string, fd functionData) (*functionDef, error) {
	stmt, err := parseRoutine(ctx, fd.Proc)
	if err != nil {
		return nil, err
	}
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.ProcedureSpec == nil {
		return nil, fmt.Errorf("stored function %s: its body is not a routine body", fd.Name)
	}
	def := &functionDef{db: db, name: fd.Name, proc: fd.Proc}
	for _, p := range ddl.ProcedureSpec.Params {
		if p.Direction != ast.ProcedureParamDirection_In {
			return nil, mysql.NewSQLError(1064, "42000", "You have an error in your SQL syntax; a FUNCTION's parameters have no IN, OUT or INOUT")
		}
		typ, err := types.ColumnTypeToType(&p.Type)
		if err != nil {
			return nil, err
		}
		def.params = append(def.params, functionParam{name: strings.ToLower(p.Name), typ: typ})
	}
	rt, err := parseRoutine(ctx, "CREATE TABLE t (r "+fd.Returns+")")
	if err != nil {
		return nil, err
	}
	tdl, ok := rt.(*ast.DDL)
	if !ok || tdl.TableSpec == nil || len(tdl.TableSpec.Columns) != 1 {
		return nil, mysql.NewSQLError(1064, "42000", "You have an error in your SQL syntax near 'RETURNS %s'", fd.Returns)
	}
	if def.returns, err = types.ColumnTypeToType(&tdl.TableSpec.Columns[0].Type); err != nil {
		return nil, err
	}
	return def, nil
}

// parseRoutine parses q with the server's parser, in the session's SQL
// mode.
func parseRoutine(ctx *sql.Context, q string) (ast.Statement, error) {
	stmt, _, _, err := sql.GlobalParser.ParseWithOptions(ctx, q, ';', false, sql.LoadSqlMode(ctx).ParserOptions())
	return stmt, err
}

// functionStatement answers CREATE FUNCTION and DROP FUNCTION
// (answerHere); done is false for any other statement.
func (h protocolHandler) functionStatement(ctx context.Context, c *mysql.Conn, q string) (end int, done bool, err error) {
	text := sqltext.UnwrapVersionComments(q)
	w := sqltext.Scan(text, false)
	kind := ""
	switch {
	case len(w) > 1 && w[0].Text == "DROP" && w[1].Text == "FUNCTION":
		kind = "DROP"
	case len(w) > 1 && w[0].Text == "CREATE" && storedFunctionRE.MatchString(text):
		if aggregateFunctionRE.MatchString(text) {
			return len(q), true, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'", "CREATE AGGREGATE FUNCTION (loadable functions); stored functions are built")
		}
		kind = "CREATE"
	default:
		return 0, false, nil
	}
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q)
	if err != nil {
		return len(q), true, err
	}
	sess := sessionOf(sctx)
	if kind == "CREATE" {
		return len(q), true, h.createFunction(ctx, c, sctx, sess, text)
	}
	return len(q), true, h.dropFunction(ctx, c, sctx, sess, text, w)
}

// definerRE reads the DEFINER of CREATE FUNCTION.
var definerRE = regexp.MustCompile("(?is)^\\s*create\\s+definer\\s*=\\s*(\\S+?)\\s+function\\b")

var aggregateFunctionRE = regexp.MustCompile(`(?is)^\s*create\s+(?:definer\s*=\s*\S+\s+)?aggregate\s+function\b`)

// routineDB returns the database db names (the session's when empty).
func (h protocolHandler) routineDB(sctx *sql.Context, db string) (string, error) {
	if db == "" {
		db = sctx.GetCurrentDatabase()
	}
	if db == "" {
		return "", mysql.NewSQLError(mysql.ERNoDb, "3D000", "No database selected")
	}
	if _, ok := h.srv.storage.Database(db); !ok {
		return "", mysql.NewSQLError(mysql.ERBadDb, "42000", "Unknown database '%s'", db)
	}
	return db, nil
}

// mayRoutine reports whether the session's account has priv on db.
func (h protocolHandler) mayRoutine(sctx *sql.Context, db string, priv sql.PrivilegeType) error {
	g := grants{db: h.srv.engine.Analyzer.Catalog.MySQLDb}
	if !g.db.Enabled() {
		return nil
	}
	set := g.db.UserActivePrivilegeSet(sctx)
	if set.Has(priv) || set.Database(db).Has(priv) {
		return nil
	}
	user, host, _ := g.account(sctx)
	return mysql.NewSQLError(1044, "42000", "Access denied for user '%s'@'%s' to database '%s'", user, host, db)
}

func (h protocolHandler) createFunction(ctx context.Context, c *mysql.Conn, sctx *sql.Context, sess *Session, text string) error {
	head, ok := parseFunctionHead(text)
	if !ok {
		return mysql.NewSQLError(1064, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'FUNCTION'")
	}
	db, err := h.routineDB(sctx, head.db)
	if err != nil {
		return err
	}
	if err := h.mayRoutine(sctx, db, sql.PrivilegeType_CreateRoutine); err != nil {
		return err
	}
	if err := h.commitOpen(ctx, c, sess, text); err != nil { // DDL commits
		return err
	}
	fd := functionData{
		Name:    head.name,
		Create:  strings.TrimRight(strings.TrimSpace(text), ";"),
		Proc:    "CREATE PROCEDURE `" + strings.ReplaceAll(head.name, "`", "``") + "`(" + head.params + ") " + head.body,
		Returns: head.returns,
		Created: time.Now().UTC(),
	}
	if v, err := sctx.GetSessionVariable(sctx, "sql_mode"); err == nil {
		fd.SQLMode, _ = v.(string)
	}
	if m := definerRE.FindStringSubmatch(text); m != nil {
		fd.Definer = strings.NewReplacer("`", "", "'", "", "\"", "").Replace(m[1])
	} else {
		user, host, _ := grants{db: h.srv.engine.Analyzer.Catalog.MySQLDb}.account(sctx)
		fd.Definer = user + "@" + host
	}
	if _, err := buildFunction(sctx, db, fd); err != nil {
		return err
	}
	if isBuiltinFunction(head.name) {
		sess.Warn(&sql.Warning{Level: "Note", Code: 1585, Message: fmt.Sprintf("This function '%s' has the same name as a native function", head.name)})
	}
	sdb, _ := h.srv.storage.Database(db)
	tx := sess.storageTx(sdb)
	if _, exists := tx.Catalog().Object(objFunction, strings.ToLower(head.name)); exists {
		if head.ifNotExists {
			sess.Warn(&sql.Warning{Level: "Note", Code: 1304, Message: fmt.Sprintf("FUNCTION %s already exists", head.name)})
			return h.endRoutineDDL(sctx, sess)
		}
		h.endRoutineDDL(sctx, sess)
		return mysql.NewSQLError(1304, "42000", "FUNCTION %s already exists", head.name)
	}
	b, _ := json.Marshal(fd)
	if err := tx.PutObject(objFunction, strings.ToLower(head.name), b); err != nil {
		sess.Rollback(sctx, nil)
		return mysqlerr.From(err)
	}
	return h.endRoutineDDL(sctx, sess)
}

// endRoutineDDL commits what a CREATE or DROP FUNCTION wrote, as a DDL
// statement commits.
func (h protocolHandler) endRoutineDDL(sctx *sql.Context, sess *Session) error {
	err := sess.CommitTransaction(sctx, sctx.GetTransaction())
	sctx.SetIgnoreAutoCommit(false)
	sctx.SetTransaction(nil)
	return err
}

// routineName reads [db.]name at w[i:] of text.
func routineName(text string, w []sqltext.Word, i int) (db, name string, ok bool) {
	word := func(x sqltext.Word) string {
		if text[x.Start] == '`' {
			return x.Text
		}
		return text[x.Start:x.End]
	}
	if i >= len(w) || !w[i].IsWord {
		return "", "", false
	}
	name = word(w[i])
	if i+2 < len(w) && w[i+1].Text == "." && w[i+2].IsWord {
		db, name = name, word(w[i+2])
		i += 2
	}
	return db, name, i+1 == len(w) || w[i+1].Text == ";"
}

func (h protocolHandler) dropFunction(ctx context.Context, c *mysql.Conn, sctx *sql.Context, sess *Session, text string, w []sqltext.Word) error {
	i := 2
	ifExists := false
	if i+1 < len(w) && w[i].Text == "IF" && w[i+1].Text == "EXISTS" {
		ifExists, i = true, i+2
	}
	dbName, name, ok := routineName(text, w, i)
	if !ok {
		return mysql.NewSQLError(1064, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'FUNCTION'")
	}
	db, err := h.routineDB(sctx, dbName)
	if err != nil {
		return err
	}
	if err := h.mayRoutine(sctx, db, sql.PrivilegeType_AlterRoutine); err != nil {
		return err
	}
	if err := h.commitOpen(ctx, c, sess, text); err != nil {
		return err
	}
	sdb, _ := h.srv.storage.Database(db)
	tx := sess.storageTx(sdb)
	if _, exists := tx.Catalog().Object(objFunction, strings.ToLower(name)); !exists {
		h.endRoutineDDL(sctx, sess)
		if ifExists {
			sess.Warn(&sql.Warning{Level: "Note", Code: 1305, Message: fmt.Sprintf("FUNCTION %s.%s does not exist", db, name)})
			return nil
		}
		return mysql.NewSQLError(1305, "42000", "FUNCTION %s.%s does not exist", db, name)
	}
	if err := tx.DeleteObject(objFunction, strings.ToLower(name)); err != nil {
		sess.Rollback(sctx, nil)
		return mysqlerr.From(err)
	}
	return h.endRoutineDDL(sctx, sess)
}

// showCreateFunctionQuery turns SHOW CREATE FUNCTION into the SELECT of
// its one row, with MySQL's columns (accountQuery); ok is false for any
// other statement.
func (h protocolHandler) showCreateFunctionQuery(ctx context.Context, c *mysql.Conn, q string) (string, bool, error) {
	text := sqltext.UnwrapVersionComments(q)
	w := sqltext.Scan(text, false)
	if len(w) < 4 || w[0].Text != "SHOW" || w[1].Text != "CREATE" || w[2].Text != "FUNCTION" {
		return "", false, nil
	}
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q)
	if err != nil {
		return "", true, err
	}
	sess := sessionOf(sctx)
	dbName, name, ok := routineName(text, w, 3)
	if !ok {
		return "", true, mysql.NewSQLError(1064, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'FUNCTION'")
	}
	db, err := h.routineDB(sctx, dbName)
	if err != nil {
		return "", true, err
	}
	sdb, _ := h.srv.storage.Database(db)
	o, exists := sess.defsIn(sdb).Object(objFunction, strings.ToLower(name))
	if !exists {
		return "", true, mysql.NewSQLError(1305, "42000", "FUNCTION %s does not exist", name)
	}
	var fd functionData
	if err := json.Unmarshal(o.Data, &fd); err != nil {
		return "", true, err
	}
	collation := "utf8mb4_0900_ai_ci"
	if sqlDB, err := h.srv.engine.Analyzer.Catalog.Database(sctx, db); err == nil {
		collation = plan.GetDatabaseCollation(sctx, sqlDB).String()
	}
	lit := func(s string) string {
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, "\\", "\\\\"), "'", "''") + "'"
	}
	return "SELECT " + lit(fd.Name) + " AS `Function`, " + lit(fd.SQLMode) + " AS `sql_mode`, " + lit(fd.Create) + " AS `Create Function`, " +
		"'utf8mb4' AS `character_set_client`, 'utf8mb4_0900_ai_ci' AS `collation_connection`, " + lit(collation) + " AS `Database Collation`", true, nil
}

// storedFunction returns the stored function name of the session's
// database (sql.FunctionProvider, through Provider.Function).
func (p *Provider) storedFunction(ctx *sql.Context, name string) (sql.Function, bool) {
	if ctx == nil || p.runner == nil || isBuiltinFunction(name) {
		return nil, false
	}
	s, ok := ctx.Session.(*Session)
	if !ok {
		return nil, false
	}
	dbName := ctx.GetCurrentDatabase()
	if q, n, found := strings.Cut(name, "."); found {
		dbName, name = q, n // db.f(…): qualifyFunctionCalls
	}
	if dbName == "" {
		return nil, false
	}
	db, ok := p.engine.Database(dbName)
	if !ok {
		return nil, false
	}
	o, ok := s.defsIn(db).Object(objFunction, strings.ToLower(name))
	if !ok {
		return nil, false
	}
	var fd functionData
	if err := json.Unmarshal(o.Data, &fd); err != nil {
		return nil, false
	}
	return sql.FunctionN{Name: name, Fn: func(args ...sql.Expression) (sql.Expression, error) {
		def, err := buildFunction(ctx, db.Name(), fd)
		if err != nil {
			return nil, err
		}
		if len(args) != len(def.params) {
			return nil, mysql.NewSQLError(1318, "42000", "Incorrect number of arguments for FUNCTION %s.%s; expected %d, got %d", def.db, def.name, len(def.params), len(args))
		}
		return &storedCall{def: def, args: args, runner: p.runner, srv: p.srv}, nil
	}}, true
}

// qualifyFunctionCalls names a call of db.f(…) "db.f" for
// Provider.Function, which is given the name alone (go-mysql-server's
// planner dropped the database, and looked f up in the session's).
func qualifyFunctionCalls(stmt ast.Statement) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if f, ok := node.(*ast.FuncExpr); ok && !f.Qualifier.IsEmpty() {
			f.Name = ast.NewColIdent(f.Qualifier.String() + "." + f.Name.String())
			f.Qualifier = ast.TableIdent{}
		}
		return true, nil
	}, stmt)
}

// builtinNames are the functions a stored function does not hide, as in
// MySQL (where a stored function with a native function's name is called
// with its database only).
var builtinNames = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, f := range function.BuiltIns {
		m[strings.ToLower(f.FunctionName())] = true
	}
	for _, f := range serverFunctions {
		m[strings.ToLower(f.FunctionName())] = true
	}
	for name := range funcs.Overridden {
		m[name] = true
	}
	m["checksum"] = true
	return m
})

func isBuiltinFunction(name string) bool { return builtinNames()[strings.ToLower(name)] }

// storedCall is a call of a stored function in an expression.
type storedCall struct {
	def    *functionDef
	args   []sql.Expression
	runner sql.StatementRunner
	srv    *Server

	mu  sync.Mutex
	ops []*procedures.InterpreterOperation // parsed at the first Eval
}

var _ sql.Expression = (*storedCall)(nil)
var _ sql.NonDeterministicExpression = (*storedCall)(nil)

func (f *storedCall) Resolved() bool {
	for _, a := range f.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

func (f *storedCall) String() string {
	parts := make([]string, len(f.args))
	for i, a := range f.args {
		parts[i] = a.String()
	}
	return f.def.name + "(" + strings.Join(parts, ",") + ")"
}

func (f *storedCall) Type() sql.Type             { return f.def.returns }
func (f *storedCall) IsNullable() bool           { return true }
func (f *storedCall) IsNonDeterministic() bool   { return true }
func (f *storedCall) Children() []sql.Expression { return f.args }
func (f *storedCall) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_Default, 4
}

func (f *storedCall) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != len(f.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(f, len(children), len(f.args))
	}
	return &storedCall{def: f.def, args: children, runner: f.runner, srv: f.srv}, nil
}

// maxFunctionDepth bounds stored functions calling stored functions:
// MySQL refuses recursion (1424), and a chain of calls must end.
const maxFunctionDepth = 64

func (f *storedCall) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return nil, fmt.Errorf("stored function %s: not in a client session", f.def.name)
	}
	key := strings.ToLower(f.def.db + "." + f.def.name)
	for _, active := range s.rt.functions {
		if active == key {
			return nil, mysql.NewSQLError(1424, "HY000", "Recursive stored functions and triggers are not allowed.")
		}
	}
	if len(s.rt.functions) >= maxFunctionDepth {
		return nil, mysql.NewSQLError(1424, "HY000", "Recursive stored functions and triggers are not allowed.")
	}
	vals := make([]any, len(f.args))
	for i, a := range f.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if vals[i], err = convertTo(ctx, f.def.params[i].typ, v); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ops == nil {
		stmt, err := parseRoutine(ctx, f.def.proc)
		if err != nil {
			return nil, err
		}
		if f.ops, err = procedures.Parse(stmt.(*ast.DDL).ProcedureSpec.Body); err != nil {
			return nil, err
		}
	}
	s.rt.depth++
	defer func() { s.rt.depth-- }()
	r := &routineRun{srv: f.srv, runner: f.runner, stack: procedures.NewInterpreterStack(), function: true, level: s.rt.depth}
	r.stack.SetDatabase(f.def.db)
	for i, p := range f.def.params {
		r.stack.NewVariableWithValue(p.name, p.typ, vals[i])
	}
	// The body runs inside the caller's statement and transaction: its
	// statements commit nothing (CommitTransaction), as in MySQL.
	s.rt.functions = append(s.rt.functions, key)
	s.writing++
	defer func() {
		s.writing--
		s.rt.functions = s.rt.functions[:len(s.rt.functions)-1]
	}()
	_, _, err := r.run(ctx, f.ops)
	var ret *routineReturn
	switch {
	case err == nil:
		return nil, mysql.NewSQLError(1321, "2F005", "FUNCTION %s ended without RETURN", f.def.name)
	case !asReturn(err, &ret):
		return nil, err
	}
	return convertTo(ctx, f.def.returns, ret.value)
}

// routinesTable is information_schema.ROUTINES with the stored
// functions added (go-mysql-server listed procedures only), which SHOW
// FUNCTION STATUS reads, and dumps with it: mariadb-dump --routines left
// functions out.
type routinesTable struct {
	sql.CatalogTable
	cat sql.Catalog
}

func (r *routinesTable) AssignCatalog(cat sql.Catalog) sql.Table {
	if t, ok := r.CatalogTable.AssignCatalog(cat).(sql.CatalogTable); ok {
		r.CatalogTable = t
	}
	r.cat = cat
	return r
}

// AssignProcedures hands go-mysql-server's table its procedures (its
// analyzer's assignRoutines).
func (r *routinesTable) AssignProcedures(p map[string][]*plan.Procedure) sql.Table {
	if ap, ok := r.CatalogTable.(interface {
		AssignProcedures(map[string][]*plan.Procedure) sql.Table
	}); ok {
		if t, ok := ap.AssignProcedures(p).(sql.CatalogTable); ok {
			r.CatalogTable = t
		}
	}
	return r
}

func (r *routinesTable) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	iter, err := r.CatalogTable.PartitionRows(ctx, p)
	if err != nil || r.cat == nil {
		return iter, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	s, ok := ctx.Session.(*Session)
	if !ok || s.engine == nil {
		return sql.RowsToRowIter(rows...), nil
	}
	for _, db := range r.cat.AllDatabases(ctx) {
		sdb, ok := s.engine.Database(db.Name())
		if !ok {
			continue
		}
		for _, o := range s.defsIn(sdb).Objects(objFunction) {
			var fd functionData
			if json.Unmarshal(o.Data, &fd) != nil {
				continue
			}
			rows = append(rows, functionRoutineRow(sdb.Name(), fd, plan.GetDatabaseCollation(ctx, db).String()))
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// characteristicRE reads a function's characteristics from its text.
var (
	notDeterministicRE = regexp.MustCompile(`(?i)\bNOT\s+DETERMINISTIC\b`)
	deterministicRE    = regexp.MustCompile(`(?i)\bDETERMINISTIC\b`)
	dataAccessRE       = regexp.MustCompile(`(?i)\b(CONTAINS SQL|NO SQL|READS SQL DATA|MODIFIES SQL DATA)\b`)
	invokerRE          = regexp.MustCompile(`(?i)\bSQL\s+SECURITY\s+INVOKER\b`)
	returnTypeRE       = regexp.MustCompile(`^\s*([A-Za-z]+)`)
)

// functionRoutineRow is fd's row of information_schema.ROUTINES.
func functionRoutineRow(db string, fd functionData, collation string) sql.Row {
	head, _ := parseFunctionHead(sqltext.UnwrapVersionComments(fd.Create))
	chars := fd.Create
	if i := strings.Index(fd.Create, head.body); head.body != "" && i >= 0 {
		chars = fd.Create[:i]
	}
	deterministic := "NO"
	if deterministicRE.MatchString(chars) && !notDeterministicRE.MatchString(chars) {
		deterministic = "YES"
	}
	access := "CONTAINS SQL"
	if m := dataAccessRE.FindStringSubmatch(chars); m != nil {
		access = strings.ToUpper(m[1])
	}
	security := "DEFINER"
	if invokerRE.MatchString(chars) {
		security = "INVOKER"
	}
	dataType := ""
	if m := returnTypeRE.FindStringSubmatch(fd.Returns); m != nil {
		dataType = strings.ToLower(m[1])
	}
	return sql.Row{
		fd.Name, "def", db, fd.Name, "FUNCTION", dataType,
		nil, nil, nil, nil, nil, nil, nil,
		strings.ToLower(fd.Returns), // dtd_identifier
		"SQL", head.body, nil, "SQL", "SQL", deterministic, access, nil, security,
		fd.Created.UTC(), fd.Created.UTC(), fd.SQLMode, "", fd.Definer,
		"utf8mb4", "utf8mb4_0900_ai_ci", collation,
	}
}
