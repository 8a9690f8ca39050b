package sqlserver

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// The privileges of the statements that change a server or a cluster, which
// go-mysql-server does not check (SET GLOBAL, KILL of another account's
// connection, SHOW PROCESSLIST, the cluster's monitoring), checked at
// execution: statements in stored procedures and prepared statements pass
// there too. docs/replication.md lists what each statement needs.

// requirement is a set of global privileges of which one suffices.
type requirement struct {
	static  []sql.PrivilegeType
	dynamic []string // MySQL 8 dynamic privileges, lower case
	// text is what 1227 says is missing, as MySQL words it.
	text string
}

var (
	// needSetGlobal: SET GLOBAL and SET PERSIST of any variable
	// (cluster_role, read_only, cluster_sync_*, max_connections…).
	needSetGlobal = requirement{
		static:  []sql.PrivilegeType{sql.PrivilegeType_Super},
		dynamic: []string{"system_variables_admin"},
		text:    "SUPER or SYSTEM_VARIABLES_ADMIN",
	}
	// needClusterStatus: SHOW CLUSTER STATUS and the rows of
	// information_schema.MIRAJ_NODES / MIRAJ_REPLICATION (§17.5.2).
	needClusterStatus = requirement{
		static: []sql.PrivilegeType{sql.PrivilegeType_ReplicationClient, sql.PrivilegeType_Process, sql.PrivilegeType_Super},
		text:   "PROCESS, REPLICATION CLIENT",
	}
	// needOthersThreads: KILL of a connection of another user.
	needOthersThreads = requirement{
		static:  []sql.PrivilegeType{sql.PrivilegeType_Process, sql.PrivilegeType_Super},
		dynamic: []string{"connection_admin"},
	}
	// needAllThreads: SHOW PROCESSLIST and information_schema.PROCESSLIST
	// list every connection, not only the user's own.
	needAllThreads = requirement{static: []sql.PrivilegeType{sql.PrivilegeType_Process, sql.PrivilegeType_Super}}
)

// grants answers privilege questions about a session's account from
// go-mysql-server's grant tables. Safe for concurrent use.
type grants struct{ db *mysql_db.MySQLDb }

// meets reports whether the session's account holds one of r's privileges
// globally. A server whose grant tables are off allows everything, as
// go-mysql-server does.
func (g grants) meets(ctx *sql.Context, r requirement) bool {
	if !g.db.Enabled() {
		return true
	}
	set := g.db.UserActivePrivilegeSet(ctx)
	for _, p := range r.static {
		if set.Has(p) {
			return true
		}
	}
	for _, p := range r.dynamic {
		if set.HasDynamic(p) {
			return true
		}
	}
	return false
}

// account returns the session's account as MySQL names it in errors
// ('ro'@'%') and whether it has a password.
func (g grants) account(ctx *sql.Context) (user, host string, password bool) {
	c := ctx.Session.Client()
	rd := g.db.Reader()
	defer rd.Close()
	if u := g.db.GetUser(rd, c.User, c.Address, false); u != nil {
		return u.User, u.Host, u.AuthString != ""
	}
	return c.User, c.Address, false
}

// refuse is the 1227 of a statement that needs r.
func (g grants) refuse(r requirement) error {
	return toSQLError(&accessDenied{kind: deniedGlobal, privilege: r.text})
}

// adminExec is the execution builder's first look at each node: it refuses
// what the session's account may not do, then lets go-mysql-server's
// builder run the node (a nil iterator), or runs it itself with fewer rows
// (SHOW PROCESSLIST).
type adminExec struct {
	grants grants
	// exec is the builder adminExec is the first look of, which builds
	// the children of the nodes adminExec wraps (so that adminExec sees
	// them too).
	exec *execBuilder
	srv  *Server
}

// execBuilder holds the execution builder, set once it is made.
type execBuilder struct{ sql.NodeExecBuilder }

var _ sql.NodeExecBuilder = adminExec{}

