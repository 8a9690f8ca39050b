package mysqlerr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
)

// Error is one error the server raises itself, with MySQL's code, SQLSTATE
// and text (New).
type Error int

const (
	ReadOnly              Error = iota + 1 // 1290: a write on a secondary (§17.6)
	RenameInCluster                        // 1290: RENAME TABLE in a cluster (§17.7)
	Deadlock                               // 1213: a conflict or deadlock rolled the transaction back
	LockWaitTimeout                        // 1205
	LockTableFull                          // 1206
	LockNowait                             // 3572: NOWAIT found a row locked
	JournalFailed                          // 1026: the journal could not be written
	DupEntry                               // 1062: args: key values, index name
	DBAccessDenied                         // 1044: args: user, host, database
	AccessDenied                           // 1045: args: user, host, "YES"/"NO"
	TableAccessDenied                      // 1142: args: privilege, user, host, table
	ColumnAccessDenied                     // 1143: args: privilege, user, host, column, table
	SpecificAccessDenied                   // 1227: args: the privileges MySQL lists
	ProcAccessDenied                       // 1370: args: privilege, user, host, routine
	KillDenied                             // 1095: args: thread id
	NoSuchThread                           // 1094: args: thread id
	IllegalPrivilegeLevel                  // 3619: args: the privileges
	InsecureTransport                      // 3159: a connection in the clear while require_secure_transport is ON
	NoSecureTransports                     // 3075: require_secure_transport=ON without TLS
	TLSLibrary                             // 3889: args: why the certificate files cannot serve
)

// ssAccessRule is SQLSTATE 42000 (syntax error or access rule violation),
// which MySQL sends with every privilege error but 1045.
const ssAccessRule = mysql.SSClientError

// table gives each Error its code, SQLSTATE and text (MySQL 8's
// errmsg-utf8.txt where MySQL has the error).
var table = map[Error]struct {
	code  int
	state string
	text  string
}{
	ReadOnly:        {mysql.EROptionPreventsStatement, "HY000", "The MySQL server is running with the --read-only option so it cannot execute this statement"},
	RenameInCluster: {mysql.EROptionPreventsStatement, "HY000", "RENAME TABLE is not allowed in a cluster: create the new table, copy the rows (INSERT … SELECT), then drop the old one"},
	Deadlock:        {mysql.ERLockDeadlock, mysql.SSLockDeadlock, "Deadlock found when trying to get lock; try restarting transaction"},
	LockWaitTimeout: {mysql.ERLockWaitTimeout, mysql.SSUnknownSQLState, "Lock wait timeout exceeded; try restarting transaction"},
	LockTableFull:   {mysql.ERLockTableFull, mysql.SSUnknownSQLState, "The total number of locks exceeds the lock table size"},
	LockNowait:      {3572, mysql.SSUnknownSQLState, "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set."},
	JournalFailed:   {1026, mysql.SSUnknownSQLState, "journal write failed: %v"},
	DupEntry:        {mysql.ERDupEntry, mysql.SSConstraintViolation, "Duplicate entry '%s' for key '%s'"},

	DBAccessDenied:       {mysql.ERDBAccessDenied, ssAccessRule, "Access denied for user '%s'@'%s' to database '%s'"},
	AccessDenied:         {mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "Access denied for user '%s'@'%s' (using password: %s)"},
	TableAccessDenied:    {1142, ssAccessRule, "%s command denied to user '%s'@'%s' for table '%s'"},
	ColumnAccessDenied:   {1143, ssAccessRule, "%s command denied to user '%s'@'%s' for column '%s' in table '%s'"},
	SpecificAccessDenied: {mysql.ERSpecifiedAccessDenied, ssAccessRule, "Access denied; you need (at least one of) the %s privilege(s) for this operation"},
	ProcAccessDenied:     {1370, ssAccessRule, "%s command denied to user '%s'@'%s' for routine '%s'"},
	KillDenied:           {mysql.ERKillDenied, mysql.SSUnknownSQLState, "You are not owner of thread %d"},
	NoSuchThread:         {mysql.ERNoSuchThread, mysql.SSUnknownSQLState, "Unknown thread id: %d"},

	IllegalPrivilegeLevel: {3619, mysql.SSUnknownSQLState, "Illegal privilege level specified for %s"},
	InsecureTransport:     {3159, mysql.SSUnknownSQLState, "Connections using insecure transport are prohibited while --require_secure_transport=ON."},
	NoSecureTransports:    {3075, mysql.SSUnknownSQLState, "No secure transports (SSL or Shared Memory) are configured, unable to set --require_secure_transport=ON."},
	TLSLibrary:            {3889, mysql.SSUnknownSQLState, "Failed to set up SSL because of the following SSL library error: %s"},
}

