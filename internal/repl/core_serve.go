package repl

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
)

// The serving side of the core: a primary answers subscriptions, decides
// per database between streaming and a copy (DecideStart), streams its
// journal within each follower's window, and reads acknowledgements; any
// node answers probes and questions of positions, and serves a promoted
// peer's catch-up. A secondary that follows its primary serves the same
// way the followers that ask it to relay (SubscribeMsg.Cascade): what it
// has applied of the primary's log, under the primary's epoch; their
// acknowledgements count for nothing at the primary.

// peerFollower is a secondary as its primary sees it.
type peerFollower struct {
	id string
	// link: the follower's link; 0 once it ended, or for a placeholder
	// (pinned) that keeps the journal for a member not connected yet.
	link      LinkID
	positions map[string]*streamPos // by lower-case database name
	// accountsVersion: the accounts' version + 1 sent on the link.
	accountsVersion uint64
	lastHeartbeat   int
	heartbeatDue    bool
	lastApply       int
	// logStore: a log-store node (logstore.go): begun without copies,
	// sent the log state with each heartbeat, never counted as applied.
	logStore bool
}

// streamPos is one database of one follower.
type streamPos struct {
	name   string
	baseID []byte
	hist   history.History // as subscribed; used once, by DecideStart
	// Invariant: written <= sent, applied <= written, once decided.
	sent, written, applied journal.LSN
	// decided: the primary chose how to serve it (stream or copy); until
	// then the position is what the follower subscribed with.
	decided bool
	// seeding: a copy is on its way, until the follower acknowledges its
	// LSN; snapshotting: the copy is still being written (no SeedEnd yet).
	seeding, snapshotting bool
	pinned                bool
	// acked: the follower acknowledged this stream at least once; until
	// then its position is what it subscribed with, which semi-sync does
	// not count (a confirmation rests on acknowledgements).
	acked bool
}

// catchUpServe is a promoted peer's catch-up this node serves on a link.
type catchUpServe struct {
	db      string
	pos, to journal.LSN
}

// stepAccepted handles a message on a link a peer opened.
func (c *Core) stepAccepted(l *linkState, m Msg) {
	if f := l.follower; f != nil {
		switch m := m.(type) {
		case AckMsg:
			c.acked(f, m)
		case KeepaliveMsg:
		default:
			c.protocolError(l, m)
		}
		return
	}
	if l.serving != nil {
		c.protocolError(l, m)
		return
	}
	switch m := m.(type) {
	case SubscribeMsg:
		c.subscribed(l, m)
	case ProbeMsg:
		c.probeReceived(l.peer, m.State)
		c.send(l, ProbeReplyMsg{State: c.selfState()})
		c.closeLink(l)
	case PositionsMsg:
		c.send(l, PositionsAreMsg{DBs: c.peerDBs()})
		c.closeLink(l)
	case VoteMsg:
		c.voteAsked(l, m)
	case CatchUpMsg:
		c.eventf(slog.LevelInfo, "Cluster: catch-up requested by %s (database %s, LSN %d to %d)", l.peer, m.DB, m.From, m.To)
		db, ok := c.dbInfo(m.DB)
		if !ok || !bytes.Equal(db.BaseID, m.BaseID) || db.End < m.To || m.From < db.Retained || m.From > m.To {
			c.eventf(slog.LevelWarn, "Cluster: catch-up of %s: database %s is not here as asked", l.peer, m.DB)
			c.closeLink(l)
			return
		}
		l.serving = &catchUpServe{db: db.Name, pos: m.From, to: m.To}
	default:
		c.protocolError(l, m)
	}
}

