// Package sim is Miraj's deterministic cluster simulator: N nodes, each a
// real storage engine (tables, journals, checkpoints, copies) on its own
// data directory and the server's replication core (repl.Core), connected
// by an in-memory network that carries the core's encoded messages and
// delays, reorders (across links), partitions (one way or both, resetting
// or silently stalling) and breaks links, with crashes that lose every
// byte not fsync'd: the journals' own crash model, and for everything else
// (cluster state, checkpoints, database folders, quarantine) a
// vfs.Crashable file system that also fails operations at the disk fault
// rate.
//
// All nondeterminism comes from one seed: the options (node count, fault
// rates, acknowledgement mode) are drawn from it and printed, then every
// event. A run has two phases (TigerBeetle's VOPR): a safety phase of
// random client writes (some left open until the next write commits them
// after its own, so that commits race), crashes, restarts, partitions, link
// breaks and promotions, with the checkers after every step; then a liveness phase
// that heals everything, restarts every node, has an operator designate a
// primary if none serves, and checks that the cluster converges within a
// bounded number of ticks.
//
// Streamed transactions (stream.go) run in every run: a primary's client
// writes a transaction with a small stream threshold over several steps,
// so that its frames reach the journal and the followers, interleaved
// with other commits, while it runs; crashes, partitions, promotions and
// demotions come in between. It commits (some read committed, updating
// rows others committed after it began), rolls back, rolls back to a
// savepoint taken before what it streamed then commits, or is held open
// until its node crashes or stops taking writes, for the next writer to
// end. Followers apply the large ones in a worker of their own
// (storage.SetWorkerBytes is lowered while runs go), forwarded the
// commits in between. Its rows carry its tag, and the checkers "open
// never applied" (no node shows a row of a streamed transaction that did
// not commit) and "streamed commit applied" (every node past a streamed
// commit on its history holds its rows) read them; "same rows" compares
// what the workers publish with what the primary committed. A run in
// which no streamed transaction commits, or none reaches a follower's
// worker, is a violation: the liveness phase runs one when the safety
// phase had none.
//
// What runs of the server: its core, whole (subscribe, welcome or
// not-primary, stream or chunked copy with quarantine, acks with an
// in-flight window, drop, probes and catch-up as messages, heartbeats and
// link timeouts on simulated ticks, fencing, promotion with the
// unterminated tail cut), its storage engine and its quarantine code. Not
// its goroutines or TLS: node.go is a driver, as the server's node.go is,
// and a link is reliable and ordered until it breaks, as TCP is.
//
// Concurrency: a Run is single-threaded; runs of different seeds may go in
// parallel (each has its own directories).
//
//	res := sim.Run(sim.OptionsFromSeed(42, dir))
//	for _, v := range res.Violations { fmt.Println(v) }
package sim
