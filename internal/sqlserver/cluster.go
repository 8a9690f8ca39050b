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

	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/show"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
)

// The SQL side of cluster replication: system variables, read-only
// enforcement (1290), SHOW CLUSTER STATUS and information_schema.MIRAJ_*.

// errReadOnly is what a secondary answers to a write (§17.6).
func errReadOnly() error {
	return mysqlerr.New(mysqlerr.ReadOnly)
}

// clusterRef holds the replication node of a server that is one: a
// Server's field (Server.cluster), which the server's sessions point to
// (Session.cluster).
type clusterRef struct{ p atomic.Pointer[repl.Node] }

// node returns the node, nil when the server is not a cluster node (or c
// is nil: a session without a server).
func (c *clusterRef) node() *repl.Node {
	if c == nil {
		return nil
	}
	return c.p.Load()
}

// clusterOf returns the node of the server whose session ctx has, nil when
// there is none.
func clusterOf(ctx *sql.Context) *repl.Node {
	if s, ok := ctx.Session.(*Session); ok {
		return s.cluster.node()
	}
	return nil
}

// processCluster is the node that go-mysql-server's process-wide
// registries answer from: the live global variables (liveVariables) and
// the status variables (mirajStatusValues) are read without a session, so
// without a server. SetCluster sets it with the server's own; one cluster
// node runs per process.
var processCluster clusterRef

func currentRole() string {
	n := processCluster.node()
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
		if n := processCluster.node(); n != nil {
			return uint64(n.Epoch())
		}
		return uint64(0)
	},
	"cluster_name": func() any {
		if n := processCluster.node(); n != nil {
			return n.ClusterName()
		}
		return ""
	},
	"cluster_node_id": func() any {
		if n := processCluster.node(); n != nil {
			return n.NodeID()
		}
		return ""
	},
	"cluster_primary": func() any {
		if n := processCluster.node(); n != nil {
			return n.PrimaryID()
		}
		return ""
	},
	"server_id": func() any {
		if n := processCluster.node(); n != nil {
			return n.ServerID()
		}
		return binlogServerID()
	},
	"read_only": func() any {
		if n := processCluster.node(); n != nil && !n.Writable() {
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
		if name == "server_id" {
			// Settable outside a cluster (§17.13.1): SET GLOBAL changes
			// the server's, SET SESSION the session's groups' (Session.
			// SetSessionVariable); reads of the global stay live.
			v.ValueFunction, v.Dynamic = nil, true
			v.Scope = sql.GetMysqlScope(sql.SystemVariableScope_Both)
			v.Type = types.NewSystemUintType(name, 1, 1<<32-1)
			v.Default = uint64(1)
			v.NotifyChanged = func(ctx *sql.Context, scope sql.SystemVariableScope, val sql.SystemVarValue) error {
				if !scope.IsGlobalOnly() {
					return nil
				}
				return setGlobalServerID(ctx, val.Val)
			}
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

func setClusterRole(ctx *sql.Context, v string) error {
	n := clusterOf(ctx)
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
	if id := s.serverID.Load(); id != 0 && strings.EqualFold(name, "server_id") {
		return id, nil // SET SESSION server_id's
	}
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
	if node := clusterOf(ctx); node == nil || node.Role() == repl.RolePrimary {
		return n, transform.SameTree, nil
	}
	if isAccountStatement(n) {
		return nil, transform.SameTree, errReadOnly()
	}
	return n, transform.SameTree, nil
}

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
	s.cluster.p.Store(n)
	processCluster.p.Store(n)
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

func nodesTable(g grants, cluster *clusterRef) *clusterTable {
	const tn = "MIRAJ_NODES"
	str := types.LongText
	return &clusterTable{name: tn, grants: g, schema: sql.Schema{
		col(tn, "NODE_ID", str, false), col(tn, "ADDRESS", str, false), col(tn, "ROLE", str, false),
		col(tn, "STATE", str, false), col(tn, "EPOCH", types.Uint64, false), col(tn, "LAG_BYTES", types.Int64, false),
		col(tn, "LAG_SECONDS", types.Float64, true), col(tn, "CONNECTED_SINCE", types.Datetime, true),
		col(tn, "LAST_ERROR", str, false), col(tn, "SYNC", str, true),
		col(tn, "COPY_BYTES_DONE", types.Int64, true), col(tn, "COPY_BYTES_TOTAL", types.Int64, true), col(tn, "COPY_PERCENT", types.Float64, true),
	}, rows: func() []sql.Row {
		n := cluster.node()
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

func replicationTable(g grants, cluster *clusterRef) *clusterTable {
	const tn = "MIRAJ_REPLICATION"
	str := types.LongText
	lsn := func(name string) *sql.Column { return col(tn, name, types.Uint64, true) }
	return &clusterTable{name: tn, grants: g, schema: sql.Schema{
		col(tn, "NODE_ID", str, false), col(tn, "DATABASE", str, false), col(tn, "BASE_ID", str, false),
		lsn("SENT_LSN"), lsn("WRITTEN_LSN"), lsn("APPLIED_LSN"), lsn("RETAINED_LSN"), lsn("PRIMARY_LSN"), lsn("SYNCED_LSN"),
		col(tn, "COPY", str, true), col(tn, "COPY_BYTES_DONE", types.Int64, true), col(tn, "COPY_BYTES_TOTAL", types.Int64, true),
		col(tn, "COPY_PERCENT", types.Float64, true),
	}, rows: func() []sql.Row {
		n := cluster.node()
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
	if ok && strings.EqualFold(name, information_schema.ColumnsTableName) && compat.FromClient(ctx) {
		t = show.ColumnsInfo(t)
	}
	if ct, isCT := t.(sql.CatalogTable); ok && isCT && strings.EqualFold(name, information_schema.StatisticsTableName) {
		t = &patchedInfoTable{CatalogTable: ct, patch: countCardinalities}
	}
	if ct, isCT := t.(sql.CatalogTable); ok && isCT && strings.EqualFold(name, information_schema.TablesTableName) && compat.FromClient(ctx) {
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
	n, r := nodesTable(g, &srv.cluster), replicationTable(g, &srv.cluster)
	st := streamsTable(g, srv.storage) // streams.go
	status := *nodesTable(g, &srv.cluster)
	status.refuse = true
	return &infoSchema{Database: db, grants: g, srv: srv,
		extra:  map[string]sql.Table{strings.ToLower(n.name): n, strings.ToLower(r.name): r, strings.ToLower(st.name): st},
		hidden: map[string]sql.Table{strings.ToLower(clusterStatusTable): &status},
	}
}

// GetAllSessionVariables is go-mysql-server's with server_id as
// GetSessionVariable reads it (SHOW VARIABLES): the session's own, else
// the server's.
func (s *Session) GetAllSessionVariables() map[string]any {
	m := s.BaseSession.GetAllSessionVariables()
	if _, ok := m["server_id"]; ok {
		if v, err := s.GetSessionVariable(nil, "server_id"); err == nil {
			m["server_id"] = v
		}
	}
	return m
}
