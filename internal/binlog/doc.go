// Package binlog writes Miraj's binary log in MariaDB's format and serves
// it to replicas and change-data-capture clients (§17.13.1–3).
//
// The log is a folder of files miraj-bin.NNNNNN.mrb and an index,
// miraj-bin.mrbi, one file name per line. Each file is a MariaDB binary log
// (magic, Format_description, Gtid_list, Binlog_checkpoint, then groups);
// each committed transaction is one group: a Gtid event, for each table a
// Table_map and its Write/Update/Delete_rows_v1 events with full images,
// then an Xid. A DDL is a standalone Gtid followed by a Query.
//
// What is written by hand and what comes from elsewhere: the event layouts
// are encoded here (event.go, rows.go). The vitess fork's builders
// (go/mysql/binlog_event_make.go) write v2 row events, a MariaDB 10.0
// Format_description and allocate per event; MariaDB 10.11 replicas expect
// the v1 row events and the 10.x header table its own servers write, whose
// bytes (captured from mariadbd 10.11) are in event.go. The tests read the
// files back with the vitess parsers and with go-mysql's BinlogSyncer.
//
// Ownership and concurrency: a Log owns no goroutine. Append, Rotate,
// Purge and Reset are safe for concurrent use (one mutex, Log.mu); a
// commit calls Append under its database's commit lock, so the order of
// groups follows the commit order of each table. A Dump reads the files
// on the caller's goroutine and waits for new groups on Log.Changed.
//
//	lg, err := binlog.Open(binlog.Options{Dir: dir, ServerID: 1})
//	g := lg.NewGroup(binlog.GroupInfo{ServerID: 1})
//	g.Rows(binlog.WriteRows, table, nil, values)
//	pos, err := lg.Append(g)
//	err = lg.Close()
package binlog
