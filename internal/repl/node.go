package repl

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/transport"
	"github.com/miraj-db/miraj/internal/vfs"
)

// The server's driver of the core (core.go): one goroutine (loop) owns the
// Core and is the only one to call it; everything else posts to it. It
// carries out each Ready with the node's transport (a reader and a writer
// goroutine per link, a goroutine per dial and per one-shot question), its
// storage (one apply worker per database, in order) and its disk (the
// cluster state file, quarantine), and ticks the core every tickInterval.

const (
	// tickInterval is the core's clock: its timers are counted in these.
	tickInterval = 10 * time.Millisecond
	// maxCatchUpTicks bounds the ticks given at once after a pause (an
	// hour's).
	maxCatchUpTicks = 360_000
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
	// after this long; a new primary repeats its announcement to the
	// peers that did not answer it.
	retryInterval = time.Second
	// probeInterval: a primary, a fenced node or a secondary without a
	// primary asks its peers for their role and epoch this often
	// (§17.4.4: every 10 s), so that a primary learns of a newer one.
	probeInterval = 10 * time.Second
	// probeTimeout bounds one one-shot question (dial, question, answer).
	probeTimeout = 3 * time.Second
	// probeWait: how long a promotion (or a restarted primary) waits for
	// its peers' answers before it decides without the silent ones: a
	// peer behind a network cut does not hold SET GLOBAL cluster_role for
	// the whole probeTimeout.
	probeWait = time.Second
	// maxBatchBytes bounds one Frames message; a larger single frame goes
	// alone (up to the stream limit).
	maxBatchBytes = 1 << 20
	// maxRoundBytes bounds what one round of a follower's stream sends of
	// one database before the others get their turn.
	maxRoundBytes = 16 << 20
	// maxInFlightBytes bounds what a primary sends of one database beyond
	// what the follower acknowledged as written: a slow database on the
	// follower holds back its own stream, not the others'.
	maxInFlightBytes = 32 << 20
	// seedChunkBytes is the size of one piece of a database copy.
	seedChunkBytes = 1 << 20
	// maxQueuedSendBytes: a copy being written waits while its link has
	// this much queued (the stream's own bytes are bounded by the window).
	maxQueuedSendBytes = 8 << 20
	// maxPosted bounds the inputs waiting for the loop: a reader whose
	// message cannot be posted waits (TCP's backpressure).
	maxPosted = 1024
	// streamBatchInterval is the least time between two rounds of a
	// primary's streams that a commit starts: a commit that comes sooner
	// after the last round is held until then, so that under load the
	// commits of the interval go to each follower as one batch (one read
	// of the journal, one message, one acknowledgement and one fsync on
	// the follower); a commit after the loop was quiet that long goes out
	// at once. A semi-sync commit's wait ends the hold (streamHold).
	streamBatchInterval = 2 * time.Millisecond
	// syncQuiet is how long after a semi-sync commit's wait the streams
	// are still not held (waitedFor).
	syncQuiet = time.Second
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
	// FS is the file system of the cluster state, quarantine folders and
	// copies being received; nil is the operating system's.
	FS       vfs.FS
	Accounts Accounts
	Logger   *slog.Logger
	// Transport, when set, replaces the one built from Config (tests).
	Transport *transport.Transport
	// LogStore, on a log-store node (node.kind = "log-store"), holds the
	// replicated databases' journals: the core reads it and the follower
	// side writes to it; Storage then holds no replicated database.
	LogStore *LogStore
}

// Node is this server's replication: the core and its driver.
// Constructors start nothing; Run owns every goroutine.
type Node struct {
	opts Options
	cfg  *config.Cluster
	st   *storage.Engine
	log  *slog.Logger
	tr   *transport.Transport
	// quarantine keeps aside what the node held off the primary's history;
	// replica is where the follower side puts what it is sent.
	quarantine *Quarantine
	replica    Replica

	// core is owned by the loop (Run); before Run, by whoever made the
	// Node (tests).
	core *Core
	// posted carries inputs to the loop: each runs there, with the core.
	posted chan func()
	// wake asks the loop to look at the core again (the engine changed).
	started atomic.Bool

	// Read by the SQL layer without the loop: a copy of the core's state
	// after each Ready.
	role     atomic.Value // Role
	state    atomic.Value // State
	writable atomic.Bool

	// Owned by the loop.
	links   map[LinkID]*driverLink
	workers map[string]*applyWorker // by lower-case database name
	waits   map[uint64]chan SyncResult
	paces   []paceWait
	// lastSyncWait is when a semi-sync commit last asked to wait (loop
	// only): the streams are not held for a while after (waitedFor).
	lastSyncWait time.Time
	promotes     []chan error
	nextWait     atomic.Uint64
	start        time.Time
	syncShown    atomic.Value // SyncLevel
	stats        syncStats
	mon          monitor // progress of copies and catch-ups (monitor.go)
	wg           sync.WaitGroup
	ctx          context.Context
}

