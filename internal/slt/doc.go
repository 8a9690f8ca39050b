// Package slt runs sqllogictest files (the corpus of SQLite's sqllogictest,
// as regenerated against MySQL 8 by dolthub/sqllogictest) against a server
// that speaks the MySQL protocol, and reports every record that does not
// give its expected result.
//
// Files are parsed with dolthub's parser (github.com/dolthub/sqllogictest/go/
// logictest/parser). The runner is ours: dolthub's logs to stdout through
// package globals, cannot stop a query that outlives its timeout, and gives
// up on the rest of a file after one timeout. Here every record runs under
// a timeout; a record that times out is a failure, its connection is
// killed and replaced, and the file goes on.
//
// Records are run as MySQL would run them (skipif/onlyif mysql). A query's
// values are formatted as sqllogictest does — integers in decimal, floating
// point and DECIMAL values with three decimals, NULL, an empty string as
// (empty), bytes outside ' '..'~' as '@' — sorted by the record's sort mode
// (nosort, rowsort, valuesort) and compared with the expected values or
// their MD5 hash. Integers and floats may stand for each other, as in
// dolthub's runner: "3" matches an expected "3.000" and "3.000" an expected
// "3" (MySQL's types for arithmetic are not SQLite's).
//
// Failures that are known and reviewed are listed in a file of known
// failures (ParseKnown), one record per line with its reason; the report
// counts them apart from unexpected ones, and an entry whose record now
// passes is reported as stale.
//
// Run starts no goroutines of its own and uses one connection at a time (the
// database/sql pool may keep a second for killing a timed-out query).
//
//	rep, err := slt.Run(ctx, slt.Options{Addr: "127.0.0.1:7007", User: "root",
//		QueryTimeout: 20 * time.Second}, files)
//	rep.Write(os.Stdout)
package slt
