package sim

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/vfs"
)

// node is one simulated server: a real storage engine and the server's
// replication core (repl.Core), driven as the server's driver drives it:
// the simulator delivers the core's encoded messages, ticks it, and
// carries out its Ready (storage operations on the engine, links on the
// simulated network). Nothing of the protocol is written here.
type node struct {
	w    *world
	id   string
	dir  string
	eng  *storage.Engine // nil while down
	core *repl.Core
	// fs is the node's disk for everything but its journals: the cluster
	// state, checkpoints, database folders and quarantine. It fails at
	// the disk fault rate, and a crash loses what was not made durable.
	fs *vfs.Crashable
	// quar writes the node's quarantine folders, as the server's does;
	// replica is the server's follower side on the engine (nil while
	// down).
	quar    *repl.Quarantine
	replica repl.Replica
	// ls: a log-store node's journals (Options.LogStore; nil otherwise
	// and while down): its replica and the core's Log.
	ls *repl.LogStore

	// st is the cluster state as last saved (cluster-state.json, read
	// back at each start).
	st repl.State

	// snaps: snapshots of the simulated table this node's writers hold
	// (Options.HeldSnapshots), with what they read when taken.
	snaps []heldSnapshot

	// slowUntil: the node's apply worker does nothing before this tick;
	// backlog holds the storage operations it was given meanwhile, in
	// order (the server's apply queue).
	slowUntil int
	backlog   []repl.Op
	// stallUntil: the whole node does nothing before this tick
	// (Options.StallWeight).
	stallFrom, stallUntil int
	// seeds: the copies being received, by database (the server's .part
	// files).
	seeds map[string]*bytes.Buffer
	// followLinks: the links the core dialed to follow a primary;
	// streamed: per database, the primary whose stream last wrote to its
	// journal (memory only: a restart forgets it).
	followLinks map[repl.LinkID]bool
	streamed    map[string]streamedFrom
	// mustFollow: the node learned of a new primary: it must follow it
	// at once (checker "follows at once").
	mustFollow *followDue
	// unapplied: appends written and acknowledged, not applied yet.
	unapplied []repl.Op
	// waits: client writes waiting for semi-synchronous acks, by the id
	// given to the core.
	waits map[uint64]*syncWait
	// promised: the rows a controlled promotion under way must keep (what
	// the peers it decided on hold on the newest history); promoting:
	// the promotion was accepted; before: the rows the node held when it
	// cut its tail.
	promised map[string]bool
	// answered: what each peer held when it answered this node's
	// question of positions (rowsOnHistoryOf).
	answered  map[string]map[string]dbView
	promoting bool
	force     bool
	before    map[string]bool
	// elected: the promotion under way follows a raft election;
	// lastCampaign: the term of the last campaign the checker "pre-vote"
	// looked at.
	elected      bool
	lastCampaign repl.Epoch
	// asked: the last vote each candidate asked of this node.
	asked map[string]repl.VoteMsg
	won   uint64 // elections the core counted as won since its start

	// writing: the database a client write of this node is committing to
	// (Options.GroupWriteOverlap); overlap: the commit started during its
	// group write, joined before the client write returns.
	writing *storage.DB
	overlap *overlapCommit

	// held: committed, durable transactions of the node's journals, as of
	// the last check; quarantined: those moved to its quarantine, with
	// the folder that holds them (they count while it exists).
	held        map[txKey]bool
	quarantined map[txKey]string

	// open: a client transaction per database left open by a write, which
	// the node's next write to that database commits after its own (see
	// clientWrite). Dropped when the node crashes or stops being primary.
	open map[string]*openTx
	// deferred: a row delete per database left open in a transaction
	// without a snapshot, which the node's next row change to that
	// database commits after its own (see deferredDelete). Dropped as
	// open is.
	deferred map[string]*deferredTx
	// readAt: the table as the node's last row change read it, per
	// database (Options.RowChanges works changes out on it again later).
	readAt map[string]*storage.Table
	// streams: the streamed transactions the node's clients are running
	// (stream.go). Left open when it crashes or stops taking writes.
	streams []*streamTx
	// ledgerFrom: a stream step under way began appending there.
	ledgerFrom *ledgerFrom
}

