package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
)

// Streamed transactions (storage/stream.go) in the simulated workload. A
// client of the primary begins a transaction with a small stream threshold
// (Tx.SetStreamBytes, 1 to 4 KiB) and writes rows into it over several
// steps: its frames reach the journal, and the followers, while other
// clients commit, messages are delivered, nodes crash, links break and
// nodes are promoted or demoted. The followers apply it as it arrives, in
// a worker of its own (storage.SetWorkerBytes is lowered for the runs),
// forwarded the commits that come in between. Each ends as drawn when it
// began:
//
//   - committed; a third of them read committed (Tx.Rebase before each
//     step) and update or delete rows others committed after they began,
//     which a follower's worker finds only if those commits were forwarded
//     to it first (a commit since that changed such a row makes the
//     commit fail with ErrConflict, counted as refused);
//   - rolled back (an abort frame);
//   - rolled back to a savepoint taken before what it streamed (an abort
//     frame for those, the rest streamed again under a new id), written
//     to again, then committed;
//   - held open: it stays open, written to no more, until its node
//     crashes or stops taking writes (or the run ends). Its frames stay in
//     the journals, open, and whoever writes next ends them with abort
//     frames (storage.DB.StreamCounts' RolledBack).
//
// Every row a streamed transaction writes (inserted, or updated) carries
// its tag in the node column: "n1~s4.0" is part 0 of node n1's streamed
// transaction 4; a rollback to its savepoint ends a part (aborted) and
// begins the next. The checkers read the tags:
//
//   - "open never applied": no node shows a row of a part that did not
//     commit (rolled back, refused, left open, still running);
//   - "streamed commit applied": every node whose database is past a
//     streamed commit, on the history that wrote it (the same ballot at
//     its commit frame), holds every row it inserted (those deleted or
//     moved since aside: world.gone).
//
// "same rows" compares what followers publish from their workers (or
// apply again when a worker could not) with what the primary committed.

// simWorkerBytes is the size past which a follower applies a received
// transaction in a worker during the runs (storage.SetWorkerBytes): small,
// so that streamed transactions, and the large commits of wide rows, are
// applied that way.
const simWorkerBytes = 2 << 10

// The worker threshold is a global of the storage package, shared by runs
// that go in parallel: one value for all of them (a run's events must not
// depend on another's), set when the first begins and restored when the
// last ends.
var workerBytes struct {
	sync.Mutex
	runs  int
	saved int
}

// lowerWorkerBytes sets the worker threshold for a run; the function it
// returns ends that.
func lowerWorkerBytes() func() {
	workerBytes.Lock()
	if workerBytes.runs == 0 {
		workerBytes.saved = storage.SetWorkerBytes(simWorkerBytes)
	}
	workerBytes.runs++
	workerBytes.Unlock()
	return func() {
		workerBytes.Lock()
		workerBytes.runs--
		if workerBytes.runs == 0 {
			storage.SetWorkerBytes(workerBytes.saved)
		}
		workerBytes.Unlock()
	}
}

// streamFate is how a part of a streamed transaction ended.
type streamFate int

const (
	fateRunning   streamFate = iota
	fateCommitted            // its transaction committed
	fateAborted              // rolled back (to the savepoint, or whole), or its commit refused
	fateOrphaned             // left open when its node crashed or stopped taking writes
	fateUnknown              // its commit failed on a disk fault: in the journal or not
)

func (f streamFate) String() string {
	return [...]string{"still running", "committed", "rolled back", "left open by its node", "unknown"}[f]
}

// streamPart is what a streamed transaction wrote under one tag.
type streamPart struct {
	tag  string
	db   string
	ids  []int64  // rows it inserted
	gone []string // rows it deleted ("db/id"): gone once committed
	fate streamFate
	// Once committed: the database incarnation, the end of the commit
	// frame and the ballot that wrote it.
	base string
	end  journal.LSN
	by   ballot
}

// streamOutcome is how a streamed transaction is to end.
type streamOutcome int

const (
	endCommit streamOutcome = iota
	endRollback
	endSavepoint
	endHold
)

