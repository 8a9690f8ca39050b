package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
)

// check runs the checkers that are cheap after every step, and with full
// set the ones that read every journal.
//
//   - writer: a node takes writes only as the primary of the highest epoch
//     it knows, and no two nodes take writes in one epoch (also checked at
//     each write);
//   - ledger (full): every committed transaction in any journal is the one
//     the primary of its epoch wrote at that LSN: a follower's journal is a
//     prefix of its primaries' histories, never a splice of two;
//   - vanished (full): a durable committed transaction a node held is still
//     held by it (in its journal, or in the copy its database was rebuilt
//     from, at the same position of the same epoch), or is in its
//     quarantine (in the journal moved aside, or below its start in a
//     checkpoint moved aside with it);
//   - same rows (full): two nodes whose database is at the same position of
//     the same history hold the same rows. A primary publishes at each
//     commit the rows its transaction built, or re-applies its changes
//     when another commit came first (storage.Tx.adoptable); a follower
//     replays the frames. Both must give the rows of one log;
//   - key order (full): every node's table scans in ascending primary key
//     (compared as the Go integers they are, not by the storage's own
//     comparison), and looking each row up by its key finds it. Rows
//     arrive in no key order under Options.KeyLast, through commits,
//     replication, replay and checkpoints;
//   - indexes (full): every secondary index of every node's table holds
//     each of the table's rows once, the same row the primary key finds,
//     in the order of the index's columns then the primary key (compared
//     as the Go values they are). Under Options.Reindex the set of
//     indexes changes while rows are written; "same rows" compares the
//     sets too;
//   - kept (at each checkpoint): a node that is not primary and whose
//     current primary's stream has not written to a database's journal
//     (a former primary, fenced or demoted; a new epoch or primary) lets
//     none of that journal go: a quarantine of what diverged then lists
//     every transaction (repl.Node.retentionFloor);
//   - row commit (at each row change, Options.RowChanges): a change by
//     key worked out on a row that another commit replaced since it was
//     read is refused as stale, never committed (node.changeRow);
//   - frozen (full, Options.HeldSnapshots): a snapshot a writer holds
//     reads as it did when it was taken, while one-row commits change
//     the committed trees in place;
//   - open never applied (full): no node shows a row of a streamed
//     transaction that did not commit: rolled back (whole, or the writes
//     after a savepoint it rolled back to), refused at its commit, left
//     open by a crash or a demotion, or still running (stream.go);
//   - streamed commit applied (full): a node whose database is past a
//     streamed transaction's commit frame, with the same ballot there,
//     holds every row it inserted that no commit removed since.
//
// The ledger, "vanished" and "same rows" take a journal's transactions as
// the stretches between end frames (eachTxIn): with streamed transactions
// interleaved, each holds the frames streamed meanwhile too.
func (w *world) check(full bool) {
	writable := map[uint64]*node{}
	together := map[[2]string]int{}
	for _, n := range w.nodes {
		if n.eng == nil || n.eng.ReadOnly() {
			continue
		}
		if role := n.core.Role(); role != repl.RolePrimary {
			w.violate("writer", fmt.Sprintf("%s takes writes in role %s", n.id, role))
		}
		for peer, e := range n.core.PeerEpochs() {
			if e > n.st.Epoch {
				w.violate("writer", fmt.Sprintf("%s takes writes at epoch %d after %s showed epoch %d", n.id, n.st.Epoch, peer, e))
			}
		}
		if other, ok := writable[uint64(n.st.Epoch)]; ok && w.net.reachable(other.id, n.id) {
			// Promoted on two sides of a partition, two nodes may take
			// one epoch; once they can talk, the (epoch, node) order
			// must fence one within a probe round.
			key := [2]string{other.id, n.id}
			since, seen := w.together[key]
			if !seen {
				since = w.now
			}
			together[key] = since
			if w.now-since > probeEvery+2*w.opts.MaxDelay+2 {
				w.violate("one writer per epoch", fmt.Sprintf("%s and %s both take writes in epoch %d and have reached each other since tick %d", other.id, n.id, n.st.Epoch, since))
			}
		}
		writable[uint64(n.st.Epoch)] = n
	}
	w.together = together
	for _, n := range w.nodes {
		if n.eng != nil && n.ls != nil {
			n.checkLogStore(full)
		}
	}
	w.checkFollows()
	w.checkLease()
	for _, n := range w.nodes {
		w.noteStreamCounts(n)
	}
	if !full {
		return
	}
	for _, n := range w.nodes {
		if n.eng == nil || n.ls != nil {
			continue
		}
		now := map[txKey]bool{}
		for _, db := range n.eng.Databases() {
			base, hist := fmt.Sprintf("%x", db.Latest().BaseID()), db.History()
			durable := min(db.LSN(), db.Journal().Durable())
			err := eachTx(db, 0, db.LSN(), func(lsn, end journal.LSN, sum string) {
				e := endBallot(hist, end)
				want, ok := w.ledger[ledgerKey{base: base, lsn: lsn, epoch: e}]
				switch {
				case !ok:
					w.violate("ledger", fmt.Sprintf("%s: database %s holds at LSN %d, under epoch %s, a transaction no primary of that epoch wrote there (journals spliced)", n.id, db.Name(), lsn, e))
				case want != sum:
					w.violate("ledger", fmt.Sprintf("%s: database %s at LSN %d (epoch %s) differs from what its primary wrote", n.id, db.Name(), lsn, e))
				}
				if end <= durable {
					// Durable to its commit frame: a segment's roll makes
					// the log durable inside a transaction too.
					now[txKey{base: base, lsn: lsn, end: end, epoch: e, sum: sum}] = true
				}
			})
			if err != nil {
				w.violate("ledger", fmt.Sprintf("%s: database %s: %v", n.id, db.Name(), err))
			}
		}
		var lost []txKey
		for k := range n.held {
			if !now[k] && !n.inQuarantine(k) && !n.onHistory(k) {
				lost = append(lost, k)
			}
		}
		sort.Slice(lost, func(i, j int) bool { return lost[i].lsn < lost[j].lsn })
		for _, k := range lost {
			w.violate("vanished", fmt.Sprintf("%s: the transaction at LSN %d of epoch %s (database %s…) is gone, and not in quarantine", n.id, k.lsn, k.epoch, k.base[:8]))
			break
		}
		n.held = now
	}
	w.checkSameRows()
	w.checkStreams()
	w.checkKeyOrder()
	w.checkIndexes()
	w.checkFrozen()
}

