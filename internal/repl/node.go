package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/transport"
)

const (
	// heartbeatInterval: the primary announces its log ends this often
	// (PRIMARY_LSN, §17.5.3), and the secondary answers with a keepalive.
	heartbeatInterval = time.Second
	// linkTimeout: a link on which nothing arrived for this long is dead
	// (the spec's 15 s without a frame); heartbeats keep a live one busy.
	linkTimeout = 15 * time.Second
	// sendTimeout bounds one message's write: a peer that reads nothing for
	// this long is cut rather than holding a sender forever. Longer than
	// linkTimeout so that a 256 MiB frame on a slow link still goes.
	sendTimeout = 60 * time.Second
	// retryInterval: a secondary without a primary tries its seeds again
	// after this long.
	retryInterval = time.Second
	// probeInterval: a primary, a fenced node or a secondary without a
	// primary asks its peers for their role and epoch this often
	// (§17.4.4: every 10 s), so that a primary learns of a newer one.
	probeInterval = 10 * time.Second
	// probeTimeout bounds one probe (dial, question, answer).
	probeTimeout = 3 * time.Second
	// maxBatchBytes bounds one Frames message; a larger single frame goes
	// alone (up to the stream limit).
	maxBatchBytes = 1 << 20
	// maxRoundBytes bounds what one round of a follower's sender streams of
	// one database before it looks at heartbeats and other databases.
	maxRoundBytes = 16 << 20
	// maxInFlightBytes bounds what a primary sends of one database beyond
	// what the follower acknowledged as written: a slow database on the
	// follower holds back its own stream, not the others'.
	maxInFlightBytes = 32 << 20
	// seedChunkBytes is the size of one piece of a database copy.
	seedChunkBytes = 1 << 20
)

// isolateMarker, in DIR/miraj, isolates the node while it exists, when
// test_hooks is on (§17.2.1).
const isolateMarker = "cluster-isolate"

// Accounts lets replication carry users and grants, which live outside the
// databases' journals (§17.7: a separate channel).
type Accounts struct {
	// Version changes whenever the accounts do; Data returns them.
	Version func() uint64
	Data    func() []byte
	// Install replaces the local accounts with data from the primary.
	Install func(data []byte) error
}

// Options configure a Node.
type Options struct {
	Config   *config.Cluster
	Storage  *storage.Engine
	StateDir string // DIR/miraj
	Accounts Accounts
	Logger   *slog.Logger
	// Transport, when set, replaces the one built from Config (tests).
	Transport *transport.Transport
}

// Node is this server's replication: its role, its links and what it knows
// of its peers. Constructors start nothing; Run owns every goroutine.
type Node struct {
	opts Options
	cfg  *config.Cluster
	st   *storage.Engine
	log  *slog.Logger
	tr   *transport.Transport

	// transMu serialises role and epoch changes with their disk writes
	// (transition); never held while waiting on the network.
	transMu sync.Mutex
	// promoteReq carries a promotion from Promote to Run's loop.
	promoteReq chan struct{}
	// probeNow asks the probe loop for a round at once (after a promotion:
	// the announcement).
	probeNow chan struct{}
	// wake asks Run's loop to look for the primary at once (a new epoch
	// was announced) rather than after retryInterval.
	wake chan struct{}

	mu struct {
		sync.Mutex
		// state is what is persisted. Invariant: it is on disk before any
		// effect of it (transition).
		state State
		// role is state.Role, or PROMOTING while a promotion runs.
		role      Role
		lastError string
		// peers: what this node knows of each member, by lower-case id.
		peers map[string]*peerStatus
		// primaryLSN: last log end announced by the primary, per database.
		primaryLSN map[string]journal.LSN
		// streamed: per database (lower-case name), the primary whose
		// stream last wrote to this secondary's journal (retentionFloor).
		streamed map[string]streamedFrom
		// lastApply: when this secondary last applied a batch.
		lastApply time.Time
		// followers (on a primary): positions of each secondary, by id.
		followers map[string]*follower
		// stopFollowing cancels the secondary's follow loop.
		stopFollowing context.CancelFunc
		// promotion: the accepted promotion Run is to carry out.
		promotion promotion
		// seeding counts the copies being received (a controlled
		// promotion is refused meanwhile).
		seeding int
		// sync: semi-synchronous commit's waiters and positions (sync.go).
		sync syncState
	}
	stats syncStats
}