// followDue is a secondary's obligation to follow the primary it learned
// of since a tick.
type followDue struct {
	primary string
	epoch   repl.Epoch
	since   int
}

// syncWait is a client session waiting after its commit (§17.8).
type syncWait struct {
	row  string // the row it wrote: "db/id"
	db   string
	base []byte
	lsn  journal.LSN
	req  repl.SyncRequest
}

func (n *node) tracef(format string, args ...any) { n.w.tracef(n.id+" "+format, args...) }

// Timers of the simulated cluster, in ticks (a simulated millisecond): the
// server's, shrunk so that a run of a few hundred ticks goes through many
// heartbeats, probes and link timeouts.
const (
	heartbeatTicks   = 4
	linkTimeoutTicks = 25
	probeEvery       = 10
	retryTicks       = 3
	// electionTicks: raft mode's election_timeout_ms (five heartbeats).
	electionTicks = 20
	// batch is the bytes of one Frames message, and of one chunk of a
	// copy.
	batch = 700
)

// coreConfig is the server's configuration of the core, scaled down.
func (n *node) coreConfig() repl.CoreConfig {
	cfg := repl.CoreConfig{ID: n.id, Cluster: "sim", Advertise: n.id, DurableAck: n.w.opts.DurableAcks,
		Window: n.w.opts.Window, BatchBytes: batch, RoundBytes: 64 << 10,
		JournalRetention: 16 << 10, PromotionCatchup: 0,
		HeartbeatTicks: heartbeatTicks, LinkTimeoutTicks: linkTimeoutTicks, ProbeTicks: probeEvery,
		RetryTicks: retryTicks, TickMillis: 1,
		// Long enough for a question and its answer at the largest delay.
		ProbeWaitTicks: 2*n.w.opts.MaxDelay + 2}
	if n.w.opts.Cascade && n.id == "n3" {
		cfg.Upstream = "n2"
	}
	cfg.LogStore = n.isLogStore()
	if n.w.opts.Raft {
		cfg.Raft, cfg.ElectionTicks = true, electionTicks
		// Each start of each node draws its own timeouts, replayed by
		// the seed.
		cfg.RandSeed = n.w.opts.Seed*1_000_003 + uint64(n.w.now)*131 + uint64(len(n.id)+int(n.id[len(n.id)-1]))
	}
	for _, m := range n.w.nodes {
		if m.id != n.id {
			// A node's address is its id.
			cfg.Members = append(cfg.Members, m.id)
			cfg.Seeds = append(cfg.Seeds, m.id)
		}
	}
	return cfg
}

// start opens the node's engine (a first start or a restart after a crash)
// and a new core in the persisted state.
func (n *node) start() error {
	st, err := repl.LoadState(n.fs, n.stateDir())
	if err != nil {
		return err
	}
	n.st = st
	eng, err := storage.Open(storage.Options{Root: n.dir, FS: n.fs, Policy: storage.SaveCommit, Bind: bind, SegmentBytes: n.w.opts.SegmentBytes, Logger: n.w.log,
		JournalFaults: n.w.diskFault, JournalDuringGroupWrite: n.duringGroupWrite, JournalDuringGather: n.duringGather,
		Now: n.w.clock, KeepBytes: n.w.opts.KeepBytes, JournalWrites: n.journalWrites()})
	if err != nil {
		return err
	}
	n.eng = eng
	n.replica = repl.EngineReplica{Eng: eng, Quarantine: n.quar, Keeper: n.keeper}
	n.w.touch(n.id)
	if n.isLogStore() {
		if err := n.openLogStore(); err != nil {
			eng.Crash()
			n.eng = nil
			if errors.Is(err, errDisk) {
				n.tracef("log store not opened (%v): down", err)
				return nil
			}
			return err
		}
		n.replica = n.ls
		n.core = repl.NewCore(n.coreConfig(), n.st, n.ls)
	} else {
		n.core = repl.NewCore(n.coreConfig(), n.st, repl.EngineLog(eng, repl.Accounts{}))
	}
	n.seeds, n.waits, n.backlog = map[string]*bytes.Buffer{}, map[uint64]*syncWait{}, nil
	n.followLinks, n.streamed = map[repl.LinkID]bool{}, map[string]streamedFrom{}
	n.promised, n.promoting, n.before, n.won = nil, false, nil, 0
	eng.SetRetention(func(db *storage.DB) (journal.LSN, bool) { return n.core.RetentionFloor(repl.DBInfoOf(db)) })
	eng.CloseWrites()
	n.tracef("start role=%s epoch=%d", n.st.Role, n.st.Epoch)
	n.handleReady()
	return nil
}

