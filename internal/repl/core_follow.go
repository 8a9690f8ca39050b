package repl

import (
	"bytes"
	"fmt"
	"github.com/miraj-db/miraj/internal/transport"
	"log/slog"
	"slices"
	"strings"

	epochpkg "github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/journal"
)

// The follower side of the core: a secondary dials its seeds (the primary
// it last heard of first), subscribes with its positions, writes the frames
// and copies it is sent at the same LSNs (Ready.Ops) and acknowledges them.

var epochMessage = epochpkg.Message

// followState is the secondary's link to its primary.
type followState struct {
	link     LinkID
	peer     string
	welcomed bool
	// epoch and primary as the welcome named them.
	epoch   Epoch
	primary string
	// prefer: the peer to dial first (the primary an announcement named).
	prefer string
	// next: the seed to try after prefer; tried: seeds tried in this
	// round; retryAt: the tick the next round may start.
	next, tried, retryAt int
	// lastApply: the tick frames were last written (-1: never).
	lastApply int
	// ackDue: databases to acknowledge at the next Ready (by lower-case
	// name).
	ackDue map[string]string
	// unsubscribed: the link is up and its subscription not sent yet.
	unsubscribed bool
	// viaUpstream: the link is to the configured upstream (a relay);
	// upstreamFailed: it could not serve in the last try, so the primary
	// is followed until a probe finds the upstream following again.
	viaUpstream, upstreamFailed bool
	// dbs: per database (lower-case name), what the link wrote.
	dbs map[string]*followDB
	// horizon (a log-store node): per database, the oldest position the
	// upstream retains, as its last LogState said.
	horizon map[string]upstreamHorizon
	// needCopy: the log-store upstream sent this node to the primary for
	// a copy of this database (lower-case name); until the primary's
	// stream shows it, the node does not go back to its upstream.
	needCopy string
}

// followDB is one database as the follow link sees it.
type followDB struct {
	name    string
	written journal.LSN // the end last written (and fsync'd with DurableAck)
	// seeding: a copy is being received; seedLSN the LSN its end announced.
	seeding bool
	// relayed: the primary showed on this link that the node's database
	// is on its history (frames written, a copy installed, or a heartbeat
	// naming it, once the primary decided how to serve it): a relay
	// serves it to its own followers.
	relayed bool
}

// Following returns the peer this node subscribed to and whether it
// welcomed it.
func (c *Core) Following() (peer string, welcomed bool) {
	if c.follow.link == 0 {
		return "", false
	}
	return c.follow.peer, c.follow.welcomed
}

// Seeding reports whether a copy of a database is being received (a
// controlled promotion is refused meanwhile).
func (c *Core) Seeding() bool {
	for _, d := range c.follow.dbs {
		if d.seeding {
			return true
		}
	}
	return false
}

// maybeDial opens a follow link when this secondary has none: to the
// primary it last heard of, else to the next seed; after a round of seeds
// that all failed, it waits RetryTicks.
func (c *Core) maybeDial() {
	seeds := c.cfg.Seeds
	if c.role != RoleSecondary || c.follow.link != 0 || c.promo != nil || c.el.phase == electVote || len(seeds) == 0 || c.now < c.follow.retryAt {
		return
	}
	if up := c.cfg.Upstream; up != "" && !c.follow.upstreamFailed {
		c.follow.link = c.dial(c.seedID[up], up, LinkFollow)
		c.follow.peer, c.follow.welcomed, c.follow.viaUpstream = c.seedID[up], false, true
		c.follow.dbs = map[string]*followDB{}
		return
	}
	addr := ""
	if c.follow.prefer != "" {
		for _, s := range seeds {
			if strings.EqualFold(c.seedID[s], c.follow.prefer) {
				addr = s
			}
		}
		if addr == "" {
			addr = c.addrOf[strings.ToLower(c.follow.prefer)]
		}
		c.follow.prefer = ""
	}
	if addr == "" {
		if c.follow.tried >= len(seeds) {
			c.follow.tried = 0
			c.follow.retryAt = c.now + c.cfg.RetryTicks
			return
		}
		addr = seeds[c.follow.next%len(seeds)]
		c.follow.next++
		c.follow.tried++
	}
	c.follow.link = c.dial(c.seedID[addr], addr, LinkFollow)
	c.follow.peer, c.follow.welcomed, c.follow.viaUpstream = c.seedID[addr], false, false
	c.follow.dbs = map[string]*followDB{}
}