// streamTx is a streamed transaction a client of the node is running.
type streamTx struct {
	tx      *storage.Tx
	db      *storage.DB
	name    string
	num     int
	outcome streamOutcome
	steps   int  // steps of writes left before it ends
	rebase  bool // read committed: rebased before each step, updates rows others committed
	parts   []*streamPart
	sp      storage.Savepoint
	started bool // its frames reached the journal
	first   int64
}

func (s *streamTx) part() *streamPart { return s.parts[len(s.parts)-1] }

// maxStreams bounds the streamed transactions a node runs at once.
const maxStreams = 3

// beginStream begins a streamed transaction on db if the node runs fewer
// than maxStreams; it reports whether it did. The first one of a run
// always begins (every run has streamed transactions); later ones one
// write in five.
func (n *node) beginStream(db *storage.DB, name string) bool {
	w := n.w
	if w.inLiveness || len(n.streams) >= maxStreams || w.streamNum > 0 && w.rng.IntN(5) != 0 {
		return false
	}
	if _, ok := db.Latest().Table(dbTable); !ok {
		return false
	}
	w.streamNum++
	s := &streamTx{tx: db.Begin(), db: db, name: name, num: w.streamNum, steps: 1 + w.rng.IntN(5), rebase: w.rng.IntN(3) == 0}
	switch r := w.rng.IntN(20); {
	case r < 9:
		s.outcome = endCommit
	case r < 12:
		s.outcome = endRollback
	case r < 16:
		s.outcome = endSavepoint
	default:
		s.outcome = endHold
	}
	s.tx.SetStreamBytes((1 + w.rng.IntN(4)) << 10)
	s.newPart(n)
	n.streams = append(n.streams, s)
	n.tracef("stream %d begins on %s (outcome %d, %d steps, read committed %v)", s.num, name, s.outcome, s.steps, s.rebase)
	defer n.streamLedger(s, n.streamStep(s))
	// A few rows, then (for a rollback to it) the savepoint, then rows
	// until the transaction streams.
	if !n.streamRows(s, 2+w.rng.IntN(3)) {
		return true
	}
	if s.outcome == endSavepoint {
		s.sp = s.tx.Savepoint()
		s.newPart(n)
	}
	for i := 0; i < 400 && s.tx.Streamed() == 0; i += 10 {
		if !n.streamRows(s, 10) {
			return true
		}
	}
	return true
}

// newPart begins a new tag for the transaction's writes.
func (s *streamTx) newPart(n *node) {
	p := &streamPart{tag: fmt.Sprintf("%s~s%d.%d", n.id, s.num, len(s.parts)), db: s.name}
	s.parts = append(s.parts, p)
	n.w.streamParts[p.tag] = p
	n.w.streamTags = append(n.w.streamTags, p.tag)
}

// streamRows writes k rows into s: inserts, and for a read-committed one
// sometimes an update or delete of a row of the newest committed table. It
// reports false if s ended (an error: the node crashed, or stopped taking
// writes).
func (n *node) streamRows(s *streamTx, k int) bool {
	w := n.w
	p := s.part()
	if s.rebase {
		s.tx.Rebase()
	}
	for range k {
		var err error
		if t, ok := s.tx.Table(dbTable); s.rebase && ok && t.Len() > 0 && w.rng.IntN(4) == 0 {
			r := nthRow(t, w.rng.IntN(t.Len()))
			vals := r.Values()
			id := vals[0].(int64)
			if w.rng.IntN(3) == 0 {
				err = s.tx.DeleteRow(t, r)
				p.gone = append(p.gone, fmt.Sprintf("%s/%v", s.name, id))
			} else {
				nv := append([]any(nil), vals...)
				nv[1], nv[2] = p.tag, payload(id+3)
				err = s.tx.UpdateRow(t, r, nv)
			}
		} else {
			w.nextID++
			id := w.nextID
			vals := w.rowValues(id, p.tag)
			if w.wideRow(id) || id%3 == 0 {
				// A longer row, not a wide one: streams pass their
				// threshold in tens of rows.
				vals[2] = fmt.Sprintf("stream row %d %s", id, strings.Repeat("s", 100+int(id%50)))
			}
			_, err = s.tx.Insert(dbTable, vals)
			if err == nil {
				p.ids = append(p.ids, id)
				if s.first == 0 {
					s.first = id
				}
			}
		}
		if !s.started && s.tx.Streamed() > 0 {
			s.started = true
			w.res.StreamsBegun++
		}
		if err != nil {
			n.streamFailed(s, err)
			return false
		}
	}
	return true
}

