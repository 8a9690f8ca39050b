package repl

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/transport"
)

// Core is one node's replication protocol as a state machine, in the shape
// of etcd-io/raft's RawNode: no goroutines, no clock, no I/O. A driver feeds
// it what happens — messages from peers (Step), links opened and closed,
// time (Tick), proposals (Promote, Demote, WaitSync) and the completion of
// what it asked storage to do (Appended, Applied, SeedInstalled, TailsCut…) — and
// carries out what Ready returns, in this order:
//
//  1. CloseWrites: close the commit gate (before anything else: a node
//     leaving the primary role stops taking writes first);
//  2. State: persist it; nothing below may take effect before it is on
//     disk (on failure: SaveFailed, and of the rest OpenWrites and
//     OpMarkEpochs, the effects of becoming primary, are dropped; the
//     others go on: the storage operations are answered, the links keep
//     their order);
//  3. OpenWrites: open the commit gate for State's epoch;
//  4. Ops: storage operations, in order (per database, the order matters);
//  5. Dials, Msgs, Closes: links to open, messages to send (bytes, per
//     link), links to close once what was sent before has gone;
//  6. Releases and Answers: semi-sync waits and promotions that ended;
//
// then Advance. The server's driver (node.go) and the simulator
// (internal/sim) both run it: what the simulator explores under faults is
// the protocol the server speaks.
//
// The core reads the node's journals through Log (read-only), as raft reads
// raft.Storage; it decides with the pure functions of decide.go,
// catchup.go and syncrule.go.
type Core struct {
	cfg CoreConfig
	log Log
	now int // ticks since the core was made

	// st is the state the core acts on; saved what the driver confirmed
	// on disk (Advance); persisting the state of the last Ready, until
	// its Advance. Invariant: st differs from saved only between a
	// transition and the Advance of the Ready that carries it.
	st, saved  State
	persisting *State
	// role is st.Role, or PROMOTING while an accepted promotion runs.
	role Role
	// writesOpen: what the core last asked of the commit gate.
	writesOpen bool
	// opening: a restarted primary waits for its peers' answers (or
	// ProbeWaitTicks) before it opens the gate: one that learned of a
	// newer epoch fences it first.
	opening   *waitSet
	lastError string

	nextLink LinkID
	links    map[LinkID]*linkState
	peers    map[string]*corePeer // by lower-case id
	// peerEpoch: the highest epoch each peer showed (by lower-case id).
	peerEpoch map[string]Epoch
	// seedID: the proven id of each seed address that answered; addrOf:
	// the address each peer advertised (probes, a NotPrimary's primary).
	seedID map[string]string
	addrOf map[string]string
	// lastProbe: tick of the last probe round; announce: seeds that have
	// not answered since this node became primary (probed every
	// RetryTicks until they do, so that a healed old primary learns of
	// the new epoch within a second, not at its next probe).
	lastProbe int
	announce  map[string]bool
	// announcePending: a promotion's announcement waits for its state to
	// be on disk (Advance).
	announcePending bool

	follow     followState
	followers  map[string]*peerFollower // by lower-case id
	streamed   map[string]streamedFrom
	primaryLSN map[string]journal.LSN
	synced     map[string]SyncedPos
	sync       coreSync
	promo      *promoteRun
	// pendingOps: storage operations asked for (OpAppend, OpSeed…,
	// OpDrop, OpAccounts) and not answered yet; a promotion's catch-up
	// waits for none to be left.
	pendingOps int
	// el: raft mode's election (core_elect.go).
	el election
	// primarySince: the tick this node last became primary.
	primarySince int

	out Ready
}

// LinkID names one connection to a peer, for the life of the connection.
// The core allocates them: for the links it dials (Ready.Dials) and for the
// ones the driver accepts (Accept).
type LinkID uint64

// LinkKind is what a link is for.
type LinkKind uint8

const (
	// LinkFollow: this node subscribes to a primary on it.
	LinkFollow LinkKind = iota + 1
	// LinkCatchUp: a promotion fetches a peer's journal on it.
	LinkCatchUp
	// LinkAccepted: a peer opened it: a secondary subscribing, a probe,
	// a question of positions, a catch-up to serve.
	LinkAccepted
)

func (k LinkKind) String() string {
	switch k {
	case LinkFollow:
		return "follow"
	case LinkCatchUp:
		return "catch-up"
	case LinkAccepted:
		return "accepted"
	}
	return fmt.Sprintf("LinkKind(%d)", int(k))
}

