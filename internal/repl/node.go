package repl

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/transport"
)

const (
	// heartbeatInterval: the primary announces its log ends this often
	// (PRIMARY_LSN, §17.5.3).
	heartbeatInterval = time.Second
	// retryInterval: a secondary without a primary tries its seeds again
	// after this long.
	retryInterval = time.Second
	// maxBatchBytes bounds one Frames message; a larger single frame goes
	// alone (up to the stream limit).
	maxBatchBytes = 1 << 20
	// seedChunkBytes is the size of one piece of a database copy.
	seedChunkBytes = 1 << 20
)

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

	mu struct {
		sync.Mutex
		state     persisted
		role      Role
		lastError string
		// peers: what this node knows of each member, by lower-case id.
		peers map[string]*peerStatus
		// primaryLSN: last log end announced by the primary, per database.
		primaryLSN map[string]journal.LSN
		// lastApply: when this secondary last applied a batch.
		lastApply time.Time
		// followers (on a primary): positions of each secondary, by id.
		followers map[string]*follower
		// stopFollowing cancels the secondary's follow loop (promotion).
		stopFollowing context.CancelFunc
		promoted      chan struct{}
	}
}

type peerStatus struct {
	id             string
	addr           string
	role           Role
	state          string
	epoch          Epoch
	connectedSince time.Time
	lastError      string
}

// follower is a secondary as its primary sees it.
type follower struct {
	id        string
	positions map[string]*followerPos // by lower-case database name
	lastApply time.Time
}

type followerPos struct {
	name    string
	baseID  []byte
	sent    journal.LSN
	written journal.LSN
	applied journal.LSN
	seeding bool
	pinned  bool // a placeholder: the member has not connected since this node became primary
}

// New prepares a node from its configuration and persisted state.
func New(opts Options) (*Node, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	st, err := loadState(opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("cluster state: %w", err)
	}
	n := &Node{opts: opts, cfg: opts.Config, st: opts.Storage, log: opts.Logger}
	n.mu.state = st
	n.mu.role = st.Role
	n.mu.peers = map[string]*peerStatus{}
	n.mu.primaryLSN = map[string]journal.LSN{}
	n.mu.followers = map[string]*follower{}
	n.mu.promoted = make(chan struct{})
	for _, m := range n.cfg.Members {
		if !strings.EqualFold(m, n.cfg.Node.ID) {
			n.mu.peers[strings.ToLower(m)] = &peerStatus{id: m, state: "DISCONNECTED"}
		}
	}
	n.st.SetReadOnly(st.Role != RolePrimary)
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
		if n.tr, err = transport.New(to); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Run listens for peers and follows the primary while this node is a
// secondary, until ctx ends.
func (n *Node) Run(ctx context.Context) error {
	if _, err := n.tr.Listen(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := n.tr.Run(ctx); err != nil && ctx.Err() == nil {
			n.log.Error("cluster transport stopped", "err", err)
		}
	}()
	n.log.Info(fmt.Sprintf("Cluster: node %s of cluster %s, role %s, epoch %d", n.cfg.Node.ID, n.cfg.Name, n.Role(), n.Epoch()),
		"listen", n.tr.Addr().String())
	for ctx.Err() == nil {
		if n.Role() == RoleSecondary {
			fctx, cancel := context.WithCancel(ctx)
			n.mu.Lock()
			n.mu.stopFollowing = cancel
			n.mu.Unlock()
			n.followOnce(fctx)
			cancel()
		}
		select {
		case <-ctx.Done():
		case <-time.After(retryInterval):
		}
	}
	wg.Wait()
	return nil
}

// Role returns the node's role.
func (n *Node) Role() Role {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.role
}

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

// Promote designates this node the primary of a new epoch (SET GLOBAL
// cluster_role = 'primary'). It returns at once; the node shows PROMOTING,
// then PRIMARY.
func (n *Node) Promote() error {
	n.mu.Lock()
	if n.mu.role != RoleSecondary {
		role := n.mu.role
		n.mu.Unlock()
		if role == RolePrimary {
			return nil
		}
		return fmt.Errorf("a promotion is already in progress")
	}
	n.mu.role = RolePromoting
	stop := n.mu.stopFollowing
	n.mu.Unlock()
	if stop != nil {
		stop()
	}
	go n.finishPromotion()
	return nil
}

func (n *Node) finishPromotion() {
	n.mu.Lock()
	next := persisted{Role: RolePrimary, Epoch: n.mu.state.Epoch + 1, Primary: n.cfg.Node.ID}
	for _, p := range n.mu.peers {
		if p.epoch >= next.Epoch {
			next.Epoch = p.epoch + 1
		}
	}
	n.mu.Unlock()
	if err := saveState(n.opts.StateDir, next); err != nil {
		n.log.Error(fmt.Sprintf("Cluster: promotion of %s abandoned: %v", n.cfg.Node.ID, err))
		n.mu.Lock()
		n.mu.role = RoleSecondary
		n.mu.lastError = err.Error()
		n.mu.Unlock()
		return
	}
	n.mu.Lock()
	n.mu.state = next
	n.mu.role = RolePrimary
	n.pinMembersLocked()
	close(n.mu.promoted)
	n.mu.Unlock()
	n.st.SetReadOnly(false)
	n.log.Info(fmt.Sprintf("Cluster: %s is primary of epoch %d", n.cfg.Node.ID, next.Epoch))
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
			f.positions[strings.ToLower(db.Name())] = &followerPos{name: db.Name(), baseID: db.Snapshot().BaseID(),
				sent: start, written: start, applied: start, pinned: true}
		}
		n.mu.followers[key] = f
	}
}

// retentionFloor keeps the journal that connected or known followers still
// need, within journal_retention_mb.
func (n *Node) retentionFloor(db *storage.DB) (journal.LSN, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	floor, ok := journal.LSN(0), false
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
		off := "OFF"
		self.Sync = &off
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
		r := NodeRow{NodeID: p.id, Address: p.addr, Role: string(p.role), State: p.state, Epoch: uint64(p.epoch), LastError: p.lastError}
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
		r := ReplRow{NodeID: n.cfg.Node.ID, Database: db.Name(), BaseID: fmt.Sprintf("%x", db.Snapshot().BaseID()),
			WrittenLSN: u64(db.Journal().End()), AppliedLSN: u64(db.LSN())}
		if n.mu.role == RolePrimary {
			r.PrimaryLSN = u64(db.LSN())
		} else if p, ok := n.mu.primaryLSN[strings.ToLower(db.Name())]; ok {
			r.PrimaryLSN = u64(p)
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