// subscribed answers a subscription: NotPrimary, or Welcome and the
// follower's streams.
func (c *Core) subscribed(l *linkState, m SubscribeMsg) {
	// A follower of a newer primary is proof of a newer epoch: a primary
	// that sees it is fenced.
	c.observeEpoch(l.peer, m.Epoch, "", false)
	relay := m.Cascade && c.relaying()
	if !relay && (c.role != RolePrimary || !c.writesOpen) || m.Epoch > c.st.Epoch {
		np := NotPrimaryMsg{Role: c.role, Epoch: c.st.Epoch, Primary: c.st.Primary}
		if c.role == RoleSecondary && c.follow.welcomed {
			np.PrimaryAddr = c.links[c.follow.link].addr
		}
		c.send(l, np)
		c.closeLink(l)
		return
	}
	key := strings.ToLower(l.peer)
	if old := c.followers[key]; old != nil && old.link != 0 && old.link != l.id {
		// The same secondary again: its older link is dead.
		c.closeLink(c.links[old.link])
	}
	f := &peerFollower{id: l.peer, link: l.id, positions: map[string]*streamPos{}, heartbeatDue: true, lastApply: -1, logStore: m.LogStore}
	for _, p := range m.Positions {
		f.positions[strings.ToLower(p.Name)] = &streamPos{name: p.Name, baseID: p.BaseID, hist: p.Hist,
			sent: journal.LSN(p.LSN), written: journal.LSN(p.LSN), applied: journal.LSN(p.LSN)}
	}
	l.follower = f
	c.followers[key] = f
	c.setPeer(l.peer, func(p *corePeer) {
		p.addr, p.role, p.state, p.epoch, p.connectedSince, p.lastError = m.Advertise, RoleSecondary, "CONNECTED", c.st.Epoch, c.now, ""
		p.logStore = m.LogStore
	})
	if relay {
		c.eventf(slog.LevelInfo, "Cluster: secondary %s connected, relayed the log of primary %s", l.peer, c.st.Primary)
		c.send(l, WelcomeMsg{Epoch: c.st.Epoch, Primary: c.st.Primary, Relay: true})
		return
	}
	c.eventf(slog.LevelInfo, "Cluster: secondary %s connected", l.peer)
	c.send(l, WelcomeMsg{Epoch: c.st.Epoch, Primary: c.cfg.ID})
}

// followerEnded records that a follower's link ended; its positions stay
// (the journal is kept for it within journal_retention_mb).
func (c *Core) followerEnded(f *peerFollower, err error) {
	key := strings.ToLower(f.id)
	f.link = 0
	if c.followers[key] != f {
		return // a newer link of the same secondary owns its row
	}
	c.setPeer(f.id, func(p *corePeer) {
		p.state, p.connectedSince = "DISCONNECTED", -1
		if err != nil {
			p.lastError = err.Error()
		}
	})
	c.eventf(slog.LevelInfo, "Cluster: secondary %s disconnected", f.id)
}

// acked records a follower's acknowledgement.
func (c *Core) acked(f *peerFollower, m AckMsg) {
	key := strings.ToLower(m.DB)
	p, ok := f.positions[key]
	// An ack for another incarnation of the database (a copy being
	// replaced) or of another epoch says nothing about this stream.
	if !ok || !bytes.Equal(p.baseID, m.BaseID) || m.Epoch != c.st.Epoch {
		return
	}
	if p.seeding && !p.snapshotting && m.Written >= p.sent {
		// The first acknowledgement after a copy: it is installed.
		p.seeding = false
		c.followerState(f)
	}
	if p.seeding {
		return
	}
	p.acked = true
	p.written = max(p.written, min(m.Written, p.sent))
	if m.Applied > p.applied {
		p.applied = min(m.Applied, p.written)
		f.lastApply = c.now
	}
	if c.role == RolePrimary {
		c.syncProgress(key)
	}
}

// followerState shows a connected secondary BOOTSTRAPPING while one of its
// databases is being copied, CONNECTED otherwise.
func (c *Core) followerState(f *peerFollower) {
	state := "CONNECTED"
	for _, q := range f.positions {
		if q.seeding {
			state = "BOOTSTRAPPING"
		}
	}
	c.setPeer(f.id, func(p *corePeer) {
		if p.state == "CONNECTED" || p.state == "BOOTSTRAPPING" || p.state == "REBOOTSTRAP_NEEDED" {
			p.state = state
		}
	})
}