// backToUpstream leaves the primary this node follows directly for its
// configured upstream, which a probe at addr (node from) found following
// at this node's epoch.
func (c *Core) backToUpstream(addr string, s PeerState) {
	if c.cfg.Upstream == "" || addr != c.cfg.Upstream || !c.follow.upstreamFailed {
		return
	}
	if s.Flags&FlagFollowing == 0 || s.Epoch != c.st.Epoch || s.Role != RoleSecondary {
		return
	}
	if c.Seeding() || c.follow.needCopy != "" {
		return // the copy the upstream cannot give first
	}
	c.follow.upstreamFailed = false
	if c.role == RoleSecondary && c.follow.link != 0 && !c.follow.viaUpstream {
		c.eventf(slog.LevelInfo, "Cluster: upstream %s follows the primary again: streaming from it", addr)
		c.closeLink(c.links[c.follow.link])
		c.follow.retryAt = c.now
	}
}

// followNew leaves the present primary for the one an announcement named.
func (c *Core) followNew(primary string, fromFollowedPrimary bool) {
	if fromFollowedPrimary {
		return
	}
	if c.follow.link != 0 {
		if !c.follow.welcomed && primary != "" && strings.EqualFold(c.follow.peer, primary) {
			return // already subscribing to it
		}
		c.closeLink(c.links[c.follow.link])
	}
	if primary != "" && !strings.EqualFold(primary, c.cfg.ID) {
		c.follow.prefer = primary
	}
	c.follow.retryAt, c.follow.tried = c.now, 0
}

// maybeSubscribe sends the subscription on a follow link that is up once
// no storage operation is pending.
func (c *Core) maybeSubscribe() {
	if !c.follow.unsubscribed || c.pendingOps > 0 {
		return
	}
	c.follow.unsubscribed = false
	if l := c.links[c.follow.link]; l != nil && !l.closing {
		c.subscribe(l)
	}
}

// subscribe sends the subscription.
func (c *Core) subscribe(l *linkState) {
	c.send(l, SubscribeMsg{Epoch: c.st.Epoch, Advertise: c.cfg.Advertise, Positions: c.positions(), Cascade: c.follow.viaUpstream, LogStore: c.cfg.LogStore})
}

// positions is what this node holds of each database: its marks and the
// end of its whole journal (a subscription, a vote question).
func (c *Core) positions() []Position {
	var ps []Position
	for _, db := range c.log.Databases() {
		ps = append(ps, Position{Name: db.Name, BaseID: db.BaseID, Hist: db.RecvHist, LSN: uint64(db.End)})
	}
	return ps
}

