package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
)

// grants answers privilege questions about a session's account from
// go-mysql-server's grant tables. Safe for concurrent use.
type grants struct{ db *mysql_db.MySQLDb }

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