// serving reports whether this node streams to its followers: a primary
// (not while a restarted one waits for its peers), or a relay.
func (c *Core) serving() bool { return c.role == RolePrimary && c.writesOpen || c.relaying() }

// relaying reports whether this secondary may relay its primary's log:
// it streams from it (or from its own upstream), welcomed at the epoch it
// is in.
func (c *Core) relaying() bool {
	return c.role == RoleSecondary && c.follow.link != 0 && c.follow.welcomed && c.follow.epoch == c.st.Epoch
}

// followerBehind reports whether f lacks something this primary can send.
func (c *Core) followerBehind(f *peerFollower) bool {
	if f.heartbeatDue {
		return true
	}
	if v, _ := c.log.Accounts(); v != 0 && v+1 != f.accountsVersion {
		return true
	}
	dbs := c.log.Databases()
	here := map[string]bool{}
	for _, db := range dbs {
		key := strings.ToLower(db.Name)
		here[key] = true
		if !c.serves(key) {
			continue
		}
		p, ok := f.positions[key]
		if !ok || !p.decided || !bytes.Equal(p.baseID, db.BaseID) {
			return true
		}
		if !p.seeding && p.sent < db.Serves() && !(p.sent > p.written && int(p.sent-p.written) >= c.cfg.Window) {
			return true
		}
	}
	// A position of a database not here any more: a drop to send.
	for key := range f.positions {
		if !here[key] && !c.awaited(key) {
			return true
		}
	}
	return false
}

// serves reports whether this node serves database key to its followers:
// a primary, every database; a relay, those its primary's stream has
// shown to be on the primary's history (relayed) and not being copied.
func (c *Core) serves(key string) bool {
	if c.role == RolePrimary {
		return true
	}
	d := c.follow.dbs[key]
	return d != nil && d.relayed && !d.seeding
}

// awaited reports whether a relay's database key is being copied from its
// primary (absent or replaced meanwhile): its followers' positions of it
// wait, they are not dropped.
func (c *Core) awaited(key string) bool {
	d := c.follow.dbs[key]
	return c.role != RolePrimary && d != nil && d.seeding
}

// serveFollowers sends each connected follower what it lacks, one bounded
// round each.
func (c *Core) serveFollowers() {
	if !c.serving() {
		return
	}
	for _, key := range slices.Sorted(mapKeys(c.followers)) {
		f := c.followers[key]
		if l := c.links[f.link]; f.link != 0 && l != nil && !l.closing {
			c.serveFollower(l, f)
		}
	}
}