// stepFollow handles a message from the node this secondary subscribed to.
func (c *Core) stepFollow(l *linkState, m Msg) {
	if _, ok := m.(WelcomeMsg); !ok && !c.follow.welcomed {
		if np, ok := m.(NotPrimaryMsg); ok {
			c.setPeer(l.peer, func(p *corePeer) {
				p.role, p.epoch = np.Role, np.Epoch
				if p.state != "CONNECTED" {
					p.state = "REACHABLE"
				}
			})
			c.observeEpoch(l.peer, np.Epoch, np.Primary, false)
			c.closeLink(l)
			// An answer older than what this node learned since (the
			// peer announced itself primary of a newer epoch while the
			// answer was on its way): ask it again at once.
			if np.Epoch < c.st.Epoch && strings.EqualFold(c.st.Primary, l.peer) {
				c.follow.prefer = l.peer
				return
			}
			// A primary that does not serve yet (it waits for its peers'
			// answers after a restart) is asked again after RetryTicks.
			if np.Role == RolePrimary && np.Epoch >= c.st.Epoch {
				c.follow.prefer, c.follow.retryAt = l.peer, c.now+c.cfg.RetryTicks
				return
			}
			// A secondary of the present primary names it: dial it next.
			if np.Primary != "" && np.Epoch >= c.st.Epoch && !strings.EqualFold(np.Primary, c.cfg.ID) && !strings.EqualFold(np.Primary, l.peer) {
				c.follow.prefer = np.Primary
				if np.PrimaryAddr != "" {
					c.addrOf[strings.ToLower(np.Primary)] = np.PrimaryAddr
				}
			}
			return
		}
		c.protocolError(l, m)
		return
	}
	if name := msgDB(m); name != "" {
		if err := transport.CheckFileName(name); err != nil {
			c.eventf(slog.LevelWarn, "Cluster: %s: database name %q refused, link closed: %v", l.peer, name, err)
			c.linkFailed(l, fmt.Errorf("%w: database name %q refused: %v", ErrProtocol, name, err))
			return
		}
	}
	switch m := m.(type) {
	case WelcomeMsg:
		if c.follow.welcomed {
			c.protocolError(l, m)
			return
		}
		if m.Epoch < c.st.Epoch {
			c.eventf(slog.LevelError, "Cluster: %s announces epoch %d, older than ours (%d): not followed", l.peer, m.Epoch, c.st.Epoch)
			c.closeLink(l)
			return
		}
		if v := epochpkg.Check(c.st.Epoch, m.Epoch, true); v.Ignored() {
			c.eventf(slog.LevelWarn, "Cluster: %s", epochMessage(v, c.st.Epoch, m.Epoch, l.peer))
			c.closeLink(l)
			return
		}
		if c.role != RoleSecondary {
			c.closeLink(l)
			return
		}
		if err := c.transition(State{Role: RoleSecondary, Epoch: m.Epoch, Primary: m.Primary}, "following "+m.Primary); err != nil {
			c.eventf(slog.LevelError, "Cluster: not following %s: %v", l.peer, err)
			c.closeLink(l)
			return
		}
		if m.Epoch > c.peerEpoch[strings.ToLower(l.peer)] {
			c.peerEpoch[strings.ToLower(l.peer)] = m.Epoch
		}
		c.follow.welcomed, c.follow.epoch, c.follow.primary = true, m.Epoch, m.Primary
		c.follow.tried = 0
		// The new link's primary announces its own SYNCED_LSN.
		clear(c.synced)
		role := RolePrimary
		if m.Relay {
			role = RoleSecondary
		}
		c.setPeer(l.peer, func(p *corePeer) {
			p.addr, p.role, p.epoch, p.state, p.connectedSince, p.lastError = l.addr, role, m.Epoch, "CONNECTED", c.now, ""
		})
		if m.Relay {
			c.eventf(slog.LevelInfo, "Cluster: following primary %s (epoch %d) through %s at %s", m.Primary, m.Epoch, l.peer, l.addr)
		} else {
			c.eventf(slog.LevelInfo, "Cluster: following primary %s (epoch %d) at %s", l.peer, m.Epoch, l.addr)
		}
		// What this node holds, acknowledged at once: the primary counts
		// a secondary for semi-sync only on its acknowledgements.
		for _, db := range c.log.Databases() {
			c.ackLater(db.Name)
		}
	case FramesMsg:
		d := c.followDB(m.DB)
		if d.seeding {
			c.protocolError(l, m)
			return
		}
		c.pendingOps++
		c.out.Ops = append(c.out.Ops, Op{Kind: OpAppend, Link: l.id, DB: m.DB, At: m.Start, Data: m.Frames, Durable: c.cfg.DurableAck})
	case LogBeginMsg:
		d := c.followDB(m.DB)
		if !c.cfg.LogStore || d.seeding {
			c.protocolError(l, m)
			return
		}
		d.relayed = false
		c.pendingOps++
		c.out.Ops = append(c.out.Ops, Op{Kind: OpLogBegin, Link: l.id, DB: m.DB, At: m.Start, BaseID: m.BaseID, Hist: m.Hist,
			Quarantine: m.Quarantine, Common: m.Common, Reason: m.Reason})
		c.eventf(slog.LevelInfo, "Cluster: log store: database %s begins at LSN %d, %d epoch mark(s) adopted (%s)", m.DB, m.Start, len(m.Hist), m.Reason)
	case LogStateMsg:
		if !c.cfg.LogStore {
			c.protocolError(l, m)
			return
		}
		for _, p := range m.DBs {
			c.follow.horizon[strings.ToLower(p.Name)] = upstreamHorizon{base: p.BaseID, retained: p.Retained}
		}
	case CopyElsewhereMsg:
		c.copyRefused(l, m)
	case SeedBeginMsg:
		d := c.followDB(m.DB)
		if c.cfg.LogStore {
			c.protocolError(l, m)
			return
		}
		if d.seeding {
			c.eventf(slog.LevelWarn, "Cluster: a second copy of database %s begins inside the first, link closed", m.DB)
			c.protocolError(l, m)
			return
		}
		d.seeding, d.relayed = true, false
		c.pendingOps++
		c.out.Ops = append(c.out.Ops, Op{Kind: OpSeedBegin, Link: l.id, DB: m.DB, Quarantine: m.Quarantine, Common: m.Common, Reason: m.Reason})
		c.eventf(slog.LevelInfo, "Cluster: receiving a copy of database %s (%s)", m.DB, m.Reason)
	case SeedChunkMsg:
		if !c.followDB(m.DB).seeding {
			c.protocolError(l, m)
			return
		}
		c.pendingOps++
		c.out.Ops = append(c.out.Ops, Op{Kind: OpSeedChunk, Link: l.id, DB: m.DB, Data: m.Data})
	case SeedEndMsg:
		if !c.followDB(m.DB).seeding {
			c.protocolError(l, m)
			return
		}
		c.pendingOps++
		c.out.Ops = append(c.out.Ops, Op{Kind: OpSeedInstall, Link: l.id, DB: m.DB, At: m.LSN})
	case DropMsg:
		d := c.followDB(m.DB)
		if d.seeding {
			c.protocolError(l, m)
			return
		}
		delete(c.follow.dbs, strings.ToLower(m.DB))
		delete(c.primaryLSN, strings.ToLower(m.DB))
		c.pendingOps++
		c.out.Ops = append(c.out.Ops, Op{Kind: OpDrop, Link: l.id, DB: m.DB, Quarantine: m.Quarantine})
	case HeartbeatMsg:
		for _, p := range m.Ends {
			c.primaryLSN[strings.ToLower(p.Name)] = journal.LSN(p.LSN)
			// The primary decided how to serve each database before its
			// heartbeat: one not being copied is on its history.
			if d := c.followDB(p.Name); !d.seeding {
				if info, ok := c.dbInfo(p.Name); ok && bytes.Equal(info.BaseID, p.BaseID) {
					d.relayed = true
					if !c.follow.viaUpstream && strings.EqualFold(c.follow.needCopy, p.Name) {
						c.follow.needCopy = "" // the primary serves it: no copy was needed after all
					}
				}
			}
		}
		// The primary announces every database it confirmed a commit
		// of: what it does not list, it has not.
		clear(c.synced)
		for _, p := range m.Synced {
			c.synced[strings.ToLower(p.Name)] = SyncedPos{BaseID: p.BaseID, LSN: journal.LSN(p.LSN), Epoch: c.follow.epoch, Primary: c.follow.primary}
		}
		c.send(l, KeepaliveMsg{})
	case AccountsMsg:
		c.pendingOps++
		c.out.Ops = append(c.out.Ops, Op{Kind: OpAccounts, Link: l.id, Data: m.Data})
	default:
		c.protocolError(l, m)
	}
}