// CoreConfig is what the core needs of cluster.toml, with every interval
// in ticks (the driver's clock: the server ticks every TickInterval, the
// simulator once a simulated millisecond).
type CoreConfig struct {
	ID        string
	Cluster   string
	Advertise string
	// Members: the other members' ids (may be empty: any node of the
	// authority); Seeds: the other members' addresses, in the order a
	// secondary tries them. A seed's id is known once it answers.
	Members []string
	Seeds   []string
	// DurableAck: a secondary fsyncs frames before acknowledging them
	// (ack = "durable").
	DurableAck bool
	// Window bounds what a primary sends of one database beyond what the
	// follower acknowledged (maxInFlightBytes); BatchBytes one Frames
	// message; RoundBytes what one Ready sends of one database to one
	// follower before the others get their turn.
	Window, BatchBytes, RoundBytes int
	// JournalRetention (journal_retention_mb), PromotionCatchup
	// (promotion_catchup_mb) and MaxPromotionLag (max_promotion_lag_mb), in
	// bytes; 0: none.
	JournalRetention, PromotionCatchup, MaxPromotionLag int64

	HeartbeatTicks   int // the primary's heartbeat on each link
	LinkTimeoutTicks int // a link silent this long is dead
	ProbeTicks       int // probe interval
	RetryTicks       int // a secondary without a primary tries its seeds again
	ProbeWaitTicks   int // how long a promotion or a restarted primary waits for answers
	// TickMillis converts semi-sync timeouts into ticks.
	TickMillis int
	// Upstream: the address of the member this node streams from as a
	// secondary, itself a secondary that relays the primary's log (a
	// cascade); "" streams from the primary. While the upstream cannot
	// serve, the node follows the primary, and returns to the upstream
	// once a probe finds it following.
	Upstream string
	// Raft: mode = "raft" (§17.9): the primary is elected by a majority
	// of the members (this node and Seeds); ElectionTicks is
	// election_timeout_ms (a follower stands after a silence drawn in
	// [ElectionTicks, 2×ElectionTicks); also the leader's lease);
	// RandSeed seeds that draw (the simulator replays it).
	Raft          bool
	ElectionTicks int
	RandSeed      uint64
	// LogStore: kind = "log-store" (logstore.go): the node follows as a
	// secondary but keeps journals only; it takes no copy (LogBegin), its
	// acknowledgements never count as applied, it never becomes primary
	// nor stands for election (it votes), and it serves followers and
	// catch-ups from its journals.
	LogStore bool
}

// DBInfo is what the core reads of one database (Log).
type DBInfo struct {
	Name   string
	BaseID []byte
	// Hist: the epoch marks of the committed journal (up to Applied).
	Hist history.History
	// Applied: the end of the last transaction applied (db.LSN()).
	Applied journal.LSN
	// RecvHist and End: the marks and end of the whole journal, an
	// unterminated transaction included (what a follower holds).
	RecvHist history.History
	End      journal.LSN
	// Retained: the oldest byte still in the journal.
	Retained journal.LSN
	// Durable: the end of what the journal has fsync'd.
	Durable journal.LSN
	// Streamed: on a primary, the end of its last frames of a
	// transaction streamed before its commit (storage/stream.go), past
	// Applied while one runs; 0 otherwise.
	Streamed journal.LSN
}

// Serves is the end of what a primary serves of the database: its
// applied transactions and the frames streamed since.
func (d DBInfo) Serves() journal.LSN { return max(d.Applied, d.Streamed) }

// Log is the core's read-only view of the node's journals.
type Log interface {
	// Databases lists the databases, by name.
	Databases() []DBInfo
	// ReadCommitted returns whole frames of db's journal from from, up
	// to its last applied transaction, about max bytes of them.
	ReadCommitted(db string, from journal.LSN, max int) ([]byte, error)
	// ReadRange returns whole frames of db's journal in [from, to), about
	// max bytes of them (catch-up: an unterminated tail included).
	ReadRange(db string, from, to journal.LSN, max int) ([]byte, error)
	// Accounts returns the version of the users and grants (0: none to
	// replicate) and, when asked, their data.
	Accounts() (version uint64, data func() []byte)
}

// Envelope is one message to send: on Link, or, with Link 0, to the seed
// at Addr (whose id is To, "" if not known yet) as a one-shot question: the
// driver dials, sends, gives the answer to Answer, or reports Unreachable
// if there is none.
type Envelope struct {
	Link    LinkID
	To      string
	Addr    string
	Type    transport.Type
	Payload []byte
}

// Dial asks the driver to open Link to a peer (Peer may be "": any member
// at Addr); it answers with Connected or LinkDown.
type Dial struct {
	Link LinkID
	Peer string
	Addr string
	Kind LinkKind
}

// OpKind is a storage operation the core asks for.
type OpKind uint8

