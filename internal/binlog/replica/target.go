package replica

import "context"

// Target is the server a replica applies to: the SQL layer implements it
// with an internal session (privileges and read_only do not apply to it).
type Target interface {
	// ServerID is @@server_id, which must differ from the source's.
	ServerID() uint32
	// BinlogPos is @@gtid_binlog_pos, the last GTID of each domain in the
	// target's own binary log ("" without one): MASTER_USE_GTID =
	// current_pos starts after this server's own writes too.
	BinlogPos() string
	// Begin starts one group's transaction. While a client holds the
	// global read lock it waits (calling waiting first), until the lock
	// is released or ctx ends.
	Begin(ctx context.Context, waiting func()) (Txn, error)
	// Columns describes the table's columns in order; a missing table is
	// an *Error (1146).
	Columns(ctx context.Context, db, table string) ([]Column, error)
	// Records returns the position record committed in each database
	// (Txn.Commit), by database name.
	Records() map[string][]byte
	// HasDatabase reports whether the database exists.
	HasDatabase(db string) bool
}

// Txn is one group's transaction in the target.
type Txn interface {
	// Exec runs one statement in database db (none when empty) under
	// sqlMode. Its errors are *Error.
	Exec(ctx context.Context, db, sqlMode, query string) (Result, error)
	// Commit stores rec in each database of dbs, in the transaction, and
	// commits it: the rows of a database and its record are committed
	// together.
	Commit(ctx context.Context, dbs []string, rec []byte) error
	// Rollback ends the transaction without its writes.
	Rollback()
	// Origin gives the group's GTID at its source, before its first
	// statement: a target that writes what it applies to a binary log of
	// its own (log_slave_updates) logs the group under it.
	Origin(domain, server uint32, seq uint64)
}

// Result is what a write statement did.
type Result struct {
	Affected uint64
	Matched  uint64 // rows an UPDATE found, changed or not
}

// Column is one column of a target table.
type Column struct {
	Name string
	// Type is information_schema's COLUMN_TYPE, lower case
	// ("int unsigned", "enum('a','b')").
	Type string
	// Key says the column is part of the primary key.
	Key bool
}

// RowWriter is a Txn that applies a row event's rows itself, without
// statements: the SQL layer writes them to storage directly where the
// table allows it, as a MariaDB replica applies row events by handler
// calls, not by SQL.
type RowWriter interface {
	// WriteRows applies one row event to db.table. Its rows are the
	// event's, by column position, each value as Value gives it: for
	// RowsInsert the rows to insert; for RowsUpdate pairs of a before and
	// an after image, the row found by the before image's primary key;
	// for RowsDelete the rows to delete, found the same way.
	//
	// handled false: nothing was written; the table or a value needs
	// statements, which the caller runs instead. Otherwise the event was
	// applied as a whole, or not at all when err is set (an *Error); a
	// missing row stops it: missing is the index in rows of the first
	// row (RowsInsert, RowsDelete) or pair (RowsUpdate) whose row was not
	// found, else -1.
	WriteRows(ctx context.Context, db, table string, kind RowKind, rows [][]any) (handled bool, missing int, err error)
}

// RowKind is what a row event does.
type RowKind int

const (
	RowsInsert RowKind = iota
	RowsUpdate
	RowsDelete
)
