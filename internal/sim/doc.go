// Package sim is Miraj's deterministic cluster simulator: N nodes, each a
// real storage engine (tables, journals, checkpoints, copies) on its own
// data directory, whose replication decisions are made by the same pure
// functions the server uses (repl.DecideStart, repl.CheckTransition,
// repl.JudgeEpoch, history.Match), connected by an in-memory network that
// delays, reorders (across links), partitions (one way or both) and breaks
// links, with crashes that lose every byte not fsync'd.
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
// What is simulated of the server: the drivers' protocol (subscribe,
// welcome or not-primary, stream or copy with quarantine, acks with an
// in-flight window, drop, probes that announce an epoch, fencing,
// promotion with the unterminated tail cut), not their goroutines, TLS or
// timers: a link is reliable and ordered until it breaks, as TCP is.
//
// Concurrency: a Run is single-threaded; runs of different seeds may go in
// parallel (each has its own directories).
//
//	res := sim.Run(sim.OptionsFromSeed(42, dir))
//	for _, v := range res.Violations { fmt.Println(v) }
package sim