// checkFrozen is the checker "frozen" (Options.HeldSnapshots): each
// snapshot a writer holds reads as it did when it was taken. Snapshots of
// an engine that has since gone down, or held long enough, are let go.
func (w *world) checkFrozen() {
	for _, n := range w.nodes {
		kept := n.snaps[:0]
		for _, s := range n.snaps {
			if s.eng != n.eng || w.now-s.tick > holdSnapshotTicks {
				continue
			}
			if got := rowsOf(s.t); got != s.rows {
				w.violate("frozen", fmt.Sprintf("%s: a snapshot of the table taken at tick %d reads otherwise now:\n was %.300s\n now %.300s", n.id, s.tick, s.rows, got))
			}
			kept = append(kept, s)
		}
		n.snaps = kept
	}
}

// eachTable calls fn with every node's simulated table, in each database
// that has it.
func (w *world) eachTable(fn func(n *node, db *storage.DB, t *storage.Table)) {
	for _, n := range w.nodes {
		if n.eng == nil {
			continue
		}
		for _, db := range n.eng.Databases() {
			if t, ok := db.Snapshot().Table(dbTable); ok {
				fn(n, db, t)
			}
		}
	}
}

// checkIndexes is the checker "indexes".
func (w *world) checkIndexes() {
	pk := w.table().PK[0]
	w.eachTable(func(n *node, db *storage.DB, t *storage.Table) {
		for ix, d := range t.Def().Indexes {
			var prev *storage.Row
			count := 0
			t.AscendIndex(ix, nil, func(r *storage.Row) bool {
				if got, ok := t.Get(storage.KeyRow(r.Values())); !ok || got != r {
					w.violate("indexes", fmt.Sprintf("%s: database %s: index %s holds row %d, which the primary key does not find", n.id, db.Name(), d.Name, r.ID))
					return false
				}
				if prev != nil && indexOrder(append(append([]int{}, d.Cols...), pk), prev, r) >= 0 {
					w.violate("indexes", fmt.Sprintf("%s: database %s: index %s has row %d after row %d", n.id, db.Name(), d.Name, r.ID, prev.ID))
					return false
				}
				prev = r
				count++
				return true
			})
			if count != t.Len() {
				w.violate("indexes", fmt.Sprintf("%s: database %s: index %s holds %d rows, the table %d", n.id, db.Name(), d.Name, count, t.Len()))
			}
		}
	})
}

