package sqlserver

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
)

// authorization is go-mysql-server's authorization handler (the checks the
// planner makes on each statement) with MySQL's errors: a refusal becomes
// 1044, 1045, 1142, 1143, 1227 or 1370 with MySQL's text, built from what
// the statement asked for, where go-mysql-server sends 1105 "command denied
// to user". KILL and SHOW PROCESSLIST pass here: what they may do depends
// on whose connection is meant, which adminExec checks at execution.
type authorization struct {
	sql.AuthorizationHandler // go-mysql-server's
	grants                   grants
}

func (a authorization) HandleAuth(ctx *sql.Context, state sql.AuthorizationQueryState, auth ast.AuthInformation) error {
	switch auth.AuthType {
	case ast.AuthType_SUPER, ast.AuthType_PROCESS: // KILL, SHOW PROCESSLIST
		auth = ast.AuthInformation{AuthType: ast.AuthType_IGNORE}
	}
	err := a.AuthorizationHandler.HandleAuth(ctx, state, auth)
	if err == nil {
		return a.checkDynamic(ctx, auth)
	}
	if !isRefusal(err) {
		return err
	}
	return mysqlerr.From(a.refusal(ctx, auth))
}

// checkDynamic: go-mysql-server asks only GRANT OPTION to grant or revoke
// a dynamic privilege; MySQL also asks for the privilege itself (WITH
// GRANT OPTION) unless the account may update the mysql database.
func (a authorization) checkDynamic(ctx *sql.Context, auth ast.AuthInformation) error {
	var privs []plan.Privilege
	switch n := auth.Extra.(type) {
	case *plan.Grant:
		privs = n.Privileges
	case *plan.Revoke:
		privs = n.Privileges
	default:
		return nil
	}
	if ours, _ := splitDynamic(privs); len(ours) > 0 {
		return a.grants.mayGrant(ctx, ours)
	}
	return nil
}

func (a authorization) CheckDatabase(ctx *sql.Context, state sql.AuthorizationQueryState, db string) error {
	err := a.AuthorizationHandler.CheckDatabase(ctx, state, db)
	if !isRefusal(err) {
		return err
	}
	d := a.denied(ctx, mysqlerr.DeniedDatabase)
	d.DB = a.database(ctx, db)
	return mysqlerr.From(d)
}

func (a authorization) CheckSchema(ctx *sql.Context, state sql.AuthorizationQueryState, db, schema string) error {
	err := a.AuthorizationHandler.CheckSchema(ctx, state, db, schema)
	if !isRefusal(err) {
		return err
	}
	d := a.denied(ctx, mysqlerr.DeniedDatabase)
	d.DB = a.database(ctx, db)
	return mysqlerr.From(d)
}

// CheckTable is asked when a table is looked up, whatever the statement
// will do with it: a refusal names SELECT.
func (a authorization) CheckTable(ctx *sql.Context, state sql.AuthorizationQueryState, db, schema, table string) error {
	err := a.AuthorizationHandler.CheckTable(ctx, state, db, schema, table)
	if !isRefusal(err) {
		return err
	}
	if sql.ErrDatabaseAccessDeniedForUser.Is(err) {
		d := a.denied(ctx, mysqlerr.DeniedDatabase)
		d.DB = a.database(ctx, db)
		return mysqlerr.From(d)
	}
	d := a.denied(ctx, mysqlerr.DeniedTable)
	d.Privilege, d.Table = sql.PrivilegeType_Select.String(), table
	return mysqlerr.From(d)
}

// isRefusal reports whether err is one of go-mysql-server's privilege
// refusals (and not, say, the 1045 of an account that is gone).
func isRefusal(err error) bool {
	return err != nil && (sql.ErrPrivilegeCheckFailed.Is(err) ||
		sql.ErrTableAccessDeniedForUser.Is(err) || sql.ErrDatabaseAccessDeniedForUser.Is(err))
}

func (a authorization) denied(ctx *sql.Context, kind mysqlerr.Denial) *mysqlerr.Denied {
	user, host, password := a.grants.account(ctx)
	return &mysqlerr.Denied{Kind: kind, User: user, Host: host, Password: password}
}

// database is db, or the session's database when the statement named none.
func (a authorization) database(ctx *sql.Context, db string) string {
	if db == "" {
		return ctx.GetCurrentDatabase()
	}
	return db
}

