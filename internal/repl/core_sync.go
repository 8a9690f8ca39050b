package repl

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"

	"github.com/miraj-db/miraj/internal/journal"
)

// Semi-synchronous commit in the core (§17.8): a session that committed
// asks WaitSync; the core answers at once (confirmed, or too few
// secondaries, or degraded) or keeps a waiter that an acknowledgement
// (acked → syncProgress), its deadline (Tick), CancelSync (KILL QUERY) or
// the end of the primary role releases (Ready.Releases). The rules are
// syncrule.go's.

// SyncRelease ends a wait that WaitSync kept.
type SyncRelease struct {
	ID     uint64
	Result SyncResult
}

// SyncedPos is SYNCED_LSN of one database: on a primary, the highest
// position confirmed to a client after its acks; on a secondary, what its
// primary (of Epoch, Primary) last announced.
type SyncedPos struct {
	BaseID  []byte
	LSN     journal.LSN
	Epoch   Epoch
	Primary string
}

// SyncCounts are the counters of §17.8.5 the core keeps.
type SyncCounts struct {
	Waits, Fallbacks, Errors, Timeouts, Cancelled uint64
}

type coreSync struct {
	waiters  map[string][]*coreWaiter // by lower-case database name
	degraded map[string]degradedDB
	counts   SyncCounts
}

type coreWaiter struct {
	id       uint64
	base     []byte
	lsn      journal.LSN
	req      SyncRequest
	need     int
	deadline int // tick; -1: none (WAIT)
}

func (s *coreSync) init() {
	s.waiters = map[string][]*coreWaiter{}
	s.degraded = map[string]degradedDB{}
}

// members is the number of voting members for MAJORITY.
func (c *Core) members() int { return len(c.cfg.Seeds) + 1 }

// WaitSync is a session's wait, after its commit of db that ended at lsn,
// for the acknowledgements req asks for. waiting false: the wait is over
// (res says how); true: a SyncRelease with id ends it.
func (c *Core) WaitSync(id uint64, db string, lsn journal.LSN, req SyncRequest) (res SyncResult, waiting bool) {
	if req.Level == SyncOff {
		return SyncResult{}, false
	}
	info, ok := c.dbInfo(db)
	if !ok {
		return SyncResult{}, false
	}
	key := strings.ToLower(db)
	c.sync.counts.Waits++
	if c.role != RolePrimary {
		return c.countResult(SyncNoLongerPrimary("demoted")), false
	}
	need := SyncNeed(req.Level, req.Replicas, c.members())
	secs := c.streaming(key, info.BaseID)
	acks := SyncAcks(req.Level, lsn, secs)
	if acks >= need {
		c.confirm(key, info.BaseID, lsn)
		return SyncResult{}, false
	}
	if req.Action != SyncWait {
		_, degraded := c.sync.degraded[key]
		short, shown := len(secs) < need, len(secs)
		if req.Level == SyncMajority {
			shown = c.linkedFollowers()
			// A majority of members, not of this database's streams: a
			// follower still receiving the database's copy (a new one)
			// acknowledges it once installed; right after an election
			// the followers are still reconnecting (§17.8.2, MAJORITY).
			short = c.linkedFollowers() < need && c.now-c.primarySince > 2*c.cfg.ElectionTicks
		}
		if short || degraded {
			c.sync.counts.Timeouts++
			return c.countResult(SyncShortfall(req, acks, need, shown, false, degraded)), false
		}
	}
	w := &coreWaiter{id: id, base: info.BaseID, lsn: lsn, req: req, need: need, deadline: -1}
	if req.Action != SyncWait {
		ms := int(req.Timeout.Milliseconds())
		tick := max(c.cfg.TickMillis, 1)
		// Rounded up, and one tick more: the present tick is partly gone.
		w.deadline = c.now + (ms+tick-1)/tick + 1
	}
	c.sync.waiters[key] = append(c.sync.waiters[key], w)
	return SyncResult{}, true
}

// SyncWaiting reports whether a semi-sync commit waits for followers.
func (c *Core) SyncWaiting() bool {
	for _, ws := range c.sync.waiters {
		if len(ws) > 0 {
			return true
		}
	}
	return false
}

// CancelSync ends wait id (KILL QUERY): OK with a warning.
func (c *Core) CancelSync(id uint64) {
	for key, ws := range c.sync.waiters {
		for i, w := range ws {
			if w.id == id {
				c.sync.waiters[key] = slices.Delete(ws, i, i+1)
				c.sync.counts.Cancelled++
				c.out.Releases = append(c.out.Releases, SyncRelease{ID: id, Result: SyncCancelled()})
				return
			}
		}
	}
}

func (c *Core) countResult(r SyncResult) SyncResult {
	switch r.Outcome {
	case SyncWarned:
		c.sync.counts.Fallbacks++
	case SyncFailed:
		c.sync.counts.Errors++
	}
	return r
}

func (c *Core) release(w *coreWaiter, r SyncResult) {
	c.out.Releases = append(c.out.Releases, SyncRelease{ID: w.id, Result: r})
}

// streaming returns the acknowledged positions in database key of the
// secondaries that count (§17.8.1): connected, streaming that incarnation
// of the database, not being seeded.
func (c *Core) streaming(key string, base []byte) []AckPos {
	var out []AckPos
	for _, fk := range slices.Sorted(mapKeys(c.followers)) {
		f := c.followers[fk]
		if f.link == 0 {
			continue
		}
		p, ok := f.positions[key]
		if !ok || !p.decided || p.seeding || p.pinned || !p.acked || !bytes.Equal(p.baseID, base) {
			continue
		}
		pos := AckPos{Written: p.written, Applied: p.applied}
		if f.logStore {
			pos.Applied = 0 // it applies nothing: never counted for APPLIED
		}
		out = append(out, pos)
	}
	return out
}