const (
	// OpAppend: write Data (whole frames) at LSN At of DB's journal,
	// fsync'd when Durable (answer Appended), then apply what it completes
	// (answer Applied). Data must not change until applied.
	OpAppend OpKind = iota + 1
	// OpSeedBegin: a copy of DB begins (move the present one to
	// quarantine first when Quarantine: its journal diverged after
	// Common); OpSeedChunk: more of it; OpSeedInstall: install it, it is
	// at LSN (answer SeedInstalled); OpSeedAbort: the copy will not
	// finish (the link ended): remove what was received.
	OpSeedBegin
	OpSeedChunk
	OpSeedInstall
	OpSeedAbort
	// OpDrop: the primary does not have DB: drop it, or move it to
	// quarantine when Quarantine (this node held it before the primary
	// served it).
	OpDrop
	// OpAccounts: install the users and grants in Data.
	OpAccounts
	// OpSnapshot (on a primary): write a consistent copy of DB for Link,
	// handing it to SnapshotChunk and SnapshotDone.
	OpSnapshot
	// OpCutTails: cut every database's unterminated tail into quarantine;
	// answer TailsCut.
	OpCutTails
	// OpMarkEpochs: write an epoch mark in every database.
	OpMarkEpochs
	// OpLogBegin (a log-store node): begin DB's journal at At with base
	// id BaseID and the marks of Hist before At, replacing (Quarantine:
	// setting aside) what is held of it; answer LogBegun.
	OpLogBegin
)

// Op is one storage operation.
type Op struct {
	Kind       OpKind
	Link       LinkID
	DB         string
	At         journal.LSN // OpAppend: where; OpSeedInstall: the copy's LSN
	Data       []byte
	Durable    bool
	Quarantine bool
	Common     journal.LSN
	Reason     string
	// BaseID and Hist: OpLogBegin's identity and epoch marks.
	BaseID []byte
	Hist   history.History
}

// Event is a line for the server log (the simulator's trace).
type Event struct {
	Level slog.Level
	Msg   string
}

// Ready is what the core asks the driver to do (see Core).
type Ready struct {
	CloseWrites bool
	State       *State
	OpenWrites  bool
	Ops         []Op
	Dials       []Dial
	Msgs        []Envelope
	Closes      []LinkID
	Releases    []SyncRelease
	Answers     []PromoteAnswer
	Events      []Event
}

// Empty reports whether there is nothing to do.
func (r *Ready) Empty() bool {
	return !r.CloseWrites && r.State == nil && !r.OpenWrites && len(r.Ops) == 0 && len(r.Dials) == 0 &&
		len(r.Msgs) == 0 && len(r.Closes) == 0 && len(r.Releases) == 0 && len(r.Answers) == 0 && len(r.Events) == 0
}

// PromoteAnswer ends a Promote: nil, the promotion is under way (the
// node is PROMOTING, then PRIMARY); else its refusal (ErrPromotionRefused).
type PromoteAnswer struct{ Err error }

// linkState is one link as the core sees it.
type linkState struct {
	id   LinkID
	kind LinkKind
	peer string // id as the transport proved it ("" until known)
	addr string
	up   bool // connected (a dialed link is not until Connected)
	// heard: the tick of the last message received (the link timeout).
	heard int
	// role of an accepted link once its first message said: follower (a
	// subscription), or a catch-up being served.
	follower *peerFollower
	serving  *catchUpServe
	// closing: the core closed it; what arrives on it is dropped.
	closing bool
}

// corePeer is what this node knows of a member (SHOW CLUSTER STATUS).
type corePeer struct {
	id             string
	addr           string
	role           Role
	state          string
	epoch          Epoch
	lag            int64
	connectedSince int // tick; -1: not connected
	lastError      string
	// logStore: a log-store node (its subscription or its probe said).
	logStore bool
	// following: its last probe said it streams from its primary (or an
	// upstream of it), at epoch.
	following bool
}

// waitSet is a set of peers the core waits for, until a tick.
type waitSet struct {
	peers    map[string]bool
	deadline int
}

func (w *waitSet) done(now int) bool { return len(w.peers) == 0 || now >= w.deadline }

// NewCore returns the core of a node in persisted state st. It starts
// nothing: a restarted primary's gate stays closed until its peers have
// answered (or ProbeWaitTicks have passed), a secondary dials its seeds at
// the first Ready.
func NewCore(cfg CoreConfig, st State, log Log) *Core {
	c := &Core{cfg: cfg, log: log, st: st, saved: st, role: st.Role, links: map[LinkID]*linkState{},
		peers: map[string]*corePeer{}, peerEpoch: map[string]Epoch{}, followers: map[string]*peerFollower{},
		streamed: map[string]streamedFrom{}, primaryLSN: map[string]journal.LSN{}, synced: map[string]SyncedPos{}}
	c.sync.init()
	c.follow.lastApply = -1
	c.follow.horizon = map[string]upstreamHorizon{}
	c.seedID, c.addrOf = map[string]string{}, map[string]string{}
	for _, id := range cfg.Members {
		c.peers[strings.ToLower(id)] = &corePeer{id: id, state: "DISCONNECTED", connectedSince: -1}
	}
	c.initElection()
	if cfg.Raft && (st.Role == RolePrimary || st.Role == RoleFenced) {
		// §17.9.1: a node always restarts as a follower, its term and
		// vote kept.
		c.transition(State{Role: RoleSecondary, Epoch: st.Epoch, Primary: st.Primary}, "restart in raft mode: a node restarts as a follower")
		return c
	}
	if st.Role == RolePrimary {
		c.pinMembers()
		c.opening = c.probeAll()
		c.eventf(slog.LevelInfo, "Cluster: %s restarted as primary of epoch %d: writes open once the peers have answered", cfg.ID, st.Epoch)
	}
	return c
}