// serveFollower is one round for one follower: accounts, copies of the
// databases it has not got (or whose journal is not on this primary's
// history), journal frames within its window, drops, heartbeat.
func (c *Core) serveFollower(l *linkState, f *peerFollower) {
	if v, data := c.log.Accounts(); v != 0 && v+1 != f.accountsVersion {
		// Version first, then the data: a change in between is sent
		// again at the next round, never lost.
		f.accountsVersion = v + 1
		c.send(l, AccountsMsg{Data: data()})
	}
	dbs := c.log.Databases()
	present := map[string]bool{}
	for _, db := range dbs {
		key := strings.ToLower(db.Name)
		present[key] = true
		if !c.serves(key) {
			continue // a relay's database not shown on the primary's history yet, or being copied
		}
		p, ok := f.positions[key]
		if ok && p.decided && !bytes.Equal(p.baseID, db.BaseID) {
			// The database was replaced here since it was decided (a
			// relay's copy installed, a drop and a create): the follower
			// subscribes again and is served the new one from the start.
			c.eventf(slog.LevelInfo, "Cluster: database %s was replaced here; %s subscribes again", db.Name, f.id)
			c.closeLink(l)
			return
		}
		if !ok || !p.decided {
			pos := Position{Name: db.Name}
			if ok {
				pos = Position{Name: p.name, BaseID: p.baseID, Hist: p.hist, LSN: uint64(p.sent)}
			}
			d := DecideStart(DBView{BaseID: db.BaseID, Hist: db.Hist, End: db.Serves(), Retained: db.Retained}, pos)
			if d.Kind == StartSeed {
				switch {
				case f.logStore:
					c.startLog(l, f, db, d)
				case c.cfg.LogStore:
					c.copyElsewhere(l, f, db, d)
					return
				default:
					c.startSeed(l, f, db, d)
					continue
				}
				p = f.positions[key]
			}
			p.decided, p.hist = true, nil
			c.syncProgress(key) // a secondary back at the end may lift a degraded state
		}
		if p.seeding {
			continue // the copy first
		}
		for round := 0; p.sent < db.Serves() && round < c.cfg.RoundBytes; {
			if p.sent > p.written && int(p.sent-p.written) >= c.cfg.Window {
				break // the follower's database is behind: wait for its acks
			}
			frames, err := c.log.ReadCommitted(db.Name, p.sent, c.cfg.BatchBytes)
			if err != nil {
				if errors.Is(err, journal.ErrNotRetained) {
					// No floor kept the journal for this follower: the
					// link ends, and its next subscription gets a copy.
					c.eventf(slog.LevelWarn, "Cluster: streaming database %s to %s: position %d no longer retained, link closed", db.Name, f.id, p.sent)
				} else {
					c.eventf(slog.LevelError, "Cluster: streaming to %s failed: %v", f.id, err)
				}
				c.linkFailed(l, fmt.Errorf("streaming database %s: %w", db.Name, err))
				return
			}
			if len(frames) == 0 {
				break
			}
			c.send(l, FramesMsg{DB: db.Name, Start: p.sent, Frames: frames})
			round += len(frames)
			p.sent += journal.LSN(len(frames))
		}
	}
	for _, key := range slices.Sorted(mapKeys(f.positions)) {
		p := f.positions[key]
		if present[key] || p.snapshotting || c.awaited(key) {
			continue
		}
		// A database this primary never served on this link (the
		// follower subscribed with it) may hold writes nobody else has:
		// the follower keeps it in quarantine. One that was streamed and
		// dropped here is simply dropped.
		c.send(l, DropMsg{DB: p.name, Quarantine: !p.decided})
		delete(f.positions, key)
		c.followerState(f)
	}
	if f.heartbeatDue {
		f.heartbeatDue, f.lastHeartbeat = false, c.now
		c.send(l, c.heartbeat(dbs))
		if f.logStore {
			// The borrowed state (the seed's 'e' message): to a log-store
			// node only.
			c.send(l, LogStateMsg{DBs: c.peerDBs()})
		}
	}
}

// heartbeat is the primary's log ends and SYNCED_LSN.
func (c *Core) heartbeat(dbs []DBInfo) HeartbeatMsg {
	var h HeartbeatMsg
	for _, db := range dbs {
		h.Ends = append(h.Ends, Position{Name: db.Name, BaseID: db.BaseID, LSN: uint64(db.Applied)})
		if s, ok := c.synced[strings.ToLower(db.Name)]; ok && bytes.Equal(s.BaseID, db.BaseID) {
			h.Synced = append(h.Synced, Position{Name: db.Name, BaseID: db.BaseID, LSN: uint64(s.LSN)})
		}
	}
	return h
}

// heartbeats marks the links whose heartbeat is due.
func (c *Core) heartbeats() {
	if !c.serving() {
		return
	}
	for _, f := range c.followers {
		if f.link != 0 && c.now-f.lastHeartbeat >= c.cfg.HeartbeatTicks {
			f.heartbeatDue = true
		}
	}
}

// startSeed begins a copy of db for f: SeedBegin now, the copy's chunks as
// the driver writes it (OpSnapshot, SnapshotChunk), SeedEnd with its LSN.
func (c *Core) startSeed(l *linkState, f *peerFollower, db DBInfo, d Start) {
	f.positions[strings.ToLower(db.Name)] = &streamPos{name: db.Name, baseID: db.BaseID, decided: true, seeding: true, snapshotting: true}
	state := "BOOTSTRAPPING"
	if d.Rebootstrap {
		state = "REBOOTSTRAP_NEEDED"
	}
	c.setPeer(f.id, func(p *corePeer) { p.state = state })
	c.eventf(slog.LevelInfo, "Cluster: seeding of database %s for %s started (%s)", db.Name, f.id, d.Reason)
	c.send(l, SeedBeginMsg{DB: db.Name, BaseID: db.BaseID, Quarantine: d.Quarantine, Reason: d.Reason, Common: d.Common})
	c.out.Ops = append(c.out.Ops, Op{Kind: OpSnapshot, Link: l.id, DB: db.Name})
}