// streamFailed ends s after a write failed.
func (n *node) streamFailed(s *streamTx, err error) {
	n.dropStream(s)
	switch {
	case n.diskFailed(err):
		// Crashed (the node's other streams with it): what it streamed
		// is left open in the journal.
		s.setFate(fateOrphaned)
		if s.started {
			n.w.res.StreamsLeftOpen++
		}
	case errors.Is(err, storage.ErrReadOnly):
		s.setFate(fateOrphaned)
		s.tx.Rollback()
		n.tracef("stream %d: %v", s.num, err)
	default:
		s.setFate(fateAborted)
		s.tx.Rollback()
		n.w.violate("write", fmt.Sprintf("%s: streamed transaction %d: %v", n.id, s.num, err))
	}
}

// setFate sets the fate of the parts of s not ended yet.
func (s *streamTx) setFate(f streamFate) {
	for _, p := range s.parts {
		if p.fate == fateRunning {
			p.fate = f
		}
	}
}

// dropStream forgets s.
func (n *node) dropStream(s *streamTx) {
	for i, o := range n.streams {
		if o == s {
			n.streams = append(n.streams[:i], n.streams[i+1:]...)
			return
		}
	}
}

// dropStreams ends the node's streamed transactions when it crashes
// (crashed: nothing more reaches its journals) or stops taking writes:
// those whose frames are in the journal are left open there.
func (n *node) dropStreams(why string) {
	for _, s := range n.streams {
		if s.started {
			s.setFate(fateOrphaned)
			n.w.res.StreamsLeftOpen++
			n.tracef("stream %d left open at %s", s.num, why)
		} else {
			s.setFate(fateAborted)
		}
		if why != "crash" {
			s.tx.Rollback()
		}
	}
	n.streams = nil
}

// streamStep begins a step of s's writes: what it appends from here on
// goes to the ledger at its end (streamLedger), or, if a disk fault
// crashes the node meanwhile, as the node crashes: end frames written
// before the fault (an abort frame, a new primary's abort frames of open
// transactions) may be durable (a segment's roll).
func (n *node) streamStep(s *streamTx) journal.LSN {
	n.ledgerFrom = &ledgerFrom{db: s.db, lsn: s.db.LSN()}
	return s.db.LSN()
}

// ledgerFrom is where a node's stream step began appending.
type ledgerFrom struct {
	db  *storage.DB
	lsn journal.LSN
}

// streamLedger records what s's step appended from before on, if the
// node is still up.
func (n *node) streamLedger(s *streamTx, before journal.LSN) {
	n.ledgerFrom = nil
	if n.eng != nil {
		n.recordLedger(s.db, before, s.db.LSN())
	}
}

// advanceStreams: each streamed transaction of each node that takes
// writes goes on half the time (a step of rows, or its end).
func (w *world) advanceStreams() {
	for _, n := range w.nodes {
		for _, s := range append([]*streamTx(nil), n.streams...) {
			if n.eng == nil || n.stalled() || w.rng.IntN(2) != 0 {
				continue
			}
			if n.eng.ReadOnly() {
				n.dropStreams("demotion") // not seen through the core: be safe
				continue
			}
			n.advanceStream(s)
		}
	}
}