// Tick advances time by one tick: heartbeats, link timeouts, probes,
// retries, semi-sync deadlines, and the waits of a promotion or of a
// restarted primary.
func (c *Core) Tick() {
	c.now++
	for _, id := range c.linkIDs() {
		l := c.links[id]
		// (A link that failed may have ended others: a relay's stream
		// ending ends its followers'.)
		if l != nil && l.up && !l.closing && c.now-l.heard > c.cfg.LinkTimeoutTicks {
			c.eventf(slog.LevelWarn, "Cluster: %s: nothing received on the %s link for %d ticks, link closed", l.peerName(), l.kind, c.cfg.LinkTimeoutTicks)
			c.linkFailed(l, fmt.Errorf("nothing received for %d ticks, link closed", c.cfg.LinkTimeoutTicks))
		}
	}
	c.heartbeats()
	c.syncDeadlines()
	c.electionTick()
	interval := c.cfg.ProbeTicks
	if c.missingFollower() {
		// A primary that lost a secondary asks every RetryTicks: if a
		// newer primary exists, it learns of it (and stops taking writes)
		// within a second of being able to reach it.
		interval = c.cfg.RetryTicks
	}
	if c.now >= c.lastProbe+interval && c.probing() {
		c.probeAll()
	} else if len(c.announce) > 0 && c.cfg.RetryTicks > 0 && c.now%c.cfg.RetryTicks == 0 {
		for _, addr := range slices.Sorted(mapKeys(c.announce)) {
			c.ask(addr, ProbeMsg{State: c.selfState()})
		}
	}
	c.progress()
}

// missingFollower reports whether this primary lacks a member's stream:
// a member not linked, or whose link has been silent for two heartbeats.
func (c *Core) missingFollower() bool {
	if c.role != RolePrimary {
		return false
	}
	fresh := 0
	linked := map[string]bool{}
	for key, f := range c.followers {
		if l := c.links[f.link]; f.link != 0 && l != nil && c.now-l.heard <= 2*c.cfg.HeartbeatTicks {
			fresh++
			linked[key] = true
		}
	}
	// A member that streams through a relay (cascade) said so at its
	// last probe.
	for key, p := range c.peers {
		if !linked[key] && p.following && p.epoch == c.st.Epoch {
			fresh++
		}
	}
	return fresh < len(c.cfg.Seeds)
}

// probing reports whether the periodic probe round is due in this role: a
// primary (a newer one fences it), a fenced node, a secondary without a
// primary (§17.4.4).
func (c *Core) probing() bool {
	// A secondary that follows the primary while its upstream cannot
	// serve probes to find the upstream following again.
	return c.role != RoleSecondary || c.follow.link == 0 || !c.follow.welcomed || c.follow.upstreamFailed && c.cfg.Upstream != ""
}

// progress moves the multi-step procedures on: a restarted primary's
// opening, a promotion, a secondary's dialling.
func (c *Core) progress() {
	if c.opening != nil && c.opening.done(c.now) {
		c.opening = nil
		if c.st.Role == RolePrimary {
			c.openWrites()
			c.eventf(slog.LevelInfo, "Cluster: %s takes writes as primary of epoch %d", c.cfg.ID, c.st.Epoch)
		}
	}
	c.promoteProgress()
	c.maybeDial()
	c.maybeSubscribe()
}

// Ready returns what the driver is to do, and forgets it: the primary's
// streams are read from the Log here.
func (c *Core) Ready() Ready {
	c.progress()
	c.flushAcks()
	c.serveFollowers()
	c.serveCatchUps()
	r := c.out
	c.out = Ready{}
	c.persisting = r.State
	return r
}

// HasReady reports whether Ready would return anything.
func (c *Core) HasReady() bool {
	c.progress()
	if !c.out.Empty() || len(c.follow.ackDue) > 0 {
		return true
	}
	if c.serving() {
		for _, f := range c.followers {
			if f.link != 0 && c.followerBehind(f) {
				return true
			}
		}
	}
	for _, l := range c.links {
		if l.serving != nil && !l.closing {
			return true
		}
	}
	return false
}

