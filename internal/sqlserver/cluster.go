package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/repl"
)

// The SQL side of cluster replication: system variables, read-only
// enforcement (1290), SHOW CLUSTER STATUS and information_schema.MIRAJ_*.

// errReadOnly is what a secondary answers to a write (§17.6).
func errReadOnly() error {
	return mysql.NewSQLError(mysql.EROptionPreventsStatement, "HY000",
		"The MySQL server is running with the --read-only option so it cannot execute this statement")
}

// cluster is the replication node, when the server is one (nil otherwise).
var clusterNode atomic.Pointer[repl.Node]

func currentRole() string {
	n := clusterNode.Load()
	if n == nil {
		return "NONE"
	}
	r := n.Role()
	if r == repl.RolePromoting {
		return string(repl.RoleSecondary)
	}
	return string(r)
}

// liveVariables are global-only values read from the node each time, never
// from a session's copy.
var liveVariables = map[string]func() any{
	"cluster_role": func() any { return currentRole() },
	"cluster_epoch": func() any {
		if n := clusterNode.Load(); n != nil {
			return uint64(n.Epoch())
		}
		return uint64(0)
	},
	"cluster_name": func() any {
		if n := clusterNode.Load(); n != nil {
			return n.ClusterName()
		}
		return ""
	},
	"cluster_node_id": func() any {
		if n := clusterNode.Load(); n != nil {
			return n.NodeID()
		}
		return ""
	},
	"cluster_primary": func() any {
		if n := clusterNode.Load(); n != nil {
			return n.PrimaryID()
		}
		return ""
	},
	"server_id": func() any {
		if n := clusterNode.Load(); n != nil {
			return n.ServerID()
		}
		return binlogServerID()
	},
	"read_only": func() any {
		if n := clusterNode.Load(); n != nil && !n.Writable() {
			return int8(1)
		}
		return int8(0)
	},
	"have_ssl":     func() any { return haveSSL() }, // servertls.go
	"have_openssl": func() any { return haveSSL() },
}

// liveRegistry answers the global values of the live variables from the
// node (SELECT @@global.x, SHOW GLOBAL VARIABLES): go-mysql-server keeps a
// stored copy for a settable variable such as cluster_role, and
// GetAllGlobalVariables ignores value functions.
type liveRegistry struct{ sql.SystemVariableRegistry }

func (r liveRegistry) GetGlobal(name string) (sql.SystemVariable, interface{}, bool) {
	if v, ok := diagnosticsVariables[strings.ToLower(name)]; ok {
		return v, uint64(0), true
	}
	v, val, ok := r.SystemVariableRegistry.GetGlobal(name)
	if fn, live := liveVariables[strings.ToLower(name)]; live && ok {
		return v, fn(), true
	}
	return v, val, ok
}

// SetGlobal and AssignValues count the change, so that the values kept
// from the registry are read again (longQueryTime).
func (r liveRegistry) SetGlobal(ctx *sql.Context, name string, val interface{}) error {
	defer globalsChanged.Add(1)
	return r.SystemVariableRegistry.SetGlobal(ctx, name, val)
}

func (r liveRegistry) AssignValues(vals map[string]interface{}) error {
	defer globalsChanged.Add(1)
	return r.SystemVariableRegistry.AssignValues(vals)
}

func (r liveRegistry) GetAllGlobalVariables() map[string]interface{} {
	m := r.SystemVariableRegistry.GetAllGlobalVariables()
	for name, fn := range liveVariables {
		if _, ok := m[name]; ok {
			m[name] = fn()
		}
	}
	return m
}