func (x adminExec) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	if s, ok := ctx.Session.(*Session); ok && s.insertSource.node != nil && s.insertSource.node == n {
		// The rows of the INSERT being built: built as any node, then
		// their text values for numeric columns checked (numtext.go).
		src := s.insertSource
		s.insertSource = insertSource{}
		iter, err := x.exec.Build(ctx, n, row)
		if err != nil {
			return nil, err
		}
		return newInsertRows(ctx, iter, src), nil
	}
	switch n := n.(type) {
	case *plan.Call:
		if n.Procedure != nil && n.Procedure.ExternalProc == nil && n.Procedure.ValidationError == nil {
			return runCall(ctx, x.srv, n, row) // routine.go
		}
		return nil, nil
	case *plan.Set:
		if err := x.checkSet(ctx, n); err != nil {
			return nil, err
		}
		if fromClient(ctx) {
			if err := checkIsolation(ctx, n); err != nil {
				return nil, err
			}
			if err := checkSetValues(ctx, n); err != nil {
				return nil, err
			}
			warnUnused(ctx, n)
		}
		// A SET statement's own assignments of variables: a SET inside a
		// trigger (SET NEW.x = …) or a routine hands its row on.
		if !fromClient(ctx) || !setsVariablesOnly(n) || len(row) > 0 || !setStatementRE.MatchString(ctx.Query()) {
			return nil, nil
		}
		// MySQL's OK packet of a SET counts no rows (go-mysql-server's
		// counted one). Only a statement of its own: a trigger's SET
		// NEW.col = … yields the row being written.
		if _, err := defaultRows(ctx, n, row); err != nil {
			return nil, err
		}
		return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
	case *plan.Kill:
		if err := x.checkKill(ctx, n); err != nil {
			return nil, err
		}
		if n.Kt == plan.KillType_Connection && x.srv != nil {
			// Said before go-mysql-server cancels its statement: a
			// session waiting for secondaries answers 1927, not OK.
			if s := x.srv.session(n.ConnID); s != nil {
				s.connKilled.Store(true)
			}
		}
		return nil, nil
	case *plan.Update, *plan.DeleteFrom:
		if d, ok := n.(*plan.DeleteFrom); ok {
			if iter, err := x.multiDelete(ctx, d, row); iter != nil || err != nil {
				return iter, err
			}
		}
		// go-mysql-server plans a single-table UPDATE or DELETE without
		// the analyzer's own rules: integer arithmetic is checked here,
		// numbers that meet dates read as dates.
		if !fromClient(ctx) {
			return nil, nil
		}
		checked, sameDates, err := numbersAsDates(n)
		if err != nil {
			return nil, err
		}
		checked, same, err := checkArithmetic(checked)
		if err != nil {
			return nil, err
		}
		same = same && sameDates
		if u, ok := n.(*plan.Update); ok {
			var sameText transform.TreeIdentity
			checked, sameText, err = checkUpdateText(ctx, checked, u.Ignore)
			if err != nil {
				return nil, err
			}
			same = same && sameText
		}
		if same {
			return nil, nil
		}
		return x.exec.Build(ctx, checked, row)
	case *plan.CreateUser:
		return x.createUser(ctx, n)
	case *plan.Grant:
		return x.grantDynamic(ctx, n, row)
	case *plan.Revoke:
		return x.revokeDynamic(ctx, n, row)
	case *plan.InsertInto:
		// MySQL's texts for errors about a value (messages.go).
		s, ok := ctx.Session.(*Session)
		if !ok || !s.mysql {
			return nil, nil
		}
		if s.buildingInsert == n {
			return nil, nil // adminExec's own call below: go-mysql-server builds it
		}
		s.takeDelayed(ctx)
		// A single-row INSERT … VALUES skips the analyzer's own rules:
		// its numbers put in dates are read as dates, its integer
		// arithmetic checked here.
		if dated, same, err := numbersAsDates(n); err != nil {
			return nil, err
		} else if !same {
			n = dated.(*plan.InsertInto)
		}
		checked, _, err := checkArithmetic(n)
		if err != nil {
			return nil, err
		}
		if len(n.OnDupExprs) > 0 {
			// ON DUPLICATE KEY UPDATE's assignments, checked as an
			// UPDATE's are (rangecheck.go, numtext.go).
			at := func() int { return max(s.insertCalls, 1) } // the row that found its duplicate counts already
			if checked, _, err = checkAssignments(ctx, checked, n.Ignore, at); err != nil {
				return nil, err
			}
		}
		n = checked.(*plan.InsertInto)
		src, same, err := checkArithmetic(n.Source)
		if err != nil {
			return nil, err
		}
		if !same {
			n = n.WithSource(src)
		}
		s.buildingInsert = n
		tally := &insertTally{}
		s.insertSource = insertSource{node: n.Source, sch: n.Destination.Schema(), ignore: n.Ignore, tally: tally}
		iter, err := x.exec.Build(ctx, n, row)
		s.buildingInsert, s.insertSource = nil, insertSource{}
		if err != nil {
			return nil, err
		}
		it := newInsertErrors(iter, s, n.Destination.Schema())
		it.info = newInsertInfo(n, tally)
		it.replace = n.IsReplace
		it.noInsertID = (n.IsReplace || len(n.OnDupExprs) > 0) && !hasAutoIncrement(n.Destination.Schema())
		if err := x.rowTriggers(ctx, s, n, it); err != nil {
			iter.Close(ctx)
			return nil, err
		}
		if s.trig.wrapInsert {
			// Under an AFTER trigger: the wrapper goes around the
			// trigger executor (triggerexec.go).
			s.trig.wrapInsert, s.trig.wrapper = false, it
			return iter, nil
		}
		return it, nil
	case *plan.TriggerExecutor:
		return x.triggerExecutor(ctx, n, row)
	case ownNode:
		return n.buildWith(ctx, x, row)
	case *plan.ShowTableStatus:
		if !fromClient(ctx) {
			return nil, nil // go-mysql-server's engine suites assert its own form
		}
		return showTableStatus(ctx, n, row)
	case *plan.ShowIndexes:
		if !fromClient(ctx) {
			return nil, nil // go-mysql-server's engine suites assert its own form
		}
		return showIndexes(ctx, n, row)
	case *plan.AnalyzeTable:
		if !fromClient(ctx) {
			return nil, nil // go-mysql-server's engine suites assert its own form
		}
		return analyzeTables(ctx, n), nil
	case *plan.ShowCreateTable:
		if !fromClient(ctx) {
			return nil, nil // go-mysql-server's engine suites assert its own form
		}
		if n.IsView {
			return showCreateView(ctx, n, row) // viewdml.go
		}
		return showCreateTable(ctx, n, row)
	case *plan.CreateTable:
		// MySQL notes that CREATE TABLE IF NOT EXISTS found the table
		// (go-mysql-server says nothing); the statement goes on.
		if s, ok := ctx.Session.(*Session); ok && s.mysql && n.IfNotExists() && !n.Temporary() && n.Database() != nil {
			if _, found, err := n.Database().GetTableInsensitive(ctx, n.Name()); err == nil && found {
				ctx.Session.Warn(&sql.Warning{Level: "Note", Code: mysql.ERTableExists, Message: fmt.Sprintf("Table '%s' already exists", n.Name())})
			}
		}
		if fromClient(ctx) {
			if err := checkTableOptions(ctx, ctx.Query(), n.Name()); err != nil {
				return nil, err
			}
			adoptTimeDigits(ctx, n.PkSchema().Schema...) // timetype.go
		}
		return nil, nil
	case *plan.AddColumn:
		if fromClient(ctx) {
			adoptTimeDigits(ctx, n.Column())
		}
		return nil, nil
	case *plan.ModifyColumn:
		if fromClient(ctx) {
			adoptTimeDigits(ctx, n.NewColumn())
		}
		return nil, nil
	case *plan.Limit:
		// LIMIT 0 returns no row without running its query, as in
		// MySQL (go-mysql-server's GROUP BY under it panicked when
		// closed unread). SQL_CALC_FOUND_ROWS still counts the rows.
		if lit, ok := n.Limit.(*expression.Literal); ok && !n.CalcFoundRows {
			if v, _, err := types.Int64.Convert(ctx, lit.Value()); err == nil && v == int64(0) {
				return sql.RowsToRowIter(), nil
			}
		}
		return nil, nil
	case *plan.SetOp:
		return x.setOp(ctx, n, row)
	case *plan.Distinct:
		return x.distinct(ctx, n, n.Child, row)
	case *plan.OrderedDistinct:
		return x.distinct(ctx, n, n.Child, row)
	case *plan.Sort:
		return x.sortNode(ctx, n, row)
	case *plan.TopN:
		return x.topNNode(ctx, n, row)
	case *plan.CreateDB:
		// CREATE DATABASE IF NOT EXISTS of a database that exists
		// changes nothing: MySQL counts no row (go-mysql-server one).
		s, ok := ctx.Session.(*Session)
		if !ok || !s.mysql || !n.IfNotExists || n.Catalog == nil || !n.Catalog.HasDatabase(ctx, n.DbName) {
			return nil, nil
		}
		if _, err := defaultRows(ctx, n, row); err != nil {
			return nil, err
		}
		return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
	case *plan.ShowColumns:
		if !fromClient(ctx) {
			return nil, nil // go-mysql-server's engine suites assert its own form
		}
		return showColumns(ctx, n, row, x.grants.db)
	case *plan.ShowVariables:
		if !fromClient(ctx) {
			return nil, nil
		}
		return showVariables(ctx, n, row)
	case *plan.DescribeQuery:
		// Client connections only: go-mysql-server's engine suites
		// assert its placeholder row.
		if !fromClient(ctx) || n.Format.Plan || n.Format.Analyze {
			return nil, nil
		}
		return explain(ctx, n)
	case *plan.LoadData:
		if !fromClient(ctx) {
			return nil, nil
		}
		return loadData(ctx, n, row)
	case *plan.ShowProcessList:
		iter, err := rowexec.DefaultBuilder.Build(ctx, n, row)
		if err != nil {
			return nil, err
		}
		iter = threadStates{iter}
		if x.grants.meets(ctx, needAllThreads) {
			return iter, nil
		}
		return &ownThreads{RowIter: iter, user: ctx.Session.Client().User}, nil
	}
	return nil, nil
}

