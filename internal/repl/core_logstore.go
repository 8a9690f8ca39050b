package repl

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"

	"github.com/miraj-db/miraj/internal/journal"
)

// Log-store nodes in the core (logstore.go holds their storage). On the
// serving side, a follower that subscribed as a log store is never sent a
// copy: where a secondary would be, it is sent LogBegin (the database's
// base id and epoch marks, and the oldest position this node retains),
// then the frames from there; with each heartbeat it is sent LogState,
// the borrowed state it keeps its journal by. A log-store node that
// serves a follower needing a copy sends it to a node with tables
// (CopyElsewhere). On the follower side, a log-store node begins
// databases on LogBegin, keeps each journal from its upstream's horizon
// (and what its own followers need), acknowledges what it wrote and
// never what it applied, never becomes primary and never stands for
// election.

// upstreamHorizon is the oldest position of a database that a log-store
// node's upstream retains (LogState).
type upstreamHorizon struct {
	base     []byte
	retained journal.LSN
}

// startLog begins db on log-store follower f: LogBegin, then the frames
// from the oldest position this node retains.
func (c *Core) startLog(l *linkState, f *peerFollower, db DBInfo, d Start) {
	f.positions[strings.ToLower(db.Name)] = &streamPos{name: db.Name, baseID: db.BaseID, decided: true,
		sent: db.Retained, written: db.Retained, applied: db.Retained}
	c.eventf(slog.LevelInfo, "Cluster: log-store node %s begins database %s at LSN %d, without a copy (%s)", f.id, db.Name, db.Retained, d.Reason)
	c.send(l, LogBeginMsg{DB: db.Name, BaseID: db.BaseID, Hist: db.Hist, Start: db.Retained, Quarantine: d.Quarantine, Reason: d.Reason, Common: d.Common})
}

// copyElsewhere answers, on a log-store node, a follower that needs a
// copy of db: this node has no tables to copy; the primary has.
func (c *Core) copyElsewhere(l *linkState, f *peerFollower, db DBInfo, d Start) {
	primary, addr := c.st.Primary, c.addrOf[strings.ToLower(c.st.Primary)]
	if fl := c.links[c.follow.link]; fl != nil && !c.follow.viaUpstream {
		addr = fl.addr
	}
	where := "the primary " + primary
	if addr != "" {
		where += " at " + addr
	}
	reason := fmt.Sprintf("database %s needs a full copy (%s): %s is a log-store node and holds the log only; a node with tables serves it: %s",
		db.Name, d.Reason, c.cfg.ID, where)
	c.eventf(slog.LevelWarn, "Cluster: %s: %s", f.id, reason)
	c.send(l, CopyElsewhereMsg{DB: db.Name, Reason: reason, Addr: addr})
	c.closeLink(l)
}

// copyRefused is a follower told by the log-store node it subscribed to
// that it needs a copy from a node with tables: it follows the primary
// (until a probe finds its upstream following again).
func (c *Core) copyRefused(l *linkState, m CopyElsewhereMsg) {
	if c.follow.viaUpstream {
		c.follow.upstreamFailed = true
	}
	c.closeLink(l)
	c.lastError = m.Reason
	c.follow.needCopy = strings.ToLower(m.DB)
	c.eventf(slog.LevelWarn, "Cluster: %s: %s", l.peerName(), m.Reason)
	if p := c.follow.primary; p != "" && !strings.EqualFold(p, l.peer) {
		c.follow.prefer = p
		if m.Addr != "" {
			c.addrOf[strings.ToLower(p)] = m.Addr
		}
	}
	c.follow.retryAt = c.now
}

// LogBegun reports the end of an OpLogBegin: db begins in the log store
// (or err, which ends the link).
func (c *Core) LogBegun(link LinkID, db string, err error) {
	c.pendingOps--
	if link != c.follow.link || link == 0 {
		return
	}
	if err != nil {
		c.eventf(slog.LevelError, "Cluster: database %s: beginning its journal: %v", db, err)
		c.linkFailed(c.links[link], fmt.Errorf("database %s: beginning its journal: %w", db, err))
		return
	}
	info, _ := c.dbInfo(db)
	d := c.followDB(db)
	d.written, d.relayed = info.End, true
	c.noteStreamed(db)
	c.ackLater(db)
}

// logStoreFloor is the journal of db a log-store node keeps: all of it
// until the current primary's stream wrote to it and its upstream said
// what it retains; then from the upstream's horizon, and what this
// node's own followers still need.
func (c *Core) logStoreFloor(db DBInfo) (journal.LSN, bool) {
	h, ok := c.follow.horizon[strings.ToLower(db.Name)]
	if !c.onPrimaryHistory(db) || !ok || !bytes.Equal(h.base, db.BaseID) {
		return 0, true
	}
	floor := h.retained
	if f, ok := c.followersFloor(db); ok {
		floor = min(floor, f)
	}
	return floor, true
}

// LogStore reports whether this node is a log-store node.
func (c *Core) LogStore() bool { return c.cfg.LogStore }

// logStoreRefusal is why a log-store node does not become primary.
const logStoreRefusal = "a log-store node keeps the log only and never becomes primary (kind = \"log-store\")"
