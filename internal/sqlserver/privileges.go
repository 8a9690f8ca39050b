package sqlserver

import (
	"regexp"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
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
	// information_schema.MIRAJ_NODES / MIRAJ_REPLICATION (§17.5.2) /
	// MIRAJ_STREAMS (streams.go).
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
	return mysqlerr.From(&mysqlerr.Denied{Kind: mysqlerr.DeniedGlobal, Privilege: r.text})
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
		return mysqlerr.From(&mysqlerr.Denied{Kind: mysqlerr.DeniedThread, Thread: n.ConnID})
	}
	return mysqlerr.ErrNoSuchThread(n.ConnID)
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
			return mysqlerr.From(&mysqlerr.Denied{Kind: mysqlerr.DeniedGlobal, Privilege: "GRANT OPTION"})
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
		return nil, mysqlerr.ErrIllegalPrivilegeLevel(ours)
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
	if !ok || !s.mysql || !rules.HasCollatedString(child.Schema()) {
		return nil, nil
	}
	iter, err := x.exec.Build(ctx, child, row)
	if err != nil {
		return nil, err
	}
	return rules.NewCollatedDistinct(iter, child.Schema()), nil
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