// protocolError closes a link on which a message came that does not belong
// there.
func (c *Core) protocolError(l *linkState, m Msg) {
	err := fmt.Errorf("%w: unexpected message %#x on the %s link", ErrProtocol, int(m.Type()), l.kind)
	c.eventf(slog.LevelWarn, "Cluster: %s: %v, link closed", l.peerName(), err)
	c.linkFailed(l, err)
}

func (c *Core) followDB(name string) *followDB {
	key := strings.ToLower(name)
	d, ok := c.follow.dbs[key]
	if !ok {
		d = &followDB{name: name}
		c.follow.dbs[key] = d
	}
	return d
}

// followEnded forgets the follow link.
func (c *Core) followEnded(l *linkState, err error) {
	if c.follow.link != l.id {
		return
	}
	for _, d := range c.follow.dbs {
		if d.seeding {
			c.out.Ops = append(c.out.Ops, Op{Kind: OpSeedAbort, Link: l.id, DB: d.name})
		}
	}
	welcomed, viaUpstream := c.follow.welcomed, c.follow.viaUpstream
	if viaUpstream && !welcomed {
		// The upstream could not serve (unreachable, not following, of
		// an older epoch): the primary, until a probe finds it following.
		c.follow.upstreamFailed = true
		c.follow.retryAt = c.now
	}
	c.follow.link, c.follow.welcomed, c.follow.dbs, c.follow.unsubscribed, c.follow.viaUpstream = 0, false, nil, false, false
	clear(c.follow.horizon)
	clear(c.follow.ackDue)
	if c.role == RoleSecondary && len(c.followers) > 0 {
		// A relay without its stream: its followers subscribe again.
		c.dropFollowers()
	}
	if !welcomed {
		if err != nil && !l.up {
			c.setPeerState(l.peer, "UNREACHABLE")
		}
		return
	}
	c.follow.tried = 0
	c.setPeer(l.peer, func(p *corePeer) {
		p.state, p.connectedSince = "DISCONNECTED", -1
		if err != nil {
			p.lastError = err.Error()
		}
	})
	if err != nil {
		c.lastError = err.Error()
		c.eventf(slog.LevelError, "Cluster: replication from %s stopped: %v", l.peer, err)
	} else {
		what := "primary"
		if viaUpstream {
			what = "upstream"
		}
		c.eventf(slog.LevelInfo, "Cluster: disconnected from %s %s", what, l.peer)
	}
}

