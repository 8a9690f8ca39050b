package sqlserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// SHOW CREATE USER account: the CREATE USER statement that makes the
// account again, as MySQL 8 writes it (authentication plugin and hash,
// locking), which go-mysql-server's parser does not know. Account tools
// read it (MySQL Shell's dumps, pt-show-grants). An account sees its own;
// another's needs SELECT on the mysql schema or CREATE USER (1142
// otherwise), as in MySQL; an account that does not exist is 1396.

// showCreateUserRE matches SHOW CREATE USER and its account.
var showCreateUserRE = regexp.MustCompile(`(?is)^\s*show\s+create\s+user\s+(.+?)\s*;?\s*$`)

// accountNameRE reads an account name: user[@host], each part bare,
// 'quoted', "quoted" or `quoted`.
var accountNameRE = regexp.MustCompile("^(`(?:[^`]|``)*`|'(?:[^'\\\\]|\\\\.|'')*'|\"(?:[^\"\\\\]|\\\\.|\"\")*\"|[\\w$.-]+)(?:\\s*@\\s*(`(?:[^`]|``)*`|'(?:[^'\\\\]|\\\\.|'')*'|\"(?:[^\"\\\\]|\\\\.|\"\")*\"|[\\w$.%:-]+))?$")

// unquoteName removes a name's quotes.
func unquoteName(s string) string {
	if len(s) >= 2 {
		switch q := s[0]; q {
		case '`', '\'', '"':
			if s[len(s)-1] == q {
				inner := s[1 : len(s)-1]
				inner = strings.ReplaceAll(inner, string([]byte{q, q}), string(q))
				if q != '`' {
					inner = strings.ReplaceAll(inner, `\`+string(q), string(q))
					inner = strings.ReplaceAll(inner, `\\`, `\`)
				}
				return inner
			}
		}
	}
	return s
}

// accountQuery turns the account statements go-mysql-server's parser does
// not know, SHOW CREATE USER and SET PASSWORD, into statements it runs;
// ok is false for any other statement.
func (h protocolHandler) accountQuery(ctx context.Context, c *mysql.Conn, q string) (string, bool, error) {
	w := sqltext.NewReader(q)
	switch first := w.Next(); {
	case sqltext.IsKeyword(first, "SHOW"):
		if sel, ok, err := h.showCreateFunctionQuery(ctx, c, q); ok { // storedfunc.go
			return sel, ok, err
		}
		return h.showCreateUserQuery(ctx, c, q)
	case sqltext.IsKeyword(first, "SET"):
		return h.setPasswordQuery(ctx, c, q)
	}
	return "", false, nil
}

// showCreateUserQuery turns SHOW CREATE USER into the SELECT of its one
// row, after the checks; ok is false for any other statement.
func (h protocolHandler) showCreateUserQuery(ctx context.Context, c *mysql.Conn, q string) (sel string, ok bool, err error) {
	m := showCreateUserRE.FindStringSubmatch(q)
	if m == nil {
		return "", false, nil
	}
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, q)
	if err != nil {
		return "", true, err
	}
	g := grants{db: h.srv.engine.Analyzer.Catalog.MySQLDb}
	var user, host string
	if spec := strings.TrimSpace(m[1]); strings.EqualFold(strings.ReplaceAll(spec, " ", ""), "CURRENT_USER") ||
		strings.EqualFold(strings.ReplaceAll(spec, " ", ""), "CURRENT_USER()") {
		user, host, _ = g.account(sctx)
	} else {
		a, ok := parseAccount(spec)
		if !ok {
			return "", false, nil // the parser's 1064
		}
		user, host = a.User, a.Host
	}
	me, myHost, _ := g.account(sctx)
	if g.db.Enabled() && !(me == user && myHost == host) &&
		!g.db.UserHasPrivileges(sctx, sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{Database: "mysql"}, sql.PrivilegeType_Select)) &&
		!g.meets(sctx, requirement{static: []sql.PrivilegeType{sql.PrivilegeType_CreateUser}}) {
		return "", true, mysqlerr.From(&mysqlerr.Denied{Kind: mysqlerr.DeniedTable, Privilege: "SELECT", User: me, Host: myHost, Table: "user"})
	}
	rd := g.db.Reader()
	u, found := rd.GetUser(mysql_db.UserPrimaryKey{Host: host, User: user})
	rd.Close()
	if !found || u.IsRole {
		return "", true, mysql.NewSQLError(1396, "HY000", "Operation SHOW CREATE USER failed for '%s'@'%s'", user, host)
	}
	label := fmt.Sprintf("CREATE USER for %s@%s", user, host)
	req := h.srv.acctTLS.get(mysql_db.UserPrimaryKey{User: u.User, Host: u.Host})
	return "SELECT " + sqlString(createUserText(u, req)) + " AS " + sqltext.QuoteIdent(label), true, nil
}

// createUserText is MySQL 8's SHOW CREATE USER text of account u, whose
// REQUIRE clause is req.
func createUserText(u *mysql_db.User, req tlsRequirement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE USER %s@%s IDENTIFIED WITH %s", sqltext.QuoteIdent(u.User), sqltext.QuoteIdent(u.Host), sqlString(u.Plugin))
	if u.AuthString != "" {
		b.WriteString(" AS " + sqlString(u.AuthString))
	}
	b.WriteString(" " + req.text() + " PASSWORD EXPIRE DEFAULT ACCOUNT ")
	if u.Locked {
		b.WriteString("LOCK")
	} else {
		b.WriteString("UNLOCK")
	}
	b.WriteString(" PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT")
	if u.Attributes != nil && *u.Attributes != "" {
		b.WriteString(" ATTRIBUTE " + sqlString(*u.Attributes))
	}
	return b.String()
}

// sqlString is s as an SQL string literal.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