func registerClusterVariables() {
	var vars []sql.SystemVariable
	for name, fn := range liveVariables {
		fn := fn
		v := &sql.MysqlSystemVariable{Name: name, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Global),
			ValueFunction: func() (any, error) { return fn(), nil }}
		switch name {
		case "cluster_epoch":
			v.Type, v.Default = types.Uint64, uint64(0)
		case "server_id":
			v.Type, v.Default = types.Uint32, uint32(1)
		case "read_only":
			v.Type, v.Default = types.NewSystemBoolType(name), int8(0)
		default:
			v.Type, v.Default = types.NewSystemStringType(name), ""
		}
		if name == "cluster_role" {
			// Settable: SET GLOBAL cluster_role = 'primary' designates
			// this node the primary of a new epoch.
			v.ValueFunction = nil
			v.Dynamic = true
			v.Default = "NONE"
			v.NotifyChanged = func(ctx *sql.Context, scope sql.SystemVariableScope, val sql.SystemVarValue) error {
				return setClusterRole(ctx, fmt.Sprint(val.Val))
			}
		}
		vars = append(vars, v)
	}
	vars = append(vars, syncVariables()...)
	sql.SystemVariables.AddSystemVariables(vars)
	if _, done := sql.SystemVariables.(liveRegistry); !done {
		sql.SystemVariables = liveRegistry{sql.SystemVariables}
	}
}

func setClusterRole(ctx context.Context, v string) error {
	n := clusterNode.Load()
	if n == nil {
		return fmt.Errorf("cluster_role: this server is not a cluster node (no cluster configuration)")
	}
	var err error
	switch strings.ToLower(v) {
	case "primary":
		err = n.Promote(ctx, false)
	case "force_primary":
		err = n.Promote(ctx, true)
	case "secondary":
		err = n.Demote()
	default:
		return fmt.Errorf("cluster_role: '%s' is not a role this server can take (allowed: 'primary', 'force_primary', 'secondary')", v)
	}
	if errors.Is(err, repl.ErrPromotionRefused) {
		// Unwrapped: a wrapped SQL error would reach the client as 1105.
		return mysql.NewSQLError(errPromotionRefused, "HY000", "%s", err.Error())
	}
	return err
}

// errPromotionRefused is Miraj's error 9003 (§17.4.1).
const errPromotionRefused = 9003

// GetSessionVariable reads the live value of the cluster variables, which
// have no session copy to go stale.
func (s *Session) GetSessionVariable(ctx *sql.Context, name string) (any, error) {
	if fn, ok := liveVariables[strings.ToLower(name)]; ok {
		return fn(), nil
	}
	if strings.EqualFold(name, varLastPosition) {
		return s.causal.token(), nil // causal.go
	}
	if n, ok := s.diagnosticsVariable(name); ok {
		return n, nil
	}
	if !s.syncOwn && strings.EqualFold(name, varSyncCommit) {
		// A session that has not set its own level follows the server's
		// (§17.8.2).
		return globalValue(varSyncCommit), nil
	}
	return s.BaseSession.GetSessionVariable(ctx, name)
}

// accountStatements change users and grants: refused on a secondary.
func isAccountStatement(n sql.Node) bool {
	switch n.(type) {
	case *plan.CreateUser, *plan.DropUser, *plan.RenameUser, *plan.AlterUser, *plan.Grant, *plan.Revoke,
		*plan.CreateRole, *plan.DropRole, *plan.GrantRole, *plan.RevokeRole, *plan.RevokeAll, *plan.GrantProxy, *plan.RevokeProxy:
		return true
	}
	return false
}

// readOnlyRule refuses account management on a read-only node; data writes
// are refused by storage (storage.ErrReadOnly).
func readOnlyRule(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qf *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if node := clusterNode.Load(); node == nil || node.Role() == repl.RolePrimary {
		return n, transform.SameTree, nil
	}
	if isAccountStatement(n) {
		return nil, transform.SameTree, errReadOnly()
	}
	return n, transform.SameTree, nil
}

const readOnlyRuleID analyzer.RuleId = 10_000

// showClusterStatus matches SHOW CLUSTER STATUS, which the parser does not
// know: it is answered from information_schema.MIRAJ_NODES, through the
// unlisted clusterStatusTable, which refuses an account without REPLICATION
// CLIENT or PROCESS (1227) where MIRAJ_NODES shows it no rows.
var showClusterStatus = regexp.MustCompile(`(?is)^\s*show\s+cluster\s+status\s*;?\s*$`)

