package repl

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
)

// Semi-synchronous commit on the primary (§17.8). A session that committed
// waits in WaitSync, on its own goroutine, until enough secondaries have
// acknowledged the commit's LSN. Acks arrive in readAcks, which releases
// the waiters they satisfy (syncProgressLocked): one tracker per database,
// no timer goroutine per commit.

// syncState is the primary's waiters and what it has confirmed; on a
// secondary, what the primary announced (SYNCED_LSN).
type syncState struct {
	waiters  map[string][]*syncWaiter // by lower-case database name
	degraded map[string]degradedDB
	// synced: on the primary, the highest LSN confirmed to a client after
	// its acks; on a secondary, the last value the primary announced,
	// kept after its loss (the guarantee at promotion).
	synced map[string]journal.LSN
	// syncedCh is closed and replaced when the primary's synced grows: the
	// senders announce it at once.
	syncedCh chan struct{}
	// shown is @@GLOBAL.cluster_sync_commit, for the SYNC column.
	shown SyncLevel
}

// syncWaiter is one session waiting for one database.
type syncWaiter struct {
	lsn   journal.LSN
	level SyncLevel
	need  int
	done  chan struct{}
	// ended, when set before done closes, says the node stopped being
	// primary (demoted, fenced).
	ended string
}

// degradedDB is a database whose last wait timed out: later writes do not
// wait until need secondaries hold its log end at level.
type degradedDB struct {
	level SyncLevel
	need  int
}

// syncStats are the Miraj_cluster_sync_* counters (§17.8.5).
type syncStats struct {
	waits, fallbacks, errors, timeouts, cancelled atomic.Uint64
	waitNanos, waitMaxNanos                       atomic.Int64
}

func (n *Node) initSyncLocked() {
	n.mu.sync.waiters = map[string][]*syncWaiter{}
	n.mu.sync.degraded = map[string]degradedDB{}
	n.mu.sync.synced = map[string]journal.LSN{}
	n.mu.sync.syncedCh = make(chan struct{})
	if l, ok := ParseSyncLevel(string(n.cfg.SyncCommit)); ok {
		n.mu.sync.shown = l
	}
}

// SetSyncLevelShown records @@GLOBAL.cluster_sync_commit for the SYNC
// column of the primary's row.
func (n *Node) SetSyncLevelShown(l SyncLevel) {
	n.mu.Lock()
	n.mu.sync.shown = l
	n.mu.Unlock()
}

// members is the number of voting members for MAJORITY: the seeds and
// this node.
func (n *Node) members() int { return len(n.cfg.Peers()) + 1 }

// streamingLocked returns the acknowledged positions in database key of
// the secondaries that count (§17.8.1): connected, streaming that
// incarnation of the database, not being seeded.
func (n *Node) streamingLocked(key string, base []byte) []AckPos {
	var out []AckPos
	for _, f := range n.mu.followers {
		if !f.linked() {
			continue
		}
		p, ok := f.positions[key]
		if !ok || !p.decided || p.seeding || p.pinned || !bytes.Equal(p.baseID, base) {
			continue
		}
		out = append(out, AckPos{Written: p.written, Applied: p.applied})
	}
	return out
}

// linked reports whether the follower's link is up (a placeholder kept
// for retention has none).
func (f *follower) linked() bool {
	if f.conn == nil {
		return false
	}
	select {
	case <-f.conn.Done():
		return false
	default:
		return true
	}
}

// streamingCountLocked counts the connected secondaries none of whose
// databases is being copied (Miraj_cluster_sync_secondaries).
func (n *Node) streamingCountLocked() int {
	count := 0
	for _, f := range n.mu.followers {
		if !f.linked() {
			continue
		}
		ok := true
		for _, p := range f.positions {
			if p.seeding || p.pinned {
				ok = false
			}
		}
		if ok {
			count++
		}
	}
	return count
}