// New prepares a node from its configuration and persisted state. Client
// writes stay closed until the core opens them (a restarted primary once
// its peers have told it no newer epoch exists).
func New(opts Options) (*Node, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.FS = vfs.Or(opts.FS)
	st, err := LoadState(opts.FS, opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("cluster state: %w", err)
	}
	n := &Node{opts: opts, cfg: opts.Config, st: opts.Storage, log: opts.Logger,
		posted: make(chan func(), maxPosted), links: map[LinkID]*driverLink{}, workers: map[string]*applyWorker{},
		waits: map[uint64]chan SyncResult{}, start: time.Now()}
	n.quarantine = &Quarantine{FS: opts.FS, Dir: opts.StateDir, Node: n.cfg.Node.ID, Cluster: n.cfg.Name, Now: time.Now, Log: n.log}
	if (opts.LogStore != nil) != (n.cfg.Node.Kind == config.KindLogStore) {
		return nil, fmt.Errorf("cluster: node.kind = %q needs a log store exactly when it is %q", n.cfg.Node.Kind, config.KindLogStore)
	}
	if opts.LogStore != nil {
		opts.LogStore.opts.Quarantine, opts.LogStore.opts.Keeper = n.quarantine, n.keeper
		n.core = NewCore(coreConfig(n.cfg), st, opts.LogStore)
		n.replica = opts.LogStore
		n.log.Info(fmt.Sprintf("Cluster: %s is a log-store node: it keeps the replicated journals in %s and applies nothing", n.cfg.Node.ID, opts.LogStore.opts.Dir))
	} else {
		n.core = NewCore(coreConfig(n.cfg), st, engineLog{eng: n.st, acc: opts.Accounts})
		n.replica = EngineReplica{Eng: n.st, Quarantine: n.quarantine, Keeper: n.keeper}
	}
	n.publish()
	if l, ok := ParseSyncLevel(string(n.cfg.SyncCommit)); ok {
		n.syncShown.Store(l)
	} else {
		n.syncShown.Store(SyncOff)
	}
	if n.cfg.Mode == config.ModeRaft {
		n.log.Info(fmt.Sprintf("Cluster: raft mode: %d voting members, majority %d, election timeout %v", len(n.cfg.Peers())+1, (len(n.cfg.Peers())+1)/2+1, n.cfg.ElectionTimeout))
	}
	n.st.CloseWrites()
	n.st.SetRetention(n.retentionFloor)
	n.st.SetStreamPace(n.paceStream)
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

// ticks converts a duration into core ticks (at least one).
func ticks(d time.Duration) int { return max(int(d/tickInterval), 1) }

// coreConfig is the core's configuration from cluster.toml.
func coreConfig(c *config.Cluster) CoreConfig {
	cfg := CoreConfig{ID: c.Node.ID, Cluster: c.Name, Advertise: c.Node.Advertise, DurableAck: c.Ack == config.AckDurable,
		Window: maxInFlightBytes, BatchBytes: maxBatchBytes, RoundBytes: maxRoundBytes,
		JournalRetention: c.JournalRetentionMB << 20, PromotionCatchup: c.PromotionCatchupMB << 20, MaxPromotionLag: c.MaxPromotionLagMB << 20,
		HeartbeatTicks: ticks(heartbeatInterval), LinkTimeoutTicks: ticks(linkTimeout), ProbeTicks: ticks(probeInterval),
		RetryTicks: ticks(retryInterval), ProbeWaitTicks: ticks(probeWait), TickMillis: int(tickInterval / time.Millisecond)}
	for _, m := range c.Members {
		if !strings.EqualFold(m, c.Node.ID) {
			cfg.Members = append(cfg.Members, m)
		}
	}
	cfg.Seeds = c.Peers()
	cfg.Upstream = c.Node.Upstream
	cfg.LogStore = c.Node.Kind == config.KindLogStore
	if c.Mode == config.ModeRaft {
		cfg.Raft = true
		cfg.ElectionTicks = ticks(c.ElectionTimeout)
		cfg.RandSeed = rand.Uint64()
		// Followers must hear the leader well within a timeout: four
		// heartbeats to one.
		cfg.HeartbeatTicks = max(min(cfg.HeartbeatTicks, cfg.ElectionTicks/4), 1)
	}
	return cfg
}

// Listen opens the inter-node port; Run calls it if it was not called.
// Calling it first lets a start-up fail when the address is taken.
func (n *Node) Listen() error {
	_, err := n.tr.Listen()
	return err
}

// Run listens for peers and drives the core until ctx ends. Every
// goroutine it starts has ended when it returns.
func (n *Node) Run(ctx context.Context) error {
	if err := n.Listen(); err != nil {
		return err
	}
	n.ctx = ctx
	n.started.Store(true)
	defer n.wg.Wait()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := n.tr.Run(ctx); err != nil && ctx.Err() == nil {
			n.log.Error("cluster transport stopped", "err", err)
		}
	}()
	st := n.core.State()
	n.log.Info(fmt.Sprintf("Cluster: node %s of cluster %s, role %s, epoch %d", n.cfg.Node.ID, n.cfg.Name, st.Role, st.Epoch),
		"listen", n.tr.Addr().String())
	n.loop(ctx)
	return nil
}