// SnapshotChunk hands the core the next piece of a copy (OpSnapshot); it
// reports false when the link is gone (the driver stops writing it).
func (c *Core) SnapshotChunk(link LinkID, db string, data []byte) bool {
	l := c.links[link]
	if l == nil || l.closing || l.follower == nil {
		return false
	}
	c.send(l, SeedChunkMsg{DB: db, Data: data})
	return true
}

// SnapshotDone ends a copy: it was taken at lsn (or failed with err).
func (c *Core) SnapshotDone(link LinkID, db string, lsn journal.LSN, bytes int64, err error) {
	l := c.links[link]
	if l == nil || l.closing || l.follower == nil {
		return
	}
	p := l.follower.positions[strings.ToLower(db)]
	if p == nil || !p.snapshotting {
		return
	}
	if err != nil {
		c.eventf(slog.LevelError, "Cluster: seeding of database %s for %s failed: %v", db, l.peer, err)
		c.linkFailed(l, fmt.Errorf("seeding database %s: %w", db, err))
		return
	}
	// The secondary has the copy once it says so (its first Ack with
	// written >= lsn): until then it is BOOTSTRAPPING.
	p.sent, p.written, p.applied, p.snapshotting = lsn, 0, 0, false
	c.send(l, SeedEndMsg{DB: db, LSN: lsn})
	c.eventf(slog.LevelInfo, "Cluster: seeding of database %s for %s finished: %d bytes", db, l.peer, bytes)
}

// serveCatchUps sends a bounded round of each catch-up being served.
func (c *Core) serveCatchUps() {
	for _, id := range c.linkIDs() {
		l := c.links[id]
		if l == nil {
			continue
		}
		s := l.serving
		if s == nil || l.closing {
			continue
		}
		for round := 0; s.pos < s.to && round < c.cfg.RoundBytes; {
			frames, err := c.log.ReadRange(s.db, s.pos, s.to, c.cfg.BatchBytes)
			if err != nil || len(frames) == 0 {
				c.eventf(slog.LevelWarn, "Cluster: catch-up of %s: %v", l.peer, err)
				c.closeLink(l)
				break
			}
			c.send(l, FramesMsg{DB: s.db, Start: s.pos, Frames: frames})
			s.pos += journal.LSN(len(frames))
			round += len(frames)
		}
		if !l.closing && s.pos >= s.to {
			c.send(l, CatchUpEndMsg{DB: s.db, End: s.to})
			c.eventf(slog.LevelInfo, "Cluster: catch-up of %s served (database %s, to LSN %d)", l.peer, s.db, s.to)
			c.closeLink(l)
		}
	}
}

// pinMembers makes a primary that does not know its secondaries' positions
// (it just started, or was just promoted) keep every database's log from
// its present start for each other member, until that member connects or
// journal_retention_mb is exceeded (§17.2.1).
func (c *Core) pinMembers() {
	for _, id := range c.cfg.Members {
		key := strings.ToLower(id)
		if _, known := c.followers[key]; known {
			continue
		}
		f := &peerFollower{id: id, positions: map[string]*streamPos{}, lastApply: -1}
		for _, db := range c.log.Databases() {
			f.positions[strings.ToLower(db.Name)] = &streamPos{name: db.Name, baseID: db.BaseID,
				sent: db.Retained, written: db.Retained, applied: db.Retained, pinned: true}
		}
		c.followers[key] = f
	}
}