// New returns MySQL's error e, its text formatted with args.
func New(e Error, args ...any) *mysql.SQLError {
	t, ok := table[e]
	if !ok {
		panic(fmt.Sprintf("mysqlerr: error %d has no entry", int(e)))
	}
	if len(args) == 0 {
		return mysql.NewSQLError(t.code, t.state, "%s", t.text)
	}
	return mysql.NewSQLError(t.code, t.state, t.text, args...)
}

// Code returns e's MySQL code.
func (e Error) Code() int { return table[e].code }

// states gives the SQLSTATE MySQL sends with an error code, for the codes
// go-mysql-server sends with the generic HY000 and a text the protocol
// handler's table of its messages does not know.
var states = map[int]string{
	1022: "23000", // ER_DUP_KEY
	1044: "42000", // ER_DBACCESS_DENIED_ERROR
	1048: "23000", // ER_BAD_NULL_ERROR
	1049: "42000", // ER_BAD_DB_ERROR
	1050: "42S01", // ER_TABLE_EXISTS_ERROR
	1051: "42S02", // ER_BAD_TABLE_ERROR
	1054: "42S22", // ER_BAD_FIELD_ERROR
	1062: "23000", // ER_DUP_ENTRY
	1060: "42S21", // ER_DUP_FIELDNAME
	1064: "42000", // ER_PARSE_ERROR
	1072: "42000", // ER_KEY_COLUMN_DOES_NOT_EXITS
	1091: "42000", // ER_CANT_DROP_FIELD_OR_KEY
	1242: "21000", // ER_SUBQUERY_NO_1_ROW
	1364: "HY000", // ER_NO_DEFAULT_FOR_FIELD
	1146: "42S02", // ER_NO_SUCH_TABLE
	1213: "40001", // ER_LOCK_DEADLOCK
	1229: "HY000", // ER_GLOBAL_VARIABLE
	1216: "23000", // ER_NO_REFERENCED_ROW
	1217: "23000", // ER_ROW_IS_REFERENCED
	1264: "22003", // ER_WARN_DATA_OUT_OF_RANGE
	1292: "22007", // ER_TRUNCATED_WRONG_VALUE
	1406: "22001", // ER_DATA_TOO_LONG
	1451: "23000", // ER_ROW_IS_REFERENCED_2
	1452: "23000", // ER_NO_REFERENCED_ROW_2
	3819: "HY000", // ER_CHECK_CONSTRAINT_VIOLATED
	3141: "22032", // ER_INVALID_JSON_TEXT_IN_PARAM
}

// State returns the SQLSTATE MySQL sends with code, when the table has it.
func State(code int) (string, bool) {
	s, ok := states[code]
	return s, ok
}

// init refuses a table that contradicts itself: an error of this package
// whose code has a SQLSTATE in states other than its own.
func init() {
	for e, t := range table {
		if s, ok := states[t.code]; ok && s != t.state {
			panic(fmt.Sprintf("mysqlerr: error %d (code %d) has SQLSTATE %s, states says %s", int(e), t.code, t.state, s))
		}
		if t.state == "" || len(t.state) != 5 {
			panic(fmt.Sprintf("mysqlerr: error %d (code %d) has no SQLSTATE", int(e), t.code))
		}
	}
}

// FromStorage turns a storage error into the MySQL error a client expects.
// A *mysql.SQLError is returned as is (wrapping it would turn it into 1105
// on the wire), and an error it does not know unchanged.
func FromStorage(err error) error {
	if err == nil {
		return nil
	}
	var sqlErr *mysql.SQLError
	if errors.As(err, &sqlErr) {
		return sqlErr
	}
	switch {
	case errors.Is(err, storage.ErrReadOnly):
		return New(ReadOnly)
	case errors.Is(err, storage.ErrConflict), errors.Is(err, storage.ErrDeadlock):
		return New(Deadlock)
	case errors.Is(err, storage.ErrLockTimeout):
		return New(LockWaitTimeout)
	case errors.Is(err, storage.ErrTooManyLocks):
		return New(LockTableFull)
	case errors.Is(err, storage.ErrLockNoWait):
		return New(LockNowait)
	case errors.Is(err, storage.ErrNoTable):
		// go-mysql-server's text, which the protocol handler turns into
		// MySQL's with the session's database.
		return mysql.NewSQLError(mysql.ERNoSuchTable, mysql.SSUnknownTable, "%s", sql.ErrTableNotFound.New(tableOf(err)).Error())
	case errors.Is(err, storage.ErrTableExists):
		return mysql.NewSQLError(mysql.ERTableExists, "42S01", "%s", sql.ErrTableAlreadyExists.New(tableOf(err)).Error())
	case errors.Is(err, journal.ErrFailed):
		return New(JournalFailed, err)
	}
	var dup *storage.DuplicateError
	if errors.As(err, &dup) {
		parts := make([]string, len(dup.Key))
		for i, v := range dup.Key {
			parts[i] = fmt.Sprint(v)
		}
		return New(DupEntry, strings.Join(parts, "-"), dup.Index)
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
