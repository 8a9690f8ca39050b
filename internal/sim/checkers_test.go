package sim

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
)

// Each checker is seen to fire: a settled cluster (n1 primary, n2 and n3
// streaming, rows written) has one rule broken on purpose, and the checker
// that guards it must report it. The rules of the replication core are
// also broken in the core itself, and caught over seeds (docs/replication.md,
// "The simulator's mutation table").
//
// "row commit" and "tx change count" check what the storage answers where
// the workload calls it (ErrStale from CommitRow, Tx.Modified through a
// savepoint); their entries break that answer through world.faulty.

// settledWorld returns a 3-node world whose secondaries stream n1's writes,
// with no violation so far.
func settledWorld(t *testing.T) *world {
	t.Helper()
	o := OptionsFromSeed(1, t.TempDir())
	o.Nodes, o.MaxDelay, o.FaultPerMille, o.DurableAcks = 3, 1, 0, true
	o.KeepBytes, o.SegmentBytes, o.Window = 0, 256, 2048
	o.GroupWriteOverlap, o.GatherJoin, o.RowChanges, o.Reindex, o.HeldSnapshots, o.WideRows = false, false, false, false, false, false
	w := newWorld(o)
	t.Cleanup(lowerWorkerBytes())
	t.Cleanup(func() {
		for _, n := range w.nodes {
			if n.eng != nil {
				n.eng.Crash()
			}
		}
	})
	if !w.setup() {
		t.Fatalf("setup: %v", w.res.Violations)
	}
	step := func() {
		w.tick()
		w.now++
	}
	for i := 0; i < 40; i++ {
		step()
	}
	for i := 0; i < 20; i++ {
		w.nodes[0].clientWrite()
		step()
	}
	// The streamed transactions begun end (committed, or refused): none
	// stays open, holding the followers' journals (checker "kept").
	commitStreams(w, w.nodes[0])
	for i := 0; i < 20; i++ {
		step()
	}
	if p := w.servingPrimary(); p == nil || p.id != "n1" || !w.converged(p) {
		t.Fatal("the cluster did not settle on n1")
	}
	w.check(true)
	if len(w.res.Violations) > 0 {
		t.Fatalf("violations before any rule was broken: %v", w.res.Violations)
	}
	return w
}

// commitStreams commits n's streamed transactions now.
func commitStreams(w *world, n *node) {
	for len(n.streams) > 0 {
		s := n.streams[0]
		s.steps, s.outcome = 0, endCommit
		n.advanceStream(s)
	}
}

// timeRow returns a database of n's and a row of its simulated table that
// is not the first in key order and whose payload is a time: such a row
// keeps its values boxed, and Row.Values gives its own slice, which nobody
// may modify.
func timeRow(n *node) (*storage.DB, *storage.Row) {
	for _, db := range n.eng.Databases() {
		t, ok := db.Snapshot().Table(dbTable)
		if !ok {
			continue
		}
		var prev, out *storage.Row
		t.Scan(func(r *storage.Row) bool {
			if _, ok := r.Value(2).(time.Time); ok && prev != nil {
				out = r
				return false
			}
			prev = r
			return true
		})
		if out != nil {
			return db, out
		}
	}
	panic("no row with a time payload after the first")
}

// commitRow commits a new row of n's to db, as a client's autocommit
// insert, and records it in the ledger.
func commitRow(w *world, n *node, db *storage.DB) {
	t, _ := db.Latest().Table(dbTable)
	w.nextID++
	start := db.LSN()
	if _, err := db.CommitRow(storage.RowChange{Table: t, Kind: storage.OpInsert, Vals: w.rowValues(w.nextID, n.id)}); err != nil {
		panic(err)
	}
	n.recordLedger(db, start, db.LSN())
}

// fired reports whether checker reported a violation.
func fired(w *world, checker string) bool {
	for _, v := range w.res.Violations {
		if v.Checker == checker {
			return true
		}
	}
	return false
}

// writeUntil has the primary write, a tick apart, until checker fires or
// a bound of writes is reached.
func writeUntil(w *world, checker string) {
	for i := 0; i < 3000 && !fired(w, checker); i++ {
		w.byID["n1"].clientWrite()
		w.tick()
		w.now++
	}
}