// checkSet refuses a SET that assigns a global or persisted variable
// without SUPER or SYSTEM_VARIABLES_ADMIN, before any of its assignments
// is made. Session variables need nothing; an unknown variable is left to
// the statement's own error, as MySQL reports 1193 before 1227.
func (x adminExec) checkSet(ctx *sql.Context, n *plan.Set) error {
	for _, e := range n.Exprs {
		sf, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		sv, ok := sf.LeftChild.(*expression.SystemVar)
		if !ok || sv.Scope == nil || sv.Scope.IsSessionOnly() {
			continue
		}
		if _, _, known := sql.SystemVariables.GetGlobal(sv.Name); !known {
			continue
		}
		if !x.grants.meets(ctx, needSetGlobal) {
			return x.grants.refuse(needSetGlobal)
		}
	}
	return nil
}

// checkKill lets a user kill its own connections, and those of others with
// PROCESS, CONNECTION_ADMIN or SUPER (1095 otherwise). An id that is not a
// connection is 1094.
func (x adminExec) checkKill(ctx *sql.Context, n *plan.Kill) error {
	if n.ConnID == ctx.Session.ID() {
		return nil
	}
	for _, p := range ctx.ProcessList.Processes() {
		if p.Connection != n.ConnID {
			continue
		}
		if p.User == ctx.Session.Client().User || x.grants.meets(ctx, needOthersThreads) {
			return nil
		}
		return toSQLError(&accessDenied{kind: deniedThread, thread: n.ConnID})
	}
	return errNoSuchThread(n.ConnID)
}