// stateDir is the node's DIR/miraj: its cluster state and quarantine.
func (n *node) stateDir() string { return filepath.Join(n.dir, storage.ReservedDir) }

// journalWrites is how the node's journals write (Options.BlockWrites).
func (n *node) journalWrites() journal.WriteMode {
	if n.w.opts.BlockWrites {
		return journal.WriteBlocks
	}
	return journal.WriteAuto
}

// diskFailed handles an error from a journal that an injected disk fault
// failed: the server's database refuses writes from then on, and the
// simulated operator restarts the node (a crash: what was not fsync'd is
// lost, and was never acknowledged).
func (n *node) diskFailed(err error) bool {
	if !errors.Is(err, journal.ErrFailed) && !errors.Is(err, errDisk) {
		return false
	}
	n.tracef("disk failure (%v): restart", err)
	n.crash()
	return true
}

// checkpoint writes a checkpoint of each of the node's databases; the
// checker "kept": one that is not known to be on its primary's history
// lets none of its journal go.
func (n *node) checkpoint() {
	if n.ls != nil {
		n.trimLogStore()
		return
	}
	for _, db := range n.eng.Databases() {
		start, kept := db.Journal().Start(), n.core.Role() != repl.RolePrimary && !n.onPrimaryHistory(db)
		if err := n.eng.Checkpoint(db); err != nil {
			if !n.diskFailed(err) {
				n.w.violate("checkpoint", fmt.Sprintf("%s: checkpoint of %s: %v", n.id, db.Name(), err))
			}
			return
		}
		if got := db.Journal().Start(); kept && got != start {
			n.w.violate("kept", fmt.Sprintf("%s: a checkpoint of %s let its journal go from LSN %d to %d, not known to be on primary %s's history (epoch %d)", n.id, db.Name(), start, got, n.st.Primary, n.st.Epoch))
		}
		n.tracef("checkpoint %s lsn=%d durable=%d", db.Name(), db.LSN(), db.Journal().Durable())
	}
}

// streamedFrom is a primary whose stream wrote to a database's journal
// (frames appended or a copy installed on a follow link), as the checker
// "kept" knows it apart from the core.
type streamedFrom struct {
	epoch   repl.Epoch
	primary string
	base    []byte
}

// noteStreamed records that the stream on link wrote to db, if link is a
// follow link.
func (n *node) noteStreamed(link repl.LinkID, db *storage.DB) {
	if n.followLinks[link] {
		n.streamed[db.Name()] = streamedFrom{epoch: n.st.Epoch, primary: n.st.Primary, base: db.Latest().BaseID()}
	}
}

// onPrimaryHistory reports whether the node knows db's journal to be on
// its current primary's history: that primary's stream wrote to it, in
// the current epoch, to this incarnation.
func (n *node) onPrimaryHistory(db *storage.DB) bool {
	s, ok := n.streamed[db.Name()]
	return ok && s.epoch == n.st.Epoch && s.primary == n.st.Primary && bytes.Equal(s.base, db.Latest().BaseID())
}

// crash stops the node as a power loss would.
func (n *node) crash() {
	n.tracef("crash")
	n.w.touch(n.id)
	n.w.noteStreamCounts(n)
	if f := n.ledgerFrom; f != nil {
		// A stream step's appends before the fault that crashes it.
		n.recordLedger(f.db, f.lsn, f.db.Journal().End())
		n.ledgerFrom = nil
	}
	n.dropStreams("crash")
	n.eng.Crash()
	if n.ls != nil {
		n.ls.Crash()
		n.ls = nil
	}
	if err := n.fs.Crash(); err != nil {
		n.w.violate("crash", fmt.Sprintf("%s: %v", n.id, err))
	}
	n.eng, n.replica, n.stallUntil = nil, nil, 0
	n.waits, n.backlog, n.open, n.deferred, n.seeds, n.unapplied = nil, nil, nil, nil, nil, nil
	for _, id := range n.w.net.linkIDs() {
		if l := n.w.net.links[id]; l != nil && (l.a == n.id || l.b == n.id) {
			n.w.net.breakLink(n.w, id)
		}
	}
	n.core = nil
}

