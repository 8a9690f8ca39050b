// Package sqlserver is the only code that speaks go-mysql-server: it serves
// the MySQL protocol and maps SQL onto storage.
//
// Provider, Database, Table and Index implement go-mysql-server's
// interfaces over storage; every table read or write goes through the
// session's storage transaction on that database (Session). Errors become
// MySQL errors (code, SQLSTATE and text) from package mysqlerr's tables:
// the errors the server raises, storage errors (mysqlerr.From), and
// go-mysql-server's (mysqlerr.Translate, applied at the protocol boundary,
// protocolHandler.fixError, and to a client session's warnings,
// Session.Warn).
//
// Process-wide state: every change to go-mysql-server's globals (its
// global parser, analyzer rule lists, system and status variable
// registries) is made by Install (install.go), once per process; New and
// OpenInProcess call it. The analyzer rules this package adds, with their
// ids, are listed in rules.go; the parser's layers in parser.go. The
// cluster node is the Server's (Server.cluster, SetCluster). The text of
// statements is read with package sqltext; strings' collation keys are
// package weights'. adminExec's dispatch table (execbuild.go) holds what
// the server does for each type of plan node at execution.
//
// Imports: cmd/miraj-server, the system tests and the tools import this
// package; it imports storage, repl and its sub-packages (sqltext,
// mysqlerr, weights), which import none of it (docs/sql-layer.md).
//
// Where go-mysql-server v0.20 answers otherwise than MySQL, a client
// connection's session (Session.mysql) gets MySQL's answer: analyzer rules
// (notin.go: NOT IN/NOT EXISTS with NULLs and scalar subqueries; exactsum.go:
// exact DECIMAL SUM/AVG, DOUBLE STD, COUNT(DISTINCT) by collation; cast.go;
// deleteall.go) and adminExec's execution of some nodes (EXPLAIN in
// explain.go, SHOW CREATE TABLE/COLUMNS/VARIABLES in showcreate.go, LOAD
// DATA in loaddata.go, DISTINCT in distinct.go, INSERT's error texts).
// adminExec also runs a client session's ORDER BY (Sort and TopN,
// sortkeys.go) with go-mysql-server's order but each row's sort values
// evaluated once and strings compared by precomputed collation keys
// (weights.go, which also gives DISTINCT its weight strings).
// go-mysql-server's engine suites, run against this backend, assert its
// own behaviour and use sessions without the flag. test/diff compares
// what clients see with MariaDB (docs/difftest.md).
// The protocol handler (protocolHandler) wraps go-mysql-server's: it sets
// the status flags of the handshake and of every OK/EOF packet from the
// session (status.go: autocommit, in transaction, read-only; no session
// state tracking) and answers prepared point lookups (pointget.go).
// cluster.go adds the cluster's variables, read-only enforcement (1290),
// SHOW CLUSTER STATUS and information_schema.MIRAJ_*; streams.go the
// large transactions' stream_transaction_mb (set on every storage
// transaction a session begins), information_schema.MIRAJ_STREAMS and the
// Miraj_stream* counters (docs/large-transactions.md). authorization.go
// gives go-mysql-server's privilege refusals MySQL's errors; privileges.go
// checks what go-mysql-server does not (SET GLOBAL, KILL, SHOW
// PROCESSLIST, the cluster's monitoring). lockclause.go reads the locking
// clause of a SELECT (FOR UPDATE, FOR SHARE, NOWAIT, SKIP LOCKED; parser.go
// lets the parser read it) and innodb_lock_wait_timeout for the storage's
// row locks; systemschema.go, checksum.go and triggers.go serve what dump
// tools read and their restores run (the mysql schema's log tables, CHECKSUM TABLE, triggers
// that follow their table, information_schema read per database).
// The client port's TLS is the client connection's (tlsconn.go: beneath
// the packet layers, so that they read the clear stream); servertls.go
// holds the certificates in force, its variables, require_secure_transport
// and ALTER INSTANCE RELOAD TLS; accounttls.go the accounts' REQUIRE
// clauses, checked at login.
//
// Concurrency: go-mysql-server runs each connection's statements on that
// connection's goroutine; a Session is used by one goroutine at a time.
// Server.Run owns the listener and the storage engine's background work.
//
//	srv, err := sqlserver.New(sqlserver.Config{Root: dir, Port: 7007})
//	err = srv.Run(ctx) // serves until ctx ends, then checkpoints and closes
package sqlserver