// objectPrivileges are the privileges go-mysql-server checks on a database
// or a table for each kind of statement (planbuilder's auth_default.go).
var objectPrivileges = map[string][]sql.PrivilegeType{
	ast.AuthType_ALTER:          {sql.PrivilegeType_Alter},
	ast.AuthType_ALTER_ROUTINE:  {sql.PrivilegeType_AlterRoutine},
	ast.AuthType_CREATE:         {sql.PrivilegeType_Create},
	ast.AuthType_CREATE_ROUTINE: {sql.PrivilegeType_CreateRoutine},
	ast.AuthType_CREATE_TEMP:    {sql.PrivilegeType_CreateTempTable},
	ast.AuthType_CREATE_VIEW:    {sql.PrivilegeType_CreateView},
	ast.AuthType_DELETE:         {sql.PrivilegeType_Delete},
	ast.AuthType_DROP:           {sql.PrivilegeType_Drop},
	ast.AuthType_EVENT:          {sql.PrivilegeType_Event},
	ast.AuthType_FOREIGN_KEY:    {sql.PrivilegeType_References},
	ast.AuthType_INDEX:          {sql.PrivilegeType_Index},
	ast.AuthType_INSERT:         {sql.PrivilegeType_Insert},
	ast.AuthType_LOCK:           {sql.PrivilegeType_Select, sql.PrivilegeType_LockTables},
	ast.AuthType_REPLACE:        {sql.PrivilegeType_Insert, sql.PrivilegeType_Delete},
	ast.AuthType_SELECT:         {sql.PrivilegeType_Select},
	ast.AuthType_TRIGGER:        {sql.PrivilegeType_Trigger},
	ast.AuthType_UPDATE:         {sql.PrivilegeType_Update},
}

// globalRefusals are the statements checked against global privileges
// only, with the 1227 MySQL gives (the privileges it lists).
var globalRefusals = map[string]string{
	ast.AuthType_ALTER_USER:         "CREATE USER",
	ast.AuthType_CREATE_USER:        "CREATE USER", // CREATE, DROP and RENAME USER
	ast.AuthType_REVOKE_ALL:         "CREATE USER",
	ast.AuthType_CREATE_ROLE:        "CREATE USER, CREATE ROLE",
	ast.AuthType_DROP_ROLE:          "CREATE USER, DROP ROLE",
	ast.AuthType_GRANT_ROLE:         "WITH ADMIN, ROLE_ADMIN, SUPER",
	ast.AuthType_REVOKE_ROLE:        "WITH ADMIN, ROLE_ADMIN, SUPER",
	ast.AuthType_GRANT_PROXY:        "GRANT OPTION",
	ast.AuthType_REVOKE_PROXY:       "GRANT OPTION",
	ast.AuthType_RELOAD:             "RELOAD", // FLUSH, RESET REPLICA
	ast.AuthType_REPLICATION:        "SUPER or REPLICATION_SLAVE_ADMIN",
	ast.AuthType_REPLICATION_CLIENT: "SUPER, REPLICATION CLIENT",
}

// refusal describes, as MySQL would report it, why auth was refused.
func (a authorization) refusal(ctx *sql.Context, auth ast.AuthInformation) *mysqlerr.Denied {
	if text, ok := globalRefusals[auth.AuthType]; ok {
		d := a.denied(ctx, mysqlerr.DeniedGlobal)
		d.Privilege = text
		return d
	}
	switch auth.AuthType {
	case ast.AuthType_FILE:
		// MySQL checks FILE as it checks GRANT … ON *.*: 1045.
		return a.denied(ctx, mysqlerr.DeniedAccount)
	case ast.AuthType_CALL:
		d := a.denied(ctx, mysqlerr.DeniedRoutine)
		d.Privilege = "execute"
		if len(auth.TargetNames) >= 2 {
			d.Routine = a.database(ctx, auth.TargetNames[0]) + "." + auth.TargetNames[1]
		}
		return d
	case ast.AuthType_GRANT_PRIVILEGE, ast.AuthType_REVOKE_PRIVILEGE:
		return a.grantRefusal(ctx, auth)
	case ast.AuthType_RENAME:
		return a.renameRefusal(ctx, auth)
	}
	privs := objectPrivileges[auth.AuthType]
	names := auth.TargetNames
	switch auth.TargetType {
	case ast.AuthTargetType_SingleTableIdentifier, ast.AuthTargetType_MultipleTableIdentifiers:
		for i := 0; i+1 < len(names); i += 2 {
			if d := a.tableRefusal(ctx, a.database(ctx, names[i]), names[i+1], privs); d != nil {
				return d
			}
		}
	case ast.AuthTargetType_TableColumn:
		if len(names) == 3 {
			if d := a.tableRefusal(ctx, a.database(ctx, names[0]), names[1], privs); d != nil {
				d.Kind, d.Column = mysqlerr.DeniedColumn, names[2]
				return d
			}
		}
	case ast.AuthTargetType_DatabaseIdentifiers:
		for _, db := range names {
			db = a.database(ctx, db)
			if strings.EqualFold(db, "information_schema") {
				continue
			}
			refused := !a.has(ctx, sql.PrivilegeCheckSubject{Database: db}, privs...)
			if len(privs) == 0 { // USE, SHOW … FROM db: may the account see db at all
				refused = a.AuthorizationHandler.CheckDatabase(ctx, nil, db) != nil
			}
			if refused {
				d := a.denied(ctx, mysqlerr.DeniedDatabase)
				d.DB = db
				return d
			}
		}
	}
	// A global check of object privileges (CREATE and DROP DATABASE carry
	// no name to report), or one this file does not know how to word.
	d := a.denied(ctx, mysqlerr.DeniedGlobal)
	d.Privilege = privilegeNames(privs)
	if d.Privilege == "" {
		d.Privilege = strings.ReplaceAll(auth.AuthType, "_", " ")
	}
	return d
}