// handleReady carries out what the core asks, as the server's driver does,
// until it asks nothing more.
func (n *node) handleReady() {
	for guard := 0; n.eng != nil && n.core.HasReady(); guard++ {
		if guard > 10_000 {
			n.w.violate("liveness", fmt.Sprintf("%s: the core has work after 10000 rounds", n.id))
			return
		}
		rd := n.core.Ready()
		n.carryOut(rd)
		if n.eng != nil {
			n.core.Advance()
			n.noteElection()
		}
	}
}

func (n *node) carryOut(rd repl.Ready) {
	w := n.w
	for _, e := range rd.Events {
		n.tracef("%s", e.Msg)
	}
	if rd.CloseWrites {
		n.eng.CloseWrites()
		// Their open transactions are rolled back.
		for _, o := range n.open {
			o.tx.Rollback()
		}
		for _, d := range n.deferred {
			d.tx.Rollback()
		}
		n.open, n.deferred = nil, nil
		n.dropStreams("demotion")
	}
	saved := true
	if rd.State != nil {
		if err := repl.SaveState(n.fs, n.stateDir(), *rd.State); err != nil {
			// The state file's write failed: the core goes back to the
			// state on disk; becoming primary does not take effect.
			w.tracef("%s cluster state not saved: %v", n.id, err)
			n.core.SaveFailed(err)
			saved = false
		} else {
			prev := n.st
			n.st = *rd.State
			n.noteLeader(prev)
			if s := n.st; s.Role == repl.RoleSecondary && s.Primary != "" && s.Primary != n.id && (s.Epoch != prev.Epoch || s.Primary != prev.Primary) {
				n.mustFollow = &followDue{primary: s.Primary, epoch: s.Epoch, since: w.now}
			}
		}
	}
	if rd.OpenWrites && saved {
		n.eng.OpenWrites(&storage.Writer{Epoch: n.st.Epoch, Node: n.id})
	}
	// Before the operations: the checkers take what the promotion decided
	// on before its catch-up and its cut change anything.
	for _, a := range rd.Answers {
		n.promoteAnswered(a)
	}
	for _, op := range rd.Ops {
		if n.eng == nil {
			return
		}
		if op.Kind == repl.OpMarkEpochs && !saved {
			continue
		}
		n.storageOp(op)
	}
	if n.eng == nil {
		return
	}
	for _, d := range rd.Dials {
		n.tracef("dial %s (%s) link %d", d.Addr, d.Kind, d.Link)
		if d.Kind == repl.LinkFollow {
			n.followLinks[d.Link] = true
		}
		w.net.dial(w, n.id, d)
	}
	for _, m := range rd.Msgs {
		if m.Type == repl.MsgVoteReply {
			n.checkVote(m)
		}
		if m.Type == repl.MsgAck {
			if a, err := repl.DecodeMsg(m.Type, m.Payload); err == nil {
				n.checkAck(a.(repl.AckMsg))
				w.recordAck(n.id, a.(repl.AckMsg))
			}
		}
		if m.Link == 0 {
			w.net.ask(w, n.id, m)
		} else {
			w.net.send(w, n.id, m.Link, m.Type, m.Payload)
		}
	}
	for _, l := range rd.Closes {
		w.net.close(w, n.id, l)
	}
	for _, r := range rd.Releases {
		if sw := n.waits[r.ID]; sw != nil {
			delete(n.waits, r.ID)
			n.syncEnded(sw, r.Result)
		}
	}
}

// storageOp carries out one storage operation; those of the follow link
// wait in the backlog while the node is slow, in order.
func (n *node) storageOp(op repl.Op) {
	switch op.Kind {
	case repl.OpAppend, repl.OpSeedBegin, repl.OpSeedChunk, repl.OpSeedInstall, repl.OpDrop, repl.OpAccounts, repl.OpLogBegin:
		if n.w.now < n.slowUntil || len(n.backlog) > 0 {
			n.backlog = append(n.backlog, op)
			return
		}
	}
	n.doOp(op)
}

