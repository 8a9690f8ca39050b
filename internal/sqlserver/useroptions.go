package sqlserver

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/repl"
)

// The account options of CREATE USER that go-mysql-server parses and then
// drops: ACCOUNT LOCK left the account open to logins, REQUIRE SSL let it
// log in without TLS, PASSWORD EXPIRE INTERVAL never expired it. Here
// ACCOUNT LOCK, COMMENT / ATTRIBUTE and REQUIRE (accounttls.go) are kept
// (and ALTER USER … ACCOUNT LOCK | UNLOCK and … REQUIRE, which its parser
// does not know, are answered); the options Miraj does not carry out are
// refused with 1235 rather than accepted for nothing. Their DEFAULT forms,
// which SHOW CREATE USER writes, pass.

// errUserOption refuses an account option Miraj does not carry out.
func errUserOption(what string) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'", what)
}

// checkUserOptions refuses the options of n that Miraj does not carry out.
func checkUserOptions(n *plan.CreateUser) error {
	if len(n.DefaultRoles) > 0 {
		return errUserOption("DEFAULT ROLE")
	}
	if l := n.AccountLimits; l != nil {
		for _, v := range []*int64{l.MaxQueriesPerHour, l.MaxUpdatesPerHour, l.MaxConnectionsPerHour, l.MaxUserConnections} {
			if v != nil && *v != 0 {
				return errUserOption("account resource limits (MAX_QUERIES_PER_HOUR, MAX_UPDATES_PER_HOUR, MAX_CONNECTIONS_PER_HOUR, MAX_USER_CONNECTIONS)")
			}
		}
	}
	if p := n.PasswordOptions; p != nil {
		set := func(v *int64) bool { return v != nil && *v != 0 }
		switch {
		case set(p.ExpirationTime):
			return errUserOption("PASSWORD EXPIRE INTERVAL: passwords do not expire")
		case set(p.History):
			return errUserOption("PASSWORD HISTORY")
		case set(p.ReuseInterval):
			return errUserOption("PASSWORD REUSE INTERVAL")
		case set(p.FailedAttempts), set(p.LockTime):
			return errUserOption("FAILED_LOGIN_ATTEMPTS and PASSWORD_LOCK_TIME")
		}
	}
	return nil
}

