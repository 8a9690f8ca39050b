package compat

import "github.com/dolthub/go-mysql-server/sql"

// ClientSession is a session that knows whether it is a client
// connection's: sqlserver.Session.
type ClientSession interface {
	// MySQLAnswers reports whether the session's statements get MySQL's
	// answers where go-mysql-server's differ.
	MySQLAnswers() bool
}

// FromClient reports whether ctx is a client connection's session, the
// sessions that get MySQL's behaviour where go-mysql-server's differs.
// go-mysql-server's engine suites run on sessions that do not, since they
// assert its own behaviour.
func FromClient(ctx *sql.Context) bool {
	s, ok := ctx.Session.(ClientSession)
	return ok && s.MySQLAnswers()
}
