package sqlserver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
)

// toSQLError turns a storage error into the MySQL error a client expects,
// from this one table. A *mysql.SQLError is returned as is: wrapping it
// would turn it into 1105 on the wire.
func toSQLError(err error) error {
	if err == nil {
		return nil
	}
	var sqlErr *mysql.SQLError
	if errors.As(err, &sqlErr) {
		return sqlErr
	}
	switch {
	case errors.Is(err, storage.ErrReadOnly):
		return errReadOnly()
	case errors.Is(err, storage.ErrConflict), errors.Is(err, storage.ErrDeadlock):
		return mysql.NewSQLError(mysql.ERLockDeadlock, mysql.SSLockDeadlock,
			"Deadlock found when trying to get lock; try restarting transaction")
	case errors.Is(err, storage.ErrLockTimeout):
		return mysql.NewSQLError(mysql.ERLockWaitTimeout, mysql.SSUnknownSQLState,
			"Lock wait timeout exceeded; try restarting transaction")
	case errors.Is(err, storage.ErrTooManyLocks):
		return mysql.NewSQLError(mysql.ERLockTableFull, mysql.SSUnknownSQLState,
			"The total number of locks exceeds the lock table size")
	case errors.Is(err, storage.ErrLockNoWait):
		return mysql.NewSQLError(erLockNowait, mysql.SSUnknownSQLState,
			"Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
	case errors.Is(err, storage.ErrNoTable):
		// go-mysql-server's text, which mysqlError turns into MySQL's
		// with the session's database.
		return mysql.NewSQLError(mysql.ERNoSuchTable, mysql.SSUnknownTable, "%s", sql.ErrTableNotFound.New(tableOf(err)).Error())
	case errors.Is(err, storage.ErrTableExists):
		return mysql.NewSQLError(mysql.ERTableExists, "42S01", "%s", sql.ErrTableAlreadyExists.New(tableOf(err)).Error())
	case errors.Is(err, journal.ErrFailed):
		return mysql.NewSQLError(1026, mysql.SSUnknownSQLState, "journal write failed: %v", err)
	}
	var dup *storage.DuplicateError
	if errors.As(err, &dup) {
		parts := make([]string, len(dup.Key))
		for i, v := range dup.Key {
			parts[i] = fmt.Sprint(v)
		}
		return mysql.NewSQLError(mysql.ERDupEntry, mysql.SSConstraintViolation,
			"Duplicate entry '%s' for key '%s'", strings.Join(parts, "-"), dup.Index)
	}
	var denied *accessDenied
	if errors.As(err, &denied) {
		return denied.sqlError()
	}
	return err
}

// tableOf is the table a storage error names (its text's last part).
func tableOf(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// MySQL's codes that vitess has no constant for.
const (
	erTableAccessDenied  = 1142 // ER_TABLEACCESS_DENIED_ERROR
	erColumnAccessDenied = 1143 // ER_COLUMNACCESS_DENIED_ERROR
	erProcAccessDenied   = 1370 // ER_PROCACCESS_DENIED_ERROR
	erLockNowait         = 3572 // ER_LOCK_NOWAIT
	// ssAccessRule is SQLSTATE 42000 (syntax error or access rule
	// violation), which MySQL sends with every privilege error but 1045.
	ssAccessRule = mysql.SSClientError
)

// denial is the kind of a refused privilege check, which decides MySQL's
// error.
type denial int

const (
	deniedDatabase denial = iota // 1044 ER_DBACCESS_DENIED_ERROR
	deniedAccount                // 1045 ER_ACCESS_DENIED_ERROR: a global privilege checked as MySQL's check_access does (GRANT … ON *.*, FILE)
	deniedTable                  // 1142 ER_TABLEACCESS_DENIED_ERROR
	deniedColumn                 // 1143 ER_COLUMNACCESS_DENIED_ERROR
	deniedGlobal                 // 1227 ER_SPECIFIC_ACCESS_DENIED_ERROR
	deniedRoutine                // 1370 ER_PROCACCESS_DENIED_ERROR
	deniedThread                 // 1095 ER_KILL_DENIED_ERROR
)

// accessDenied is a refused privilege check: who asked for what, on which
// object. It becomes MySQL's error in sqlError, whoever found it
// (authorization.go at planning, privileges.go at execution, the login).
type accessDenied struct {
	kind denial
	// user and host name the account ('ro', '%'), or for a refused login
	// the user and client address given.
	user, host string
	// privilege is MySQL's name for what is missing: "SELECT", "execute",
	// "SUPER or SYSTEM_VARIABLES_ADMIN" (for 1227, the list MySQL prints).
	privilege string
	// The object: db for 1044; table for 1142; column and table for 1143;
	// routine ("db.name") for 1370; thread for 1095.
	db, table, column, routine string
	thread                     uint32
	// password says whether the account has one (1045's "using password").
	password bool
}

func (d *accessDenied) Error() string { return d.sqlError().Message }

// sqlError is MySQL's error for the refusal: code, SQLSTATE and the text of
// MySQL 8's errmsg-utf8.txt.
func (d *accessDenied) sqlError() *mysql.SQLError {
	switch d.kind {
	case deniedDatabase:
		return mysql.NewSQLError(mysql.ERDBAccessDenied, ssAccessRule,
			"Access denied for user '%s'@'%s' to database '%s'", d.user, d.host, d.db)
	case deniedAccount:
		using := "NO"
		if d.password {
			using = "YES"
		}
		return mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError,
			"Access denied for user '%s'@'%s' (using password: %s)", d.user, d.host, using)
	case deniedTable:
		return mysql.NewSQLError(erTableAccessDenied, ssAccessRule,
			"%s command denied to user '%s'@'%s' for table '%s'", d.privilege, d.user, d.host, d.table)
	case deniedColumn:
		return mysql.NewSQLError(erColumnAccessDenied, ssAccessRule,
			"%s command denied to user '%s'@'%s' for column '%s' in table '%s'", d.privilege, d.user, d.host, d.column, d.table)
	case deniedGlobal:
		return mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, ssAccessRule,
			"Access denied; you need (at least one of) the %s privilege(s) for this operation", d.privilege)
	case deniedRoutine:
		return mysql.NewSQLError(erProcAccessDenied, ssAccessRule,
			"%s command denied to user '%s'@'%s' for routine '%s'", d.privilege, d.user, d.host, d.routine)
	case deniedThread:
		return mysql.NewSQLError(mysql.ERKillDenied, mysql.SSUnknownSQLState, "You are not owner of thread %d", d.thread)
	}
	panic(fmt.Sprintf("sqlserver: access denial of kind %d", d.kind))
}

