// Package funcs is MySQL's functions and time values where go-mysql-server
// v0.20 has none or others: the functions it lacks (TRUNCATE, MAKEDATE,
// MAKE_SET, EXPORT_SET, UUID_SHORT, INTERVAL, OCT, …; Functions,
// MoreFunctions), the ones it answers otherwise (Overridden: MICROSECOND,
// STR_TO_DATE, TIMESTAMP, TIME_TO_SEC), typed literals (DATE '…',
// TypedLiterals), JSON paths, numbers read as dates (NumbersAsDates), the
// TIME(n) type and its range, zero dates under NO_ZERO_DATE, and DOUBLE
// values as MySQL's text protocol writes them (MySQLDoubles).
//
// Scalar is the expression most of them are: a function of a few
// arguments whose result is NULL when an argument is. The SQL layer
// registers the lists in go-mysql-server's catalog (sqlserver's
// serverFunctions) and calls the rest from its rules and compiled plans.
//
// It imports go-mysql-server, compat and sqltext. internal/sqlserver
// imports it; it imports no other part of the SQL layer.
package funcs