// tableRefusal is the 1142 of the first privilege of privs missing on
// db.table, nil if none is; a missing LOCK TABLES, a database privilege in
// MySQL, is a 1044.
func (a authorization) tableRefusal(ctx *sql.Context, db, table string, privs []sql.PrivilegeType) *mysqlerr.Denied {
	if strings.EqualFold(db, "information_schema") {
		return nil
	}
	for _, p := range privs {
		if a.has(ctx, sql.PrivilegeCheckSubject{Database: db, Table: table}, p) {
			continue
		}
		if p == sql.PrivilegeType_LockTables {
			d := a.denied(ctx, mysqlerr.DeniedDatabase)
			d.DB = db
			return d
		}
		d := a.denied(ctx, mysqlerr.DeniedTable)
		d.Privilege, d.Table = p.String(), table
		return d
	}
	return nil
}

// renameRefusal: RENAME TABLE needs ALTER and DROP on the old name, CREATE
// and INSERT on the new one (names come in groups of four: old database,
// old table, new database, new table).
func (a authorization) renameRefusal(ctx *sql.Context, auth ast.AuthInformation) *mysqlerr.Denied {
	names := auth.TargetNames
	for i := 0; i+3 < len(names); i += 4 {
		if d := a.tableRefusal(ctx, a.database(ctx, names[i]), names[i+1],
			[]sql.PrivilegeType{sql.PrivilegeType_Alter, sql.PrivilegeType_Drop}); d != nil {
			return d
		}
		if d := a.tableRefusal(ctx, a.database(ctx, names[i+2]), names[i+3],
			[]sql.PrivilegeType{sql.PrivilegeType_Create, sql.PrivilegeType_Insert}); d != nil {
			return d
		}
	}
	d := a.denied(ctx, mysqlerr.DeniedGlobal)
	d.Privilege = "ALTER, DROP, CREATE, INSERT"
	return d
}

// grantRefusal is MySQL's error for a GRANT or REVOKE the account may not
// make, by the level of the privileges: ON *.* is checked as MySQL's
// check_access checks a global privilege (1045), ON db.* is 1044, ON db.t
// is 1142.
func (a authorization) grantRefusal(ctx *sql.Context, auth ast.AuthInformation) *mysqlerr.Denied {
	var level plan.PrivilegeLevel
	switch n := auth.Extra.(type) {
	case *plan.Grant:
		level = n.PrivilegeLevel
	case *plan.Revoke:
		level = n.PrivilegeLevel
	default:
		return a.denied(ctx, mysqlerr.DeniedAccount)
	}
	switch {
	case level.Database == "*" && level.TableRoutine == "*":
		return a.denied(ctx, mysqlerr.DeniedAccount)
	case level.TableRoutine == "*":
		d := a.denied(ctx, mysqlerr.DeniedDatabase)
		d.DB = a.database(ctx, level.Database)
		return d
	}
	d := a.denied(ctx, mysqlerr.DeniedTable)
	d.Privilege, d.Table = "GRANT", level.TableRoutine
	return d
}

// has reports whether the session's account holds every one of privs on
// subject (at its level or above).
func (a authorization) has(ctx *sql.Context, subject sql.PrivilegeCheckSubject, privs ...sql.PrivilegeType) bool {
	return a.grants.db.UserHasPrivileges(ctx, sql.NewPrivilegedOperation(subject, privs...))
}

func privilegeNames(privs []sql.PrivilegeType) string {
	names := make([]string, len(privs))
	for i, p := range privs {
		names[i] = p.String()
	}
	return strings.Join(names, ", ")
}

// loginErrors gives a refused login MySQL's error: 1045 "Access denied for
// user 'u'@'host' (using password: YES)" whether the password is wrong or
// the account does not exist. go-mysql-server sends "Access denied for user
// 'u'" for the first and 2012 "No authentication methods available" for the
// second (which tells a client which accounts exist). A login that does not
// meet its account's REQUIRE clause (accounttls.go) is refused with 1045
// too, as MySQL refuses it.
type loginErrors struct {
	mysql.AuthServer
	grants grants
	reqs   *accountTLS
}