// showOpenTables matches SHOW OPEN TABLES [{FROM | IN} db] [LIKE 'pattern'
// | WHERE expr], which the parser does not know.
var showOpenTables = regexp.MustCompile("(?is)^\\s*show\\s+open\\s+tables(?:\\s+(?:from|in)\\s+(`[^`]+`|[\\w$]+))?(?:\\s+like\\s+('(?:[^'\\\\]|\\\\.|'')*')|\\s+where\\s+(.+?))?\\s*;?\\s*$")

// openTablesQuery is SHOW OPEN TABLES as a query of information_schema:
// every table of every database (of db with FROM) is open, being held in
// memory; In_use counts the table locks held or asked for on it (inUse,
// LOCK TABLES), none is name-locked. The columns are MySQL's.
func openTablesQuery(db, like, where string, inUse map[lockedTable]int) string {
	use := "0"
	if len(inUse) > 0 {
		keys := make([]lockedTable, 0, len(inUse))
		for k := range inUse {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].db+"."+keys[i].name < keys[j].db+"."+keys[j].name })
		var b strings.Builder
		b.WriteString("CASE LOWER(CONCAT(TABLE_SCHEMA, '.', TABLE_NAME))")
		for _, k := range keys {
			fmt.Fprintf(&b, " WHEN %s THEN %d", sqlString(k.db+"."+k.name), inUse[k])
		}
		b.WriteString(" ELSE 0 END")
		use = b.String()
	}
	q := "SELECT TABLE_SCHEMA AS `Database`, TABLE_NAME AS `Table`, " + use + " AS `In_use`, 0 AS `Name_locked` FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE'"
	if db != "" {
		q += " AND TABLE_SCHEMA = '" + strings.ReplaceAll(strings.Trim(db, "`"), "'", "''") + "'"
	}
	if like != "" {
		q += " AND TABLE_NAME LIKE " + like
	}
	if where != "" {
		// The condition reads the statement's columns by name.
		return "SELECT * FROM (" + q + ") AS open_tables WHERE " + where + " ORDER BY 1, 2"
	}
	return q + " ORDER BY 1, 2"
}

// clusterParser is the MySQL parser plus Miraj's own statements.
type clusterParser struct{ sql.Parser }

// tableMaintenance matches CHECK, REPAIR and OPTIMIZE TABLE of one table,
// which the parser does not know. In memory there is nothing to check,
// repair or compact: they report OK for a table that exists (and fail as a
// SELECT would for one that does not), on any node (§17.6).
var tableMaintenance = regexp.MustCompile("(?is)^\\s*(check|repair|optimize)\\s+(?:(?:no_write_to_binlog|local)\\s+)?table\\s+(`?[\\w$]+`?(?:\\.`?[\\w$]+`?)?)(?:\\s+(?:for\\s+upgrade|quick|fast|medium|extended|changed|use_frm))*\\s*;?\\s*$")

func (p clusterParser) rewrite(ctx context.Context, q string) string {
	if showClusterStatus.MatchString(q) {
		return "SELECT * FROM information_schema." + clusterStatusTable
	}
	if m := showOpenTables.FindStringSubmatch(q); m != nil {
		var inUse map[lockedTable]int
		if c, ok := ctx.(*sql.Context); ok {
			if s, ok := c.Session.(*Session); ok {
				inUse = s.tables.inUse()
			}
		}
		return openTablesQuery(m[1], m[2], m[3], inUse)
	}
	if m := tableMaintenance.FindStringSubmatch(q); m != nil {
		op, name := strings.ToLower(m[1]), m[2]
		label := fmt.Sprintf("CONCAT(DATABASE(), '.', '%s')", strings.Trim(name, "`"))
		if strings.Contains(name, ".") {
			label = "'" + strings.ReplaceAll(name, "`", "") + "'"
		}
		return fmt.Sprintf("SELECT %s AS `Table`, '%s' AS `Op`, 'status' AS `Msg_type`, 'OK' AS `Msg_text` FROM dual WHERE (SELECT COUNT(*) FROM %s) >= 0", label, op, name)
	}
	if alterTableRE.MatchString(q) {
		return quoteAfterColumn(q)
	}
	if m := createIndexOptionsRE.FindStringSubmatchIndex(q); m != nil {
		return q[:m[2]] + q[m[3]:]
	}
	return q
}