// errIllegalPrivilegeLevel refuses dynamic privileges granted below the
// global level (ON db.* or db.t).
func errIllegalPrivilegeLevel(privs []string) error {
	return mysql.NewSQLError(3619, mysql.SSUnknownSQLState, "Illegal privilege level specified for %s",
		strings.ToUpper(strings.Join(privs, ",")))
}

// The client port's TLS errors (servertls.go), MySQL 8's codes and texts.
const (
	erNoSecureTransports = 3075 // ER_NO_SECURE_TRANSPORTS_CONFIGURED
	erInsecureTransport  = 3159 // ER_SECURE_TRANSPORT_REQUIRED
	erTLSLibrary         = 3889 // ER_DA_SSL_LIBRARY_ERROR
)

// errInsecureTransport refuses a connection in the clear while
// require_secure_transport is ON.
func errInsecureTransport() *mysql.SQLError {
	return mysql.NewSQLError(erInsecureTransport, mysql.SSUnknownSQLState,
		"Connections using insecure transport are prohibited while --require_secure_transport=ON.")
}

// errNoSecureTransports refuses require_secure_transport=ON on a server
// without TLS.
func errNoSecureTransports() *mysql.SQLError {
	return mysql.NewSQLError(erNoSecureTransports, mysql.SSUnknownSQLState,
		"No secure transports (SSL or Shared Memory) are configured, unable to set --require_secure_transport=ON.")
}

// errTLSSetup is ALTER INSTANCE RELOAD TLS's failure: why the files named
// cannot serve.
func errTLSSetup(reason string) *mysql.SQLError {
	return mysql.NewSQLError(erTLSLibrary, mysql.SSUnknownSQLState,
		"Failed to set up SSL because of the following SSL library error: %s", reason)
}

// errNoSuchThread is KILL's answer for a connection id that is not there.
func errNoSuchThread(id uint32) error {
	return mysql.NewSQLError(mysql.ERNoSuchThread, mysql.SSUnknownSQLState, "Unknown thread id: %d", id)
}

func typesUint64(ctx *sql.Context, v any) (uint64, sql.ConvertInRange, error) {
	out, inRange, err := types.Uint64.Convert(ctx, v)
	if err != nil {
		return 0, inRange, err
	}
	return out.(uint64), inRange, nil
}
