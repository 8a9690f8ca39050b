package sqlserver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
)

// toSQLError turns a storage error into the MySQL error a client expects
// (mysqlerr.FromStorage), and a refused privilege check into MySQL's.
func toSQLError(err error) error {
	var sqlErr *mysql.SQLError
	var denied *accessDenied
	switch {
	case err == nil:
		return nil
	case errors.As(err, &sqlErr):
		return sqlErr
	case errors.As(err, &denied):
		return denied.sqlError()
	}
	return mysqlerr.FromStorage(err)
}

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
		return mysqlerr.New(mysqlerr.DBAccessDenied, d.user, d.host, d.db)
	case deniedAccount:
		using := "NO"
		if d.password {
			using = "YES"
		}
		return mysqlerr.New(mysqlerr.AccessDenied, d.user, d.host, using)
	case deniedTable:
		return mysqlerr.New(mysqlerr.TableAccessDenied, d.privilege, d.user, d.host, d.table)
	case deniedColumn:
		return mysqlerr.New(mysqlerr.ColumnAccessDenied, d.privilege, d.user, d.host, d.column, d.table)
	case deniedGlobal:
		return mysqlerr.New(mysqlerr.SpecificAccessDenied, d.privilege)
	case deniedRoutine:
		return mysqlerr.New(mysqlerr.ProcAccessDenied, d.privilege, d.user, d.host, d.routine)
	case deniedThread:
		return mysqlerr.New(mysqlerr.KillDenied, d.thread)
	}
	panic(fmt.Sprintf("sqlserver: access denial of kind %d", d.kind))
}

// errIllegalPrivilegeLevel refuses dynamic privileges granted below the
// global level (ON db.* or db.t).
func errIllegalPrivilegeLevel(privs []string) error {
	return mysqlerr.New(mysqlerr.IllegalPrivilegeLevel, strings.ToUpper(strings.Join(privs, ",")))
}

// errInsecureTransport refuses a connection in the clear while
// require_secure_transport is ON.
func errInsecureTransport() *mysql.SQLError {
	return mysqlerr.New(mysqlerr.InsecureTransport)
}

// errNoSecureTransports refuses require_secure_transport=ON on a server
// without TLS.
func errNoSecureTransports() *mysql.SQLError {
	return mysqlerr.New(mysqlerr.NoSecureTransports)
}

// errTLSSetup is ALTER INSTANCE RELOAD TLS's failure: why the files named
// cannot serve.
func errTLSSetup(reason string) *mysql.SQLError {
	return mysqlerr.New(mysqlerr.TLSLibrary, reason)
}

// errNoSuchThread is KILL's answer for a connection id that is not there.
func errNoSuchThread(id uint32) error {
	return mysqlerr.New(mysqlerr.NoSuchThread, id)
}

func typesUint64(ctx *sql.Context, v any) (uint64, sql.ConvertInRange, error) {
	out, inRange, err := types.Uint64.Convert(ctx, v)
	if err != nil {
		return 0, inRange, err
	}
	return out.(uint64), inRange, nil
}
