// Package repl is cluster replication: the node's role and epoch, the
// primary streaming each database's journal to its secondaries, seeding,
// acknowledgements, semi-synchronous commit, promotion with catch-up,
// fencing, retention and the status tables.
//
// It is one state machine and its driver:
//
//   - Core (core*.go) is the protocol: no goroutines, no clock, no I/O. It
//     takes messages (Step, decoded from bytes), links opened and closed,
//     time (Tick), proposals (Promote, Demote, WaitSync, CancelSync) and the
//     ends of the storage operations it asked for; Ready returns what to do
//     (state to persist first, then the commit gate, storage operations,
//     links, messages as bytes, releases), and Advance confirms it. It reads
//     the journals through Log. The decisions are the pure functions of
//     decide.go, catchup.go and syncrule.go. The simulator (internal/sim) runs
//     the same Core over an in-memory network; testdata/interaction drives
//     it from scripts.
//   - Node (node.go, driver_links.go, driver_ops.go, status.go) is the
//     server's driver: it owns the transport's links, the apply workers and
//     the state file, and carries out each Ready. The follower side's
//     storage operations go to a Replica (replica.go): a secondary's is
//     its storage engine (EngineReplica); the simulator uses the same one.
//   - The cluster state, quarantine folders (Quarantine) and the engine's
//     checkpoints and folders are written through a vfs.FS: the
//     operating system's in the server, a crashable one in the simulator.
//
// A secondary dials its seeds (the primary it was told of first) and
// subscribes with, for each database, its identity (base id), epoch marks
// and journal end. The primary answers NotPrimary, or Welcome and then, per
// database, either a full copy (SeedBegin, SeedChunk…, SeedEnd) or the
// journal frames after that position (Frames), plus Drop, Accounts and a
// Heartbeat with its log ends every second. The secondary writes the frames
// at the same LSNs in its own journal, acknowledges them (Ack), applies them
// and acknowledges again. A secondary configured with an upstream
// (CoreConfig.Upstream) subscribes to that member with Cascade set; a
// secondary that follows its primary serves such a subscriber as a
// primary would, what it has applied of the primary's log (a relay).
// Messages are described in messages.go and catchup.go, and are values in
// msg.go.
//
// Concurrency: Core is not safe for concurrent use; Node's loop goroutine is
// its only caller. Node's methods are safe for concurrent use. New starts
// nothing; Run owns the transport, the loop and every goroutine the loop
// starts (a writer and a reader per link, one apply worker per database,
// dials, one-shot questions, copies), all ended when its context is.
//
//	n, err := repl.New(repl.Options{Config: cfg, Storage: engine, StateDir: dir})
//	go n.Run(ctx)
//	err = n.Promote(ctx, false) // SET GLOBAL cluster_role = 'primary'
package repl