// ownThreads passes the rows of a process list whose user (column 1, in
// SHOW PROCESSLIST and information_schema.PROCESSLIST alike) is the
// session's.
type ownThreads struct {
	sql.RowIter
	user string
}

func (it *ownThreads) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		r, err := it.RowIter.Next(ctx)
		if err != nil {
			return nil, err
		}
		if len(r) > 1 && r[1] == it.user {
			return r, nil
		}
	}
}

// threadStates writes the State column (the seventh) of SHOW PROCESSLIST
// and information_schema.PROCESSLIST as MySQL does for a statement that
// runs (Command "Query"): "executing", or what it waits for before it
// begins ("Waiting for table metadata lock", "Waiting for global read
// lock"). go-mysql-server writes "running", or for a statement that reads
// a table a dump of its progress through the plan.
type threadStates struct{ sql.RowIter }

// The positions of Command and State in both tables.
const (
	processCommandCol = 4
	processStateCol   = 6
)

func (it threadStates) Next(ctx *sql.Context) (sql.Row, error) {
	r, err := it.RowIter.Next(ctx)
	if err != nil || len(r) <= processStateCol {
		return r, err
	}
	if cmd, ok := r[processCommandCol].(string); ok && cmd == "Query" {
		r = append(sql.Row(nil), r...)
		r[processStateCol] = "executing"
		if pl, ok := ctx.ProcessList.(*processList); ok {
			var id int64
			switch v := r[0].(type) {
			case int64:
				id = v
			case uint64:
				id = int64(v)
			case int32:
				id = int64(v)
			case uint32:
				id = int64(v)
			}
			if st := pl.waitState(uint32(id)); st != "" {
				r[processStateCol] = st
			}
		}
	}
	return r, nil
}