// createIndexOptionsRE matches CREATE INDEX with its ALGORITHM and LOCK
// clauses (group 1), which go-mysql-server's parser refuses there (it
// takes them in ALTER TABLE): they are dropped, as ALTER TABLE's are. The
// index is built in place, without blocking the table's reads and writes
// (a write that commits meanwhile and the index's build are checked
// against each other at commit, 1213 for the later).
var createIndexOptionsRE = regexp.MustCompile(`(?is)^\s*create\s+(?:unique\s+|fulltext\s+|spatial\s+)?index\b.*?\)((?:\s*(?:algorithm|lock)\s*=?\s*\w+)+)\s*;?\s*$`)

// alterTableRE matches ALTER TABLE.
var alterTableRE = regexp.MustCompile(`(?is)^\s*alter\s+table\s`)

// afterColumnRE matches AFTER and an unquoted column name.
var afterColumnRE = regexp.MustCompile(`(?i)^after(\s+)([a-z_][a-z0-9_$]*)`)

// quoteAfterColumn quotes the column named by ALTER TABLE's AFTER col
// (outside string literals and quoted names): go-mysql-server's parser
// refuses a column named like one of its keywords there (AFTER name,
// AFTER status), which MySQL accepts.
func quoteAfterColumn(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(q) && q[j] != c {
				if q[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(q))
			b.WriteString(q[i:j])
			i = j
		case (c == 'a' || c == 'A') && (i == 0 || !isIdentByte(q[i-1])):
			if m := afterColumnRE.FindStringSubmatch(q[i:]); m != nil && (i+len(m[0]) == len(q) || !isIdentByte(q[i+len(m[0])])) {
				b.WriteString(q[i:i+5] + m[1] + "`" + m[2] + "`")
				i += len(m[0])
				continue
			}
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// renameTable matches RENAME TABLE, refused in a cluster (§17.7) before
// go-mysql-server resolves its names (it asks for a current database even
// for qualified ones).
var renameTable = regexp.MustCompile(`(?is)^\s*rename\s+tables?\s`)

// refuse returns the error of a statement refused before parsing.
func (p clusterParser) refuse(q string) error {
	if clusterNode.Load() != nil && renameTable.MatchString(q) {
		return errRenameInCluster()
	}
	return nil
}

// errRenameInCluster is §17.7's refusal of RENAME TABLE in a cluster.
func errRenameInCluster() error {
	return mysql.NewSQLError(mysql.EROptionPreventsStatement, "HY000",
		"RENAME TABLE is not allowed in a cluster: create the new table, copy the rows (INSERT … SELECT), then drop the old one")
}

func (p clusterParser) ParseSimple(q string) (ast.Statement, error) {
	if err := p.refuse(q); err != nil {
		return nil, err
	}
	return parseQuoting(p.rewrite(context.Background(), q), p.Parser.ParseSimple)
}

// parsed is what the parser's Parse and ParseWithOptions return.
type parsed struct {
	stmt             ast.Statement
	query, remainder string
}

func (p clusterParser) Parse(ctx *sql.Context, q string, multi bool) (ast.Statement, string, string, error) {
	if err := p.refuse(q); err != nil {
		return nil, "", "", err
	}
	r, err := parseQuoting(p.rewrite(ctx, q), func(q string) (parsed, error) {
		s, query, rest, err := p.Parser.Parse(ctx, q, multi)
		return parsed{s, query, rest}, err
	})
	return r.stmt, r.query, r.remainder, err
}

func (p clusterParser) ParseWithOptions(ctx context.Context, q string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	if err := p.refuse(q); err != nil {
		return nil, "", "", err
	}
	r, err := parseQuoting(p.rewrite(ctx, q), func(q string) (parsed, error) {
		s, query, rest, err := p.Parser.ParseWithOptions(ctx, q, delim, multi, o)
		return parsed{s, query, rest}, err
	})
	return r.stmt, r.query, r.remainder, err
}

func (p clusterParser) ParseOneWithOptions(ctx context.Context, q string, o ast.ParserOptions) (ast.Statement, int, error) {
	if err := p.refuse(q); err != nil {
		return nil, 0, err
	}
	type one struct {
		stmt ast.Statement
		n    int
	}
	r, err := parseQuoting(p.rewrite(ctx, q), func(q string) (one, error) {
		s, n, err := p.Parser.ParseOneWithOptions(ctx, q, o)
		return one{s, n}, err
	})
	return r.stmt, r.n, err
}

// accounts carries users and grants to the secondaries: the persisted file
// and a version bumped at each change.
type accounts struct {
	path    string
	version atomic.Uint64
}

func (a *accounts) data() []byte {
	data, _ := os.ReadFile(a.path)
	return data
}

// SetCluster makes the server a cluster node: writes follow the node's role,
// and the cluster's variables and tables answer from it.
func (s *Server) SetCluster(n *repl.Node) error {
	clusterNode.Store(n)
	return setSyncDefaults(n.SyncDefaults())
}

// ClusterAccounts returns the hooks replication uses to carry accounts.
func (s *Server) ClusterAccounts() repl.Accounts {
	return repl.Accounts{
		Version: s.acct.version.Load,
		Data:    s.acct.data,
		Install: func(data []byte) error {
			gms, reqs, err := splitAccountsFile(data)
			if err != nil {
				return err
			}
			if err := (accountPersister{path: s.accounts}).write(data); err != nil {
				return err
			}
			db := s.engine.Analyzer.Catalog.MySQLDb
			ctx := sql.NewContext(context.Background(), sql.WithSession(s.NewSession()))
			ed := db.Editor()
			defer ed.Close()
			if err := db.OverwriteUsersAndGrantData(ctx, ed, gms); err != nil {
				return err
			}
			s.acctTLS.replace(reqs)
			return nil
		},
	}
}

// clusterStatusTable is MIRAJ_NODES as SHOW CLUSTER STATUS reads it.
const clusterStatusTable = "MIRAJ_CLUSTER_STATUS"

// clusterTable is an information_schema table filled from the node, for
// the accounts that meet need (REPLICATION CLIENT or PROCESS, §17.5.2).
type clusterTable struct {
	name   string
	schema sql.Schema
	rows   func() []sql.Row
	grants grants
	// refuse: without the privilege, the statement fails (1227) rather
	// than seeing no rows.
	refuse bool
}

func (t *clusterTable) Name() string               { return t.name }
func (t *clusterTable) String() string             { return t.name }
func (t *clusterTable) Schema() sql.Schema         { return t.schema }
func (t *clusterTable) Collation() sql.CollationID { return sql.Collation_Information_Schema_Default }
func (t *clusterTable) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return &partitionIter{p: partition{}}, nil
}
func (t *clusterTable) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	switch {
	case t.grants.meets(ctx, needClusterStatus):
		return sql.RowsToRowIter(t.rows()...), nil
	case t.refuse:
		return nil, t.grants.refuse(needClusterStatus)
	}
	return sql.RowsToRowIter(), nil
}