// WaitSync waits, after a commit of database db that ended at lsn, for the
// acknowledgements req asks for (§17.8.3, §17.8.4). The commit is already
// durable and visible here: whatever the result, it stays committed.
// ctx's end (KILL QUERY) ends the wait with a warning.
func (n *Node) WaitSync(ctx context.Context, db string, lsn journal.LSN, req SyncRequest) SyncResult {
	if req.Level == SyncOff {
		return SyncResult{}
	}
	d, ok := n.st.Database(db)
	if !ok {
		return SyncResult{}
	}
	key := strings.ToLower(db)
	base := d.Latest().BaseID()
	start := time.Now()
	n.stats.waits.Add(1)
	defer func() {
		took := time.Since(start).Nanoseconds()
		n.stats.waitNanos.Add(took)
		for {
			m := n.stats.waitMaxNanos.Load()
			if took <= m || n.stats.waitMaxNanos.CompareAndSwap(m, took) {
				break
			}
		}
	}()

	n.mu.Lock()
	if n.mu.role != RolePrimary {
		n.mu.Unlock()
		return n.countResult(SyncNoLongerPrimary("demoted"))
	}
	need := SyncNeed(req.Level, req.Replicas, n.members())
	secs := n.streamingLocked(key, base)
	acks := SyncAcks(req.Level, lsn, secs)
	if acks >= need {
		n.confirmLocked(key, lsn)
		n.mu.Unlock()
		return SyncResult{}
	}
	if req.Action != SyncWait {
		_, degraded := n.mu.sync.degraded[key]
		if len(secs) < need || degraded {
			n.mu.Unlock()
			n.stats.timeouts.Add(1)
			return n.countResult(SyncShortfall(req, acks, need, len(secs), false, degraded))
		}
	}
	w := &syncWaiter{lsn: lsn, level: req.Level, need: need, done: make(chan struct{})}
	n.mu.sync.waiters[key] = append(n.mu.sync.waiters[key], w)
	n.mu.Unlock()

	var expired <-chan time.Time
	if req.Action != SyncWait {
		t := time.NewTimer(req.Timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-w.done:
	case <-expired:
	case <-ctx.Done():
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	select {
	case <-w.done: // released, even if the timer or a KILL came too
		if w.ended != "" {
			return n.countResult(SyncNoLongerPrimary(w.ended))
		}
		return SyncResult{}
	default:
	}
	n.removeWaiterLocked(key, w)
	if ctx.Err() != nil {
		n.stats.cancelled.Add(1)
		return SyncCancelled()
	}
	// Timed out: the database is degraded until the secondaries catch up.
	n.stats.timeouts.Add(1)
	acks = SyncAcks(req.Level, lsn, n.streamingLocked(key, base))
	if _, already := n.mu.sync.degraded[key]; !already {
		n.mu.sync.degraded[key] = degradedDB{level: req.Level, need: need}
		n.log.Error(fmt.Sprintf("Cluster: synchronous replication degraded on database %s: no acknowledgement from %d secondary(ies) in %d ms; later writes no longer wait until they catch up",
			d.Name(), need, req.Timeout.Milliseconds()), "database", d.Name())
	}
	return n.countResult(SyncShortfall(req, acks, need, len(secs), true, false))
}

// countResult counts a wait's warning or error.
func (n *Node) countResult(r SyncResult) SyncResult {
	switch r.Outcome {
	case SyncWarned:
		n.stats.fallbacks.Add(1)
	case SyncFailed:
		n.stats.errors.Add(1)
	}
	return r
}

func (n *Node) removeWaiterLocked(key string, w *syncWaiter) {
	ws := n.mu.sync.waiters[key]
	if i := slices.Index(ws, w); i >= 0 {
		n.mu.sync.waiters[key] = slices.Delete(ws, i, i+1)
	}
}

// confirmLocked records that the commit at lsn was confirmed to its client
// with its acks (SYNCED_LSN), and wakes the senders to announce it.
func (n *Node) confirmLocked(key string, lsn journal.LSN) {
	if lsn <= n.mu.sync.synced[key] {
		return
	}
	n.mu.sync.synced[key] = lsn
	close(n.mu.sync.syncedCh)
	n.mu.sync.syncedCh = make(chan struct{})
}

// syncProgressLocked releases the waiters of database key that the
// secondaries' acknowledgements now satisfy, and lifts its degraded state
// once enough of them hold its log end. Called when an ack arrives and
// when a secondary starts streaming.
func (n *Node) syncProgressLocked(key string) {
	ws, dg := n.mu.sync.waiters[key], n.mu.sync.degraded[key]
	_, degraded := n.mu.sync.degraded[key]
	if len(ws) == 0 && !degraded {
		return
	}
	d, ok := n.st.Database(key)
	if !ok {
		return
	}
	secs := n.streamingLocked(key, d.Latest().BaseID())
	kept := ws[:0]
	for _, w := range ws {
		if SyncAcks(w.level, w.lsn, secs) >= w.need {
			n.confirmLocked(key, w.lsn)
			close(w.done)
			continue
		}
		kept = append(kept, w)
	}
	clear(ws[len(kept):])
	n.mu.sync.waiters[key] = kept
	if degraded && SyncAcks(dg.level, d.LSN(), secs) >= dg.need {
		delete(n.mu.sync.degraded, key)
		n.log.Info(fmt.Sprintf("Cluster: synchronous replication restored on database %s", d.Name()), "database", d.Name())
	}
}

// endWaitsLocked ends every wait because the node stopped being primary
// (why: demoted, fenced): each session gets error 9004.
func (n *Node) endWaitsLocked(why string) {
	count := 0
	for key, ws := range n.mu.sync.waiters {
		for _, w := range ws {
			w.ended = why
			close(w.done)
			count++
		}
		delete(n.mu.sync.waiters, key)
	}
	clear(n.mu.sync.degraded)
	if count > 0 {
		n.log.Error(fmt.Sprintf("Cluster: %d session(s) waiting for acknowledgements interrupted: %s", count, why))
	}
}

// syncedLocked is a copy of what this node knows of SYNCED_LSN.
func (n *Node) syncedLocked() map[string]journal.LSN {
	out := make(map[string]journal.LSN, len(n.mu.sync.synced))
	for k, v := range n.mu.sync.synced {
		out[k] = v
	}
	return out
}

// SyncStatusVar is one Miraj_cluster_sync_* status variable: a count
// (uint64) or a duration in milliseconds to the microsecond (float64).
type SyncStatusVar struct {
	Name  string
	Value any
}

// SyncStatus returns the counters of §17.8.5.
func (n *Node) SyncStatus() []SyncStatusVar {
	waits := n.stats.waits.Load()
	ms := func(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }
	avg := 0.0
	if waits > 0 {
		avg = ms(n.stats.waitNanos.Load() / int64(waits))
	}
	n.mu.Lock()
	degraded := len(n.mu.sync.degraded)
	streaming := 0
	if n.mu.role == RolePrimary {
		streaming = n.streamingCountLocked()
	}
	n.mu.Unlock()
	return []SyncStatusVar{
		{"Miraj_cluster_sync_waits", waits},
		{"Miraj_cluster_sync_fallbacks", n.stats.fallbacks.Load()},
		{"Miraj_cluster_sync_errors", n.stats.errors.Load()},
		{"Miraj_cluster_sync_timeouts", n.stats.timeouts.Load()},
		{"Miraj_cluster_sync_cancelled", n.stats.cancelled.Load()},
		{"Miraj_cluster_sync_wait_avg_ms", avg},
		{"Miraj_cluster_sync_wait_max_ms", ms(n.stats.waitMaxNanos.Load())},
		{"Miraj_cluster_sync_degraded_bases", uint64(degraded)},
		{"Miraj_cluster_sync_secondaries", uint64(streaming)},
	}
}

// syncedRefusals applies the guarantee at promotion with what this node
// knows of SYNCED_LSN.
func (n *Node) syncedRefusals(local []LocalDB, plan []CatchUpStep) []string {
	n.mu.Lock()
	synced := n.syncedLocked()
	n.mu.Unlock()
	return PromotionSyncedRefusals(local, plan, synced)
}

// SyncDefaults are the initial global settings from cluster.toml
// (sync_commit, sync_replicas, sync_timeout_ms, sync_timeout_action).
func (n *Node) SyncDefaults() SyncRequest {
	r := SyncRequest{Replicas: int(n.cfg.SyncReplicas), Timeout: n.cfg.SyncTimeout}
	r.Level, _ = ParseSyncLevel(string(n.cfg.SyncCommit))
	r.Action, _ = ParseSyncAction(string(n.cfg.SyncTimeoutAction))
	if r.Replicas < 1 {
		r.Replicas = 1
	}
	if r.Timeout <= 0 {
		r.Timeout = 10 * time.Second
	}
	return r
}
