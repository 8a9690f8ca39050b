// Package repl is cluster replication: the node's role and epoch, the
// primary streaming each database's journal to its secondaries, seeding,
// acknowledgements, retention and the status tables.
//
// A secondary dials its seeds and subscribes with, for each database, its
// identity (base id) and its journal end. The primary answers NotPrimary,
// or Welcome and then, per database, either a full copy (SeedBegin,
// SeedChunk…, SeedEnd) or the journal frames after that position (Frames),
// plus Drop, Accounts and a Heartbeat with its log ends every second. The
// secondary writes the frames at the same LSNs in its own journal, applies
// them through storage's apply function and acknowledges (Ack). Messages
// are described in messages.go.
//
// Concurrency: a Node's methods are safe for concurrent use. New starts
// nothing; Run owns the transport, the follow loop of a secondary and, on
// a primary, one goroutine pair per connected secondary (sender, ack
// reader), all ended when its context is.
//
//	n, err := repl.New(repl.Options{Config: cfg, Storage: engine, StateDir: dir})
//	go n.Run(ctx)
//	err = n.Promote() // SET GLOBAL cluster_role = 'primary'
package repl