func col(table, name string, typ sql.Type, nullable bool) *sql.Column {
	return &sql.Column{Name: name, Type: typ, Nullable: nullable, Source: table}
}

func nodesTable(g grants) *clusterTable {
	const tn = "MIRAJ_NODES"
	str := types.LongText
	return &clusterTable{name: tn, grants: g, schema: sql.Schema{
		col(tn, "NODE_ID", str, false), col(tn, "ADDRESS", str, false), col(tn, "ROLE", str, false),
		col(tn, "STATE", str, false), col(tn, "EPOCH", types.Uint64, false), col(tn, "LAG_BYTES", types.Int64, false),
		col(tn, "LAG_SECONDS", types.Float64, true), col(tn, "CONNECTED_SINCE", types.Datetime, true),
		col(tn, "LAST_ERROR", str, false), col(tn, "SYNC", str, true),
		col(tn, "COPY_BYTES_DONE", types.Int64, true), col(tn, "COPY_BYTES_TOTAL", types.Int64, true), col(tn, "COPY_PERCENT", types.Float64, true),
	}, rows: func() []sql.Row {
		n := clusterNode.Load()
		if n == nil {
			return nil
		}
		byNode := map[string]*copySum{}
		for _, p := range n.Copies() {
			k := strings.ToLower(copyRowNode(n, p))
			s := byNode[k]
			if s == nil {
				s = &copySum{}
				byNode[k] = s
			}
			s.done += p.Done
			s.total += p.Total
		}
		var out []sql.Row
		for _, r := range n.Nodes() {
			var lag, since, syncv any
			if r.LagSeconds != nil {
				lag = *r.LagSeconds
			}
			if r.ConnectedSince != nil {
				since = r.ConnectedSince.UTC().Truncate(time.Second)
			}
			if r.Sync != nil {
				syncv = *r.Sync
			}
			var done, total, pct any
			if s := byNode[strings.ToLower(r.NodeID)]; s != nil {
				done, total, pct = s.done, s.total, copyPercent(s.done, s.total)
			}
			out = append(out, sql.Row{r.NodeID, r.Address, r.Role, r.State, r.Epoch, r.LagBytes, lag, since, r.LastError, syncv, done, total, pct})
		}
		return out
	}}
}