// Appended reports that an OpAppend's frames are written: the journal of db
// now ends at end (fsync'd when the op was Durable), or err, and then no
// Applied follows. A secondary acknowledges what it wrote at once (RECEIVED
// waits for this), before it applies it.
func (c *Core) Appended(link LinkID, db string, end journal.LSN, err error) {
	if err != nil {
		c.pendingOps--
	}
	if err != nil || c.promo != nil && c.promo.catchLink == link && link != 0 {
		c.appendEnded(link, db, err)
		return
	}
	if link == c.follow.link && link != 0 {
		d := c.followDB(db)
		d.written, d.relayed = max(d.written, end), true
		c.noteStreamed(db)
		c.ackLater(db)
	}
}

// Applied reports that an OpAppend's frames are applied (or err): the
// secondary acknowledges again, its applied position moved (APPLIED waits
// for this).
func (c *Core) Applied(link LinkID, db string, err error) {
	c.pendingOps--
	c.appendEnded(link, db, err)
}

// appendEnded is the end of an OpAppend, applied or failed: a catch-up
// step may be done; on the follow link, an error ends the link, an apply
// is acknowledged.
func (c *Core) appendEnded(link LinkID, db string, err error) {
	switch {
	case link == 0:
	case c.promo != nil && c.promo.catchLink == link:
		c.catchUpAppended(err)
	case link != c.follow.link:
	case err != nil:
		c.eventf(slog.LevelError, "Cluster: database %s: %v", db, err)
		c.linkFailed(c.links[link], fmt.Errorf("database %s: %w", db, err))
	default:
		c.follow.lastApply = c.now
		c.ackLater(db)
	}
}

// SeedInstalled reports the end of an OpSeedInstall: the copy of db is
// installed at lsn (it must be the LSN the primary announced), or err.
func (c *Core) SeedInstalled(link LinkID, db string, lsn journal.LSN, announced journal.LSN, err error) {
	c.pendingOps--
	if link != c.follow.link || link == 0 {
		return
	}
	l := c.links[link]
	d := c.followDB(db)
	d.seeding = false
	if err == nil && lsn != announced {
		err = fmt.Errorf("copy at LSN %d, announced %d", lsn, announced)
	}
	if err != nil {
		c.eventf(slog.LevelError, "Cluster: database %s: installing the copy: %v", db, err)
		c.linkFailed(l, fmt.Errorf("database %s: installing the copy: %w", db, err))
		return
	}
	c.noteStreamed(db)
	d.relayed = true
	if strings.EqualFold(c.follow.needCopy, db) {
		c.follow.needCopy = ""
	}
	c.eventf(slog.LevelInfo, "Cluster: copy of database %s installed at LSN %d", db, lsn)
	info, _ := c.dbInfo(db)
	d.written = info.End
	c.ackLater(db)
}

// OpDone reports the end of an OpSeedBegin, OpSeedChunk, OpDrop or
// OpAccounts; an error ends the link (the stream cannot skip a message).
func (c *Core) OpDone(link LinkID, db string, err error) {
	c.pendingOps--
	if link != c.follow.link || link == 0 {
		return
	}
	if err != nil {
		c.eventf(slog.LevelError, "Cluster: database %s: %v", db, err)
		c.linkFailed(c.links[link], fmt.Errorf("database %s: %w", db, err))
	}
}

// ackLater has db acknowledged at the next Ready: the write and the apply
// of a batch that end together make one acknowledgement.
func (c *Core) ackLater(db string) {
	if c.follow.ackDue == nil {
		c.follow.ackDue = map[string]string{}
	}
	c.follow.ackDue[strings.ToLower(db)] = db
}

// flushAcks sends the acknowledgements due on the follow link.
func (c *Core) flushAcks() {
	if len(c.follow.ackDue) == 0 {
		return
	}
	if l := c.links[c.follow.link]; l != nil && !l.closing && c.follow.welcomed {
		for _, key := range slices.Sorted(mapKeys(c.follow.ackDue)) {
			c.ack(l, c.follow.ackDue[key])
		}
	}
	clear(c.follow.ackDue)
}