// indexOrder compares two rows by columns cols (NULL first, then as
// valueOrder orders the values).
func indexOrder(cols []int, a, b *storage.Row) int {
	for _, c := range cols {
		x, y := a.Value(c), b.Value(c)
		var r int
		switch {
		case x == nil && y == nil:
		case x == nil:
			r = -1
		case y == nil:
			r = 1
		default:
			r = valueOrder(x, y)
		}
		if r != 0 {
			return r
		}
	}
	return 0
}

// checkKeyOrder is the checker "key order".
func (w *world) checkKeyOrder() {
	pk := w.table().PK[0]
	w.eachTable(func(n *node, db *storage.DB, t *storage.Table) {
		var prev *int64
		t.Scan(func(r *storage.Row) bool {
			var k int64
			ok := true
			switch v := r.Value(pk).(type) {
			case int64:
				k = v
			case int32:
				k = int64(v)
			default:
				ok = false
			}
			switch {
			case !ok:
				w.violate("key order", fmt.Sprintf("%s: database %s: row %d has key %T(%v)", n.id, db.Name(), r.ID, r.Value(pk), r.Value(pk)))
				return false
			case prev != nil && k <= *prev:
				w.violate("key order", fmt.Sprintf("%s: database %s: key %d scans after key %d", n.id, db.Name(), k, *prev))
				return false
			}
			prev = &k
			if got, ok := t.Get(storage.KeyRow(r.Values())); !ok || got.ID != r.ID {
				w.violate("key order", fmt.Sprintf("%s: database %s: looking up key %d does not find row %d", n.id, db.Name(), k, r.ID))
				return false
			}
			return true
		})
	})
}

// checkSameRows is the checker "same rows".
func (w *world) checkSameRows() {
	type state struct {
		node string
		rows string
	}
	seen := map[string]state{} // base, LSN and last epoch mark → the first node's rows
	for _, n := range w.nodes {
		if n.eng == nil {
			continue
		}
		for _, db := range n.eng.Databases() {
			key := fmt.Sprintf("%x@%d/%v", db.Latest().BaseID(), db.LSN(), db.History().Last())
			rows := tableRows(db)
			if first, ok := seen[key]; !ok {
				seen[key] = state{n.id, rows}
			} else if first.rows != rows {
				w.violate("same rows", fmt.Sprintf("database %s at LSN %d of one history: %s holds [%s], %s [%s]", db.Name(), db.LSN(), n.id, rows, first.node, first.rows))
			}
		}
	}
}

// tableRows lists a database's rows of the simulated table, with their row
// numbers and their values' Go types, in key order.
func tableRows(db *storage.DB) string {
	t, ok := db.Snapshot().Table(dbTable)
	if !ok {
		return "no table"
	}
	return rowsOf(t)
}

// rowsOf is tableRows of one version of the table.
func rowsOf(t *storage.Table) string {
	var b strings.Builder
	for _, ix := range t.Def().Indexes {
		fmt.Fprintf(&b, "index %s%v ", ix.Name, ix.Cols)
	}
	t.Scan(func(r *storage.Row) bool {
		fmt.Fprintf(&b, "%d:", r.ID)
		for _, v := range r.Values() {
			fmt.Fprintf(&b, "%T(%v),", v, v)
		}
		b.WriteByte(' ')
		return true
	})
	return b.String()
}

// onHistory reports whether the node's database of k's identity contains
// k: its state goes past k's LSN and its history says the same epoch wrote
// that position (by log matching, the same transaction). The journal's
// first transaction counts too: eachTx leaves it out, since the journal
// may start inside it.
func (n *node) onHistory(k txKey) bool {
	for _, db := range n.eng.Databases() {
		// Still in the journal, it would have been found; below the
		// journal's start it is in the copy the database was rebuilt from.
		if fmt.Sprintf("%x", db.Latest().BaseID()) == k.base && k.lsn <= db.Journal().Start() && k.lsn < db.LSN() &&
			endBallot(db.History(), k.end) == k.epoch {
			return true
		}
	}
	return false
}