// loop is the core's goroutine.
func (n *Node) loop(ctx context.Context) {
	tick := time.NewTicker(tickInterval)
	defer tick.Stop()
	defer n.stopAll()
	// The core's time follows the monotonic clock, not the ticker's
	// fires: a ticker drops the ticks of a pause (a stalled fsync, a
	// stopped process, a busy machine), and raft mode's lease and every
	// timeout must count the time that passed.
	ticked, trimmed := time.Now(), time.Now()
	var round time.Time // the last Ready
	for {
		n.handleReady()
		round = time.Now()
		changed := n.st.Changed()
		select {
		case <-ctx.Done():
			return
		case f := <-n.posted:
			f()
			n.takePosted()
		case <-changed:
			if hold := streamHold(time.Since(round), n.core.Role() == RolePrimary, n.waitedFor()); hold > 0 {
				if !n.holdFor(ctx, hold) {
					return
				}
			}
		case <-tick.C:
			due := min(max(int(time.Since(ticked)/tickInterval), 1), maxCatchUpTicks)
			for range due {
				n.core.Tick()
			}
			ticked = ticked.Add(time.Duration(due) * tickInterval)
			if time.Since(ticked) > maxCatchUpTicks*tickInterval {
				ticked = time.Now()
			}
			if ls := n.opts.LogStore; ls != nil && time.Since(trimmed) >= logStoreTrimInterval {
				trimmed = time.Now()
				n.trimLogStore(ls)
			}
		}
	}
}

// takePosted runs what else is posted before the next Ready: a batch of
// acks is one round of the streams.
func (n *Node) takePosted() {
	for i := 0; i < maxPosted; i++ {
		select {
		case f := <-n.posted:
			f()
		default:
			return
		}
	}
}

// waitedFor reports whether commits wait for the followers: a semi-sync
// commit's wait, or a streamed transaction's pace (paceStream), now or
// within the last syncQuiet (a semi-sync session's next commit comes as
// soon as its last is acknowledged: holding it would add to each wait).
func (n *Node) waitedFor() bool {
	return len(n.paces) > 0 || n.core.SyncWaiting() || time.Since(n.lastSyncWait) < syncQuiet
}

// streamHold is how long the loop holds a wake by a commit before the
// round that streams it (streamBatchInterval): on a primary whose last
// round (of the streams, of acks, or of its clock's tick: each serves the
// streams) was less than the interval ago, what is left of the interval;
// nothing on other roles (a secondary's wake sends its acks), while a
// commit waits for the followers (waitedFor), or when the streams have
// been idle.
func streamHold(sinceRound time.Duration, primary, waited bool) time.Duration {
	if !primary || waited || sinceRound >= streamBatchInterval {
		return 0
	}
	return streamBatchInterval - sinceRound
}