// copySum is the copies under way of one node, summed over its databases.
type copySum struct{ done, total int64 }

// copyRowNode is the node whose rows show copy p: the one a seed goes to
// (or comes to, on a secondary), this node for its catch-up.
func copyRowNode(n *repl.Node, p repl.CopyProgress) string {
	if p.Kind == "catchup" {
		return n.NodeID()
	}
	return p.Node
}

// copyPercent is done of total as a percentage, NULL while total is unknown.
func copyPercent(done, total int64) any {
	if total <= 0 {
		return nil
	}
	return math.Round(1000*float64(done)/float64(total)) / 10
}

// copyColumns are the COPY, COPY_BYTES_DONE, COPY_BYTES_TOTAL and
// COPY_PERCENT of a row of MIRAJ_REPLICATION: NULL without a copy, and
// the total NULL while unknown (a secondary is not told the size).
func copyColumns(p repl.CopyProgress, ok bool) []any {
	if !ok {
		return []any{nil, nil, nil, nil}
	}
	var total any
	if p.Total > 0 {
		total = p.Total
	}
	return []any{strings.ToUpper(p.Kind), p.Done, total, copyPercent(p.Done, p.Total)}
}

func replicationTable(g grants) *clusterTable {
	const tn = "MIRAJ_REPLICATION"
	str := types.LongText
	lsn := func(name string) *sql.Column { return col(tn, name, types.Uint64, true) }
	return &clusterTable{name: tn, grants: g, schema: sql.Schema{
		col(tn, "NODE_ID", str, false), col(tn, "DATABASE", str, false), col(tn, "BASE_ID", str, false),
		lsn("SENT_LSN"), lsn("WRITTEN_LSN"), lsn("APPLIED_LSN"), lsn("RETAINED_LSN"), lsn("PRIMARY_LSN"), lsn("SYNCED_LSN"),
		col(tn, "COPY", str, true), col(tn, "COPY_BYTES_DONE", types.Int64, true), col(tn, "COPY_BYTES_TOTAL", types.Int64, true),
		col(tn, "COPY_PERCENT", types.Float64, true),
	}, rows: func() []sql.Row {
		n := clusterNode.Load()
		if n == nil {
			return nil
		}
		opt := func(p *uint64) any {
			if p == nil {
				return nil
			}
			return *p
		}
		copies := map[string]repl.CopyProgress{}
		for _, p := range n.Copies() {
			copies[strings.ToLower(copyRowNode(n, p))+"\x00"+strings.ToLower(p.Database)] = p
		}
		var out []sql.Row
		for _, r := range n.Replication() {
			key := strings.ToLower(r.NodeID) + "\x00" + strings.ToLower(r.Database)
			p, ok := copies[key]
			delete(copies, key)
			out = append(out, append(sql.Row{r.NodeID, r.Database, r.BaseID, opt(r.SentLSN), opt(r.WrittenLSN), opt(r.AppliedLSN),
				opt(r.RetainedLSN), opt(r.PrimaryLSN), opt(r.SyncedLSN)}, copyColumns(p, ok)...))
		}
		// A database received by a copy is not open yet: a row of its own.
		for _, p := range copies {
			out = append(out, append(sql.Row{copyRowNode(n, p), p.Database, "", nil, nil, nil, nil, nil, nil}, copyColumns(p, true)...))
		}
		return out
	}}
}

