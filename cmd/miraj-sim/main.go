// Command miraj-sim runs the deterministic cluster simulator (internal/sim)
// over a range of seeds and prints one line per violation, with the command
// that replays it, then "seeds=N violations=V". It exits 1 when V > 0,
// and when a seed does not finish in --seed-timeout (a hang: a wait that
// nothing will end, such as a commit waiting for an fsync of bytes that
// are never written): it names the seed, prints the goroutines, and exits.
//
//	go run ./cmd/miraj-sim --seeds 500
//	go run ./cmd/miraj-sim --seed 1234 --trace   # replay one seed, every event
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miraj-db/miraj/internal/sim"
)

func main() {
	seeds := flag.Int("seeds", 100, "number of seeds to run")
	start := flag.Uint64("seed-start", 1, "first seed")
	one := flag.Uint64("seed", 0, "run this one seed only (replay)")
	trace := flag.Bool("trace", false, "print every event (with --seed)")
	jobs := flag.Int("jobs", runtime.NumCPU(), "seeds run in parallel")
	timeout := flag.Duration("seed-timeout", time.Minute, "a seed still running after this long is a hang: reported, and the run stops")
	flag.Parse()

	base := "/dev/shm" // journals fsync a lot: memory-backed when there is one
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		base = os.TempDir()
	}
	root, err := os.MkdirTemp(base, "miraj-sim-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "miraj-sim:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(root)

	if *one != 0 {
		*start, *seeds = *one, 1
	}
	type outcome struct {
		seed uint64
		res  sim.Result
	}
	out := make([]outcome, *seeds)
	started := make([]atomic.Int64, *seeds) // UnixNano while running, else 0
	go watch(started, *start, *timeout)
	var wg sync.WaitGroup
	next := make(chan int)
	for j := 0; j < max(1, *jobs); j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				seed := *start + uint64(i)
				o := sim.OptionsFromSeed(seed, filepath.Join(root, fmt.Sprint(seed)))
				if *one != 0 && *trace {
					o.Trace = os.Stdout
				}
				started[i].Store(time.Now().UnixNano())
				out[i] = outcome{seed, sim.Run(o)}
				started[i].Store(0)
			}
		}()
	}
	for i := 0; i < *seeds; i++ {
		next <- i
	}
	close(next)
	wg.Wait()

	violations, writes, promotions, confirmed, waived, changes, stale, inPlace, txInPlace, held, savepoints := 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
	deferred, deferredConflicts, gatherJoins := 0, 0, 0
	raftRuns, elections, majority, logStoreRuns := 0, 0, 0, 0
	var streams sim.Result // streamed transactions, summed
	minBegun, noCommit, noWorker := -1, 0, 0
	for _, o := range out {
		r := o.res
		streams.StreamsBegun += r.StreamsBegun
		streams.StreamsCommitted += r.StreamsCommitted
		streams.StreamsRolledBack += r.StreamsRolledBack
		streams.StreamsToSavepoint += r.StreamsToSavepoint
		streams.StreamsConflicted += r.StreamsConflicted
		streams.StreamsLeftOpen += r.StreamsLeftOpen
		streams.StreamsAbortLost += r.StreamsAbortLost
		streams.Streams.Add(r.Streams)
		if minBegun < 0 || r.StreamsBegun < minBegun {
			minBegun = r.StreamsBegun
		}
		if r.StreamsCommitted == 0 {
			noCommit++
		}
		if r.Streams.Workers == 0 {
			noWorker++
		}
		if o.res.Raft {
			raftRuns++
		}
		if o.res.LogStore {
			logStoreRuns++
		}
		elections += o.res.Elections
		majority += o.res.MajorityConfirmed
		gatherJoins += o.res.GatherJoins
		deferred += o.res.DeferredCommits
		deferredConflicts += o.res.DeferredConflicts
		savepoints += o.res.SavepointRollbacks
		inPlace += o.res.InPlace
		txInPlace += o.res.TxInPlace
		held += o.res.SnapshotsHeld
		changes += o.res.RowChanges
		stale += o.res.StaleRefused
		writes += o.res.Writes
		promotions += o.res.Promotions
		confirmed += o.res.Confirmed
		waived += o.res.ConfirmedWaived
		for _, v := range o.res.Violations {
			violations++
			fmt.Printf("%s\n  replay: go run ./cmd/miraj-sim --seed %d --trace\n", v, o.seed)
		}
	}
	fmt.Printf("acknowledged writes=%d promotions=%d semi-sync confirmed=%d (left out by forced promotions or with every holder out of reach=%d)\n", writes, promotions, confirmed, waived)
	fmt.Printf("row changes=%d (refused as stale=%d) one-row commits in place=%d transactions in place=%d snapshots held=%d savepoints rolled back=%d\n", changes, stale, inPlace, txInPlace, held, savepoints)
	fmt.Printf("deferred-snapshot deletes committed=%d (refused, the row replaced since it was read=%d) commits joining a gathering group commit=%d\n", deferred, deferredConflicts, gatherJoins)
	fmt.Printf("raft runs=%d elections won=%d writes confirmed at MAJORITY=%d\n", raftRuns, elections, majority)
	fmt.Printf("runs with a log-store node=%d\n", logStoreRuns)
	fmt.Printf("streamed transactions begun=%d (fewest in a run=%d) committed=%d rolled back=%d (abort frame lost to a disk fault, then a checkpoint=%d) rolled back to a savepoint then committed=%d refused at commit=%d left open at a crash or demotion=%d\n",
		streams.StreamsBegun, max(minBegun, 0), streams.StreamsCommitted, streams.StreamsRolledBack, streams.StreamsAbortLost, streams.StreamsToSavepoint, streams.StreamsConflicted, streams.StreamsLeftOpen)
	fmt.Printf("follower workers=%d published=%d replayed=%d open transactions rolled back by a new writer=%d runs without a streamed commit=%d without a follower worker=%d (either is a violation)\n",
		streams.Streams.Workers, streams.Streams.Published, streams.Streams.Replayed, streams.Streams.RolledBack, noCommit, noWorker)
	fmt.Printf("seeds=%d violations=%d\n", *seeds, violations)
	if violations > 0 {
		os.Exit(1)
	}
}

// watch stops the run when a seed has been running for longer than timeout:
// a seed takes milliseconds, so it is stuck.
func watch(started []atomic.Int64, first uint64, timeout time.Duration) {
	for range time.Tick(timeout / 10) {
		for i := range started {
			t := started[i].Load()
			if t == 0 || time.Since(time.Unix(0, t)) < timeout {
				continue
			}
			seed := first + uint64(i)
			fmt.Printf("seed %d did not finish in %v: a hang\n  replay: go run ./cmd/miraj-sim --seed %d --trace\n", seed, timeout, seed)
			pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			os.Exit(1)
		}
	}
}