// Advance confirms that the driver carried out the last Ready: its State is
// on disk.
func (c *Core) Advance() {
	if c.persisting != nil {
		c.saved, c.persisting = *c.persisting, nil
	}
	c.announceSaved()
	c.sendSavedVotes()
}

// SaveFailed reports that the last Ready's State could not be persisted:
// the core goes back to the state on disk, with the commit gate closed
// whatever it was (a primary that could not record its fencing takes no
// writes; one whose planned switchover could not be recorded takes writes
// again), and abandons a promotion.
func (c *Core) SaveFailed(err error) {
	c.eventf(slog.LevelError, "Cluster: cluster state not saved: %v", err)
	c.lastError = "cluster state not saved: " + err.Error()
	failed := c.persisting
	c.st = c.saved
	c.role = c.saved.Role
	c.persisting = nil
	c.out.State = nil // a transition made since went from the unsaved state
	c.announcePending = false
	if failed != nil && c.saved.Role == RolePrimary && failed.Role == RoleSecondary && failed.Epoch == c.saved.Epoch && strings.EqualFold(failed.Primary, c.cfg.ID) &&
		!c.newerEpochSeen(c.saved.Epoch) {
		// A planned switchover that could not be recorded: no newer
		// epoch exists, the node is still the primary and takes writes
		// again (the SET GLOBAL fails). Not if a peer showed a newer
		// epoch (a fence whose state could not be saved either): the
		// writes stay closed.
		c.closeWrites()
		c.openWrites()
	} else {
		c.writesOpen = false
		c.out.CloseWrites = true
	}
	if c.promo != nil {
		c.promo = nil
	}
	if c.el.phase != electIdle && c.st.Epoch < c.el.term {
		// The campaign's term (this node's vote for itself) is not on
		// disk: it counts no vote.
		c.campaignOver("cluster state not saved: " + err.Error())
	}
}

// newerEpochSeen reports whether a peer has shown an epoch above e.
func (c *Core) newerEpochSeen(e Epoch) bool {
	for _, pe := range c.peerEpoch {
		if pe > e {
			return true
		}
	}
	return false
}

// Accept registers a link a peer opened (its identity proven by the
// transport) and returns its id.
func (c *Core) Accept(peer, addr string) LinkID {
	c.nextLink++
	c.links[c.nextLink] = &linkState{id: c.nextLink, kind: LinkAccepted, peer: peer, addr: addr, up: true, heard: c.now}
	return c.nextLink
}

// dial asks for a link of kind to peer.
func (c *Core) dial(peer, addr string, kind LinkKind) LinkID {
	c.nextLink++
	c.links[c.nextLink] = &linkState{id: c.nextLink, kind: kind, peer: peer, addr: addr, heard: c.now}
	c.out.Dials = append(c.out.Dials, Dial{Link: c.nextLink, Peer: peer, Addr: addr, Kind: kind})
	return c.nextLink
}

// Connected reports that a dialed link is up, with the peer's proven id.
func (c *Core) Connected(id LinkID, peer string) {
	l := c.links[id]
	if l == nil || l.closing {
		return
	}
	l.up, l.heard = true, c.now
	if peer != "" {
		l.peer = peer
		c.seedID[l.addr] = peer
		if l.id == c.follow.link {
			c.follow.peer = peer
		}
	}
	switch l.kind {
	case LinkFollow:
		// The position goes out once what an earlier link asked of
		// storage is done (a write of it landing after the subscription
		// would leave a gap before the new stream).
		c.follow.unsubscribed = true
		c.maybeSubscribe()
	case LinkCatchUp:
		c.catchUpConnected(l)
	}
}

// Live reports whether link id is open as far as the core knows: the
// driver drops the storage operations still queued for a link that is not
// (its apply queue must not write after the core moved on).
func (c *Core) Live(id LinkID) bool {
	l := c.links[id]
	return l != nil && !l.closing
}

// LinkDown reports that a link ended (a dial failed, the peer closed it,
// the network broke it); err says why (nil: closed cleanly).
func (c *Core) LinkDown(id LinkID, err error) {
	l := c.links[id]
	if l == nil {
		return
	}
	delete(c.links, id)
	c.linkEnded(l, err)
}

// closeLink ends a link from this side.
func (c *Core) closeLink(l *linkState) {
	if l == nil || l.closing {
		return
	}
	l.closing = true
	delete(c.links, l.id)
	c.out.Closes = append(c.out.Closes, l.id)
	c.linkEnded(l, nil)
}

// linkFailed closes a link after an error of its peer or of storage.
func (c *Core) linkFailed(l *linkState, err error) {
	if err != nil && l.kind == LinkFollow {
		c.lastError = err.Error()
	}
	c.closeLink(l)
	if err != nil {
		c.setPeerError(l.peer, err.Error())
	}
}