// ownThreadsTable is information_schema.PROCESSLIST as the session's
// account may see it: every connection with PROCESS, its own otherwise.
type ownThreadsTable struct {
	sql.Table
	grants grants
}

// AssignCatalog gives go-mysql-server's table the catalog it reads from.
func (t ownThreadsTable) AssignCatalog(cat sql.Catalog) sql.Table {
	if ct, ok := t.Table.(sql.CatalogTable); ok {
		return ownThreadsTable{Table: ct.AssignCatalog(cat), grants: t.grants}
	}
	return t
}

func (t ownThreadsTable) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	iter, err := t.Table.PartitionRows(ctx, p)
	if err != nil {
		return nil, err
	}
	iter = threadStates{iter}
	if t.grants.meets(ctx, needAllThreads) {
		return iter, nil
	}
	return &ownThreads{RowIter: iter, user: ctx.Session.Client().User}, nil
}

// dynamicPrivileges are the MySQL 8 dynamic privileges Miraj checks that
// go-mysql-server's GRANT and REVOKE do not know: adminExec grants and
// revokes them itself (global level only, as in MySQL), and the rest of
// the statement goes to go-mysql-server.
var dynamicPrivileges = []string{"system_variables_admin", "connection_admin"}

// splitDynamic separates the privileges of dynamicPrivileges (lower case)
// from the others.
func splitDynamic(privs []plan.Privilege) (ours []string, rest []plan.Privilege) {
	for _, p := range privs {
		if name := strings.ToLower(p.Dynamic); p.Type == plan.PrivilegeType_Dynamic && slices.Contains(dynamicPrivileges, name) {
			ours = append(ours, name)
			continue
		}
		rest = append(rest, p)
	}
	return ours, rest
}

// mayGrant: granting or revoking a dynamic privilege needs UPDATE on the
// mysql database or that privilege WITH GRANT OPTION, as in MySQL.
func (g grants) mayGrant(ctx *sql.Context, privs []string) error {
	if g.db.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{Database: "mysql"}, sql.PrivilegeType_Update)) {
		return nil
	}
	grantable := g.db.UserActivePrivilegeSet(ctx).ToSliceDynamic(true)
	for _, p := range privs {
		if !slices.Contains(grantable, strings.ToUpper(p)) {
			return toSQLError(&accessDenied{kind: deniedGlobal, privilege: "GRANT OPTION"})
		}
	}
	return nil
}