// advanceStream writes a step of rows into s, or ends it as drawn.
func (n *node) advanceStream(s *streamTx) {
	w := n.w
	defer n.streamLedger(s, n.streamStep(s))
	if s.steps > 0 {
		s.steps--
		n.streamRows(s, 3+w.rng.IntN(8))
		return
	}
	switch s.outcome {
	case endHold:
		return
	case endRollback:
		n.dropStream(s)
		faults := w.journalFaults
		// In a run with disk faults, one rollback in four loses its abort
		// frame to one: the transaction stays open in the journal, and a
		// checkpoint taken before the restart must carry it (its frames
		// and its id), or a later transaction could end it as its own.
		lose := w.opts.FaultPerMille > 0 && w.rng.IntN(4) == 0
		before := openTxns(s.db, true)
		w.failAbort = lose
		s.tx.Rollback()
		w.failAbort = false
		s.setFate(fateAborted)
		w.res.StreamsRolledBack++
		n.tracef("stream %d rolled back", s.num)
		if lose && w.journalFaults > faults {
			w.res.StreamsAbortLost++
			n.tracef("stream %d: abort frame not written: checkpoint, then restart", s.num)
			n.checkAbortLost(s, before, "after the rollback")
			n.checkpoint()
			if n.eng == nil {
				return // the checkpoint met the failed disk: restarted already
			}
			n.checkAbortLost(s, before, "after a checkpoint")
		}
		n.rollbackFailed(faults)
		return
	case endSavepoint:
		faults := w.journalFaults
		s.tx.RollbackTo(s.sp)
		s.part().fate = fateAborted
		w.res.StreamsToSavepoint++
		n.tracef("stream %d rolled back to its savepoint", s.num)
		if n.rollbackFailed(faults) {
			return
		}
		s.newPart(n)
		if !n.streamRows(s, 3+w.rng.IntN(30)) {
			return
		}
	}
	start := s.db.LSN()
	err := s.tx.Commit(bg)
	switch {
	case errors.Is(err, storage.ErrConflict):
		n.dropStream(s)
		s.setFate(fateAborted)
		w.res.StreamsConflicted++
		n.tracef("stream %d refused: %v", s.num, err)
	case err != nil:
		n.dropStream(s)
		if n.diskFailed(err) {
			s.setFate(fateUnknown)
			return
		}
		s.setFate(fateAborted)
		w.violate("write", fmt.Sprintf("%s: commit of streamed transaction %d: %v", n.id, s.num, err))
	default:
		n.dropStream(s)
		lsn, _ := s.tx.Logged()
		base, by := fmt.Sprintf("%x", s.db.Latest().BaseID()), endBallot(s.db.History(), lsn)
		for _, p := range s.parts {
			if p.fate == fateRunning {
				p.fate, p.base, p.end, p.by = fateCommitted, base, lsn, by
				for _, g := range p.gone {
					w.gone[g] = true
				}
			}
		}
		w.res.StreamsCommitted++
		n.tracef("stream %d committed lsn=%d", s.num, lsn)
		n.committedWrite(s.db, s.name, s.first, start, lsn)
	}
}

// openTxns returns the ids of the database's open transactions: this
// node's streams (local) or the others.
func openTxns(db *storage.DB, local bool) map[uint64]bool {
	out := map[uint64]bool{}
	for _, st := range db.Streams() {
		if st.Local == local {
			out[st.Txn] = true
		}
	}
	return out
}

// checkAbortLost is the checker "abort lost": a streamed transaction
// rolled back without its abort frame in the journal (a disk fault) is
// still an open transaction of its database (not this node's stream any
// more), so that checkpoints carry it, its id is not given again and the
// next commit ends it. before: the node's streams before the rollback.
func (n *node) checkAbortLost(s *streamTx, before map[uint64]bool, when string) {
	local, others := openTxns(s.db, true), openTxns(s.db, false)
	for txn := range before {
		if !local[txn] && !others[txn] {
			n.w.violate("abort lost", fmt.Sprintf("%s: database %s: streamed transaction %d (journal id %d) lost its abort frame and is no longer an open transaction %s", n.id, s.db.Name(), s.num, txn, when))
		}
	}
}

// rollbackFailed: a rollback (which returns no error) wrote an abort frame
// and a disk fault failed the journal meanwhile (journal faults counted
// since faults): the node's database refuses writes from then on, and the
// simulated operator restarts it, as after any disk failure. It reports
// whether it did.
func (n *node) rollbackFailed(faults int) bool {
	if n.w.journalFaults == faults {
		return false
	}
	n.tracef("disk failure during a rollback: restart")
	n.crash()
	return true
}

// noteStreamCounts keeps the stream counters of the node's databases
// (storage.DB.StreamCounts: the newest of each database object, summed at
// the end of the run).
func (w *world) noteStreamCounts(n *node) {
	if n.eng == nil {
		return
	}
	for _, db := range n.eng.Databases() {
		w.streamCounts[db] = db.StreamCounts()
	}
}

