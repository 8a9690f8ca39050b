package sim

import (
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
)

// Each checker is seen to fire: a settled cluster (n1 primary, n2 and n3
// streaming, rows written) has one rule broken on purpose, and the checker
// that guards it must report it. The rules of the replication core are
// also broken in the core itself, and caught over seeds (docs/replication.md,
// "The simulator's mutation table").

// settledWorld returns a 3-node world whose secondaries stream n1's writes,
// with no violation so far.
func settledWorld(t *testing.T) *world {
	t.Helper()
	o := OptionsFromSeed(1, t.TempDir())
	o.Nodes, o.MaxDelay, o.FaultPerMille, o.DurableAcks = 3, 1, 0, true
	o.KeepBytes, o.SegmentBytes, o.Window = 0, 256, 2048
	o.GroupWriteOverlap, o.GatherJoin, o.RowChanges, o.Reindex, o.HeldSnapshots = false, false, false, false, false
	w := newWorld(o)
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

// fired reports whether checker reported a violation.
func fired(w *world, checker string) bool {
	for _, v := range w.res.Violations {
		if v.Checker == checker {
			return true
		}
	}
	return false
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