func (x adminExec) grantDynamic(ctx *sql.Context, n *plan.Grant, row sql.Row) (sql.RowIter, error) {
	ours, rest := splitDynamic(n.Privileges)
	if len(ours) == 0 {
		return nil, nil
	}
	return x.changeDynamic(ctx, n.PrivilegeLevel, n.Users, ours, len(rest) > 0, func() sql.Node {
		c := *n
		c.Privileges = rest
		return &c
	}, row, func(u *mysql_db.User) { u.PrivilegeSet.AddGlobalDynamic(n.WithGrantOption, ours...) })
}

func (x adminExec) revokeDynamic(ctx *sql.Context, n *plan.Revoke, row sql.Row) (sql.RowIter, error) {
	ours, rest := splitDynamic(n.Privileges)
	if len(ours) == 0 {
		return nil, nil
	}
	return x.changeDynamic(ctx, n.PrivilegeLevel, n.Users, ours, len(rest) > 0, func() sql.Node {
		c := *n
		c.Privileges = rest
		return &c
	}, row, func(u *mysql_db.User) { u.PrivilegeSet.RemoveGlobalDynamic(ours...) })
}

// changeDynamic applies change to each user's account after running the
// statement's other privileges (restNode, when hasRest) through
// go-mysql-server, and persists the accounts (which carries them to the
// cluster's other nodes).
func (x adminExec) changeDynamic(ctx *sql.Context, level plan.PrivilegeLevel, users []plan.UserName, ours []string,
	hasRest bool, restNode func() sql.Node, row sql.Row, change func(*mysql_db.User)) (sql.RowIter, error) {
	if level.Database != "*" || level.TableRoutine != "*" {
		return nil, errIllegalPrivilegeLevel(ours)
	}
	if err := x.grants.mayGrant(ctx, ours); err != nil { // checked at planning too (authorization)
		return nil, err
	}
	if hasRest {
		iter, err := rowexec.DefaultBuilder.Build(ctx, restNode(), row)
		if err != nil {
			return nil, err
		}
		if _, err := sql.RowIterToRows(ctx, iter); err != nil {
			return nil, err
		}
	}
	db := x.grants.db
	ed := db.Editor()
	defer ed.Close()
	for _, u := range users {
		user := db.GetUser(ed, u.Name, u.Host, false)
		if user == nil {
			return nil, sql.ErrGrantUserDoesNotExist.New()
		}
		change(user)
	}
	if err := db.Persist(ctx, ed); err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

// distinct runs a DISTINCT over rows with strings by MySQL's comparison
// under their collations (distinct.go), for client connections; nil leaves
// it to go-mysql-server (no collated string column, or another session).
func (x adminExec) distinct(ctx *sql.Context, n, child sql.Node, row sql.Row) (sql.RowIter, error) {
	s, ok := ctx.Session.(*Session)
	if !ok || !s.mysql || !hasCollatedString(child.Schema()) {
		return nil, nil
	}
	iter, err := x.exec.Build(ctx, child, row)
	if err != nil {
		return nil, err
	}
	return newCollatedDistinct(iter, child.Schema()), nil
}

// setStatementRE recognises a SET statement.
var setStatementRE = regexp.MustCompile(`(?is)^\s*SET\s`)

// setsVariablesOnly reports whether a SET assigns system or user variables
// only (not a trigger's NEW row, nor a routine's local variables).
func setsVariablesOnly(n *plan.Set) bool {
	for _, e := range n.Exprs {
		sf, ok := e.(*expression.SetField)
		if !ok {
			return false
		}
		switch sf.LeftChild.(type) {
		case *expression.SystemVar, *expression.UserVar:
		default:
			return false
		}
	}
	return true
}