// sumStreamCounts adds up the counters of every database object of the run
// so far.
func (w *world) sumStreamCounts() storage.StreamCounts {
	for _, n := range w.nodes {
		w.noteStreamCounts(n)
	}
	var sum storage.StreamCounts
	for _, c := range w.streamCounts {
		sum.Add(c)
	}
	return sum
}

// checkStreams is the checkers "open never applied" and "streamed commit
// applied" (see above).
func (w *world) checkStreams() {
	for _, n := range w.nodes {
		if n.eng == nil {
			continue
		}
		for _, db := range n.eng.Databases() {
			t, ok := db.Snapshot().Table(dbTable)
			if !ok {
				continue
			}
			ids := map[int64]bool{}
			shown := false
			t.Scan(func(r *storage.Row) bool {
				id, _ := r.Value(0).(int64)
				ids[id] = true
				tag, _ := r.Value(1).(string)
				if shown || !strings.Contains(tag, "~") {
					return true
				}
				p := w.streamParts[tag]
				if p == nil || p.fate != fateCommitted && p.fate != fateUnknown {
					fate := "unknown to the workload"
					if p != nil {
						fate = p.fate.String()
					}
					w.violate("open never applied", fmt.Sprintf("%s: database %s at LSN %d shows row %d written by streamed transaction part %s, which is %s", n.id, db.Name(), db.LSN(), id, tag, fate))
					shown = true
				}
				return true
			})
			base, hist, lsn := fmt.Sprintf("%x", db.Latest().BaseID()), db.History(), db.LSN()
			for _, tag := range w.streamTags {
				p := w.streamParts[tag]
				if p.fate != fateCommitted || p.base != base || p.end > lsn || endBallot(hist, p.end) != p.by {
					continue
				}
				for _, id := range p.ids {
					if !ids[id] && !w.gone[fmt.Sprintf("%s/%v", p.db, id)] {
						w.violate("streamed commit applied", fmt.Sprintf("%s: database %s at LSN %d lacks row %d of streamed transaction part %s, committed at LSN %d by %s", n.id, db.Name(), lsn, id, tag, p.end, p.by))
						break
					}
				}
			}
		}
	}
}

// beginFinalStream begins, on the serving primary of the liveness phase,
// a streamed transaction to commit (see world.liveness), creating the
// table first if no database has it.
func (n *node) beginFinalStream() {
	w := n.w
	for i := 0; i < 4; i++ {
		for _, db := range n.eng.Databases() {
			if _, ok := db.Latest().Table(dbTable); !ok {
				continue
			}
			s := &streamTx{tx: db.Begin(), db: db, name: db.Name(), num: w.streamNum + 1, steps: 2, rebase: w.rng.IntN(2) == 0, outcome: endCommit}
			w.streamNum++
			s.tx.SetStreamBytes((2 + w.rng.IntN(3)) << 10)
			s.newPart(n)
			n.streams = append(n.streams, s)
			w.finalStream = s
			n.tracef("stream %d begins on %s (the liveness phase's)", s.num, s.name)
			before := n.streamStep(s)
			for j := 0; j < 400 && s.tx.Streamed() == 0; j += 10 {
				if !n.streamRows(s, 10) {
					break
				}
			}
			n.streamLedger(s, before)
			return
		}
		n.clientWrite() // creates the table in one
	}
}

// driveFinalStream advances the liveness phase's streamed transaction a
// step, with a one-row commit beside it (forwarded to the followers'
// workers), until it ends.
func (n *node) driveFinalStream() {
	w := n.w
	s := w.finalStream
	if !slices.Contains(n.streams, s) {
		w.finalStream = nil // ended (or its node stopped taking writes)
		return
	}
	// A one-row insert beside it (never a conflict, unlike a reindex or
	// a row change, which the liveness phase's writes can be).
	if t, ok := s.db.Latest().Table(dbTable); ok {
		w.nextID++
		id, start := w.nextID, s.db.LSN()
		lsn, err := s.db.CommitRow(storage.RowChange{Table: t, Kind: storage.OpInsert, Vals: w.rowValues(id, n.id)})
		if err != nil {
			if !n.diskFailed(err) {
				w.violate("write", fmt.Sprintf("%s: row commit: %v", n.id, err))
			}
			return
		}
		n.committedWrite(s.db, s.name, id, start, lsn)
	}
	n.advanceStream(s)
}
