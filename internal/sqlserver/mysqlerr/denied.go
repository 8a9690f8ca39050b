package mysqlerr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
)

// From turns a storage error into the MySQL error a client expects
// (FromStorage), and a refused privilege check into MySQL's.
func From(err error) error {
	var sqlErr *mysql.SQLError
	var denied *Denied
	switch {
	case err == nil:
		return nil
	case errors.As(err, &sqlErr):
		return sqlErr
	case errors.As(err, &denied):
		return denied.sqlError()
	}
	return FromStorage(err)
}

// Denial is the kind of a refused privilege check, which decides MySQL's
// error.
type Denial int

const (
	DeniedDatabase Denial = iota // 1044 ER_DBACCESS_DENIED_ERROR
	DeniedAccount                // 1045 ER_ACCESS_DENIED_ERROR: a global privilege checked as MySQL's check_access does (GRANT … ON *.*, FILE)
	DeniedTable                  // 1142 ER_TABLEACCESS_DENIED_ERROR
	DeniedColumn                 // 1143 ER_COLUMNACCESS_DENIED_ERROR
	DeniedGlobal                 // 1227 ER_SPECIFIC_ACCESS_DENIED_ERROR
	DeniedRoutine                // 1370 ER_PROCACCESS_DENIED_ERROR
	DeniedThread                 // 1095 ER_KILL_DENIED_ERROR
)

// Denied is a refused privilege check: who asked for what, on which
// object. It becomes MySQL's error in sqlError, whoever found it
// (the SQL layer's authorization at planning, its privilege checks at
// execution, the login).
type Denied struct {
	Kind Denial
	// User and Host name the account ('ro', '%'), or for a refused login
	// the user and client address given.
	User, Host string
	// Privilege is MySQL's name for what is missing: "SELECT", "execute",
	// "SUPER or SYSTEM_VARIABLES_ADMIN" (for 1227, the list MySQL prints).
	Privilege string
	// The object: DB for 1044; Table for 1142; Column and Table for 1143;
	// Routine ("db.name") for 1370; Thread for 1095.
	DB, Table, Column, Routine string
	Thread                     uint32
	// Password says whether the account has one (1045's "using password").
	Password bool
}

func (d *Denied) Error() string { return d.sqlError().Message }

// sqlError is MySQL's error for the refusal: code, SQLSTATE and the text of
// MySQL 8's errmsg-utf8.txt.
func (d *Denied) sqlError() *mysql.SQLError {
	switch d.Kind {
	case DeniedDatabase:
		return New(DBAccessDenied, d.User, d.Host, d.DB)
	case DeniedAccount:
		using := "NO"
		if d.Password {
			using = "YES"
		}
		return New(AccessDenied, d.User, d.Host, using)
	case DeniedTable:
		return New(TableAccessDenied, d.Privilege, d.User, d.Host, d.Table)
	case DeniedColumn:
		return New(ColumnAccessDenied, d.Privilege, d.User, d.Host, d.Column, d.Table)
	case DeniedGlobal:
		return New(SpecificAccessDenied, d.Privilege)
	case DeniedRoutine:
		return New(ProcAccessDenied, d.Privilege, d.User, d.Host, d.Routine)
	case DeniedThread:
		return New(KillDenied, d.Thread)
	}
	panic(fmt.Sprintf("sqlserver: access denial of kind %d", d.Kind))
}

// ErrIllegalPrivilegeLevel refuses dynamic privileges granted below the
// global level (ON db.* or db.t).
func ErrIllegalPrivilegeLevel(privs []string) error {
	return New(IllegalPrivilegeLevel, strings.ToUpper(strings.Join(privs, ",")))
}

// ErrInsecureTransport refuses a connection in the clear while
// require_secure_transport is ON.
func ErrInsecureTransport() *mysql.SQLError {
	return New(InsecureTransport)
}

// ErrNoSecureTransports refuses require_secure_transport=ON on a server
// without TLS.
func ErrNoSecureTransports() *mysql.SQLError {
	return New(NoSecureTransports)
}

// ErrTLSSetup is ALTER INSTANCE RELOAD TLS's failure: why the files named
// cannot serve.
func ErrTLSSetup(reason string) *mysql.SQLError {
	return New(TLSLibrary, reason)
}

// ErrNoSuchThread is KILL's answer for a connection id that is not there.
func ErrNoSuchThread(id uint32) error {
	return New(NoSuchThread, id)
}
