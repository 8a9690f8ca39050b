// Package compat holds what every part of the SQL layer asks of a
// statement's context to give MySQL's answers where go-mysql-server v0.20
// gives others: whether the session is a client connection's (FromClient;
// go-mysql-server's engine suites run on sessions that are not, and keep
// its answers), the session's sql_mode (SQLMode, parsed once per string),
// and the walk of every expression of a plan, subqueries included, that
// the rewriting rules use (TransformAllExprs).
//
// It imports go-mysql-server only. Every package of internal/sqlserver may
// import it; it imports none of them.
package compat