// linkEnded forgets what depended on a link.
func (c *Core) linkEnded(l *linkState, err error) {
	switch {
	case l.kind == LinkFollow:
		c.followEnded(l, err)
	case l.kind == LinkCatchUp:
		c.catchUpEnded(l, err)
	case l.follower != nil:
		c.followerEnded(l.follower, err)
	}
}

// Unreachable reports that a one-shot question to the seed at addr got no
// answer.
func (c *Core) Unreachable(addr string) {
	if id, ok := c.seedID[addr]; ok {
		c.setPeerState(id, "UNREACHABLE")
	}
	if c.opening != nil {
		delete(c.opening.peers, addr)
	}
	if c.promo != nil && c.promo.wait != nil {
		delete(c.promo.wait.peers, addr)
	}
	c.voteUnreachable(addr)
}

// Answer gives the core the answer to a one-shot question it asked the
// seed at addr; from is the id the transport proved.
func (c *Core) Answer(addr, from string, typ transport.Type, payload []byte) {
	m, err := DecodeMsg(typ, payload)
	if err != nil {
		c.eventf(slog.LevelWarn, "Cluster: malformed answer from %s: %v", from, err)
		c.Unreachable(addr)
		return
	}
	c.seedID[addr] = from
	switch m := m.(type) {
	case ProbeReplyMsg:
		c.probeAnswered(addr, from, m.State)
	case PositionsAreMsg:
		c.positionsAnswered(addr, from, m.DBs)
	case VoteReplyMsg:
		c.voteAnswered(addr, from, m)
	default:
		c.eventf(slog.LevelWarn, "Cluster: unexpected answer %#x from %s", int(typ), from)
		c.Unreachable(addr)
	}
}

// Step gives the core one message a peer sent on link. A message that does
// not decode, or does not belong on its link, closes the link (logged).
func (c *Core) Step(link LinkID, from string, typ transport.Type, payload []byte) {
	l := c.links[link]
	if l == nil || l.closing {
		return // the link ended: what was in flight on it is dropped
	}
	m, err := DecodeMsg(typ, payload)
	l.heard = c.now
	if l.peer == "" {
		l.peer = from
	}
	if err != nil {
		c.eventf(slog.LevelWarn, "Cluster: malformed message from %s, link closed: %v", from, err)
		c.linkFailed(l, err)
		return
	}
	switch l.kind {
	case LinkFollow:
		c.stepFollow(l, m)
		if l.id == c.follow.link && c.follow.welcomed {
			c.el.heard = c.now // raft mode: the leader is heard
		}
	case LinkCatchUp:
		c.stepCatchUp(l, m)
	case LinkAccepted:
		c.stepAccepted(l, m)
	}
}

// send queues m on link l.
func (c *Core) send(l *linkState, m Msg) {
	c.out.Msgs = append(c.out.Msgs, Envelope{Link: l.id, To: l.peer, Type: m.Type(), Payload: EncodeMsg(m)})
}

// ask queues m as a one-shot question to the seed at addr.
func (c *Core) ask(addr string, m Msg) {
	c.out.Msgs = append(c.out.Msgs, Envelope{To: c.seedID[addr], Addr: addr, Type: m.Type(), Payload: EncodeMsg(m)})
}

func (c *Core) eventf(level slog.Level, format string, args ...any) {
	c.out.Events = append(c.out.Events, Event{Level: level, Msg: fmt.Sprintf(format, args...)})
}

func (l *linkState) peerName() string {
	if l.peer != "" {
		return l.peer
	}
	return l.addr
}

