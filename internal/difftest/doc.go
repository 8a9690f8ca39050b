// Package difftest runs SQL scripts against two MySQL-protocol servers (Miraj
// and a reference MariaDB) and compares what a client sees of each statement:
// the rows, the column names and types, the rows affected, the error (code,
// SQLSTATE, message) and the warnings (level, code, message).
//
// A script is a file of statements, each ending with ';' at the end of a
// line; lines starting with '--' are comments. Rows are compared in order
// when the statement has an ORDER BY, as a sorted multiset otherwise.
//
// Differences that are meant (the server version, a MariaDB-only wording)
// or known and not fixed yet are listed in a reviewed file of intended
// differences (ParseIntended), each with its reason; the report counts them
// apart from the unexpected ones, and an entry that matches nothing is
// reported as stale so the list does not rot.
//
// Nothing here starts goroutines; Run uses one connection per script of
// each server, sequentially. StartMiraj and StartMariaDB start the two
// servers for a test (real processes on free ports of 127.0.0.1, stopped
// when the test ends); the sqllogictest harness (test/slt) uses StartMiraj
// too.
//
//	scripts, _ := difftest.LoadScripts("test/diff/corpus/*.sql")
//	res, _ := difftest.Run(ctx, miraj, mariadb, scripts)
//	rep := difftest.Compare(res, intended)
//	rep.Write(os.Stdout)
package difftest
