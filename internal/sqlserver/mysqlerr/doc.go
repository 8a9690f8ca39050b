// Package mysqlerr is the SQL layer's table of MySQL errors: for each error
// the server raises itself (Error) its code, SQLSTATE and text (New); the
// SQLSTATE of the codes go-mysql-server sends without one (State); and the
// storage errors as MySQL errors (FromStorage); a refused privilege check
// (Denied) and its MySQL error; From, which turns any of them into the
// error a client gets. Errors become MySQL errors
// here, at the SQL boundary, and nowhere below it.
//
// Any package of the SQL layer may import it; it imports storage, journal
// and go-mysql-server's sql and vitess's mysql packages, and no package of
// the SQL layer. Its functions are safe to call concurrently.
//
//	return mysqlerr.New(mysqlerr.NoSuchThread, id) // 1094, HY000, "Unknown thread id: 7"
package mysqlerr
