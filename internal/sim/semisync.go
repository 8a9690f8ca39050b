package sim

import (
	"fmt"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
)

// Semi-synchronous commit in the simulation (§17.8): a client write may
// wait for acks at RECEIVED, APPLIED or MAJORITY; the core confirms it
// (repl.Core.WaitSync and its releases), announces SYNCED_LSN, and a
// promotion applies the guarantee. A timeout, too few secondaries or the
// end of the primary role leave the write unconfirmed (warning or error
// 9004). The checkers here count acknowledgements as they were sent.

// confirmedWrite is a write confirmed to its client without a warning.
type confirmedWrite struct {
	row     string
	db      string
	lsn     journal.LSN
	level   repl.SyncLevel
	primary string
	by      ballot
	tick    int
	// waived: a promotion may legitimately have lost it since (forced,
	// or controlled while every holder was unreachable and the candidate
	// did not know SYNCED_LSN): it is checked no more.
	waived bool
}

// ackKey names what one node acknowledged of one database incarnation in
// one epoch.
type ackKey struct {
	node, base string
	epoch      uint64
}

func (w *world) recordAck(from string, a repl.AckMsg) {
	k := ackKey{node: from, base: fmt.Sprintf("%x", a.BaseID), epoch: uint64(a.Epoch)}
	p := w.acks[k]
	w.acks[k] = repl.AckPos{Written: max(p.Written, a.Written), Applied: max(p.Applied, a.Applied)}
}

// checkAcked: a write is confirmed only once need other nodes have sent
// acks that cover it (written, or applied for APPLIED) in this epoch.
func (w *world) checkAcked(n *node, sw *syncWait, need int) {
	var got []repl.AckPos
	for _, p := range w.nodes {
		if p != n {
			got = append(got, w.acks[ackKey{node: p.id, base: fmt.Sprintf("%x", sw.base), epoch: uint64(n.st.Epoch)}])
		}
	}
	// Counted here, not with repl.SyncAcks: the rule under test must not
	// check itself.
	count := 0
	for _, a := range got {
		pos := a.Written
		if sw.req.Level == repl.SyncApplied {
			pos = a.Applied
		}
		if pos >= sw.lsn {
			count++
		}
	}
	if count < need {
		w.violate("confirmed only with acks", fmt.Sprintf("%s confirmed %s at %s (LSN %d) with %d of %d acknowledgements sent", n.id, sw.row, sw.req.Level, sw.lsn, count, need))
	}
}

// syncRequest draws a write's level: half the writes are asynchronous.
func (w *world) syncRequest() repl.SyncRequest {
	r := repl.SyncRequest{Replicas: 1, Timeout: time.Duration(3+w.rng.IntN(12)) * time.Millisecond, Action: repl.SyncError}
	switch w.rng.IntN(8) {
	case 0, 1, 2, 3:
		r.Level = repl.SyncOff
	case 4, 5:
		r.Level = repl.SyncReceived
	case 6:
		r.Level = repl.SyncApplied
	default:
		r.Level = repl.SyncMajority
	}
	if w.rng.IntN(5) == 0 {
		r.Replicas = 2
	}
	return r
}

// checkConfirmed is the guarantee at promotion (§17.8.6), checked at each
// promotion of n once it has caught up (holds: its rows then). A confirmed
// write it lacks is a violation of a controlled promotion when a reachable
// node holds it on the newest history (promised: the rows of the nodes
// whose journals lie on the most up-to-date reachable one), or when n knew
// a SYNCED_LSN at or beyond it from the primary that confirmed it: the
// promotion had to keep it or be refused. Otherwise it was lost the ways
// the spec allows (every holder crashed before an fsync, unreachable, or
// left behind by a forced promotion): it is waived and checked no more.
//
// After a raft election (elected), the guarantee is the spec's §17.9.5: a
// write confirmed at MAJORITY is never lost by an election (it is in the
// log of a majority, which every elected node's voters intersect); the
// other levels are waived.
func (w *world) checkConfirmed(n *node, holds, promised map[string]bool, force, elected bool) {
	for _, c := range w.confirmed {
		if c.waived || holds[c.row] {
			continue
		}
		if elected {
			if c.level == repl.SyncMajority {
				w.violate("MAJORITY writes survive elections", fmt.Sprintf("%s elected without %s, confirmed at MAJORITY by %s at tick %d (LSN %d)", n.id, c.row, c.primary, c.tick, c.lsn))
				continue
			}
			c.waived = true
			w.res.ConfirmedWaived++
			continue
		}
		s, _ := n.core.Synced(c.db)
		knew := s.Epoch == c.by.epoch && s.Primary == c.by.node && s.LSN >= c.lsn
		switch {
		case force:
		case promised[c.row]:
			w.violate("confirmed writes survive controlled promotion", fmt.Sprintf("%s promoted without %s, confirmed at %s by %s at tick %d, which a reachable node on the newest history holds",
				n.id, c.row, c.level, c.primary, c.tick))
			continue
		case knew:
			w.violate("confirmed writes survive controlled promotion", fmt.Sprintf("%s promoted without %s, confirmed at %s by %s at tick %d (LSN %d), though it knew SYNCED_LSN %d from that primary",
				n.id, c.row, c.level, c.primary, c.tick, c.lsn, s.LSN))
			continue
		}
		c.waived = true
		w.res.ConfirmedWaived++
		n.tracef("confirmed %s left out (force=%v): no reachable holder on the newest history, SYNCED_LSN not known", c.row, force)
	}
}

// checkPreVote is the checker "pre-vote": no node starts a campaign (takes
// a new term on a timeout) while the leader is healthy: up, taking writes,
// and heard by a majority of the members (itself included), each of them
// following it, reachable both ways, and untouched by any fault (crash,
// partition, slowness, clock jump) for three election timeouts.
func (w *world) checkPreVote(cand *node, term repl.Epoch) {
	quiet := func(id string) bool {
		t, ok := w.touched[id]
		return !ok || w.now-t > 3*electionTicks
	}
	for _, l := range w.nodes {
		if l == cand || l.eng == nil || l.eng.ReadOnly() || l.core.Role() != repl.RolePrimary || !quiet(l.id) {
			continue
		}
		hear := []string{l.id}
		for _, m := range w.nodes {
			if m == l || m == cand || m.eng == nil || !quiet(m.id) || !w.net.passes(l.id, m.id) || !w.net.passes(m.id, l.id) {
				continue
			}
			if peer, welcomed := m.core.Following(); peer == l.id && welcomed {
				hear = append(hear, m.id)
			}
		}
		if len(hear) >= len(w.nodes)/2+1 {
			w.violate("pre-vote", fmt.Sprintf("%s stands at term %d while leader %s (term %d) is heard by %v", cand.id, term, l.id, l.st.Epoch, hear))
		}
	}
}