func (l loginErrors) AuthMethods() []mysql.AuthMethod {
	ms := l.AuthServer.AuthMethods()
	out := make([]mysql.AuthMethod, len(ms))
	for i, m := range ms {
		out[i] = loginMethod{AuthMethod: m, grants: l.grants, reqs: l.reqs}
	}
	return out
}

type loginMethod struct {
	mysql.AuthMethod
	grants grants
	reqs   *accountTLS
}

// HandleUser also takes, in mysql_native_password, the users no account
// matches: their password is then checked, and refused with 1045.
//
// It is vitess's first call once it has read the handshake response: the
// connection's TLS, which is the clientConn's (tlsconn.go), is told to
// vitess here, which lets caching_sha2_password take the password in full
// over it.
func (m loginMethod) HandleUser(c *mysql.Conn, user string) bool {
	if cc := clientOf(c.Conn); cc != nil && cc.tlsState() != nil {
		c.Capabilities |= mysql.CapabilityClientSSL
	}
	if m.AuthMethod.HandleUser(c, user) {
		return true
	}
	if m.Name() != mysql.MysqlNativePassword || !m.grants.db.Enabled() {
		return false
	}
	rd := m.grants.db.Reader()
	defer rd.Close()
	return m.grants.db.GetUser(rd, user, clientHost(c.RemoteAddr()), false) == nil
}

func (m loginMethod) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, addr net.Addr) (mysql.Getter, error) {
	g, err := m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, addr)
	// No password: an empty response (a lone 0 byte for some clients).
	password := len(clientData) > 0 && !(len(clientData) == 1 && clientData[0] == 0)
	if err == nil {
		if !m.meetsRequire(c, user, clientHost(addr)) {
			return nil, mysqlerr.From(&mysqlerr.Denied{Kind: mysqlerr.DeniedAccount, User: user, Host: clientHost(addr), Password: password})
		}
		return g, m.checkConnectionLimit(c, user)
	}
	var se *mysql.SQLError
	if !errors.As(err, &se) || se.Num != mysql.ERAccessDeniedError {
		return g, err
	}
	if m.lockedWithRightPassword(user, clientHost(addr), serverData, clientData, password) {
		return g, mysql.NewSQLError(erAccountLocked, "HY000", "Access denied for user '%s'@'%s'. Account is locked.", user, clientHost(addr))
	}
	return g, mysqlerr.From(&mysqlerr.Denied{Kind: mysqlerr.DeniedAccount, User: user, Host: clientHost(addr), Password: password})
}

// meetsRequire reports whether the connection meets the REQUIRE clause of
// the account user@host logs in as.
func (m loginMethod) meetsRequire(c *mysql.Conn, user, host string) bool {
	if m.reqs == nil || !m.grants.db.Enabled() {
		return true
	}
	rd := m.grants.db.Reader()
	u := m.grants.db.GetUser(rd, user, host, false)
	rd.Close()
	if u == nil {
		return true // no account: the login was not checked against one
	}
	var st *tls.ConnectionState
	if cc := clientOf(c.Conn); cc != nil {
		st = cc.tlsState()
	}
	return m.reqs.get(mysql_db.UserPrimaryKey{User: u.User, Host: u.Host}).met(st)
}

// erAccountLocked is MySQL's ER_ACCOUNT_HAS_BEEN_LOCKED.
const erAccountLocked = 3118

// lockedWithRightPassword reports whether a refused login is that of a
// locked account (ACCOUNT LOCK) given its right password, which MySQL
// answers with 3118 rather than 1045: go-mysql-server refuses a locked
// account before it checks the password, so the check is made here
// (mysql_native_password), and a wrong password stays 1045, telling
// nothing of the account.
func (m loginMethod) lockedWithRightPassword(user, host string, salt, reply []byte, password bool) bool {
	if m.Name() != mysql.MysqlNativePassword || !m.grants.db.Enabled() {
		return false
	}
	rd := m.grants.db.Reader()
	u := m.grants.db.GetUser(rd, user, host, false)
	rd.Close()
	if u == nil || !u.Locked || u.IsRole || u.Plugin != string(mysql.MysqlNativePassword) {
		return false
	}
	if u.AuthString == "" {
		return !password
	}
	hash, err := mysql.DecodeMysqlNativePasswordHex(u.AuthString)
	if err != nil || len(reply) != len(hash) {
		return false
	}
	if len(salt) > 20 {
		salt = salt[:20] // the handshake's salt ends with a 0 byte
	}
	return mysql.VerifyHashedMysqlNativePassword(reply, salt, hash)
}

// clientHost is the client's address as accounts name hosts.
func clientHost(addr net.Addr) string {
	if addr.Network() == "unix" {
		return "localhost"
	}
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return host
}