// holdFor waits d. What is posted meanwhile is run (a follower's acks; a
// statement's call, which carries out its Ready itself); a commit's wait
// for the followers, once posted, ends the hold, since its commit must go
// out now. It reports false when ctx ends.
func (n *Node) holdFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case f := <-n.posted:
			f()
			n.takePosted()
			if n.waitedFor() {
				return true
			}
		case <-t.C:
			return true
		}
	}
}

// post runs f on the loop; it waits while the loop's queue is full, and
// gives up when the node stops.
func (n *Node) post(f func()) bool {
	if !n.started.Load() {
		return false
	}
	select {
	case n.posted <- f:
		return true
	case <-n.ctx.Done():
		return false
	}
}

// call runs f on the loop and waits for it (or for ctx).
func (n *Node) call(ctx context.Context, f func()) bool {
	done := make(chan struct{})
	// What f asked of the core is carried out before the caller goes on
	// (a role change is on disk and visible when SET GLOBAL returns).
	if !n.post(func() { f(); n.handleReady(); close(done) }) {
		return false
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// handleReady carries out what the core asks until it asks nothing more.
func (n *Node) handleReady() {
	for n.core.HasReady() {
		rd := n.core.Ready()
		n.carryOut(rd)
	}
	n.releasePaces()
	n.publish()
}

// carryOut does one Ready, in the core's order.
func (n *Node) carryOut(rd Ready) {
	for _, e := range rd.Events {
		n.log.Log(context.Background(), e.Level, e.Msg)
	}
	if rd.CloseWrites {
		n.st.CloseWrites()
	}
	saved := true
	if rd.State != nil {
		if err := SaveState(n.opts.FS, n.opts.StateDir, *rd.State); err != nil {
			// The node did not become what the state says: it takes no
			// writes and marks no epoch.
			n.core.SaveFailed(err)
			saved = false
		}
	}
	if rd.OpenWrites && saved {
		st := n.core.State()
		n.st.OpenWrites(&storage.Writer{Epoch: st.Epoch, Node: n.cfg.Node.ID})
	}
	for _, op := range rd.Ops {
		if op.Kind == OpMarkEpochs && !saved {
			continue
		}
		n.storageOp(op)
	}
	for _, d := range rd.Dials {
		n.dial(d)
	}
	for _, m := range rd.Msgs {
		if m.Link == 0 {
			n.ask(m)
		} else if l := n.links[m.Link]; l != nil {
			l.enqueue(m.Type, m.Payload)
		}
	}
	for _, id := range rd.Closes {
		if l := n.links[id]; l != nil {
			l.closeAfterSends()
			delete(n.links, id)
		}
	}
	for _, r := range rd.Releases {
		if ch := n.waits[r.ID]; ch != nil {
			delete(n.waits, r.ID)
			ch <- r.Result
		}
	}
	for _, a := range rd.Answers {
		if len(n.promotes) > 0 {
			n.promotes[0] <- a.Err
			n.promotes = n.promotes[1:]
		}
	}
	n.core.Advance()
}

// publish copies what the SQL layer reads without the loop.
func (n *Node) publish() {
	n.role.Store(n.core.Role())
	n.state.Store(n.core.State())
	n.writable.Store(n.core.Writable())
}

// stopAll ends every link and worker (the loop is ending).
func (n *Node) stopAll() {
	for id, l := range n.links {
		if c := l.conn(); c != nil {
			c.Close()
		}
		delete(n.links, id)
	}
	for key, w := range n.workers {
		w.stop()
		delete(n.workers, key)
	}
	for id, ch := range n.waits {
		ch <- SyncNoLongerPrimary("stopped")
		delete(n.waits, id)
	}
	for _, p := range n.paces {
		close(p.done)
	}
	n.paces = nil
	for _, ch := range n.promotes {
		ch <- fmt.Errorf("%w: the node is stopping", ErrPromotionRefused)
	}
	n.promotes = nil
}

// Role returns the node's role.
func (n *Node) Role() Role { return n.role.Load().(Role) }

// Writable reports whether client writes are accepted: the node is the
// primary and its commit gate is open.
func (n *Node) Writable() bool { return n.Role() == RolePrimary && !n.st.ReadOnly() }

// Epoch returns the highest epoch the node knows.
func (n *Node) Epoch() Epoch { return n.state.Load().(State).Epoch }

// PrimaryID returns the id of the primary this node knows.
func (n *Node) PrimaryID() string { return n.state.Load().(State).Primary }

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

// ErrPromotionRefused is a controlled promotion's refusal (error 9003); the
// message gives the reasons.
var ErrPromotionRefused = errors.New("Promotion refused")

// Promote designates this node the primary of a new epoch: SET GLOBAL
// cluster_role = 'primary' (force false) or 'force_primary' (force true).
// It returns once the core has its peers' answers (at most probeWait):
// refused with ErrPromotionRefused (the reasons in the message), or
// accepted — the node is PROMOTING, then PRIMARY once it has caught up,
// cut any unterminated tail and written the new epoch.
func (n *Node) Promote(ctx context.Context, force bool) error {
	answer := make(chan error, 1)
	var err error
	if !n.call(ctx, func() {
		if err = n.core.Promote(force); err == nil {
			n.promotes = append(n.promotes, answer)
		}
	}) {
		return fmt.Errorf("%w: the node is not running", ErrPromotionRefused)
	}
	if err != nil {
		return err
	}
	select {
	case err := <-answer:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Demote is SET GLOBAL cluster_role = 'secondary'. On a primary it is the
// planned switchover (§17.4.3): the node closes writes, cuts its
// secondaries, keeps its journal and follows whichever node is promoted
// next. On a fenced node it is the return to service (§17.4.2): it follows
// the current primary; a database whose journal is not on that primary's
// history goes to quarantine and is copied again.
func (n *Node) Demote() error {
	var err error
	if !n.call(context.Background(), func() {
		if err = n.core.Demote(); err == nil {
			n.handleReady()
			if n.core.Role() != RoleSecondary {
				err = fmt.Errorf("cluster_role: not changed: %s", n.core.LastError())
			}
		}
	}) {
		return errors.New("cluster_role: the node is not running")
	}
	return err
}

// retentionFloor is storage's question at each checkpoint: the core's
// answer, or, when the loop does not answer in time, all of the journal.
func (n *Node) retentionFloor(db *storage.DB) (journal.LSN, bool) {
	info := dbInfo(db)
	if !n.started.Load() {
		return n.core.RetentionFloor(info) // no loop yet: the core is the caller's
	}
	var floor journal.LSN
	var ok bool
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if !n.call(ctx, func() { floor, ok = n.core.RetentionFloor(info) }) {
		return 0, true
	}
	return floor, ok
}

// engineLog is the core's read-only view of the engine (Log).
type engineLog struct {
	eng *storage.Engine
	acc Accounts
}

// EngineLog is the core's read-only view of a storage engine, whose users
// and grants replicate through acc (none when its functions are nil): the
// server's and the simulator's Log.
func EngineLog(eng *storage.Engine, acc Accounts) Log { return engineLog{eng: eng, acc: acc} }

// DBInfoOf describes one database as the core reads it.
func DBInfoOf(db *storage.DB) DBInfo { return dbInfo(db) }

func dbInfo(db *storage.DB) DBInfo {
	h, end := db.ReceivedHistory()
	return DBInfo{Name: db.Name(), BaseID: db.Latest().BaseID(), Hist: db.History(), Applied: db.LSN(),
		RecvHist: h, End: end, Retained: db.Journal().Start(), Durable: db.Journal().Durable(), Streamed: db.StreamEnd()}
}

func (l engineLog) Databases() []DBInfo {
	dbs := l.eng.Databases()
	out := make([]DBInfo, 0, len(dbs))
	for _, db := range dbs {
		out = append(out, dbInfo(db))
	}
	return out
}

func (l engineLog) ReadCommitted(name string, from journal.LSN, max int) ([]byte, error) {
	db, ok := l.eng.Database(name)
	if !ok {
		return nil, storage.ErrNoDatabase
	}
	return db.ReadCommitted(from, max)
}

func (l engineLog) ReadRange(name string, from, to journal.LSN, max int) ([]byte, error) {
	db, ok := l.eng.Database(name)
	if !ok {
		return nil, storage.ErrNoDatabase
	}
	return db.Journal().ReadRange(from, to, max)
}

func (l engineLog) Accounts() (uint64, func() []byte) {
	if l.acc.Version == nil {
		return 0, nil
	}
	return l.acc.Version() + 1, l.acc.Data
}
