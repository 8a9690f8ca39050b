// Package mysqlerr is the SQL layer's table of MySQL errors: for each error
// the server raises itself (Error) its code, SQLSTATE and text (New); the
// SQLSTATE of the codes go-mysql-server sends without one (State); the
// storage errors as MySQL errors (FromStorage); a refused privilege check
// (Denied) and its MySQL error; From, which turns any of them into the
// error a client gets; and the table that gives go-mysql-server's own
// errors and warnings MySQL's code, SQLSTATE and text (Translate,
// WarningText; messages.go, varmessages.go, msgextra.go), with what a
// text needs from the statement and the server (Context). Errors become
// MySQL errors here, at the SQL boundary, and nowhere below it.
//
// Any package of the SQL layer may import it except those it imports: it
// imports storage, journal, go-mysql-server and vitess, and of the SQL
// layer compat, compat/funcs (the aggregate functions' names) and sqltext.
// Its functions are safe to call concurrently.
//
//	return mysqlerr.New(mysqlerr.NoSuchThread, id) // 1094, HY000, "Unknown thread id: 7"
package mysqlerr