type peerStatus struct {
	id             string
	addr           string
	role           Role
	state          string
	epoch          Epoch
	lag            int64 // as the peer announced it in a probe answer
	connectedSince time.Time
	lastError      string
}

// follower is a secondary as its primary sees it.
type follower struct {
	id        string
	conn      *transport.Conn         // closed when this node stops being primary
	positions map[string]*followerPos // by lower-case database name
	lastApply time.Time
}

type followerPos struct {
	name    string
	baseID  []byte
	hist    history.History // as subscribed; used once, by DecideStart
	sent    journal.LSN
	written journal.LSN
	applied journal.LSN
	// decided: the primary chose how to serve this database on this link
	// (stream or seed). Until then the position is what the follower
	// subscribed with, not yet checked against the primary's history.
	decided bool
	seeding bool
	pinned  bool // a placeholder: the member has not connected since this node became primary
}

// New prepares a node from its configuration and persisted state. Client
// writes stay closed until Run has checked, on a restarted primary, that no
// peer knows a newer epoch.
func New(opts Options) (*Node, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	st, err := loadState(opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("cluster state: %w", err)
	}
	n := &Node{opts: opts, cfg: opts.Config, st: opts.Storage, log: opts.Logger,
		promoteReq: make(chan struct{}, 1), probeNow: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
	n.mu.state = st
	n.mu.role = st.Role
	n.mu.peers = map[string]*peerStatus{}
	n.mu.primaryLSN = map[string]journal.LSN{}
	n.mu.streamed = map[string]streamedFrom{}
	n.mu.followers = map[string]*follower{}
	n.initSyncLocked()
	for _, m := range n.cfg.Members {
		if !strings.EqualFold(m, n.cfg.Node.ID) {
			n.mu.peers[strings.ToLower(m)] = &peerStatus{id: m, state: "DISCONNECTED"}
		}
	}
	// Accepted by the configuration, not built yet: said at every start,
	// never silently ignored.
	if n.cfg.Mode == config.ModeRaft {
		n.log.Warn("Cluster: mode = \"raft\" is not available yet: this node runs in manual mode (designate the primary with SET GLOBAL cluster_role = 'primary')")
	}
	n.st.CloseWrites()
	n.st.SetRetention(n.retentionFloor)
	if st.Role == RolePrimary {
		n.pinMembersLocked()
	}
	if opts.Transport != nil {
		n.tr = opts.Transport
	} else {
		to := transport.OptionsFromConfig(n.cfg)
		to.Logger = n.log
		to.Handler = n.serveIncoming
		if n.cfg.TestHooks {
			// §17.2.1: the marker file cuts every link while it exists.
			marker := filepath.Join(opts.StateDir, isolateMarker)
			to.Isolated = func() bool { _, err := os.Stat(marker); return err == nil }
		}
		if n.tr, err = transport.New(to); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Listen opens the inter-node port; Run calls it if it was not called.
// Calling it first lets a start-up fail when the address is taken.
func (n *Node) Listen() error {
	_, err := n.tr.Listen()
	return err
}

// Run listens for peers, probes them, and follows the primary while this
// node is a secondary, until ctx ends. Every goroutine it starts has ended
// when it returns.
func (n *Node) Run(ctx context.Context) error {
	if err := n.Listen(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := n.tr.Run(ctx); err != nil && ctx.Err() == nil {
			n.log.Error("cluster transport stopped", "err", err)
		}
	}()
	n.log.Info(fmt.Sprintf("Cluster: node %s of cluster %s, role %s, epoch %d", n.cfg.Node.ID, n.cfg.Name, n.Role(), n.Epoch()),
		"listen", n.tr.Addr().String())
	if n.Role() == RolePrimary {
		// A restarted primary asks its peers first: one that learned of a
		// newer epoch while this node was down fences it before a single
		// write (§17.4.2).
		n.probeRound(ctx)
		n.mu.Lock()
		st := n.mu.state
		n.mu.Unlock()
		if st.Role == RolePrimary {
			n.st.OpenWrites(&storage.Writer{Epoch: st.Epoch, Node: n.cfg.Node.ID})
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.probeLoop(ctx)
	}()
	for ctx.Err() == nil {
		fctx, cancel := context.WithCancel(ctx)
		n.mu.Lock()
		// Checked and armed under one lock: a Promote in between would
		// otherwise find nothing to stop and wait for the link to break.
		following := n.mu.role == RoleSecondary
		if following {
			n.mu.stopFollowing = cancel
		}
		n.mu.Unlock()
		if following {
			n.followOnce(fctx)
			n.mu.Lock()
			n.mu.stopFollowing = nil
			n.mu.Unlock()
		}
		cancel()
		select {
		case <-ctx.Done():
		case <-n.promoteReq:
			// The follow loop has returned: nothing appends to the
			// journals any more.
			n.promote(ctx)
		case <-n.wake:
		case <-time.After(retryInterval):
		}
	}
	return nil
}

// Role returns the node's role.
func (n *Node) Role() Role {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.role
}

// Writable reports whether client writes are accepted: the node is the
// primary and its commit gate is open (a restarted primary opens it once
// its peers have told it no newer epoch exists).
func (n *Node) Writable() bool { return n.Role() == RolePrimary && !n.st.ReadOnly() }

// Epoch returns the highest epoch the node knows.
func (n *Node) Epoch() Epoch {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.state.Epoch
}

// PrimaryID returns the id of the primary this node knows.
func (n *Node) PrimaryID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.state.Primary
}

// NodeID returns this node's id.
func (n *Node) NodeID() string { return n.cfg.Node.ID }

// ClusterName returns the cluster's name.
func (n *Node) ClusterName() string { return n.cfg.Name }

// ServerID derives @@server_id from the node id (never 0 or 1, which
// denote a server outside a cluster).
func (n *Node) ServerID() uint32 {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(n.cfg.Node.ID)))
	v := h.Sum32() & 0x7fffffff
	if v < 2 {
		v += 2
	}
	return v
}

// transition is the one place where the node's role and epoch change. The
// rules are CheckTransition's; the new state is on disk before it takes
// effect; leaving the primary role closes the commit gate first (under
// every database's commit lock), entering it opens the gate last.
func (n *Node) transition(next State, why string) error {
	n.transMu.Lock()
	defer n.transMu.Unlock()
	n.mu.Lock()
	cur := n.mu.state
	n.mu.Unlock()
	if err := CheckTransition(cur, next); err != nil {
		return err
	}
	if cur == next {
		return nil
	}
	if cur.Role == RolePrimary && next.Role != RolePrimary {
		n.st.CloseWrites()
		// Cut the secondaries now, not at their sender's next round:
		// they must stop counting as connected to this node at once.
		n.mu.Lock()
		for _, f := range n.mu.followers {
			if f.conn != nil {
				f.conn.Close()
			}
		}
		// Sessions waiting for acks get 9004 (§17.8.4).
		why := "demoted"
		if next.Role == RoleFenced {
			why = "fenced"
		}
		n.endWaitsLocked(why)
		n.mu.Unlock()
	}
	if err := saveState(n.opts.StateDir, next); err != nil {
		return fmt.Errorf("cluster state: %w", err)
	}
	n.mu.Lock()
	n.mu.state = next
	if !(n.mu.role == RolePromoting && next.Role == RoleSecondary) {
		n.mu.role = next.Role
	}
	if next.Role == RolePrimary {
		n.pinMembersLocked()
		// SYNCED_LSN is this primary's own from now on: what it knew of
		// the former primary's was for the promotion (§17.8.6).
		clear(n.mu.sync.synced)
	}
	n.mu.Unlock()
	if next.Role == RolePrimary {
		n.st.OpenWrites(&storage.Writer{Epoch: next.Epoch, Node: n.cfg.Node.ID})
	}
	n.log.Info(fmt.Sprintf("Cluster: %s: role %s, epoch %d, primary %s (%s)", n.cfg.Node.ID, next.Role, next.Epoch, next.Primary, why))
	return nil
}

// observeEpoch acts on an epoch a peer with a proven identity showed: a
// primary that sees a higher one is fenced at once; a secondary adopts it
// and leaves a primary of an older epoch.
func (n *Node) observeEpoch(from string, announced Epoch, primary string, fromFollowedPrimary bool) {
	n.mu.Lock()
	cur, role := n.mu.state, n.mu.role
	n.mu.Unlock()
	news, v := JudgeEpoch(cur, role, n.cfg.Node.ID, announced, primary, fromFollowedPrimary)
	if v.Ignored() {
		n.log.Warn("Cluster: " + epoch.Message(v, cur.Epoch, announced, from))
		return
	}
	switch news {
	case NewsFence:
		next := State{Role: RoleFenced, Epoch: announced, Primary: primary}
		if err := n.transition(next, fmt.Sprintf("node %s shows epoch %d", from, announced)); err != nil {
			// Writes are closed whatever the disk said.
			n.st.CloseWrites()
			n.log.Error(fmt.Sprintf("Cluster: fencing of %s not recorded: %v", n.cfg.Node.ID, err))
		}
		n.log.Warn(fmt.Sprintf("Cluster: %s FENCED: node %s shows epoch %d (primary %s), newer than this node's epoch %d; writes refused until SET GLOBAL cluster_role = 'secondary'",
			n.cfg.Node.ID, from, announced, primary, cur.Epoch))
	case NewsAdopt:
		keep := cur.Role
		if keep == RolePrimary {
			keep = RoleSecondary
		}
		if err := n.transition(State{Role: keep, Epoch: announced, Primary: primary}, fmt.Sprintf("epoch %d announced by %s", announced, from)); err != nil {
			n.log.Error(fmt.Sprintf("Cluster: epoch %d from %s not adopted: %v", announced, from, err))
			return
		}
		n.mu.Lock()
		stop := n.mu.stopFollowing
		n.mu.Unlock()
		if stop != nil && !fromFollowedPrimary {
			stop() // the primary followed until now is of an older epoch
		}
		select {
		case n.wake <- struct{}{}: // subscribe to the new primary now
		default:
		}
	}
}

// promotion is an accepted promotion: its catch-up plan, and whether it was
// forced (a failed catch-up then does not stop it).
type promotion struct {
	plan  []CatchUpStep
	force bool
}

// ErrPromotionRefused is a controlled promotion's refusal (error 9003); the
// message gives the reasons.
var ErrPromotionRefused = errors.New("Promotion refused")

// Promote designates this node the primary of a new epoch: SET GLOBAL
// cluster_role = 'primary' (force false) or 'force_primary' (force true).
//
// It first probes every peer (in parallel, a few seconds at most) and, for
// a controlled promotion, refuses with ErrPromotionRefused when a peer is
// still or already primary, is being promoted, or is still connected to a
// primary (§17.4.1); forced, each refusal is logged and passed over. An
// unreachable peer is logged only. Accepted, it returns at once; the node
// shows PROMOTING, then PRIMARY once Run has stopped following, cut any
// unterminated tail and written the new epoch.
func (n *Node) Promote(ctx context.Context, force bool) error {
	self := n.cfg.Node.ID
	n.mu.Lock()
	role := n.mu.role
	n.mu.Unlock()
	var here string
	switch role {
	case RolePrimary:
		return nil
	case RolePromoting:
		here = "cluster promotion in progress"
	case RoleFenced:
		here = "cluster_role = FENCED"
	}
	n.mu.Lock()
	if here == "" && n.mu.seeding > 0 {
		here = "replication bootstrap in progress"
	}
	n.mu.Unlock()
	if here != "" && (!force || role == RolePromoting) {
		n.log.Error(fmt.Sprintf("Cluster: promotion of %s refused: %s", self, here))
		return fmt.Errorf("%w: %s", ErrPromotionRefused, here)
	}
	answers, unreachable := n.probeRound(ctx)
	for _, addr := range unreachable {
		n.log.Warn(fmt.Sprintf("Cluster: promotion of %s: peer %s unreachable", self, addr))
	}
	n.mu.Lock()
	cur := n.mu.state
	n.mu.Unlock()
	reasons := PromotionRefusals(cur, answers)
	if here != "" {
		reasons = append([]string{here}, reasons...)
	}
	local := n.localDatabases()
	plan, catchUpRefusals := PlanCatchUp(local, n.askPositions(ctx))
	reasons = append(reasons, catchUpRefusals...)
	reasons = append(reasons, n.syncedRefusals(local, plan)...)
	if lag := n.lagAfter(plan); n.cfg.MaxPromotionLagMB > 0 && lag > n.cfg.MaxPromotionLagMB<<20 {
		reasons = append(reasons, fmt.Sprintf("lag of %d bytes after catch-up exceeds max_promotion_lag_mb (%d)", lag, n.cfg.MaxPromotionLagMB))
	}
	if len(reasons) > 0 && !force {
		msg := strings.Join(reasons, "; ")
		n.log.Error(fmt.Sprintf("Cluster: promotion of %s refused: %s", self, msg))
		return fmt.Errorf("%w: %s", ErrPromotionRefused, msg)
	}
	for _, r := range reasons {
		n.log.Error(fmt.Sprintf("Cluster: promotion of %s (forced): %s", self, r))
	}
	n.mu.Lock()
	if n.mu.role == RolePromoting || n.mu.role == RolePrimary {
		n.mu.Unlock()
		return fmt.Errorf("%w: cluster promotion in progress", ErrPromotionRefused)
	}
	n.mu.role = RolePromoting
	n.mu.promotion = promotion{plan: plan, force: force}
	stop := n.mu.stopFollowing
	n.mu.Unlock()
	if len(plan) == 0 {
		n.log.Info(fmt.Sprintf("Cluster: promotion of %s: without catch-up", self))
	} else {
		var total journal.LSN
		for _, s := range plan {
			total += s.To - s.From
		}
		n.log.Info(fmt.Sprintf("Cluster: promotion of %s: catch-up planned from %s (%d bytes over %d database(s))", self, plan[0].Peer, total, len(plan)))
	}
	if stop != nil {
		stop()
	}
	select {
	case n.promoteReq <- struct{}{}:
	default:
	}
	return nil
}

// lagAfter is what this node would still lack, after the planned catch-up,
// of the log ends its primary last announced (max_promotion_lag_mb).
func (n *Node) lagAfter(plan []CatchUpStep) int64 {
	to := map[string]journal.LSN{}
	for _, s := range plan {
		to[strings.ToLower(s.DB)] = s.To
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var lag int64
	for _, db := range n.st.Databases() {
		key := strings.ToLower(db.Name())
		end, ok := to[key]
		if !ok {
			end = db.Journal().End()
		}
		if p, known := n.mu.primaryLSN[key]; known && p > end {
			lag += int64(p - end)
		}
	}
	return lag
}

// Demote is SET GLOBAL cluster_role = 'secondary'. On a primary it is the
// planned switchover (§17.4.3): the node closes writes, cuts its
// secondaries, keeps its journal and follows whichever node is promoted
// next. On a fenced node it is the return to service (§17.4.2): it follows
// the current primary; a database whose journal is not on that primary's
// history goes to quarantine and is copied again.
func (n *Node) Demote() error {
	n.mu.Lock()
	role, cur := n.mu.role, n.mu.state
	n.mu.Unlock()
	switch role {
	case RoleSecondary:
		return nil
	case RolePromoting:
		return fmt.Errorf("cluster_role: a promotion is in progress")
	}
	why := "planned switchover"
	if role == RoleFenced {
		why = "fenced node returned to service"
	}
	return n.transition(State{Role: RoleSecondary, Epoch: cur.Epoch, Primary: cur.Primary}, why)
}

// promote runs in Run's loop once the follow loop has ended.
func (n *Node) promote(ctx context.Context) {
	fail := func(err error) {
		n.log.Error(fmt.Sprintf("Cluster: promotion of %s abandoned: %v", n.cfg.Node.ID, err))
		n.mu.Lock()
		n.mu.role = n.mu.state.Role
		n.mu.lastError = err.Error()
		n.mu.Unlock()
	}
	n.mu.Lock()
	pr := n.mu.promotion
	n.mu.promotion = promotion{}
	n.mu.Unlock()
	for _, s := range pr.plan {
		if err := n.catchUp(ctx, s); err != nil {
			if !pr.force {
				fail(err)
				return
			}
			n.log.Error(fmt.Sprintf("Cluster: promotion of %s (forced): %v", n.cfg.Node.ID, err))
			continue
		}
		n.log.Info(fmt.Sprintf("Cluster: catch-up from %s finished (%d bytes, database %s)", s.Peer, s.To-s.From, s.DB))
	}
	// A transaction of the former primary whose commit frame never came is
	// cut before this node writes: kept in quarantine, never committed on.
	for _, db := range n.st.Databases() {
		cut, err := db.CutTail(func(from journal.LSN, tail []byte) error { return n.quarantineTail(db, from, tail) })
		if err != nil {
			fail(fmt.Errorf("database %s: %w", db.Name(), err))
			return
		}
		if cut > 0 {
			n.log.Warn(fmt.Sprintf("Cluster: database %s: %d bytes of an unterminated transaction cut at LSN %d and kept in quarantine", db.Name(), cut, db.LSN()))
		}
	}
	// Learn the highest epoch the reachable peers know before choosing the
	// next one (an unreachable peer does not stop the promotion).
	n.probeRound(ctx)
	n.mu.Lock()
	next := State{Role: RolePrimary, Epoch: n.mu.state.Epoch + 1, Primary: n.cfg.Node.ID}
	for _, p := range n.mu.peers {
		if p.epoch >= next.Epoch {
			next.Epoch = p.epoch + 1
		}
	}
	n.mu.Unlock()
	if err := n.transition(next, "promotion"); err != nil {
		fail(err)
		return
	}
	for _, db := range n.st.Databases() {
		if err := db.MarkEpoch(ctx); err != nil {
			n.log.Error(fmt.Sprintf("Cluster: database %s: epoch mark: %v", db.Name(), err))
		}
	}
	n.mu.Lock()
	n.mu.lastError = ""
	n.mu.Unlock()
	n.log.Info(fmt.Sprintf("Cluster: %s is primary of epoch %d", n.cfg.Node.ID, next.Epoch))
	select {
	case n.probeNow <- struct{}{}: // announce the new epoch to every peer
	default:
	}
}

// pinMembersLocked makes a primary that does not know its secondaries'
// positions (it just started, or was just promoted) keep every database's
// log from its present start for each other member, until that member
// connects or journal_retention_mb is exceeded (§17.2.1).
func (n *Node) pinMembersLocked() {
	for key, p := range n.mu.peers {
		if _, known := n.mu.followers[key]; known {
			continue
		}
		f := &follower{id: p.id, positions: map[string]*followerPos{}}
		for _, db := range n.st.Databases() {
			start := db.Journal().Start()
			f.positions[strings.ToLower(db.Name())] = &followerPos{name: db.Name(), baseID: db.Latest().BaseID(),
				sent: start, written: start, applied: start, pinned: true}
		}
		n.mu.followers[key] = f
	}
}

// streamedFrom is a primary whose stream wrote to a database's journal:
// frames appended or a copy installed. Its history then holds the whole
// journal, the base id's incarnation of the database.
type streamedFrom struct {
	epoch   Epoch
	primary string
	base    []byte
}

// noteStreamed records that the primary of epoch on this link wrote to
// db's journal.
func (n *Node) noteStreamed(db *storage.DB, epoch Epoch, primary string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.streamed[strings.ToLower(db.Name())] = streamedFrom{epoch: epoch, primary: primary, base: db.Latest().BaseID()}
}

// onPrimaryHistoryLocked reports whether this node knows db's journal to
// be on the current primary's history: that primary's stream wrote to it
// (in the current epoch, to this incarnation). Called with mu held.
func (n *Node) onPrimaryHistoryLocked(db *storage.DB) bool {
	s, ok := n.mu.streamed[strings.ToLower(db.Name())]
	return ok && s.epoch == n.mu.state.Epoch && strings.EqualFold(s.primary, n.mu.state.Primary) &&
		bytes.Equal(s.base, db.Latest().BaseID())
}

// retentionFloor keeps the journal that connected or known followers still
// need, within journal_retention_mb.
func (n *Node) retentionFloor(db *storage.DB) (journal.LSN, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	floor, ok := journal.LSN(0), false
	if n.mu.role != RolePrimary {
		if !n.onPrimaryHistoryLocked(db) {
			// Not known to be on the current primary's history (a
			// former primary, fenced or demoted; a secondary whose
			// primary or epoch changed, or not yet streamed to since a
			// start): what diverges goes to quarantine, whole, so the
			// journal is kept until the primary's stream writes to it.
			// It does not grow meanwhile: only that stream writes to a
			// node that is not primary.
			return 0, true
		}
		// A secondary keeps promotion_catchup_mb of journal to serve the
		// catch-up of a promoted peer (§17.4.1).
		keep := journal.LSN(n.cfg.PromotionCatchupMB) << 20
		if end := db.Journal().End(); end > keep {
			return end - keep, true
		}
		return 0, true
	}
	limit := journal.LSN(n.cfg.JournalRetentionMB) << 20
	end := db.LSN()
	for _, f := range n.mu.followers {
		p, has := f.positions[strings.ToLower(db.Name())]
		if !has || p.seeding {
			continue
		}
		if limit > 0 && end-p.written > limit {
			continue // beyond the retention limit: re-seeded when it returns
		}
		if !ok || p.written < floor {
			floor, ok = p.written, true
		}
	}
	return floor, ok
}

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

// Nodes returns what this node knows of every member, itself first.
func (n *Node) Nodes() []NodeRow {
	n.mu.Lock()
	defer n.mu.Unlock()
	self := NodeRow{NodeID: n.cfg.Node.ID, Address: n.cfg.Node.Advertise, Role: string(n.mu.role), State: "SELF",
		Epoch: uint64(n.mu.state.Epoch), LastError: n.mu.lastError}
	if n.mu.role == RolePromoting {
		self.State, self.Role = "PROMOTING", string(RoleSecondary)
	}
	if n.mu.role == RolePrimary {
		shown := n.mu.sync.shown.String()
		if len(n.mu.sync.degraded) > 0 {
			shown = "DEGRADED"
		}
		self.Sync = &shown
	} else {
		var lag int64
		for _, db := range n.st.Databases() {
			if p, ok := n.mu.primaryLSN[strings.ToLower(db.Name())]; ok && p > db.LSN() {
				lag += int64(p - db.LSN())
			}
		}
		self.LagBytes = lag
		if !n.mu.lastApply.IsZero() {
			secs := 0.0
			if lag > 0 {
				secs = time.Since(n.mu.lastApply).Seconds()
			}
			self.LagSeconds = &secs
		}
	}
	rows := []NodeRow{self}
	ids := make([]string, 0, len(n.mu.peers))
	for id := range n.mu.peers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := n.mu.peers[id]
		r := NodeRow{NodeID: p.id, Address: p.addr, Role: string(p.role), State: p.state, Epoch: uint64(p.epoch), LastError: p.lastError, LagBytes: p.lag}
		if r.Role == "" {
			r.Role = string(RoleSecondary)
		}
		if !p.connectedSince.IsZero() {
			t := p.connectedSince
			r.ConnectedSince = &t
		}
		if f, ok := n.mu.followers[id]; ok && n.mu.role == RolePrimary {
			var lag int64
			seeding := false
			for _, db := range n.st.Databases() {
				fp, has := f.positions[strings.ToLower(db.Name())]
				if !has {
					lag += int64(db.LSN())
					continue
				}
				if fp.pinned {
					continue
				}
				seeding = seeding || fp.seeding
				if db.LSN() > fp.applied {
					lag += int64(db.LSN() - fp.applied)
				}
			}
			r.LagBytes = lag
			if !f.lastApply.IsZero() {
				s := time.Since(f.lastApply).Seconds()
				if lag == 0 {
					s = 0
				}
				r.LagSeconds = &s
			}
			sync := "NO"
			if p.state == "CONNECTED" && !seeding {
				sync = "YES"
			}
			r.Sync = &sync
		}
		rows = append(rows, r)
	}
	return rows
}

// Replication returns the per-database positions this node knows.
func (n *Node) Replication() []ReplRow {
	n.mu.Lock()
	defer n.mu.Unlock()
	var rows []ReplRow
	dbs := n.st.Databases()
	for _, db := range dbs {
		key := strings.ToLower(db.Name())
		r := ReplRow{NodeID: n.cfg.Node.ID, Database: db.Name(), BaseID: fmt.Sprintf("%x", db.Latest().BaseID()),
			WrittenLSN: u64(db.Journal().End()), AppliedLSN: u64(db.LSN())}
		if n.mu.role == RolePrimary {
			r.PrimaryLSN = u64(db.LSN())
			r.SyncedLSN = u64(n.mu.sync.synced[key])
		} else {
			if p, ok := n.mu.primaryLSN[key]; ok {
				r.PrimaryLSN = u64(p)
			}
			if s, ok := n.mu.sync.synced[key]; ok {
				r.SyncedLSN = u64(s)
			}
		}
		rows = append(rows, r)
	}
	if n.mu.role != RolePrimary {
		return rows
	}
	ids := make([]string, 0, len(n.mu.followers))
	for id := range n.mu.followers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		f := n.mu.followers[id]
		for _, db := range dbs {
			fp, ok := f.positions[strings.ToLower(db.Name())]
			if !ok || fp.pinned {
				continue
			}
			r := ReplRow{NodeID: f.id, Database: db.Name(), BaseID: fmt.Sprintf("%x", fp.baseID),
				SentLSN: u64(fp.sent), WrittenLSN: u64(fp.written), AppliedLSN: u64(fp.applied),
				RetainedLSN: u64(db.Journal().Start()), PrimaryLSN: u64(db.LSN())}
			rows = append(rows, r)
		}
	}
	return rows
}

func (n *Node) setPeer(id string, fn func(p *peerStatus)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := strings.ToLower(id)
	p, ok := n.mu.peers[key]
	if !ok {
		p = &peerStatus{id: id}
		n.mu.peers[key] = p
	}
	fn(p)
}