// infoSchema is information_schema with Miraj's tables added, and
// PROCESSLIST showing an account without PROCESS only its own connections.
type infoSchema struct {
	sql.Database
	extra  map[string]sql.Table // listed in information_schema.TABLES
	hidden map[string]sql.Table // not listed
	grants grants
	srv    *Server // INNODB_TRX's sessions (nil: none)
}

func (d *infoSchema) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	if t, ok := d.extra[strings.ToLower(name)]; ok {
		return t, true, nil
	}
	if t, ok := d.hidden[strings.ToLower(name)]; ok {
		return t, true, nil
	}
	t, ok, err := d.Database.GetTableInsensitive(ctx, name)
	if ok && strings.EqualFold(name, "processlist") {
		t = ownThreadsTable{Table: t, grants: d.grants}
	}
	if ok && d.srv != nil && isInnodbTrx(name) {
		t = d.srv.innodbTrxTable(t)
	}
	if it, isIS := t.(*information_schema.InformationSchemaTable); ok && isIS && perDatabaseTables[strings.ToLower(name)] && it.Reader != nil {
		w := *it
		w.Reader = perDatabase(it.Reader)
		if strings.EqualFold(name, "triggers") {
			w.Reader = actionOrders(w.Reader)
		}
		if strings.EqualFold(name, "views") {
			w.Reader = viewOptions(w.Reader) // viewdml.go
		}
		t = &w
	}
	if ct, isCT := t.(sql.CatalogTable); ok && isCT && strings.EqualFold(name, information_schema.RoutinesTableName) {
		t = &routinesTable{CatalogTable: ct} // storedfunc.go
	}
	if ok && strings.EqualFold(name, information_schema.ColumnsTableName) && fromClient(ctx) {
		t = columnsInfo(t)
	}
	if ct, isCT := t.(sql.CatalogTable); ok && isCT && strings.EqualFold(name, information_schema.StatisticsTableName) {
		t = &patchedInfoTable{CatalogTable: ct, patch: countCardinalities}
	}
	if ct, isCT := t.(sql.CatalogTable); ok && isCT && strings.EqualFold(name, information_schema.TablesTableName) && fromClient(ctx) {
		t = &patchedInfoTable{CatalogTable: ct, patch: tableSizes}
	}
	return t, ok, err
}

func (d *infoSchema) GetTableNames(ctx *sql.Context) ([]string, error) {
	names, err := d.Database.GetTableNames(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range d.extra {
		names = append(names, t.Name())
	}
	return names, nil
}

func wrapInfoSchema(db sql.Database, g grants, srv *Server) sql.Database {
	n, r := nodesTable(g), replicationTable(g)
	status := *nodesTable(g)
	status.refuse = true
	return &infoSchema{Database: db, grants: g, srv: srv,
		extra:  map[string]sql.Table{strings.ToLower(n.name): n, strings.ToLower(r.name): r},
		hidden: map[string]sql.Table{strings.ToLower(clusterStatusTable): &status},
	}
}