func (c *Core) linkIDs() []LinkID { return slices.Sorted(mapKeys(c.links)) }

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// transition is the one place where the node's role and epoch change (the
// rules are CheckTransition's): leaving the primary role closes the commit
// gate first, cuts the secondaries and ends the semi-sync waits; the new
// state goes to Ready.State; entering the primary role opens the gate after
// it.
func (c *Core) transition(next State, why string) error {
	cur := c.st
	if next.Epoch == cur.Epoch && next.Vote == "" {
		next.Vote = cur.Vote // one vote per term, kept through the term
	}
	if err := CheckTransition(cur, next); err != nil {
		return err
	}
	if cur == next {
		return nil
	}
	if c.el.phase != electIdle && next.Epoch != cur.Epoch {
		// A campaign is for one term: another one ends it.
		c.campaignOver(fmt.Sprintf("term %d adopted during the campaign", next.Epoch))
	}
	if p := c.promo; p != nil && p.raft && next.Epoch != p.term {
		// So is an election won: a later term ends the taking over.
		link := p.catchLink
		p.catchLink = 0
		c.promotionFailed(fmt.Errorf("election at term %d abandoned: term %d adopted", p.term, next.Epoch))
		if l := c.links[link]; link != 0 && l != nil {
			c.closeLink(l)
		}
	}
	if cur.Role != RolePrimary && len(c.followers) > 0 {
		// A relay's followers were served the log of the primary and
		// epoch it followed: they subscribe again, to what it is now.
		c.dropFollowers()
	}
	if cur.Role == RolePrimary && next.Role != RolePrimary {
		c.closeWrites()
		c.opening = nil
		c.dropFollowers()
		c.announce = nil
		why := "demoted"
		if next.Role == RoleFenced {
			why = "fenced"
		}
		c.endWaits(why)
	}
	c.st = next
	st := next
	c.out.State = &st
	if !(c.role == RolePromoting && next.Role == RoleSecondary) {
		c.role = next.Role
	}
	if next.Role == RolePrimary {
		c.primarySince = c.now
		c.pinMembers()
		// SYNCED_LSN is this primary's own from now on (§17.8.6).
		clear(c.synced)
		c.openWrites()
	}
	primary := next.Primary
	if primary == "" {
		primary = "not known"
	}
	c.eventf(slog.LevelInfo, "Cluster: %s: role %s, epoch %d, primary %s (%s)", c.cfg.ID, next.Role, next.Epoch, primary, why)
	return nil
}

// dropFollowers closes every follower's link and forgets them.
func (c *Core) dropFollowers() {
	for _, key := range slices.Sorted(mapKeys(c.followers)) {
		if f := c.followers[key]; f.link != 0 {
			c.closeLink(c.links[f.link])
		}
	}
	clear(c.followers)
}

func (c *Core) closeWrites() {
	c.writesOpen = false
	c.out.CloseWrites = true
}

func (c *Core) openWrites() {
	c.writesOpen = true
	c.out.OpenWrites = true
}

// observeEpoch acts on an epoch a peer showed: a primary that sees a higher
// one is fenced at once; a secondary adopts it, leaves a primary of an
// older epoch and dials the new one at once.
func (c *Core) observeEpoch(from string, announced Epoch, primary string, fromFollowedPrimary bool) {
	key := strings.ToLower(from)
	if announced > c.peerEpoch[key] {
		c.peerEpoch[key] = announced
	}
	cur := c.st
	news, v := JudgeEpoch(cur, c.role, c.cfg.ID, announced, primary, fromFollowedPrimary)
	if v.Ignored() {
		c.eventf(slog.LevelWarn, "Cluster: %s", epochMessage(v, cur.Epoch, announced, from))
		return
	}
	if news == NewsNone && c.cfg.Raft && announced == cur.Epoch && cur.Primary == "" && primary != "" && c.role == RoleSecondary && !strings.EqualFold(primary, c.cfg.ID) {
		// The leader of this node's term, elected: followed.
		if c.el.phase != electIdle {
			c.campaignOver(fmt.Sprintf("node %s was elected at term %d", primary, cur.Epoch))
		}
		if err := c.transition(State{Role: RoleSecondary, Epoch: cur.Epoch, Primary: primary}, fmt.Sprintf("leader %s of term %d", primary, cur.Epoch)); err == nil {
			c.el.heard = c.now
			c.followNew(primary, fromFollowedPrimary)
		}
		return
	}
	switch news {
	case NewsFence:
		if c.cfg.Raft {
			// §17.9.3: demoted, not fenced.
			c.eventf(slog.LevelWarn, "Cluster: node %s demoted automatically (raft mode): node %s shows term %d, above this node's %d", c.cfg.ID, from, announced, cur.Epoch)
			c.lastError = fmt.Sprintf("demoted: node %s shows term %d", from, announced)
			if err := c.stepDown(fmt.Sprintf("demoted: term %d seen", announced), State{Role: RoleSecondary, Epoch: announced, Primary: primary}); err != nil {
				c.closeWrites()
				c.eventf(slog.LevelError, "Cluster: demotion of %s not recorded: %v", c.cfg.ID, err)
				return
			}
			c.followNew(primary, fromFollowedPrimary)
			return
		}
		next := State{Role: RoleFenced, Epoch: announced, Primary: primary}
		if err := c.transition(next, fmt.Sprintf("node %s shows epoch %d", from, announced)); err != nil {
			c.closeWrites()
			c.eventf(slog.LevelError, "Cluster: fencing of %s not recorded: %v", c.cfg.ID, err)
		}
		c.eventf(slog.LevelWarn, "Cluster: %s FENCED: node %s shows epoch %d (primary %s), newer than this node's epoch %d; writes refused until SET GLOBAL cluster_role = 'secondary'",
			c.cfg.ID, from, announced, primary, cur.Epoch)
	case NewsAdopt:
		keep := cur.Role
		if keep == RolePrimary {
			keep = RoleSecondary
		}
		if err := c.transition(State{Role: keep, Epoch: announced, Primary: primary}, fmt.Sprintf("epoch %d announced by %s", announced, from)); err != nil {
			c.eventf(slog.LevelError, "Cluster: epoch %d from %s not adopted: %v", announced, from, err)
			return
		}
		c.followNew(primary, fromFollowedPrimary)
	}
}