// BestWritten is the furthest position of database name that a secondary
// counting for semi-synchronous commit has acknowledged as written; false
// when this node is not primary or none counts (the pace of a streamed
// transaction, storage/pace.go).
func (c *Core) BestWritten(name string) (journal.LSN, bool) {
	if c.role != RolePrimary {
		return 0, false
	}
	key := strings.ToLower(name)
	best, ok := journal.LSN(0), false
	for _, f := range c.followers {
		p, has := f.positions[key]
		if f.link == 0 || !has || !p.decided || p.seeding || p.pinned || !p.acked {
			continue
		}
		if !ok || p.written > best {
			best, ok = p.written, true
		}
	}
	return best, ok
}

// StreamingCount counts the connected secondaries none of whose databases
// is being copied (Miraj_cluster_sync_secondaries).
func (c *Core) StreamingCount() int {
	if c.role != RolePrimary {
		return 0
	}
	count := 0
	for _, f := range c.followers {
		if f.link == 0 {
			continue
		}
		ok := true
		for _, p := range f.positions {
			ok = ok && !p.seeding && !p.pinned
		}
		if ok {
			count++
		}
	}
	return count
}

// confirm records that the commit at lsn was confirmed to its client with
// its acks (SYNCED_LSN), and has it announced at once.
func (c *Core) confirm(key string, base []byte, lsn journal.LSN) {
	if s, ok := c.synced[key]; ok && bytes.Equal(s.BaseID, base) && lsn <= s.LSN {
		return
	}
	c.synced[key] = SyncedPos{BaseID: base, LSN: lsn, Epoch: c.st.Epoch, Primary: c.cfg.ID}
	for _, f := range c.followers {
		if f.link != 0 {
			f.heartbeatDue = true
		}
	}
}

// syncProgress releases the waiters of database key that the
// acknowledgements now satisfy, and lifts its degraded state once enough
// secondaries hold its log end.
func (c *Core) syncProgress(key string) {
	ws := c.sync.waiters[key]
	dg, degraded := c.sync.degraded[key]
	if len(ws) == 0 && !degraded {
		return
	}
	info, ok := c.dbInfo(key)
	if !ok {
		return
	}
	secs := c.streaming(key, info.BaseID)
	kept := ws[:0]
	for _, w := range ws {
		if bytes.Equal(w.base, info.BaseID) && SyncAcks(w.req.Level, w.lsn, secs) >= w.need {
			c.confirm(key, w.base, w.lsn)
			c.release(w, SyncResult{})
			continue
		}
		kept = append(kept, w)
	}
	clear(ws[len(kept):])
	c.sync.waiters[key] = kept
	if degraded && SyncAcks(dg.level, info.Applied, secs) >= dg.need {
		delete(c.sync.degraded, key)
		c.eventf(slog.LevelInfo, "Cluster: synchronous replication restored on database %s", info.Name)
	}
}

// syncDeadlines ends the waits whose timeout passed: the database is
// degraded until its secondaries catch up.
func (c *Core) syncDeadlines() {
	for _, key := range slices.Sorted(mapKeys(c.sync.waiters)) {
		ws := c.sync.waiters[key]
		kept := ws[:0]
		for _, w := range ws {
			if w.deadline < 0 || c.now < w.deadline {
				kept = append(kept, w)
				continue
			}
			c.sync.counts.Timeouts++
			secs := c.streaming(key, w.base)
			acks := SyncAcks(w.req.Level, w.lsn, secs)
			if _, already := c.sync.degraded[key]; !already {
				c.sync.degraded[key] = degradedDB{level: w.req.Level, need: w.need}
				c.eventf(slog.LevelError, "Cluster: synchronous replication degraded on database %s: no acknowledgement from %d secondary(ies) in %d ms; later writes no longer wait until they catch up",
					key, w.need, w.req.Timeout.Milliseconds())
			}
			c.release(w, c.countResult(SyncShortfall(w.req, acks, w.need, len(secs), true, false)))
		}
		clear(ws[len(kept):])
		c.sync.waiters[key] = kept
	}
}

// endWaits ends every wait because the node stopped being primary (why:
// demoted, fenced): each session gets error 9004.
func (c *Core) endWaits(why string) {
	count := 0
	for _, key := range slices.Sorted(mapKeys(c.sync.waiters)) {
		for _, w := range c.sync.waiters[key] {
			c.release(w, c.countResult(SyncNoLongerPrimary(why)))
			count++
		}
		delete(c.sync.waiters, key)
	}
	clear(c.sync.degraded)
	if count > 0 {
		c.eventf(slog.LevelError, "Cluster: %d session(s) waiting for acknowledgements interrupted: %s", count, why)
	}
}

// Synced returns what this node knows of SYNCED_LSN for db.
func (c *Core) Synced(db string) (SyncedPos, bool) {
	s, ok := c.synced[strings.ToLower(db)]
	return s, ok
}

// SyncCounts returns the core's semi-sync counters and how many databases
// are degraded.
func (c *Core) SyncCounts() (SyncCounts, int) { return c.sync.counts, len(c.sync.degraded) }

// degradedDB is a database whose last wait timed out: later writes do not
// wait until need secondaries hold its log end at level.
type degradedDB struct {
	level SyncLevel
	need  int
}

// linkedFollowers counts the followers connected to this primary, whatever
// the state of their databases.
func (c *Core) linkedFollowers() int {
	n := 0
	for _, f := range c.followers {
		if f.link != 0 {
			n++
		}
	}
	return n
}