// selfState is what this node says of itself in a probe or its answer.
func (c *Core) selfState() PeerState {
	s := PeerState{Role: c.role, Epoch: c.st.Epoch, Primary: c.st.Primary, Lag: max(c.ownLag(), 0), Addr: c.cfg.Advertise}
	if s.Role == RolePromoting {
		s.Role, s.Flags = RoleSecondary, FlagPromoting
	}
	if c.role == RoleSecondary && c.follow.link != 0 && c.follow.welcomed {
		s.Flags |= FlagFollowing
	}
	if c.cfg.LogStore {
		s.Flags |= FlagLogStore
	}
	return s
}

// probeAll asks every peer for its state (and, as a primary, announces
// this node's); it returns the set of peers to wait for.
func (c *Core) probeAll() *waitSet {
	w := &waitSet{peers: map[string]bool{}, deadline: c.now + c.cfg.ProbeWaitTicks}
	for _, addr := range c.cfg.Seeds {
		w.peers[addr] = true
		c.ask(addr, ProbeMsg{State: c.selfState()})
	}
	c.lastProbe = c.now
	return w
}

// probeReceived judges a prober's state (or a probe's answer). A
// promotion waiting for its answers takes the peer's newest state: a peer
// that was promoted meanwhile announces it, and the promotion is refused.
func (c *Core) probeReceived(from string, s PeerState) {
	if s.Addr != "" {
		c.addrOf[strings.ToLower(from)] = s.Addr
	}
	if p := c.promo; p != nil && p.wait != nil {
		s.ID = from
		if ps := c.peerByID(from); ps != nil && s.Addr == "" {
			s.Addr = ps.addr
		}
		p.answers[strings.ToLower(from)] = s
	}
	primary := s.Primary
	if s.Role == RolePrimary {
		primary = from
	}
	c.setPeer(from, func(p *corePeer) {
		p.role, p.epoch, p.following, p.logStore = s.Role, s.Epoch, s.Flags&FlagFollowing != 0, s.Flags&FlagLogStore != 0
		if p.state != "CONNECTED" && p.state != "BOOTSTRAPPING" {
			p.state = "REACHABLE"
			if s.Role == RoleFenced {
				p.state = "FENCED"
			}
		}
	})
	c.observeEpoch(from, s.Epoch, primary, false)
}

// probeAnswered records the answer of the seed at addr, node from, to a
// probe.
func (c *Core) probeAnswered(addr, from string, s PeerState) {
	c.setPeer(from, func(p *corePeer) { p.lag, p.addr = s.Lag, addr })
	c.probeReceived(from, s)
	c.backToUpstream(addr, s)
	delete(c.announce, addr)
	c.answeredOne(addr, from, 1)
}

// positionsAnswered records a peer's databases (a promotion's question).
func (c *Core) positionsAnswered(addr, from string, dbs []PeerDB) {
	if c.promo == nil || c.promo.wait == nil {
		return
	}
	c.promo.positions = append(c.promo.positions, PeerDatabases{ID: from, Addr: addr, DBs: dbs})
	c.answeredOne(addr, from, 2)
}

// answeredOne notes one of the answers the seed at addr (node from) owes:
// the probe (1) or the positions (2); a restarted primary waits for the
// probe only.
func (c *Core) answeredOne(addr, from string, what int) {
	if c.opening != nil && what == 1 {
		delete(c.opening.peers, addr)
	}
	if p := c.promo; p != nil && p.wait != nil {
		key := strings.ToLower(from)
		p.got[key] |= what
		if p.got[key] == 3 {
			delete(p.wait.peers, addr)
		}
	}
}

// Probe flags: what a peer says of itself beyond its role and epoch (the
// facts a controlled promotion checks, §17.4.1).
const (
	FlagPromoting = 1 << 0 // being promoted
	FlagFollowing = 1 << 1 // a secondary connected to its primary
	FlagLogStore  = 1 << 2 // a log-store node (logstore.go)
)

// PeerState is what a peer says of itself in a probe or its answer.
type PeerState struct {
	ID      string
	Addr    string
	Role    Role
	Epoch   Epoch
	Primary string
	Flags   uint64
	Lag     int64 // bytes the peer lacks of what its primary announced
}