// Role returns the node's live role (PROMOTING during a promotion).
func (c *Core) Role() Role { return c.role }

// State returns the node's state.
func (c *Core) State() State { return c.st }

// Writable reports whether the core has the commit gate open.
func (c *Core) Writable() bool { return c.writesOpen }

// Now returns the core's tick count.
func (c *Core) Now() int { return c.now }

// PeerEpochs returns the highest epoch each peer showed, by lower-case id.
func (c *Core) PeerEpochs() map[string]Epoch { return c.peerEpoch }

// LastError returns the node's last replication error.
func (c *Core) LastError() string { return c.lastError }

func (c *Core) setPeer(id string, fn func(p *corePeer)) {
	if id == "" {
		return
	}
	key := strings.ToLower(id)
	p, ok := c.peers[key]
	if !ok {
		p = &corePeer{id: id, connectedSince: -1}
		c.peers[key] = p
	}
	fn(p)
}

// setPeerState records a peer's reachability, unless it is linked.
func (c *Core) setPeerState(id, state string) {
	c.setPeer(id, func(p *corePeer) {
		if p.state != "CONNECTED" && p.state != "BOOTSTRAPPING" {
			p.state = state
		}
	})
}

func (c *Core) setPeerError(id, msg string) {
	c.setPeer(id, func(p *corePeer) { p.lastError = msg })
}

func (c *Core) peerByID(id string) *corePeer { return c.peers[strings.ToLower(id)] }

// PeerStatus is a member as this node knows it (SHOW CLUSTER STATUS).
type PeerStatus struct {
	ID, Addr  string
	Role      Role
	State     string
	Epoch     Epoch
	Lag       int64 // as the peer announced it in a probe answer
	Since     int   // tick it connected; -1: not connected
	LastError string
	// Follower: on a primary, the member's positions (nil: none kept);
	// on a relay, those of a member it serves.
	Follower *FollowerStatus
	// LogStore: the member is a log-store node.
	LogStore bool
}

// FollowerStatus is what a primary knows of one secondary.
type FollowerStatus struct {
	Linked    bool
	LastApply int // tick of its last applied acknowledgement; -1: none
	DBs       []FollowerDB
}

// FollowerDB is one database of a secondary, as its primary sees it.
type FollowerDB struct {
	Name                   string
	BaseID                 []byte
	Sent, Written, Applied journal.LSN
	Seeding, Pinned        bool
}

// CoreStatus is the node's view of the cluster, for the status tables.
type CoreStatus struct {
	Now       int
	State     State
	Role      Role
	LastError string
	Peers     []PeerStatus // by id
	// PrimaryLSN: on a secondary, the log ends its primary last announced.
	PrimaryLSN map[string]journal.LSN
	Synced     map[string]SyncedPos
	// LastApply: on a secondary, the tick it last wrote frames (-1: never).
	LastApply      int
	Degraded       int
	StreamingCount int
	Counts         SyncCounts
	Election       ElectionStatus
}

// Status returns a copy of what the node knows.
func (c *Core) Status() CoreStatus {
	s := CoreStatus{Now: c.now, State: c.st, Role: c.role, LastError: c.lastError, PrimaryLSN: maps.Clone(c.primaryLSN),
		Synced: maps.Clone(c.synced), LastApply: c.follow.lastApply, Degraded: len(c.sync.degraded),
		StreamingCount: c.StreamingCount(), Counts: c.sync.counts, Election: c.Election()}
	for _, key := range slices.Sorted(mapKeys(c.peers)) {
		p := c.peers[key]
		ps := PeerStatus{ID: p.id, Addr: p.addr, Role: p.role, State: p.state, Epoch: p.epoch, Lag: p.lag, Since: p.connectedSince, LastError: p.lastError, LogStore: p.logStore}
		// A primary's followers, and a relay's (a secondary or a
		// log-store node serving its own).
		if f, ok := c.followers[key]; ok && (c.role == RolePrimary || f.link != 0) {
			fs := &FollowerStatus{Linked: f.link != 0, LastApply: f.lastApply}
			for _, dk := range slices.Sorted(mapKeys(f.positions)) {
				q := f.positions[dk]
				fs.DBs = append(fs.DBs, FollowerDB{Name: q.name, BaseID: q.baseID, Sent: q.sent, Written: q.written, Applied: q.applied, Seeding: q.seeding, Pinned: q.pinned})
			}
			ps.Follower = fs
		}
		s.Peers = append(s.Peers, ps)
	}
	return s
}
