package replica

import "fmt"

// Error is a replica error with its MySQL code and SQLSTATE, which the SQL
// layer turns into the client's error packet as it is.
type Error struct {
	Code    uint16
	State   string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("replica: %s (errno %d)", e.Message, e.Code) }

// The MySQL / MariaDB codes of the replica, one table.
const (
	codeSyntax              = 1064 // ER_PARSE_ERROR
	codeNotSupported        = 1235 // ER_NOT_SUPPORTED_YET
	codeWrongArguments      = 1210 // ER_WRONG_ARGUMENTS
	codeRunning             = 1198 // ER_SLAVE_MUST_STOP
	codeNotConfigured       = 1200 // ER_BAD_SLAVE
	codeSameServerID        = 1593 // ER_SLAVE_FATAL_ERROR
	codeSourceFatal         = 1236 // ER_MASTER_FATAL_ERROR_READING_BINLOG
	codeConnect             = 2003 // CR_CONN_HOST_ERROR
	codeRelayWrite          = 1595 // ER_SLAVE_RELAY_LOG_WRITE_FAILURE
	codeChecksum            = 1743 // ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE
	codeHeartbeatRange      = 1703 // ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE
	codeKeyNotFound         = 1032 // ER_KEY_NOT_FOUND
	codeUnknownError        = 1105 // ER_UNKNOWN_ERROR
	codeGTIDStartOutOfRange = 1947 // ER_GTID_START_FROM_BINLOG_HOLE… (MariaDB's "Specified GTID … conflicts")
	codeIncorrectGTIDState  = 1941 // ER_INCORRECT_GTID_STATE
	codeSlaveRunningGTID    = 1948 // ER_MASTER_GTID_POS_CONFLICTS_WITH_BINLOG (slave running: gtid_slave_pos)
)

func errorf(code uint16, state, format string, args ...any) *Error {
	return &Error{Code: code, State: state, Message: fmt.Sprintf(format, args...)}
}

func errSyntax(near string) *Error {
	return errorf(codeSyntax, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '%s'", near)
}

// ErrRunning is CHANGE MASTER (or SET gtid_slave_pos) while a thread runs.
func errRunning() *Error {
	return errorf(codeRunning, "HY000", "This operation cannot be performed as you have a running slave ''; run STOP SLAVE '' first")
}

func errNotConfigured() *Error {
	return errorf(codeNotConfigured, "HY000", "Misconfigured slave: MASTER_HOST was not set; Fix in config file or with CHANGE MASTER TO")
}