// doOp does one storage operation and tells the core how it ended.
func (n *node) doOp(op repl.Op) {
	w := n.w
	if op.Kind != repl.OpAppend {
		n.applyWritten() // in order: what was written is applied first
		if n.eng == nil {
			return
		}
	}
	if n.followLinks[op.Link] && !n.core.Live(op.Link) {
		// The follow link ended while the operation waited: the server's
		// apply worker drops what it holds of a link that is gone.
		switch op.Kind {
		case repl.OpAppend:
			n.core.Appended(op.Link, op.DB, 0, errLinkBroken)
			return
		case repl.OpSeedInstall:
			n.core.SeedInstalled(op.Link, op.DB, 0, op.At, errLinkBroken)
			delete(n.seeds, strings.ToLower(op.DB))
			return
		case repl.OpSeedBegin, repl.OpSeedChunk, repl.OpDrop, repl.OpAccounts:
			n.core.OpDone(op.Link, op.DB, errLinkBroken)
			return
		case repl.OpLogBegin:
			n.core.LogBegun(op.Link, op.DB, errLinkBroken)
			return
		}
	}
	if n.ls != nil {
		switch op.Kind {
		case repl.OpAppend, repl.OpLogBegin, repl.OpSeedBegin, repl.OpSeedChunk, repl.OpSeedInstall, repl.OpSeedAbort:
			n.logStoreOp(op)
			return
		}
	}
	switch op.Kind {
	case repl.OpAppend:
		db, ok := n.eng.Database(op.DB)
		if !ok {
			w.violate("stream", fmt.Sprintf("%s: frames for missing database %s", n.id, op.DB))
			n.core.Appended(op.Link, op.DB, 0, storage.ErrNoDatabase)
			return
		}
		end, err := n.replica.Write(bg, op.DB, op.At, op.Data, op.Durable)
		if err != nil {
			if n.diskFailed(err) {
				return
			}
			// The server ends the link on any such error; a gap or a
			// stale epoch here means a stream or a catch-up from a point
			// not on this node's journal.
			w.violate("stream", fmt.Sprintf("%s: append to %s at %d: %v", n.id, op.DB, op.At, err))
		} else {
			n.noteStreamed(op.Link, db)
		}
		n.core.Appended(op.Link, op.DB, end, err)
		if err != nil {
			return
		}
		// Written and acknowledged; applied now, or, half the time, at
		// the end of the tick (the server's worker applies after it
		// acknowledged the write).
		n.unapplied = append(n.unapplied, op)
		if w.rng.IntN(2) == 0 {
			n.applyWritten()
		}
	case repl.OpSeedBegin:
		if db, ok := n.eng.Database(op.DB); ok && op.Quarantine {
			if !n.quarantine(db, op.Common, "re-seeded from the primary: "+op.Reason) {
				return
			}
		}
		n.seeds[strings.ToLower(op.DB)] = &bytes.Buffer{}
		n.core.OpDone(op.Link, op.DB, nil)
	case repl.OpSeedChunk:
		n.seeds[strings.ToLower(op.DB)].Write(op.Data)
		n.core.OpDone(op.Link, op.DB, nil)
	case repl.OpSeedInstall:
		buf := n.seeds[strings.ToLower(op.DB)]
		delete(n.seeds, strings.ToLower(op.DB))
		lsn, err := n.replica.Install(op.DB, bytes.NewReader(buf.Bytes()))
		if err != nil {
			if n.diskFailed(err) {
				return
			}
			w.violate("seed", fmt.Sprintf("%s: install %s: %v", n.id, op.DB, err))
			n.core.SeedInstalled(op.Link, op.DB, 0, op.At, err)
			return
		}
		if db, ok := n.eng.Database(op.DB); ok {
			n.noteStreamed(op.Link, db)
		}
		n.core.SeedInstalled(op.Link, op.DB, lsn, op.At, nil)
	case repl.OpSeedAbort:
		delete(n.seeds, strings.ToLower(op.DB))
	case repl.OpDrop:
		switch {
		case !n.replica.Has(op.DB):
		case op.Quarantine:
			if !n.setAside(op.DB, 0, "the primary does not have this database") {
				return
			}
		default:
			if err := n.replica.Drop(op.DB); err != nil {
				if n.diskFailed(err) {
					return
				}
				w.violate("drop", err.Error())
			}
		}
		n.core.OpDone(op.Link, op.DB, nil)
	case repl.OpAccounts:
		n.core.OpDone(op.Link, op.DB, nil)
	case repl.OpSnapshot:
		db, ok := n.eng.Database(op.DB)
		if !ok {
			n.core.SnapshotDone(op.Link, op.DB, 0, 0, storage.ErrNoDatabase)
			return
		}
		cw := &chunkWriter{core: n.core, link: op.Link, db: op.DB}
		lsn, err := db.WriteSnapshot(cw)
		if err == nil {
			err = cw.flush()
		}
		n.core.SnapshotDone(op.Link, op.DB, lsn, cw.sent, err)
	case repl.OpCutTails:
		n.cutTails()
	case repl.OpMarkEpochs:
		n.markEpochs()
	}
}

