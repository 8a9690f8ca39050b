package sqlserver

import (
	"encoding/binary"

	"github.com/dolthub/vitess/go/mysql"
)

// Commands that make vitess' listener panic, answered before it reads
// them (the filter of admincmd.go). The listener recovers, logs and closes
// the connection, but the client gets no answer and the log a stack trace;
// MySQL answers each with an error and goes on:
//
//   - COM_STMT_RESET of a statement id the connection never prepared, or
//     too short to hold one: vitess dereferences the missing statement
//     (conn.go, ComStmtReset). Answered with 1243 (1835 when cut short),
//     as MySQL does.
//   - COM_BINLOG_DUMP_GTID and COM_REGISTER_REPLICA when the handler serves
//     no binary log: vitess returns without releasing the packet it read,
//     and panics at the next command (readEphemeralPacket). Answered with
//     1047 (Unknown command).
//
// COM_RESET_CONNECTION before the connection's first statement (no
// session yet) is guarded in protocolHandler.ComResetConnection.

const (
	comRegisterReplica = 0x15
	comStmtReset       = 0x1a
	comBinlogDumpGTID  = 0x1e
	// comStmtResetBytes is COM_STMT_RESET's size: the command and the id.
	comStmtResetBytes = 5
	// maxGuardedBytes bounds a command looked at whole here: larger ones
	// pass as they come (a registration or a GTID set is far smaller).
	maxGuardedBytes = 64 << 10

	errUnknownStmtHandler = 1243 // ER_UNKNOWN_STMT_HANDLER
	errUnknownCommand     = 1047 // ER_UNKNOWN_COM_ERROR
	errMalformedPacket    = 1835 // ER_MALFORMED_PACKET
)

// mayGuard reports whether a command of size bytes starting with cmd is
// one guarded here (to be looked at whole).
func (f *adminFilter) mayGuard(cmd byte, size int) bool {
	switch cmd {
	case comStmtReset:
		return f.stmtKnown != nil
	case comBinlogDumpGTID, comRegisterReplica:
		return f.noBinlog || f.binlog != nil
	case comBinlogDump:
		return f.binlog != nil
	}
	return false
}

// guarded reports whether the whole command cmd is answered here.
func (f *adminFilter) guarded(cmd []byte) bool {
	if !f.mayGuard(cmd[0], len(cmd)) {
		return false
	}
	if cmd[0] == comStmtReset {
		return len(cmd) < comStmtResetBytes || !f.stmtKnown(binary.LittleEndian.Uint32(cmd[1:5]))
	}
	return true
}

// guardError is the answer to a guarded command.
func guardError(cmd []byte) *mysql.SQLError {
	if cmd[0] == comStmtReset && len(cmd) < comStmtResetBytes {
		return mysql.NewSQLError(errMalformedPacket, "HY000", "Malformed communication packet.")
	}
	if cmd[0] == comStmtReset {
		return mysql.NewSQLError(errUnknownStmtHandler, "HY000", "Unknown prepared statement handler (%d) given to mysqld_stmt_reset",
			binary.LittleEndian.Uint32(cmd[1:5]))
	}
	return mysql.NewSQLError(errUnknownCommand, mysql.SSNetError, "Unknown command")
}
