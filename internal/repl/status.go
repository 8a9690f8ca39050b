package repl

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
)

// The status tables (SHOW CLUSTER STATUS, information_schema.MIRAJ_*) and
// the semi-synchronous waits of the sessions, as the driver serves them
// from the core.

// NodeRow is one row of SHOW CLUSTER STATUS / information_schema.MIRAJ_NODES.
type NodeRow struct {
	NodeID         string
	Address        string
	Role           string
	State          string
	Epoch          uint64
	LagBytes       int64
	LagSeconds     *float64
	ConnectedSince *time.Time
	LastError      string
	Sync           *string
}

// ReplRow is one row of information_schema.MIRAJ_REPLICATION.
type ReplRow struct {
	NodeID      string
	Database    string
	BaseID      string
	SentLSN     *uint64
	WrittenLSN  *uint64
	AppliedLSN  *uint64
	RetainedLSN *uint64
	PrimaryLSN  *uint64
	SyncedLSN   *uint64
}

func u64(v journal.LSN) *uint64 { x := uint64(v); return &x }

// status asks the loop for the core's status (before Run: the core's own).
func (n *Node) status() (CoreStatus, time.Time) {
	var s CoreStatus
	if !n.started.Load() {
		return n.core.Status(), time.Now()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n.call(ctx, func() { s = n.core.Status() })
	return s, time.Now()
}

// at converts a core tick into a time, from now at tick now.
func at(now time.Time, nowTick, tick int) time.Time {
	return now.Add(-time.Duration(nowTick-tick) * tickInterval)
}

// logView is the node's databases as the core reads them: the engine's,
// or a log-store node's journals.
func (n *Node) logView() []DBInfo {
	if n.opts.LogStore != nil {
		return n.opts.LogStore.Databases()
	}
	return engineLog{eng: n.st}.Databases()
}

// Nodes returns what this node knows of every member, itself first.
func (n *Node) Nodes() []NodeRow {
	s, now := n.status()
	dbs := n.logView()
	logStore := n.opts.LogStore != nil
	self := NodeRow{NodeID: n.cfg.Node.ID, Address: n.cfg.Node.Advertise, Role: string(s.Role), State: "SELF",
		Epoch: uint64(s.State.Epoch), LastError: s.LastError}
	if logStore {
		self.Role = string(RoleLogStore)
	}
	if s.Role == RolePromoting {
		self.State, self.Role = "PROMOTING", string(RoleSecondary)
	}
	if s.Election.Phase == "CANDIDATE" {
		self.State = "CANDIDATE"
	}
	if s.Role == RolePrimary {
		shown := n.syncShown.Load().(SyncLevel).String()
		if s.Degraded > 0 {
			shown = "DEGRADED"
		}
		self.Sync = &shown
	} else {
		var lag int64
		for _, db := range dbs {
			have := db.Applied
			if logStore {
				have = db.End // what it keeps is what it wrote
			}
			if p, ok := s.PrimaryLSN[strings.ToLower(db.Name)]; ok && p > have {
				lag += int64(p - have)
			}
		}
		self.LagBytes = lag
		if s.LastApply >= 0 {
			secs := 0.0
			if lag > 0 {
				secs = now.Sub(at(now, s.Now, s.LastApply)).Seconds()
			}
			self.LagSeconds = &secs
		}
	}
	rows := []NodeRow{self}
	for _, p := range s.Peers {
		r := NodeRow{NodeID: p.ID, Address: p.Addr, Role: string(p.Role), State: p.State, Epoch: uint64(p.Epoch), LastError: p.LastError, LagBytes: p.Lag}
		if r.Role == "" {
			r.Role = string(RoleSecondary)
		}
		if p.LogStore && p.Role == RoleSecondary {
			r.Role = string(RoleLogStore)
		}
		if p.Since >= 0 {
			t := at(now, s.Now, p.Since)
			r.ConnectedSince = &t
		}
		if f := p.Follower; f != nil {
			var lag int64
			seeding := false
			byName := map[string]FollowerDB{}
			for _, d := range f.DBs {
				byName[strings.ToLower(d.Name)] = d
			}
			for _, db := range dbs {
				d, has := byName[strings.ToLower(db.Name)]
				have := d.Applied
				if p.LogStore {
					have = d.Written
				}
				switch {
				case !has:
					lag += int64(db.Applied)
				case d.Pinned:
				default:
					seeding = seeding || d.Seeding
					if db.Applied > have {
						lag += int64(db.Applied - have)
					}
				}
			}
			r.LagBytes = lag
			if f.LastApply >= 0 {
				secs := 0.0
				if lag > 0 {
					secs = now.Sub(at(now, s.Now, f.LastApply)).Seconds()
				}
				r.LagSeconds = &secs
			}
			sync := "NO"
			if p.State == "CONNECTED" && !seeding {
				sync = "YES"
			}
			r.Sync = &sync
		}
		rows = append(rows, r)
	}
	return rows
}

// Replication returns the per-database positions this node knows: its
// own, and those of the followers it serves. A log-store node applies
// nothing: its APPLIED_LSN is NULL, as is a log-store follower's.
func (n *Node) Replication() []ReplRow {
	s, _ := n.status()
	var rows []ReplRow
	dbs := n.logView()
	logStore := n.opts.LogStore != nil
	for _, db := range dbs {
		key := strings.ToLower(db.Name)
		r := ReplRow{NodeID: n.cfg.Node.ID, Database: db.Name, BaseID: fmt.Sprintf("%x", db.BaseID),
			WrittenLSN: u64(db.End), AppliedLSN: u64(db.Applied)}
		if logStore {
			r.AppliedLSN, r.RetainedLSN = nil, u64(db.Retained)
		}
		if s.Role == RolePrimary {
			r.PrimaryLSN = u64(db.Applied)
			r.SyncedLSN = u64(s.Synced[key].LSN)
		} else {
			if p, ok := s.PrimaryLSN[key]; ok {
				r.PrimaryLSN = u64(p)
			}
			if sp, ok := s.Synced[key]; ok {
				r.SyncedLSN = u64(sp.LSN)
			}
		}
		rows = append(rows, r)
	}
	for _, p := range s.Peers {
		if p.Follower == nil {
			continue
		}
		byName := map[string]FollowerDB{}
		for _, d := range p.Follower.DBs {
			byName[strings.ToLower(d.Name)] = d
		}
		for _, db := range dbs {
			d, ok := byName[strings.ToLower(db.Name)]
			if !ok || d.Pinned {
				continue
			}
			r := ReplRow{NodeID: p.ID, Database: db.Name, BaseID: fmt.Sprintf("%x", d.BaseID),
				SentLSN: u64(d.Sent), WrittenLSN: u64(d.Written), AppliedLSN: u64(d.Applied),
				RetainedLSN: u64(db.Retained), PrimaryLSN: u64(db.Applied)}
			if p.LogStore {
				r.AppliedLSN = nil
			}
			if s.Role != RolePrimary {
				r.PrimaryLSN = nil
				if pl, ok := s.PrimaryLSN[strings.ToLower(db.Name)]; ok {
					r.PrimaryLSN = u64(pl)
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// syncStats are the wait timings of §17.8.5 (the counts are the core's).
type syncStats struct {
	waitNanos, waitMaxNanos atomic.Int64
}

// SetSyncLevelShown records @@GLOBAL.cluster_sync_commit for the SYNC
// column of the primary's row.
func (n *Node) SetSyncLevelShown(l SyncLevel) { n.syncShown.Store(l) }

// WaitSync waits, after a commit of database db that ended at lsn, for the
// acknowledgements req asks for (§17.8.3, §17.8.4). The commit is already
// durable and visible here: whatever the result, it stays committed.
// ctx's end (KILL QUERY) ends the wait with a warning.
func (n *Node) WaitSync(ctx context.Context, db string, lsn journal.LSN, req SyncRequest) SyncResult {
	if req.Level == SyncOff {
		return SyncResult{}
	}
	start := time.Now()
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
	id := n.nextWait.Add(1)
	ch := make(chan SyncResult, 1)
	var res SyncResult
	waiting := false
	if !n.post(func() {
		n.lastSyncWait = time.Now() // the streams are not held meanwhile (streamHold)
		if res, waiting = n.core.WaitSync(id, db, lsn, req); waiting {
			n.waits[id] = ch
		} else {
			ch <- res
		}
	}) {
		return SyncNoLongerPrimary("stopped")
	}
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		// KILL QUERY: the core releases the wait (or already did).
		n.post(func() { n.core.CancelSync(id) })
	}
	select {
	case r := <-ch:
		return r
	case <-n.ctx.Done():
		return SyncNoLongerPrimary("stopped")
	}
}

// streamPaceLimit bounds a streamed transaction's wait for its followers
// before its next frames: a follower slower than that lets it go on.
const streamPaceLimit = 2 * time.Second

// paceStream is the engine's stream pace (storage/pace.go): it waits until
// a secondary that counts for semi-synchronous commit has written database
// db up to upto; true at once when this node is not primary or no
// secondary counts, false after streamPaceLimit. The loop releases the
// wait as the acknowledgement that carries the secondary past upto is
// taken (releasePaces): the next chunk goes as soon as the link is free.
func (n *Node) paceStream(db *storage.DB, upto journal.LSN) bool {
	done := make(chan struct{})
	if !n.post(func() { n.paces = append(n.paces, paceWait{db: db.Name(), upto: upto, done: done}) }) {
		return true
	}
	t := time.NewTimer(streamPaceLimit)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	}
	n.post(func() {
		for i, p := range n.paces {
			if p.done == done {
				n.paces = slices.Delete(n.paces, i, i+1)
				close(done)
				return
			}
		}
	})
	n.log.Warn(fmt.Sprintf("Cluster: database %s: no secondary wrote a streamed transaction's frames to LSN %d within %v: the rest of it goes unpaced", db.Name(), upto, streamPaceLimit))
	return false
}

// paceWait is a streamed transaction waiting for a follower to have
// written its database up to upto (paceStream).
type paceWait struct {
	db   string
	upto journal.LSN
	done chan struct{} // closed by the loop
}

// releasePaces ends the pace waits a follower's written end, or a change
// of role, now lets go on. Called by the loop after each Ready.
func (n *Node) releasePaces() {
	n.paces = slices.DeleteFunc(n.paces, func(p paceWait) bool {
		best, ok := n.core.BestWritten(p.db)
		if ok && best < p.upto {
			return false
		}
		close(p.done)
		return true
	})
}

// SyncStatusVar is one Miraj_cluster_sync_* status variable: a count
// (uint64) or a duration in milliseconds to the microsecond (float64).
type SyncStatusVar struct {
	Name  string
	Value any
}

// SyncStatus returns the counters of §17.8.5, and in raft mode the term,
// leader, vote and election counters (§17.9).
func (n *Node) SyncStatus() []SyncStatusVar {
	s, _ := n.status()
	c := s.Counts
	ms := func(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }
	avg := 0.0
	if c.Waits > 0 {
		avg = ms(n.stats.waitNanos.Load() / int64(c.Waits))
	}
	out := []SyncStatusVar{
		{"Miraj_cluster_sync_waits", c.Waits},
		{"Miraj_cluster_sync_fallbacks", c.Fallbacks},
		{"Miraj_cluster_sync_errors", c.Errors},
		{"Miraj_cluster_sync_timeouts", c.Timeouts},
		{"Miraj_cluster_sync_cancelled", c.Cancelled},
		{"Miraj_cluster_sync_wait_avg_ms", avg},
		{"Miraj_cluster_sync_wait_max_ms", ms(n.stats.waitMaxNanos.Load())},
		{"Miraj_cluster_sync_degraded_bases", uint64(s.Degraded)},
		{"Miraj_cluster_sync_secondaries", uint64(s.StreamingCount)},
	}
	if e := s.Election; e.Raft {
		state := "FOLLOWER"
		switch {
		case s.Role == RolePrimary:
			state = "LEADER"
		case s.Role == RolePromoting:
			state = "TAKING OVER"
		case e.Phase != "":
			state = e.Phase
		}
		c := e.Counts
		out = append(out,
			SyncStatusVar{"Miraj_cluster_term", uint64(e.Term)},
			SyncStatusVar{"Miraj_cluster_leader", e.Leader},
			SyncStatusVar{"Miraj_cluster_vote", e.Vote},
			SyncStatusVar{"Miraj_cluster_election_state", state},
			SyncStatusVar{"Miraj_cluster_election_not_standing", e.NotStanding},
			SyncStatusVar{"Miraj_cluster_elections_started", c.Started},
			SyncStatusVar{"Miraj_cluster_elections_won", c.Won},
			SyncStatusVar{"Miraj_cluster_elections_lost", c.Lost},
			SyncStatusVar{"Miraj_cluster_election_prevotes_failed", c.PreVotesFailed},
			SyncStatusVar{"Miraj_cluster_election_votes_granted", c.VotesGranted},
			SyncStatusVar{"Miraj_cluster_election_votes_refused", c.VotesRefused},
			SyncStatusVar{"Miraj_cluster_election_step_downs", c.StepDowns})
	}
	return out
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
