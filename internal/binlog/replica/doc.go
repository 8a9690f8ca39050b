// Package replica is Miraj's replica of a binary log source (§17.13.4): a
// MariaDB server, or another Miraj started with --log-bin, whose binary log
// is in ROW format.
//
// It owns the configuration CHANGE MASTER TO sets (replica-source.json,
// 0600, resumed at restart), the position (gtid_slave_pos, committed with
// each group: record.go), and two threads:
//
//   - the IO thread (io.go) connects with go-mysql's BinlogSyncer, checks
//     the server ids, asks for the stream from the GTID position (or a file
//     and position), groups the events into whole transactions and queues
//     them (queueGroups, in memory). A lost connection is tried again every
//     MASTER_CONNECT_RETRY seconds; the source's 1236, equal server ids, a
//     corrupt checksum or an undecodable event stop it;
//   - the SQL thread (apply.go) applies each group in one transaction of
//     the Target (the SQL layer's internal session), rows by column
//     position (rows.go), DDL in its database and sql_mode, and commits the
//     group's position record with it. An error stops it at the group's
//     start.
//
// Statement parsing (statement.go) and the status (status.go) are pure;
// errors carry their MySQL code and SQLSTATE (errors.go) for the SQL layer
// to send as they are.
//
// Goroutines: New starts nothing; Open starts the threads that ran at the
// last shutdown, Start and Stop start and stop them, each tracked by a
// thread; Wait returns once Open's context has ended and they have
// stopped. All exported methods are safe for concurrent use (the state is
// under Replica.mu); a Target is used by one thread at a time.
//
//	r := replica.New(replica.Options{Dir: stateDir, Target: target, Logger: log})
//	if err := r.Open(ctx); err != nil { … }
//	st, _, _, _ := replica.Parse("CHANGE MASTER TO MASTER_HOST='10.0.0.5', MASTER_USER='repl'")
//	warnings, err := r.Change(st)
//	_, err = r.Start(replica.Statement{Kind: replica.StmtStart, IO: true, SQL: true})
//	cols, configured := r.Status(false) // SHOW SLAVE STATUS
//	r.Wait()
package replica