func TestCheckersFire(t *testing.T) {
	for _, c := range []struct {
		checker string
		breakIt func(w *world)
	}{
		{"writer", func(w *world) {
			// A secondary takes writes.
			n2 := w.byID["n2"]
			n2.eng.OpenWrites(&storage.Writer{Epoch: n2.st.Epoch, Node: n2.id})
			w.check(false)
		}},
		{"ledger", func(w *world) {
			// A secondary commits a transaction of its own: its journal is
			// no longer a prefix of its primary's.
			n2 := w.byID["n2"]
			n2.eng.OpenWrites(&storage.Writer{Epoch: n2.st.Epoch, Node: n2.id})
			db, _ := n2.eng.Database("a")
			if db == nil {
				db, _ = n2.eng.Database("b")
			}
			t, _ := db.Latest().Table(dbTable)
			if _, err := db.CommitRow(storage.RowChange{Table: t, Kind: storage.OpInsert, Vals: w.rowValues(9999, "n2")}); err != nil {
				panic(err)
			}
			w.check(true)
		}},
		{"vanished", func(w *world) {
			// A transaction a node held is gone, and not in quarantine.
			n3 := w.byID["n3"]
			n3.held[txKey{base: "feedfeedfeedfeed", lsn: 1, sum: "x"}] = true
			w.check(true)
		}},
		{"kept", func(w *world) {
			// A secondary not known to be on its primary's history lets
			// its journal go at a checkpoint.
			n2 := w.byID["n2"]
			n2.checkpoint()
			for i := 0; i < 20; i++ {
				w.nodes[0].clientWrite()
				w.tick()
				w.now++
			}
			n2.streamed = map[string]streamedFrom{}
			n2.eng.SetRetention(func(*storage.DB) (journal.LSN, bool) { return 0, false })
			n2.checkpoint()
			n2.checkpoint()
		}},
		{"confirmed only with acks", func(w *world) {
			// A write confirmed beyond what the secondaries acknowledged.
			n1 := w.byID["n1"]
			db := n1.eng.Databases()[0]
			sw := &syncWait{row: db.Name() + "/1", db: db.Name(), base: db.Latest().BaseID(), lsn: db.LSN() + 1000,
				req: repl.SyncRequest{Level: repl.SyncReceived, Replicas: 1}}
			w.checkAcked(n1, sw, 1)
		}},
		{"acknowledged only what is written", func(w *world) {
			// An ack beyond the journal's end.
			n2 := w.byID["n2"]
			db := n2.eng.Databases()[0]
			n2.checkAck(repl.AckMsg{DB: db.Name(), BaseID: db.Latest().BaseID(), Written: db.Journal().End() + 10, Applied: db.LSN()})
		}},
		{"follows at once", func(w *world) {
			// A secondary told of its primary long ago does not stream
			// from it.
			n3 := w.byID["n3"]
			n3.mustFollow = &followDue{primary: "n1", epoch: n3.st.Epoch, since: w.now - 30}
			for _, id := range w.net.linkIDs() {
				if l := w.net.links[id]; l != nil && l.a == "n3" && l.b == "n1" && !l.oneShot {
					w.net.breakLink(w, id)
				}
			}
			w.checkFollows()
		}},
		{"controlled promotion keeps what reachable peers hold", func(w *world) {
			// A promotion ends without a row a peer it decided on held.
			n2 := w.byID["n2"]
			n2.promoting, n2.promised = true, map[string]bool{"a/424242": true}
			n2.cutTails()
		}},
		{"same rows", func(w *world) {
			// A reader writes into a stored row's values (Row.Values of a
			// boxed row is the row's own slice): a secondary holds other rows
			// than its primary at the same position of one journal.
			_, r := timeRow(w.byID["n2"])
			r.Values()[2] = time.Unix(7, 0).UTC()
			w.check(true)
		}},
		{"open never applied", func(w *world) {
			// A follower shows a row of a streamed transaction its primary
			// rolled back: a stored row's node column (Row.Values of a
			// boxed row) is set to that transaction's tag.
			n1 := w.byID["n1"]
			var s *streamTx
			for s == nil {
				w.streamNum = 0 // the next write begins one
				n1.clientWrite()
				for _, o := range n1.streams {
					s = o
				}
			}
			s.steps, s.outcome = 0, endRollback
			n1.advanceStream(s)
			_, r := timeRow(w.byID["n2"])
			r.Values()[1] = s.parts[0].tag
			w.check(true)
		}},
		{"streamed commit applied", func(w *world) {
			// A follower past a streamed commit lacks one of its rows: it
			// deleted it itself, with writes open.
			n1, n2 := w.byID["n1"], w.byID["n2"]
			var s *streamTx
			for s == nil {
				w.streamNum = 0
				n1.clientWrite()
				for _, o := range n1.streams {
					s = o
				}
			}
			commitStreams(w, n1)
			p := s.parts[0]
			db2, _ := n2.eng.Database(p.db)
			for i := 0; i < 40 && db2.LSN() < p.end; i++ {
				w.tick()
				w.now++
			}
			n2.eng.OpenWrites(&storage.Writer{Epoch: n2.st.Epoch, Node: n2.id})
			t, _ := db2.Latest().Table(dbTable)
			var gone *storage.Row
			t.Scan(func(r *storage.Row) bool {
				if r.Value(0) == p.ids[0] {
					gone = r
				}
				return gone == nil
			})
			if _, err := db2.CommitRow(storage.RowChange{Table: t, Seen: gone, Kind: storage.OpDelete}); err != nil {
				panic(err)
			}
			w.check(true)
		}},
		{"key order", func(w *world) {
			// A stored row's key is changed where it lies (Row.Values of a
			// boxed row): the table no longer scans in key order.
			_, r := timeRow(w.byID["n2"])
			r.Values()[0] = int64(-1)
			w.check(true)
		}},
		{"indexes", func(w *world) {
			// The table gets an index over the writing node; then a stored
			// row's node is changed where it lies, out of the index's order.
			n1 := w.byID["n1"]
			db, r := timeRow(n1)
			def := *w.table()
			def.Indexes = []storage.IndexDef{{Name: "by_node", Cols: []int{1}}}
			start, tx := db.LSN(), db.Begin()
			if err := tx.Reindex(dbTable, &def); err != nil {
				panic(err)
			}
			if err := tx.Commit(bg); err != nil {
				panic(err)
			}
			n1.recordLedger(db, start, db.LSN())
			r.Values()[1] = "n0"
			w.check(true)
		}},
		{"row commit", func(w *world) {
			// CommitRow commits a change worked out on a row that another
			// commit replaced since: every row is replaced after the table
			// the changes are then worked out on was read.
			w.faulty = &faultyStorage{commitStale: true}
			n1 := w.byID["n1"]
			db := n1.eng.Databases()[0]
			old, _ := db.Snapshot().Table(dbTable)
			tx := db.Begin()
			start := db.LSN()
			old.Scan(func(r *storage.Row) bool {
				vals := r.Values()
				nv := append([]any(nil), vals...)
				nv[2] = payload(vals[0].(int64) + 7)
				if err := tx.Update(dbTable, vals, nv); err != nil {
					panic(err)
				}
				return true
			})
			if err := tx.Commit(bg); err != nil {
				panic(err)
			}
			n1.recordLedger(db, start, db.LSN())
			for i := 0; i < 200 && !fired(w, "row commit"); i++ {
				now, _ := db.Snapshot().Table(dbTable)
				n1.readAt = map[string]*storage.Table{db.Name(): old}
				n1.changeRow(db, db.Name(), db.LSN(), now)
			}
		}},
		{"tx change count", func(w *world) {
			// A transaction still counts a change rolled back to a
			// savepoint.
			w.faulty = &faultyStorage{countKeepsRolledBack: true}
			w.opts.RowChanges = true
			writeUntil(w, "tx change count")
		}},
		{"frozen", func(w *world) {
			// A writer keeps the table it read inside DB.Read, unfrozen, past
			// Read as if it were a snapshot: a one-row commit then changes its
			// trees in place.
			n1 := w.byID["n1"]
			db := n1.eng.Databases()[0]
			commitRow(w, n1, db) // the catalog the checks froze is copied; its successor is not frozen
			db.Read(func(cat *storage.Catalog) {
				t, _ := cat.Table(dbTable)
				n1.snaps = append(n1.snaps, heldSnapshot{eng: n1.eng, t: t, rows: rowsOf(t), tick: w.now})
			})
			inPlace := db.InPlaceCommits()
			commitRow(w, n1, db)
			if db.InPlaceCommits() == inPlace {
				panic("the commit did not change the trees in place")
			}
			w.check(true)
		}},
		{"deferred write", func(w *world) {
			// A delete without a snapshot, worked out on a row that a commit
			// then replaced, is committed: its transaction checks the row
			// read again at the delete, not the one the delete was worked out
			// on.
			n1 := w.byID["n1"]
			db := n1.eng.Databases()[0]
			t, _ := db.Snapshot().Table(dbTable)
			seen := nthRow(t, 0)
			vals := append([]any(nil), seen.Values()...)
			vals[1] = "n0"
			start := db.LSN()
			if _, err := db.CommitRow(storage.RowChange{Table: t, Seen: seen, Kind: storage.OpUpdate, Vals: vals}); err != nil {
				panic(err)
			}
			n1.recordLedger(db, start, db.LSN())
			tx := db.BeginDeferred()
			meta, _ := tx.Meta().Table(dbTable)
			again, _, err := tx.Get(meta, seen)
			if err != nil {
				panic(err)
			}
			if err := tx.DeletePoint(meta, again); err != nil {
				panic(err)
			}
			n1.commitDeferred(db, db.Name(), &deferredTx{tx: tx, id: seen.Value(0).(int64), seen: seen})
		}},
		{"acknowledged", func(w *world) {
			// A commit is answered as soon as its frames are queued for the
			// group's write (journal.Log.AppendDeferred), before they are
			// written.
			n1 := w.byID["n1"]
			db := n1.eng.Databases()[0]
			_, end, err := db.Journal().AppendDeferred(storage.AppendEnd(nil, journal.FrameCommit, 1, w.clock()))
			if err != nil {
				panic(err)
			}
			n1.checkAcknowledged(db.Name(), 0, end, db.Journal().Written())
		}},
		{"one writer per epoch", func(w *world) {
			// A secondary takes writes in its primary's epoch, and the two
			// stay reachable for longer than a probe round.
			n2 := w.byID["n2"]
			n2.eng.OpenWrites(&storage.Writer{Epoch: n2.st.Epoch, Node: n2.id})
			for i := 0; i <= probeEvery+2*w.opts.MaxDelay+3; i++ {
				w.tick()
				w.check(false)
				w.now++
			}
		}},
		{"confirmed writes survive controlled promotion", func(w *world) {
			// A secondary slow to apply hears the SYNCED_LSN of writes
			// confirmed without it; its controlled promotion then cuts its
			// tails without catching up.
			n1, n2 := w.byID["n1"], w.byID["n2"]
			n2.slowUntil = w.now + 1000
			known := len(w.confirmed)
			missing := func() bool {
				rows := n2.committedRows()
				for _, c := range w.confirmed[known:] {
					s, _ := n2.core.Synced(c.db)
					if !rows[c.row] && s.Primary == n1.id && s.LSN >= c.lsn {
						return true
					}
				}
				return false
			}
			for i := 0; i < 100 && !missing(); i++ {
				n1.clientWrite()
				w.tick()
				w.now++
			}
			n2.promoting = true
			n2.cutTails()
		}},
		{"promotion keeps received writes", func(w *world) {
			// Between the cut of its tails and its epoch marks, a promoted
			// node installs an older copy of a database: rows it had received
			// are gone.
			n1, n2 := w.byID["n1"], w.byID["n2"]
			db := n1.eng.Databases()[0]
			old, _ := n2.eng.Database(db.Name())
			var copied bytes.Buffer
			if _, err := old.WriteSnapshot(&copied); err != nil {
				panic(err)
			}
			for i := 0; i < 3; i++ {
				commitRow(w, n1, db)
			}
			for i := 0; i < 20 && old.LSN() != db.LSN(); i++ {
				w.tick()
				w.now++
			}
			n2.applyWritten()
			n2.cutTails()
			n2.eng.OpenWrites(&storage.Writer{Epoch: n2.st.Epoch + 1, Node: n2.id})
			if _, err := n2.eng.InstallSeed(db.Name(), &copied); err != nil {
				panic(err)
			}
			n2.markEpochs()
		}},
	} {
		t.Run(strings.ReplaceAll(c.checker, " ", "_"), func(t *testing.T) {
			w := settledWorld(t)
			c.breakIt(w)
			if !fired(w, c.checker) {
				t.Fatalf("checker %q did not fire; violations: %v", c.checker, w.res.Violations)
			}
		})
	}
}