// ack tells the primary how far this node has written and applied db,
// naming the database's identity and the epoch it follows.
func (c *Core) ack(l *linkState, db string) {
	info, ok := c.dbInfo(db)
	if !ok {
		return
	}
	d := c.followDB(db)
	written := d.written
	if written == 0 {
		// Nothing written on this link yet: what the journal holds (what
		// it has fsync'd, when acknowledgements must be durable).
		written = info.End
		if c.cfg.DurableAck {
			written = min(info.End, info.Durable)
		}
	}
	applied := info.Applied
	if c.cfg.LogStore {
		applied = 0 // it applies nothing
	}
	c.send(l, AckMsg{DB: info.Name, BaseID: info.BaseID, Epoch: c.follow.epoch, Written: written, Applied: applied})
}

// noteStreamed records that the followed primary's stream wrote to db.
func (c *Core) noteStreamed(db string) {
	info, ok := c.dbInfo(db)
	if !ok {
		return
	}
	c.streamed[strings.ToLower(db)] = streamedFrom{epoch: c.follow.epoch, primary: c.follow.primary, base: info.BaseID}
}

// onPrimaryHistory reports whether this node knows db's journal to be on
// the current primary's history: that primary's stream wrote to it (in
// the current epoch, to this incarnation).
func (c *Core) onPrimaryHistory(db DBInfo) bool {
	s, ok := c.streamed[strings.ToLower(db.Name)]
	return ok && s.epoch == c.st.Epoch && strings.EqualFold(s.primary, c.st.Primary) && bytes.Equal(s.base, db.BaseID)
}

// RetentionFloor is the journal of db that this node must keep (storage
// asks it at each checkpoint): on a primary, what connected or known
// followers still need, within journal_retention_mb; on another node, all
// of it until the current primary's stream has written to it (what
// diverges goes to quarantine whole), then promotion_catchup_mb, and what
// the followers it relays to still need.
func (c *Core) RetentionFloor(db DBInfo) (journal.LSN, bool) {
	if c.cfg.LogStore {
		return c.logStoreFloor(db)
	}
	if c.role != RolePrimary {
		if !c.onPrimaryHistory(db) {
			return 0, true
		}
		keep, floor := journal.LSN(c.cfg.PromotionCatchup), journal.LSN(0)
		if db.End > keep {
			floor = db.End - keep
		}
		if f, ok := c.followersFloor(db); ok {
			floor = min(floor, f)
		}
		return floor, true
	}
	return c.followersFloor(db)
}

// followersFloor is the journal of db that this node's followers still
// need, within journal_retention_mb (false: none needs any).
func (c *Core) followersFloor(db DBInfo) (journal.LSN, bool) {
	floor, ok := journal.LSN(0), false
	limit := journal.LSN(c.cfg.JournalRetention)
	for _, f := range c.followers {
		p, has := f.positions[strings.ToLower(db.Name)]
		if !has || p.seeding {
			continue
		}
		if limit > 0 && db.Applied-p.written > limit {
			continue // beyond the retention limit: re-seeded when it returns
		}
		if !ok || p.written < floor {
			floor, ok = p.written, true
		}
	}
	return floor, ok
}

func (c *Core) dbInfo(name string) (DBInfo, bool) {
	for _, d := range c.log.Databases() {
		if strings.EqualFold(d.Name, name) {
			return d, true
		}
	}
	return DBInfo{}, false
}

// ownLag is what this secondary lacks of the log ends its primary last
// announced (§17.4.4: shown by the peers that probe it).
func (c *Core) ownLag() int64 {
	if c.role == RolePrimary {
		return 0
	}
	var lag int64
	for _, db := range c.log.Databases() {
		if p, ok := c.primaryLSN[strings.ToLower(db.Name)]; ok && p > db.Applied {
			lag += int64(p - db.Applied)
		}
	}
	return lag
}

// msgDB is the database a message from the primary names ("" for none).
func msgDB(m Msg) string {
	switch m := m.(type) {
	case FramesMsg:
		return m.DB
	case SeedBeginMsg:
		return m.DB
	case SeedChunkMsg:
		return m.DB
	case SeedEndMsg:
		return m.DB
	case DropMsg:
		return m.DB
	case LogBeginMsg:
		return m.DB
	}
	return ""
}

// streamedFrom is a primary whose stream wrote to a database's journal:
// frames appended or a copy installed. Its history then holds the whole
// journal, the base id's incarnation of the database.
type streamedFrom struct {
	epoch   Epoch
	primary string
	base    []byte
}