// createUser runs CREATE USER: the options Miraj does not carry out are
// refused; an account created locked (ACCOUNT LOCK), with a COMMENT or
// ATTRIBUTE or with a REQUIRE clause is made here, in one change of the
// accounts (persisted and sent to the cluster as one); the others are
// go-mysql-server's (nil).
func (x adminExec) createUser(ctx *sql.Context, n *plan.CreateUser) (sql.RowIter, error) {
	if err := checkUserOptions(n); err != nil {
		return nil, err
	}
	req := requirementOf(n.TLSOptions)
	if !n.Locked && n.Attribute == "" && req.Type == requireNone {
		return nil, nil
	}
	db := x.grants.db
	ed := db.Editor()
	defer ed.Close()
	var created []mysql_db.UserPrimaryKey
	for _, au := range n.Users {
		host := au.UserName.Host
		if host == "" {
			host = "%"
		}
		if _, ok := ed.GetUser(mysql_db.UserPrimaryKey{Host: host, User: au.UserName.Name}); ok {
			if n.IfNotExists {
				continue
			}
			return nil, sql.ErrUserCreationFailure.New(au.UserName.String("'"))
		}
		if len(au.UserName.Name) > 32 {
			return nil, sql.ErrUserNameTooLong.New(au.UserName.Name)
		}
		plugin, auth := string(mysql_db.DefaultAuthMethod), ""
		if au.Auth1 != nil {
			plugin = au.Auth1.Plugin()
			var err error
			if auth, err = au.Auth1.AuthString(); err != nil {
				return nil, err
			}
		}
		if plugin != string(mysql.MysqlNativePassword) && plugin != string(mysql.CachingSha2Password) {
			if err := db.VerifyPlugin(plugin); err != nil {
				return nil, sql.ErrUserCreationFailure.New(err)
			}
		}
		u := &mysql_db.User{User: au.UserName.Name, Host: host, PrivilegeSet: mysql_db.NewPrivilegeSet(),
			Plugin: plugin, AuthString: auth, PasswordLastChanged: time.Now().UTC(), Locked: n.Locked, Identity: au.Identity}
		if n.Attribute != "" {
			a := n.Attribute
			u.Attributes = &a
		}
		ed.PutUser(u)
		created = append(created, mysql_db.UserPrimaryKey{User: u.User, Host: u.Host})
	}
	undo := x.srv.acctTLS.set(req, created...)
	if err := db.Persist(ctx, ed); err != nil {
		undo()
		return nil, err
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

// alterUserLockRE matches ALTER USER [IF EXISTS] account [, account …]
// ACCOUNT LOCK | UNLOCK.
var alterUserLockRE = regexp.MustCompile(`(?is)^\s*alter\s+user\s+(if\s+exists\s+)?(.+?)\s+account\s+(lock|unlock)\s*;?\s*$`)

// alterUserLock runs ALTER USER … ACCOUNT LOCK | UNLOCK: a locked account
// cannot log in (its connections stay). It needs CREATE USER (1227);
// an account that does not exist is 1396, unless IF EXISTS.
func (h protocolHandler) alterUserLock(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	stmt, end, ok := firstStatement(q, whole)
	if !ok {
		return 0, false, nil
	}
	m := alterUserLockRE.FindStringSubmatch(stmt)
	if m == nil {
		return 0, false, nil
	}
	var accounts []mysql_db.UserPrimaryKey
	for _, spec := range splitAccounts(m[2]) {
		a, ok := parseAccount(spec)
		if !ok {
			return 0, false, nil // the parser's 1064
		}
		accounts = append(accounts, a)
	}
	sctx, g, err := h.accountChange(ctx, c, stmt)
	if err != nil {
		return end, true, err
	}
	lock := strings.EqualFold(m[3], "lock")
	ed := g.db.Editor()
	defer ed.Close()
	var failed []string
	for _, a := range accounts {
		u, ok := ed.GetUser(a)
		if !ok || u.IsRole {
			failed = append(failed, accountText(a))
			continue
		}
		cp := *u
		cp.Locked = lock
		ed.RemoveUser(a)
		ed.PutUser(&cp)
	}
	if len(failed) > 0 && m[1] == "" {
		return end, true, mysql.NewSQLError(1396, "HY000", "Operation ALTER USER failed for %s", strings.Join(failed, ","))
	}
	return end, true, g.db.Persist(sctx, ed)
}

// accountChange is the context of statement stmt, which changes accounts,
// once the session may: CREATE USER (1227), on a primary or standalone
// server (1290).
func (h protocolHandler) accountChange(ctx context.Context, c *mysql.Conn, stmt string) (*sql.Context, grants, error) {
	g := grants{db: h.srv.engine.Analyzer.Catalog.MySQLDb}
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, stmt)
	if err != nil {
		return nil, g, err
	}
	need := requirement{static: []sql.PrivilegeType{sql.PrivilegeType_CreateUser}, text: "CREATE USER"}
	if !g.meets(sctx, need) {
		return nil, g, g.refuse(need)
	}
	if node := h.srv.cluster.node(); node != nil && node.Role() != repl.RolePrimary {
		return nil, g, errReadOnly()
	}
	return sctx, g, nil
}

// parseAccount reads an account name (user, 'user'@'host' …): host '%'
// when it names none.
func parseAccount(spec string) (mysql_db.UserPrimaryKey, bool) {
	a := accountNameRE.FindStringSubmatch(strings.TrimSpace(spec))
	if a == nil {
		return mysql_db.UserPrimaryKey{}, false
	}
	host := "%"
	if a[2] != "" {
		host = unquoteName(a[2])
	}
	return mysql_db.UserPrimaryKey{User: unquoteName(a[1]), Host: host}, true
}

// accountText names an account as MySQL's messages do: 'user'@'host'.
func accountText(k mysql_db.UserPrimaryKey) string { return "'" + k.User + "'@'" + k.Host + "'" }

// splitAccounts splits a list of account names at the commas outside
// quotes.
func splitAccounts(s string) []string {
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"' || ch == '`':
			quote = ch
		case ch == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// setPasswordRE matches SET PASSWORD [FOR account] = 'password' and what
// follows it (REPLACE, RETAIN CURRENT PASSWORD); setRandomPasswordRE
// SET PASSWORD … TO RANDOM.
var (
	setPasswordRE       = regexp.MustCompile(`(?is)^\s*set\s+password\s*(?:for\s+(.+?)\s*)?=\s*('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")\s*(.*?)\s*;?\s*$`)
	setRandomPasswordRE = regexp.MustCompile(`(?is)^\s*set\s+password\s+(?:for\s+.+?\s+)?to\s+random\s*;?\s*$`)
)

// setPasswordQuery turns SET PASSWORD [FOR account] = 'password', which
// go-mysql-server's parser does not know, into ALTER USER account
// IDENTIFIED BY 'password' (the same privileges: one's own, or CREATE
// USER); without FOR, the session's account. REPLACE, RETAIN CURRENT
// PASSWORD and TO RANDOM are refused (1235). ok is false for any other
// statement.
func (h protocolHandler) setPasswordQuery(ctx context.Context, c *mysql.Conn, q string) (alter string, ok bool, err error) {
	if setRandomPasswordRE.MatchString(q) {
		return "", true, errUserOption("SET PASSWORD … TO RANDOM")
	}
	m := setPasswordRE.FindStringSubmatch(q)
	if m == nil {
		return "", false, nil
	}
	if m[3] != "" {
		return "", true, errUserOption("SET PASSWORD … " + strings.ToUpper(strings.Fields(m[3])[0]) + ": no password history is kept")
	}
	account := strings.TrimSpace(m[1])
	if account == "" {
		sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q)
		if err != nil {
			return "", true, err
		}
		user, host, _ := grants{db: h.srv.engine.Analyzer.Catalog.MySQLDb}.account(sctx)
		account = sqlString(user) + "@" + sqlString(host)
	} else if accountNameRE.FindStringSubmatch(account) == nil {
		return "", false, nil // the parser's 1064
	}
	return "ALTER USER " + account + " IDENTIFIED BY " + m[2], true, nil
}

// renameUserRE matches RENAME USER a TO b [, c TO d …]; renamePairRE one
// pair of its list.
var (
	renameUserRE = regexp.MustCompile(`(?is)^\s*rename\s+user\s+(.+?)\s*;?\s*$`)
	renamePairRE = regexp.MustCompile(`(?is)^(.+?)\s+to\s+(.+)$`)
)

// renameUser runs RENAME USER, which go-mysql-server leaves unbuilt
// (1105 "not yet implemented"): each account takes its new name with its
// password, privileges and locking, in one change of the accounts. It
// needs CREATE USER (1227); an account that does not exist, or a new
// name that does, is 1396 and nothing is renamed; an account that holds
// or is a role is refused (1235).
func (h protocolHandler) renameUser(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	stmt, end, ok := firstStatement(q, whole)
	if !ok {
		return 0, false, nil
	}
	m := renameUserRE.FindStringSubmatch(stmt)
	if m == nil {
		return 0, false, nil
	}
	type pair struct{ from, to mysql_db.UserPrimaryKey }
	var pairs []pair
	for _, spec := range splitAccounts(m[1]) {
		p := renamePairRE.FindStringSubmatch(strings.TrimSpace(spec))
		if p == nil {
			return 0, false, nil
		}
		from, ok1 := parseAccount(p[1])
		to, ok2 := parseAccount(p[2])
		if !ok1 || !ok2 {
			return 0, false, nil
		}
		pairs = append(pairs, pair{from, to})
	}
	sctx, g, err := h.accountChange(ctx, c, stmt)
	if err != nil {
		return end, true, err
	}
	ed := g.db.Editor()
	defer ed.Close()
	var failed []string
	for _, p := range pairs {
		u, ok := ed.GetUser(p.from)
		if _, taken := ed.GetUser(p.to); !ok || taken {
			failed = append(failed, accountText(p.from))
			continue
		}
		inRole := u.IsRole
		ed.VisitRoleEdges(func(e *mysql_db.RoleEdge) {
			if e.FromUser == p.from.User && e.FromHost == p.from.Host || e.ToUser == p.from.User && e.ToHost == p.from.Host {
				inRole = true
			}
		})
		if inRole {
			return end, true, errUserOption("RENAME USER of a role or of an account granted one")
		}
		cp := *u
		cp.User, cp.Host = p.to.User, p.to.Host
		ed.RemoveUser(p.from)
		ed.PutUser(&cp)
	}
	if len(failed) > 0 {
		return end, true, mysql.NewSQLError(1396, "HY000", "Operation RENAME USER failed for %s", strings.Join(failed, ","))
	}
	var undos []func()
	for _, p := range pairs {
		undos = append(undos, h.srv.acctTLS.moved(p.from, p.to))
	}
	if err := g.db.Persist(sctx, ed); err != nil {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
		return end, true, err
	}
	return end, true, nil
}