// upstream is the node n streams from instead of the primary
// (Options.Cascade), or nil.
func (n *node) upstream() *node {
	if n.w.opts.Cascade && n.id == "n3" {
		return n.w.byID["n2"]
	}
	return nil
}

// checkFollows is the checker "follows at once": a secondary that learned
// of a new primary (its announcement, a NotPrimary naming it, a welcome)
// is streaming from it within followBound ticks, unless a fault touched
// either of them since, the primary stopped being one or does not take
// writes yet, or the secondary is slow or being promoted.
func (w *world) checkFollows() {
	bound := 4*w.opts.MaxDelay + 2*retryTicks + 4
	for _, n := range w.nodes {
		d := n.mustFollow
		if d == nil || n.eng == nil {
			continue
		}
		p := w.byID[d.primary]
		if n.st.Epoch != d.epoch || n.st.Primary != d.primary || n.core.Role() != repl.RoleSecondary {
			n.mustFollow = nil // moved on
			continue
		}
		up := n.upstream()
		if peer, welcomed := n.core.Following(); welcomed && (peer == d.primary || up != nil && peer == up.id) {
			n.mustFollow = nil // it did (through its upstream, for a cascade)
			continue
		}
		if w.now-d.since <= bound {
			continue
		}
		n.mustFollow = nil
		if w.touched[n.id] >= d.since || w.touched[p.id] >= d.since || p.eng == nil || n.slowUntil >= d.since || p.stallUntil >= d.since || n.stallUntil >= d.since ||
			p.core.Role() != repl.RolePrimary || p.st.Epoch != d.epoch || !p.core.Writable() || !w.net.reachable(n.id, p.id) {
			continue
		}
		if w.anyStalledSince(d.since) {
			continue // a dial to a stalled node hangs until the link timeout
		}
		if up != nil && (w.touched[up.id] >= d.since || up.eng == nil) {
			continue // its upstream's fault: dialled first, it may hold the fallback up
		}
		if peer, welcomed := n.core.Following(); peer != p.id || !welcomed {
			w.violate("follows at once", fmt.Sprintf("%s learned at tick %d that %s is primary of epoch %d and does not follow it %d ticks later (following %q, welcomed %v)",
				n.id, d.since, p.id, d.epoch, w.now-d.since, peer, welcomed))
		}
	}
}

// checkLease is the checker "lease" (raft mode, §17.9.3): a leader that the
// network keeps from a majority of the members (itself included) stops
// taking writes within its lease: the election timeout, plus the time for
// the last messages to arrive. A leader by force_primary has no lease
// until a majority joins it.
func (w *world) checkLease() {
	if !w.opts.Raft {
		return
	}
	for _, l := range w.nodes {
		if l.eng == nil || l.eng.ReadOnly() || w.forcedTerms[uint64(l.st.Epoch)] {
			delete(w.isolated, l.id)
			continue
		}
		if l.stalled() {
			continue // it takes no write meanwhile; at once when it resumes
		}
		reach := 1
		for _, m := range w.nodes {
			if m != l && m.eng != nil && w.net.passes(l.id, m.id) && w.net.passes(m.id, l.id) {
				reach++
			}
		}
		if reach >= len(w.nodes)/2+1 {
			delete(w.isolated, l.id)
			continue
		}
		since, ok := w.isolated[l.id]
		if !ok {
			w.isolated[l.id] = w.now
			continue
		}
		if w.now-since > 2*electionTicks+2*w.opts.MaxDelay+heartbeatTicks {
			w.violate("lease", fmt.Sprintf("%s still takes writes as leader of term %d, cut off from a majority since tick %d", l.id, l.st.Epoch, since))
		}
	}
}

// anyStalledSince reports whether a node was stalled at some tick since t
// (Options.StallWeight).
func (w *world) anyStalledSince(t int) bool {
	for _, n := range w.nodes {
		if n.stallUntil >= t && n.stallFrom <= w.now {
			return true
		}
	}
	return false
}