// applyWritten applies what the node wrote and has not applied yet.
func (n *node) applyWritten() {
	ops := n.unapplied
	n.unapplied = nil
	for _, op := range ops {
		if n.eng == nil {
			return
		}
		err := n.replica.Apply(op.DB)
		if err != nil {
			n.w.violate("stream", fmt.Sprintf("%s: apply of %s at %d: %v", n.id, op.DB, op.At, err))
		}
		n.core.Applied(op.Link, op.DB, err)
	}
}

// drainBacklog does the operations a slow node held, once it is no
// longer slow.
func (n *node) drainBacklog() {
	for len(n.backlog) > 0 && n.eng != nil && n.w.now >= n.slowUntil {
		op := n.backlog[0]
		n.backlog = n.backlog[1:]
		n.doOp(op)
	}
}

// chunkWriter hands a copy to the core in batch-sized chunks (the server
// sends 1 MiB ones).
type chunkWriter struct {
	core *repl.Core
	link repl.LinkID
	db   string
	buf  []byte
	sent int64
	gone bool
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	for len(c.buf) >= batch {
		if err := c.send(batch); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (c *chunkWriter) send(k int) error {
	if !c.gone && !c.core.SnapshotChunk(c.link, c.db, append([]byte(nil), c.buf[:k]...)) {
		c.gone = true
	}
	c.sent += int64(k)
	c.buf = c.buf[k:]
	return nil
}

func (c *chunkWriter) flush() error {
	if len(c.buf) > 0 {
		return c.send(len(c.buf))
	}
	return nil
}

// promote is SET GLOBAL cluster_role = 'primary' (or 'force_primary').
// stalled reports whether the node is stalled (Options.StallWeight).
func (n *node) stalled() bool { return n.w.now < n.stallUntil }

func (n *node) promote(force bool) {
	if n.stalled() {
		return
	}
	if err := n.core.Promote(force); err != nil {
		n.tracef("promotion refused: %v", err)
		return
	}
	n.force, n.elected = force, false
	n.tracef("promotion asked (force=%v)", force)
	n.handleReady()
}

// promoteAnswered: the core decided. Accepted, the checkers note what the
// promotion must keep: the rows of the peers it decided on (a controlled
// one), on the newest history among them.
func (n *node) promoteAnswered(a repl.PromoteAnswer) {
	if a.Err != nil {
		n.tracef("promotion refused: %v", a.Err)
		return
	}
	if n.core.Role() != repl.RolePromoting {
		return // already primary
	}
	n.w.res.Promotions++
	n.promoting = true
	n.promised = nil
	if !n.force && !n.w.opts.Raft {
		n.promised = n.rowsOnHistoryOf(n.core.PromotionAnswers())
	}
	n.elected = n.w.opts.Raft && !n.force
	n.tracef("promotion accepted (force=%v)", n.force)

}

// cutTails is OpCutTails, with the checks of a promotion that caught up:
// the confirmed writes and, for a controlled one, what the peers it
// decided on held.
func (n *node) cutTails() {
	n.before = n.committedRows()
	if n.promoting {
		held := maps.Clone(n.before)
		for k := range n.w.gone {
			held[k] = true
		}
		n.w.checkConfirmed(n, held, n.promised, n.force, n.elected)
		for _, k := range slices.Sorted(maps.Keys(n.promised)) {
			if !held[k] {
				n.w.violate("controlled promotion keeps what reachable peers hold", fmt.Sprintf("%s promoted without row %s that a reachable peer on its history holds", n.id, k))
			}
		}
	}
	for _, db := range n.eng.Databases() {
		_, err := db.CutTail(func(from journal.LSN, tail []byte) error {
			n.tracef("cut %d bytes of %s at %d", len(tail), db.Name(), from)
			// The tail holds no committed transaction: nothing to list in
			// quarantined.
			_, err := n.quar.Tail(n.keeper(), db, from, tail)
			return err
		})
		if err != nil {
			if !n.diskFailed(err) {
				n.w.violate("promotion", fmt.Sprintf("%s: cut tail of %s: %v", n.id, db.Name(), err))
				n.core.TailsCut(err)
			}
			return
		}
	}
	n.core.TailsCut(nil)
}

// markEpochs is OpMarkEpochs; what the promoted node had committed is
// still there after it (acknowledged and received writes survive).
func (n *node) markEpochs() {
	for _, db := range n.eng.Databases() {
		start := db.LSN()
		if err := db.MarkEpoch(bg); err != nil {
			if !n.diskFailed(err) {
				n.w.violate("promotion", fmt.Sprintf("%s: epoch mark in %s: %v", n.id, db.Name(), err))
			}
			return
		}
		n.recordLedger(db, start, db.LSN())
	}
	after := n.committedRows()
	for _, k := range slices.Sorted(maps.Keys(n.before)) {
		if !after[k] {
			n.w.violate("promotion keeps received writes", fmt.Sprintf("%s lost row %s at its promotion", n.id, k))
		}
	}
	n.promoting, n.promised, n.before = false, nil, nil
}

// demote is SET GLOBAL cluster_role = 'secondary': a primary's planned
// switchover, or a fenced node's return to service.
func (n *node) demote() {
	if n.stalled() {
		return
	}
	role := n.core.Role()
	if role != repl.RolePrimary && role != repl.RoleFenced {
		return
	}
	if err := n.core.Demote(); err != nil {
		n.w.violate("transition", fmt.Sprintf("%s: 'secondary' refused: %v", n.id, err))
	}
	n.handleReady()
}

// duties: the apply worker catches up once the node is no longer slow,
// then time passes for the core.
func (n *node) duties() {
	n.applyWritten()
	n.drainBacklog()
	if n.eng == nil {
		return
	}
	n.core.Tick()
	n.handleReady()
}

// syncEnded records how a client's wait ended.
func (n *node) syncEnded(sw *syncWait, r repl.SyncResult) {
	if r.Outcome != repl.SyncConfirmed {
		n.tracef("not confirmed %s at %s: %s", sw.row, sw.req.Level, r.Message)
		return
	}
	need := repl.SyncNeed(sw.req.Level, sw.req.Replicas, n.w.opts.Nodes)
	n.w.checkAcked(n, sw, need)
	by := ballot{epoch: n.st.Epoch, node: n.id}
	n.w.confirmed = append(n.w.confirmed, &confirmedWrite{row: sw.row, db: sw.db, lsn: sw.lsn, level: sw.req.Level, primary: n.id, by: by, tick: n.w.now})
	n.w.res.Confirmed++
	if sw.req.Level == repl.SyncMajority {
		n.w.res.MajorityConfirmed++
	}
	n.tracef("confirmed %s at %s (lsn %d)", sw.row, sw.req.Level, sw.lsn)
}

// checkAck is the checker "acknowledged only what is written": an ack
// says the journal holds the database up to Written (durably, with
// DurableAcks), and has applied up to Applied.
func (n *node) checkAck(a repl.AckMsg) {
	if n.ls != nil {
		n.checkLogStoreAck(a)
		return
	}
	db, ok := n.eng.Database(a.DB)
	if !ok {
		n.w.violate("acknowledged only what is written", fmt.Sprintf("%s acknowledges database %s, which it does not have", n.id, a.DB))
		return
	}
	have := db.Journal().End()
	if n.w.opts.DurableAcks {
		have = db.Journal().Durable()
	}
	if a.Written > have || a.Applied > db.LSN() {
		n.w.violate("acknowledged only what is written", fmt.Sprintf("%s acknowledges %s written to %d and applied to %d; its journal holds %d (durable: %v), applied %d",
			n.id, a.DB, a.Written, a.Applied, have, n.w.opts.DurableAcks, db.LSN()))
	}
}

// noteElection follows raft mode's campaigns and elections: a node that
// took over after an election is checked as a promotion is (its catch-up,
// then "confirmed writes survive an election"); a campaign started by a
// timeout goes to the checker "pre-vote".
func (n *node) noteElection() {
	if !n.w.opts.Raft || n.core == nil {
		return
	}
	if r := n.core.Role(); n.promoting && r != repl.RolePromoting && r != repl.RolePrimary {
		// The taking over was abandoned (a later term).
		n.promoting, n.promised, n.elected = false, nil, false
	}
	if n.core.Role() == repl.RolePromoting && !n.promoting {
		n.w.res.Promotions++
		n.promoting, n.promised, n.force, n.elected = true, nil, false, true
		n.tracef("elected: taking over")
	}
	e := n.core.Election()
	if e.Counts.Won > n.won {
		n.w.res.Elections += int(e.Counts.Won - n.won)
		n.won = e.Counts.Won
	}
	if e.Phase == "CANDIDATE" && e.Campaign > n.lastCampaign {
		n.lastCampaign = e.Campaign
		if !e.Transfer {
			n.w.checkPreVote(n, e.Campaign)
		}
	}
}

// noteLeader is the checker "one leader per term": a node that becomes
// primary by election takes a term no other node led (force_primary's
// terms aside, outside quorum by definition).
func (n *node) noteLeader(prev repl.State) {
	s := n.st
	if !n.w.opts.Raft || s.Role != repl.RolePrimary || prev.Role == repl.RolePrimary && prev.Epoch == s.Epoch {
		return
	}
	term := uint64(s.Epoch)
	if n.force {
		n.w.forcedTerms[term] = true
		return
	}
	if other, ok := n.w.leaders[term]; ok && other != n.id && !n.w.forcedTerms[term] {
		n.w.violate("one leader per term", fmt.Sprintf("%s and %s were both elected leader of term %d", other, n.id, term))
	}
	n.w.leaders[term] = n.id
}

// checkVote is the checker "vote rule" (§17.9.2): a vote is granted only
// to a candidate that has every database of the voter, each with a newest
// epoch mark at least the voter's own (read here from the voter's
// journals, not from the core).
func (n *node) checkVote(env repl.Envelope) {
	m, err := repl.DecodeMsg(env.Type, env.Payload)
	if err != nil {
		n.w.violate("vote rule", fmt.Sprintf("%s sends a vote answer that does not decode: %v", n.id, err))
		return
	}
	r := m.(repl.VoteReplyMsg)
	if !r.Granted || r.Pre {
		return
	}
	q, ok := n.asked[env.To]
	if !ok || q.Term != r.Term {
		n.w.violate("vote rule", fmt.Sprintf("%s grants a vote at term %d to %s, which did not ask for it", n.id, r.Term, env.To))
		return
	}
	cand := map[string]repl.Position{}
	for _, p := range q.DBs {
		cand[strings.ToLower(p.Name)] = p
	}
	for _, db := range n.eng.Databases() {
		mine := repl.DBInfoOf(db).RecvHist.Last()
		p, ok := cand[strings.ToLower(db.Name())]
		if !ok {
			n.w.violate("vote rule", fmt.Sprintf("%s votes for %s at term %d, which lacks database %s", n.id, env.To, r.Term, db.Name()))
			return
		}
		theirs := p.Hist.Last()
		if mine.Epoch > theirs.Epoch || mine.Epoch == theirs.Epoch && mine.Node > theirs.Node {
			n.w.violate("vote rule", fmt.Sprintf("%s votes for %s at term %d, whose newest mark on database %s (epoch %d by %s) is older than its own (epoch %d by %s)",
				n.id, env.To, r.Term, db.Name(), theirs.Epoch, theirs.Node, mine.Epoch, mine.Node))
			return
		}
	}
}
