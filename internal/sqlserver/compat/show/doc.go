// Package show is MySQL's answers to the statements that describe tables
// and settings, where go-mysql-server v0.20 answers otherwise: SHOW CREATE
// TABLE (with foreign keys in MySQL's order, fkorder.go), SHOW [FULL]
// COLUMNS and DESCRIBE, SHOW VARIABLES, information_schema.COLUMNS,
// EXPLAIN's rows, and the column names of SHOW TABLES and SHOW DATABASES
// with LIKE. Each runs go-mysql-server's statement and rewrites its rows.
//
// The SQL layer's execution (adminExec) calls it for a client
// connection's statements. It imports go-mysql-server, compat,
// compat/funcs and sqltext, and no other part of the SQL layer.
package show
