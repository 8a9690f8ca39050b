package sim

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
)

// node is one simulated server: a real storage engine, and the drivers'
// protocol written as message handlers over the server's pure decisions.
type node struct {
	w   *world
	id  string
	dir string
	eng *storage.Engine // nil while down

	// snaps: snapshots of the simulated table this node's writers hold
	// (Options.HeldSnapshots), with what they read when taken.
	snaps []heldSnapshot

	// st is what the server persists (cluster-state.json survives a crash:
	// it is written atomically and fsync'd); role is the live role.
	st   repl.State
	role repl.Role

	// Follower side: the link to the node it subscribed to.
	link     int
	linkPeer string
	welcomed bool
	nextSeed int
	// peerEpoch: the highest epoch each peer showed.
	peerEpoch map[string]epoch.Epoch

	// Primary side.
	followers map[string]*follower
	openAt    int // a restarted primary takes writes from this tick (0: open)
	// slowUntil: the node applies nothing before this tick; backlog holds
	// the frames it received meanwhile, in order.
	slowUntil int
	backlog   []message
	// waits: client writes waiting for semi-synchronous acks.
	waits []*syncWait
	// writing: the database a client write of this node is committing to
	// (Options.GroupWriteOverlap); overlap: the commit started during its
	// group write, joined before the client write returns.
	writing *storage.DB
	overlap *overlapCommit
	// synced: SYNCED_LSN per database (memory only): on a primary the
	// highest confirmed commit, on a secondary what its primary announced.
	synced map[string]syncedPos

	// held: committed, durable transactions of the node's journals, as of
	// the last check; quarantined: those moved to its quarantine.
	held        map[txKey]bool
	quarantined map[txKey]bool
	// streamed: per database, the primary whose stream last wrote to its
	// journal (frames or a copy), as the server's repl.Node keeps it for
	// its journal retention (memory only: a restart forgets it).
	streamed map[string]streamedFrom

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
}

// openTx is a client transaction written but not committed yet.
type openTx struct {
	tx *storage.Tx
	id int64
}

// deferredTx is a transaction begun without a snapshot
// (storage.DB.BeginDeferred) that deleted row id, read as seen.
type deferredTx struct {
	tx   *storage.Tx
	id   int64
	seen *storage.Row
}

type follower struct {
	link int
	pos  map[string]*fpos // by database name
	// announced: the SYNCED_LSN sent on this link, per database.
	announced map[string]journal.LSN
}

// syncWait is a client session waiting after its commit (§17.8).
type syncWait struct {
	row      string // the row it wrote: "db/id"
	db       string
	base     []byte
	lsn      journal.LSN
	req      repl.SyncRequest
	deadline int // tick
}

type syncedPos struct {
	base []byte
	lsn  journal.LSN
	by   ballot // the primary that confirmed it
}

type fpos struct {
	start         repl.Position // as subscribed
	base          []byte
	decided       bool
	seeding       bool
	sent, written journal.LSN
	applied       journal.LSN
}

// txKey names one transaction of one database incarnation.
type txKey struct {
	base  string
	lsn   journal.LSN
	epoch ballot
	sum   string
}

// Messages (bodies).
type (
	subscribeMsg struct {
		epoch     epoch.Epoch
		positions []repl.Position
	}
	notPrimaryMsg struct{ state repl.State }
	welcomeMsg    struct {
		epoch   epoch.Epoch
		primary string
	}
	framesMsg struct {
		db     string
		start  journal.LSN
		frames []byte
	}
	seedMsg struct {
		db         string
		quarantine bool
		reason     string
		copy       []byte
		lsn        journal.LSN
	}
	dropMsg struct {
		db         string
		quarantine bool
	}
	syncedMsg struct {
		db   string
		base []byte
		lsn  journal.LSN
		by   ballot
	}
	ackMsg struct {
		db               string
		base             []byte
		epoch            epoch.Epoch
		written, applied journal.LSN
	}
	probeMsg struct {
		state repl.State
		role  repl.Role
		reply bool
	}
)

func (n *node) tracef(format string, args ...any) { n.w.tracef(n.id+" "+format, args...) }

// start opens the node's engine (a first start or a restart after a crash).
func (n *node) start() error {
	eng, err := storage.Open(storage.Options{Root: n.dir, Policy: storage.SaveCommit, Bind: bind, SegmentBytes: n.w.opts.SegmentBytes, Logger: n.w.log,
		JournalFaults: n.w.diskFault, JournalDuringGroupWrite: n.duringGroupWrite, JournalDuringGather: n.duringGather,
		Now: n.w.clock, KeepBytes: n.w.opts.KeepBytes, JournalWrites: n.journalWrites()})
	if err != nil {
		return err
	}
	n.eng = eng
	n.role = n.st.Role
	n.link, n.linkPeer, n.welcomed = 0, "", false
	n.followers = map[string]*follower{}
	n.streamed = map[string]streamedFrom{}
	eng.SetRetention(n.retention)
	eng.CloseWrites()
	n.openAt = 0
	if n.role == repl.RolePrimary {
		// As the server: ask the peers first, take writes after.
		n.openAt = n.w.now + openAfter
		n.probeAll()
	}
	n.tracef("start role=%s epoch=%d", n.role, n.st.Epoch)
	return nil
}

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

// streamedFrom is a primary whose stream wrote to a database's journal.
type streamedFrom struct {
	epoch   repl.Epoch
	primary string
	base    []byte
}

// noteStreamed records that the stream of primary, the node's current
// one, wrote to db's journal.
func (n *node) noteStreamed(db *storage.DB, primary string) {
	n.streamed[db.Name()] = streamedFrom{epoch: n.st.Epoch, primary: primary, base: db.Latest().BaseID()}
}

// onPrimaryHistory reports whether the node knows db's journal to be on
// its current primary's history: that primary's stream wrote to it, in
// the current epoch, to this incarnation.
func (n *node) onPrimaryHistory(db *storage.DB) bool {
	s, ok := n.streamed[db.Name()]
	return ok && s.epoch == n.st.Epoch && s.primary == n.st.Primary && bytes.Equal(s.base, db.Latest().BaseID())
}

// retention is the server's journal retention (repl.Node.retentionFloor)
// for what a quarantine needs: a node that is not primary keeps its whole
// journal until its current primary's stream has written to it. The
// retention for followers and for a promoted peer's catch-up
// (journal_retention_mb, promotion_catchup_mb) is not modelled.
func (n *node) retention(db *storage.DB) (journal.LSN, bool) {
	if n.role != repl.RolePrimary && !n.onPrimaryHistory(db) {
		return 0, true
	}
	return 0, false
}

// checkpoint writes a checkpoint of each of the node's databases.
func (n *node) checkpoint() {
	for _, db := range n.eng.Databases() {
		start, kept := db.Journal().Start(), n.role != repl.RolePrimary && !n.onPrimaryHistory(db)
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

// crash stops the node as a power loss would.
func (n *node) crash() {
	n.tracef("crash")
	n.eng.Crash()
	n.eng = nil
	n.waits, n.synced, n.backlog, n.open, n.deferred = nil, nil, nil, nil, nil
	for _, id := range n.w.net.linkIDs() {
		if l := n.w.net.links[id]; l.a == n.id || l.b == n.id {
			n.w.net.breakLink(n.w, id)
		}
	}
}

func (n *node) linkBroken(id int) {
	if n.link == id {
		n.link, n.linkPeer, n.welcomed = 0, "", false
	}
	for fid, f := range n.followers {
		if f.link == id {
			delete(n.followers, fid)
		}
	}
}

func (n *node) peers() []string {
	var out []string
	for _, m := range n.w.nodes {
		if m.id != n.id {
			out = append(out, m.id)
		}
	}
	return out
}

func (n *node) probeAll() {
	for _, p := range n.peers() {
		n.w.net.send(n.w, n.id, p, 0, probeMsg{state: n.st, role: n.role})
	}
}

// transition is the server's: CheckTransition, persist, then effects.
func (n *node) transition(next repl.State, why string) error {
	if err := repl.CheckTransition(n.st, next); err != nil {
		return err
	}
	if n.st.Role == repl.RolePrimary && next.Role != repl.RolePrimary {
		n.eng.CloseWrites()
		for _, f := range n.followers {
			n.w.net.breakLink(n.w, f.link)
		}
		// The waiting sessions get 9004 (node no longer primary): not
		// confirmed. Their open transactions are rolled back.
		n.waits = nil
		for _, o := range n.open {
			o.tx.Rollback()
		}
		for _, d := range n.deferred {
			d.tx.Rollback()
		}
		n.open, n.deferred = nil, nil
	}
	n.st = next
	n.role = next.Role
	if next.Role == repl.RolePrimary {
		n.synced = nil // its own from now on (§17.8.6)
		n.eng.OpenWrites(&storage.Writer{Epoch: next.Epoch, Node: n.id})
	}
	n.tracef("state %s epoch %d primary %s (%s)", next.Role, next.Epoch, next.Primary, why)
	return nil
}

// observe is the server's observeEpoch.
func (n *node) observe(from string, e epoch.Epoch, primary string, followed bool) {
	if e > n.peerEpoch[from] {
		n.peerEpoch[from] = e
	}
	news, v := repl.JudgeEpoch(n.st, n.role, n.id, e, primary, followed)
	if v.Ignored() {
		return
	}
	switch news {
	case repl.NewsFence:
		if err := n.transition(repl.State{Role: repl.RoleFenced, Epoch: e, Primary: primary}, "fenced by "+from); err != nil {
			n.w.violate("transition", fmt.Sprintf("%s cannot be fenced: %v", n.id, err))
		}
	case repl.NewsAdopt:
		keep := n.st.Role
		if err := n.transition(repl.State{Role: keep, Epoch: e, Primary: primary}, "epoch from "+from); err != nil {
			return
		}
		if n.link != 0 && !followed {
			n.w.net.breakLink(n.w, n.link)
		}
	}
}

// clientWrite commits one row if the node takes writes, and records it.
func (n *node) clientWrite() {
	if n.eng.ReadOnly() {
		return
	}
	if n.role != repl.RolePrimary {
		n.w.violate("writer", fmt.Sprintf("%s takes writes in role %s", n.id, n.role))
		return
	}
	name := []string{"a", "b"}[n.w.rng.IntN(2)]
	if n.w.opts.GroupWriteOverlap {
		defer n.joinOverlap(name)
	}
	db, ok := n.eng.Database(name)
	if !ok {
		var err error
		if db, err = n.eng.CreateDatabase(name, nil); err != nil {
			if n.diskFailed(err) {
				return
			}
			n.w.violate("write", fmt.Sprintf("%s: create database %s: %v", n.id, name, err))
			return
		}
		n.recordLedger(db, 0, db.LSN())
		n.tracef("create database %s", name)
	}
	start := db.LSN()
	if n.w.opts.GroupWriteOverlap {
		n.writing = db // until joinOverlap
	}
	if _, ok := db.Latest().Table(dbTable); ok && n.w.opts.Reindex && n.open[name] == nil && n.w.rng.IntN(6) == 0 {
		n.reindex(db, name, start)
		return
	}
	if n.w.opts.RowChanges && n.open[name] == nil {
		if t, ok := db.Snapshot().Table(dbTable); ok && t.Len() > 0 && n.w.rng.IntN(3) == 0 {
			n.changeRow(db, name, start, t)
			return
		}
	}
	if n.w.opts.HeldSnapshots && n.w.rng.IntN(5) == 0 {
		n.holdSnapshot(db)
	}
	if t, ok := db.Latest().Table(dbTable); ok && n.open[name] == nil && n.w.rng.IntN(4) == 0 {
		// A one-row transaction committed on the committed table without
		// a working copy, as an autocommit statement by key is
		// (storage.DB.CommitRow); the table is read for its definition
		// only (storage.DB.Latest), as the server's compiled insert does,
		// so that the commit may change the trees in place.
		n.w.nextID++
		id := n.w.nextID
		inPlace := db.InPlaceCommits()
		lsn, err := db.CommitRow(storage.RowChange{Table: t, Kind: storage.OpInsert, Vals: n.w.rowValues(id, n.id)})
		written := db.Journal().Written()
		if db.InPlaceCommits() > inPlace {
			n.w.res.InPlace++
		}
		if err != nil {
			if !n.diskFailed(err) {
				n.w.violate("write", fmt.Sprintf("%s: row commit: %v", n.id, err))
			}
			return
		}
		n.checkAcknowledged(name, id, lsn, written)
		n.committedWrite(db, name, id, start, lsn)
		return
	}
	tx := db.Begin()
	if _, ok := tx.Table(dbTable); !ok {
		if err := tx.CreateTable(n.w.table()); err != nil {
			n.w.violate("write", err.Error())
			return
		}
	}
	n.w.nextID++
	id := n.w.nextID
	// Half the inserts are point writes, which stay pending until the
	// commit applies them (storage/pointwrite.go), as a compiled INSERT's
	// in a SQL transaction.
	insert := func() error { _, err := tx.Insert(dbTable, n.w.rowValues(id, n.id)); return err }
	if id%2 == 0 {
		t, _ := tx.Meta().Table(dbTable)
		insert = func() error { _, err := tx.InsertPoint(t, n.w.rowValues(id, n.id)); return err }
	}
	if err := insert(); err != nil {
		n.w.violate("write", err.Error())
		return
	}
	// Interleaved transactions: a quarter of the writes stay open until
	// the next write to the database commits them after its own. That
	// commit finds its table changed since its snapshot, so it checks and
	// applies its changes again, where a transaction alone adopts the
	// version of the table it built (storage.Tx.adoptable); the checker
	// "same rows" compares what both ways publish with what followers
	// replay from the journal.
	held := n.open[name]
	if held == nil && n.w.rng.IntN(4) == 0 {
		if n.open == nil {
			n.open = map[string]*openTx{}
		}
		n.open[name] = &openTx{tx: tx, id: id}
		n.tracef("write %s id=%d left open", name, id)
		return
	}
	if err := tx.Commit(bg); err != nil {
		if !n.diskFailed(err) {
			n.w.violate("write", fmt.Sprintf("%s: commit: %v", n.id, err))
		}
		return
	}
	lsn, _ := tx.Logged()
	n.committedWrite(db, name, id, start, lsn)
	if held != nil {
		delete(n.open, name)
		before, inPlace := db.LSN(), db.InPlaceCommits()
		err := held.tx.Commit(bg)
		if db.InPlaceCommits() > inPlace {
			n.w.res.TxInPlace++
		}
		switch {
		case errors.Is(err, storage.ErrConflict):
			// Both created the table: the later one conflicts.
			n.tracef("write %s id=%d (left open) conflicts: %v", name, held.id, err)
		case err != nil:
			if !n.diskFailed(err) {
				n.w.violate("write", fmt.Sprintf("%s: commit of a transaction left open: %v", n.id, err))
			}
		default:
			n.recordLedger(db, before, db.LSN())
			n.w.res.Writes++
			n.tracef("write %s id=%d (left open) lsn=%d..%d", name, held.id, before, db.LSN())
		}
	}
}

// changeRow updates or deletes a row of t, the committed table
// (Options.RowChanges): by its key with CommitRow, the row read from t or
// from the table as the last change read it, or in a transaction that
// moves the row to a new key or deletes it.
func (n *node) changeRow(db *storage.DB, name string, start journal.LSN, t *storage.Table) {
	if held := n.deferred[name]; held != nil {
		// A delete left open (deferredDelete) commits after this change.
		delete(n.deferred, name)
		defer n.commitDeferred(db, name, held)
	}
	read := t
	if old := n.readAt[name]; old != nil && n.w.rng.IntN(3) == 0 {
		read = old
	}
	if n.readAt == nil {
		n.readAt = map[string]*storage.Table{}
	}
	n.readAt[name] = t
	seen := nthRow(read, n.w.rng.IntN(max(read.Len(), 1)))
	if seen == nil {
		return
	}
	vals := seen.Values()
	id := vals[0].(int64)
	switch kind := n.w.rng.IntN(4); kind {
	case 0, 1:
		// By key, on the committed table: an update that keeps the key
		// (a new node and payload: the index over the node column may
		// move it), or a delete.
		c := storage.RowChange{Table: read, Seen: seen, Kind: storage.OpDelete}
		if kind == 0 {
			c.Kind, c.Vals = storage.OpUpdate, append([]any(nil), vals...)
			c.Vals[1], c.Vals[2] = n.id, payload(id+1+int64(n.w.rng.IntN(8)))
		}
		now, found := t.Get(seen)
		stale := !found || now != seen || t.Def() != read.Def()
		lsn, err := db.CommitRow(c)
		switch {
		case errors.Is(err, storage.ErrStale):
			n.w.res.StaleRefused++
			n.tracef("row change %s id=%d stale", name, id)
			return
		case err != nil:
			if !n.diskFailed(err) {
				n.w.violate("write", fmt.Sprintf("%s: row change: %v", n.id, err))
			}
			return
		case stale:
			n.w.violate("row commit", fmt.Sprintf("%s: database %s: a change of row %d worked out on a version another commit replaced was committed", n.id, name, id))
		}
		if c.Kind == storage.OpDelete {
			n.w.gone[fmt.Sprintf("%s/%v", name, id)] = true
		}
		n.w.res.RowChanges++
		n.committedWrite(db, name, id, start, lsn)
	case 3:
		if id%2 == 0 {
			n.deferredDelete(db, name, seen, id)
			return
		}
		fallthrough
	default:
		// In a transaction: the row moves to a new key, or goes.
		tx := db.Begin()
		var err error
		if kind == 2 {
			n.w.nextID++
			err = tx.Update(dbTable, vals, n.w.rowValues(n.w.nextID, n.id))
		} else {
			err = tx.Delete(dbTable, vals)
		}
		if err != nil {
			tx.Rollback() // read from an older table: the row is gone
			n.tracef("row change %s id=%d: %v", name, id, err)
			return
		}
		if n.w.rng.IntN(2) == 0 && !n.savepointRolledBack(tx, name) {
			tx.Rollback()
			return
		}
		if err := tx.Commit(bg); err != nil {
			if !n.diskFailed(err) {
				n.w.violate("write", fmt.Sprintf("%s: commit of a row change: %v", n.id, err))
			}
			return
		}
		lsn, _ := tx.Logged()
		n.w.gone[fmt.Sprintf("%s/%v", name, id)] = true
		n.w.res.RowChanges++
		n.committedWrite(db, name, id, start, lsn)
	}
}

// deferredDelete deletes row id (seen) by its key in a transaction
// without a snapshot (storage.DB.BeginDeferred), as a SQL transaction
// whose first statement is a compiled DELETE by key: it reads the newest
// committed row (Tx.Get) and leaves the delete pending. Half the time the
// transaction is left open, and the node's next row change to the
// database commits it after its own: other writes of the node come
// between its read and its commit, row changes among them. The checker "deferred
// write": its commit must fail (first committer wins) when a commit
// replaced the row since it was read; "same rows" and the ledger see the
// rest.
func (n *node) deferredDelete(db *storage.DB, name string, seen *storage.Row, id int64) {
	tx := db.BeginDeferred()
	t, ok := tx.Meta().Table(dbTable)
	if !ok {
		tx.Rollback()
		return
	}
	old, found, err := tx.Get(t, seen)
	if err != nil || !found {
		tx.Rollback() // gone, or the table redefined since
		n.tracef("deferred delete %s id=%d: found %v, %v", name, id, found, err)
		return
	}
	if err := tx.DeletePoint(t, old); err != nil {
		n.w.violate("write", fmt.Sprintf("%s: deferred delete: %v", n.id, err))
		return
	}
	d := &deferredTx{tx: tx, id: id, seen: old}
	if n.w.rng.IntN(2) == 0 {
		if n.deferred == nil {
			n.deferred = map[string]*deferredTx{}
		}
		n.deferred[name] = d
		n.tracef("deferred delete %s id=%d left open", name, id)
		return
	}
	n.commitDeferred(db, name, d)
}

// commitDeferred commits d, checking it against the committed row.
func (n *node) commitDeferred(db *storage.DB, name string, d *deferredTx) {
	if n.eng == nil {
		return // the change before it crashed the node: gone with it
	}
	replaced := false
	db.Read(func(cat *storage.Catalog) {
		t, ok := cat.Table(dbTable)
		if !ok {
			replaced = true
			return
		}
		cur, found := t.Get(d.seen)
		replaced = !found || cur != d.seen
	})
	start := db.LSN()
	err := d.tx.Commit(bg)
	switch {
	case errors.Is(err, storage.ErrConflict):
		n.w.res.DeferredConflicts++
		n.tracef("deferred delete %s id=%d conflicts: %v", name, d.id, err)
	case err != nil:
		if !n.diskFailed(err) {
			n.w.violate("write", fmt.Sprintf("%s: commit of a deferred delete: %v", n.id, err))
		}
	case replaced:
		n.w.violate("deferred write", fmt.Sprintf("%s: database %s: a delete of row %d worked out on a version another commit replaced since was committed", n.id, name, d.id))
	default:
		lsn, _ := d.tx.Logged()
		n.w.gone[fmt.Sprintf("%s/%v", name, d.id)] = true
		n.w.res.RowChanges++
		n.w.res.DeferredCommits++
		n.committedWrite(db, name, d.id, start, lsn)
	}
}

// savepointRolledBack takes a savepoint in tx (one row change made),
// inserts a row, and rolls back to the savepoint: the change count
// other sessions read (Tx.Modified, information_schema.INNODB_TRX) must
// follow, 1 then 2 then 1 again, and the commit that follows holds the
// first change only (checkSameRows and the ledger see the rest). It
// reports whether tx can go on.
func (n *node) savepointRolledBack(tx *storage.Tx, name string) bool {
	count := func(want int64, when string) {
		if got := tx.Modified(); got != want {
			n.w.violate("tx change count", fmt.Sprintf("%s: database %s: %d row changes counted %s, want %d", n.id, name, got, when, want))
		}
	}
	count(1, "after the first change")
	sp := tx.Savepoint()
	n.w.nextID++
	if _, err := tx.Insert(dbTable, n.w.rowValues(n.w.nextID, n.id)); err != nil {
		n.tracef("savepoint insert %s: %v", name, err)
		return false
	}
	count(2, "after a second one")
	tx.RollbackTo(sp)
	count(1, "after ROLLBACK TO the savepoint between them")
	n.w.res.SavepointRollbacks++
	return true
}

// nthRow returns the k-th row of t in key order, nil past its end.
func nthRow(t *storage.Table, k int) *storage.Row {
	var out *storage.Row
	t.Scan(func(r *storage.Row) bool {
		if k == 0 {
			out = r
			return false
		}
		k--
		return true
	})
	return out
}

// reindexSets are the sets of secondary indexes a reindex gives the table
// (Options.Reindex): none, one over either column, both, and one over the
// payload. Going from one to another keeps a tree only where the columns
// are the same. by_id, over an integer column, is an index of integers
// (storage/secondary.go) whose key moves with the row under
// Options.KeyLast; by_payload starts as one when the first row's payload
// is an integer and turns into an index of rows at the first payload of
// another kind (the payloads vary with the id: payload).
//
// Under Options.KeyLast a sixth set indexes the key column: its entries are
// the key twice, packed into one integer when the key is an int32
// (Options.IntKey, storage/entries.go), an index that stays one of
// integers through every write.
var reindexSets = [][]storage.IndexDef{
	nil,
	{{Name: "by_node", Cols: []int{1}}},
	{{Name: "by_id", Cols: []int{0}}},
	{{Name: "by_id", Cols: []int{0}}, {Name: "by_node", Cols: []int{1}}},
	{{Name: "by_payload", Cols: []int{2}}, {Name: "by_id", Cols: []int{0}}},
	{{Name: "by_key", Cols: []int{3}}, {Name: "by_node", Cols: []int{1}}},
}

// reindex commits a transaction that gives the table one of reindexSets.
func (n *node) reindex(db *storage.DB, name string, start journal.LSN) {
	def := *n.w.table()
	sets := reindexSets
	if !n.w.opts.KeyLast {
		sets = sets[:len(sets)-1] // no fourth column
	}
	def.Indexes = sets[n.w.rng.IntN(len(sets))]
	tx := db.Begin()
	if err := tx.Reindex(dbTable, &def); err != nil {
		n.w.violate("write", fmt.Sprintf("%s: reindex: %v", n.id, err))
		return
	}
	if err := tx.Commit(bg); err != nil {
		if !n.diskFailed(err) {
			n.w.violate("write", fmt.Sprintf("%s: commit of a reindex: %v", n.id, err))
		}
		return
	}
	n.recordLedger(db, start, db.LSN())
	n.tracef("reindex %s: %d indexes lsn=%d..%d", name, len(def.Indexes), start, db.LSN())
}

// committedWrite records a client write committed in [start, db.LSN())
// whose commit frame ends at lsn (0: not journaled), and the wait for
// secondaries its client asks for.
func (n *node) committedWrite(db *storage.DB, name string, id int64, start, lsn journal.LSN) {
	n.recordLedger(db, start, db.LSN())
	n.w.res.Writes++
	n.tracef("write %s id=%d lsn=%d..%d", name, id, start, db.LSN())
	if lsn == 0 {
		return
	}
	if req := n.w.syncRequest(); req.Level != repl.SyncOff {
		n.waits = append(n.waits, &syncWait{row: fmt.Sprintf("%s/%v", name, id), db: name, base: db.Latest().BaseID(),
			lsn: lsn, req: req, deadline: n.w.now + int(req.Timeout.Milliseconds())})
	}
}

// checkAcknowledged checks a one-row commit that returned ending the
// journal at lsn, which was written to written as it returned (before
// anything read the journal, which writes what is pending): a commit is
// acknowledged once an fsync covers it, and an fsync covers only the
// bytes handed to write(2) before it.
func (n *node) checkAcknowledged(name string, id int64, lsn, written journal.LSN) {
	if lsn > written {
		n.w.violate("acknowledged", fmt.Sprintf("%s: write %s id=%d acknowledged at LSN %d, its journal written to %d only", n.id, name, id, lsn, written))
	}
}

// recordLedger notes the transactions a primary appended in [from, to).
func (n *node) recordLedger(db *storage.DB, from, to journal.LSN) {
	base := fmt.Sprintf("%x", db.Latest().BaseID())
	hist := db.History()
	eachTx(db, from, to, func(lsn, _ journal.LSN, sum string) {
		n.w.ledger[ledgerKey{base: base, lsn: lsn, epoch: epochAt(hist, lsn)}] = sum
	})
}

// ballot names who wrote a stretch of journal: the epoch and node of its
// mark (two nodes promoted apart may share an epoch, never a ballot).
type ballot struct {
	epoch epoch.Epoch
	node  string
}

func (b ballot) String() string { return fmt.Sprintf("%d/%s", b.epoch, b.node) }

// epochAt is the ballot of the last mark at or before lsn.
func epochAt(h history.History, lsn journal.LSN) ballot {
	var b ballot
	for _, m := range h {
		if m.LSN <= lsn {
			b = ballot{m.Epoch, m.Node}
		}
	}
	return b
}

// eachTx calls fn with the LSN, end and checksum of each committed
// transaction of db's journal in [from, to). From before the journal's
// start, it begins there and leaves out the first transaction: a
// follower's segment can start inside one (segments roll as frames
// arrive), whose frames before it are gone.
func eachTx(db *storage.DB, from, to journal.LSN, fn func(lsn, end journal.LSN, sum string)) error {
	partial := false
	if start := db.Journal().Start(); from < start {
		from, partial = start, true
	}
	if from >= to {
		return nil
	}
	data, err := db.Journal().ReadBytes(from, to)
	if err != nil {
		return err
	}
	txStart := 0
	for pos := 0; pos < len(data); {
		typ, _, size, ok := journal.DecodeFrame(data[pos:])
		if !ok {
			return fmt.Errorf("bad frame at %d", from+journal.LSN(pos))
		}
		pos += size
		if typ.Ends() {
			if !partial {
				h := sha256.Sum256(data[txStart:pos])
				fn(from+journal.LSN(txStart), from+journal.LSN(pos), fmt.Sprintf("%x", h[:8]))
			}
			txStart, partial = pos, false
		}
	}
	return nil
}

// promote is the server's promotion: SET GLOBAL cluster_role = 'primary'
// (controlled: refused on repl.PromotionRefusals' reasons) or
// 'force_primary'.
func (n *node) promote(force bool) {
	// As the server: a probe round first, so the new epoch is above every
	// reachable peer's and the refusals are known.
	var answers []repl.PeerState
	for _, pid := range n.peers() {
		if p := n.w.byID[pid]; p.eng != nil && n.w.net.reachable(n.id, pid) {
			primary := p.st.Primary
			if p.role == repl.RolePrimary {
				primary = p.id
			}
			var flags uint64
			if p.role == repl.RoleSecondary && p.link != 0 && p.welcomed {
				flags = repl.FlagFollowing
			}
			answers = append(answers, repl.PeerState{ID: p.id, Role: p.role, Epoch: p.st.Epoch, Primary: p.st.Primary, Flags: flags})
			n.observe(pid, p.st.Epoch, primary, false)
		}
	}
	if n.role == repl.RolePrimary || (n.role == repl.RoleFenced && !force) {
		return
	}
	reasons := repl.PromotionRefusals(n.st, answers)
	var local []repl.LocalDB
	for _, db := range n.eng.Databases() {
		h, end := db.ReceivedHistory()
		local = append(local, repl.LocalDB{Name: db.Name(), BaseID: db.Latest().BaseID(), Hist: h, End: end})
	}
	var peerDBs []repl.PeerDatabases
	for _, a := range answers {
		pd := repl.PeerDatabases{ID: a.ID}
		for _, db := range n.w.byID[a.ID].eng.Databases() {
			h, end := db.ReceivedHistory()
			pd.DBs = append(pd.DBs, repl.PeerDB{Position: repl.Position{Name: db.Name(), BaseID: db.Latest().BaseID(), Hist: h, LSN: uint64(end)},
				Retained: db.Journal().Start()})
		}
		peerDBs = append(peerDBs, pd)
	}
	plan, catchUpRefusals := repl.PlanCatchUp(local, peerDBs)
	reasons = append(reasons, catchUpRefusals...)
	reasons = append(reasons, n.syncedRefusals(local, plan)...)
	if len(reasons) > 0 && !force {
		n.tracef("promotion refused: %s", strings.Join(reasons, "; "))
		return
	}
	// What the reachable peers on this node's history hold: a controlled
	// promotion must keep all of it (the catch-up brings what is missing).
	var promised map[string]bool
	if !force {
		promised = n.rowsOnHistoryOf(answers)
	}
	n.w.res.Promotions++
	n.tracef("promotion (force=%v)", force)
	if n.link != 0 {
		n.w.net.breakLink(n.w, n.link)
	}
	for _, st := range plan {
		peer, db := n.w.byID[st.Peer], (*storage.DB)(nil)
		pdb, _ := peer.eng.Database(st.DB)
		db, _ = n.eng.Database(st.DB)
		data, err := pdb.Journal().ReadBytes(st.From, st.To)
		if err == nil {
			_, err = db.AppendReplicated(bg, st.From, data, true)
		}
		if err != nil {
			if n.diskFailed(err) {
				return
			}
			n.w.violate("catch-up", fmt.Sprintf("%s from %s, database %s %d..%d: %v", n.id, st.Peer, st.DB, st.From, st.To, err))
			return
		}
		n.tracef("caught up %s from %s: %d bytes", st.DB, st.Peer, st.To-st.From)
	}
	before := n.committedRows()
	held := maps.Clone(before)
	for k := range n.w.gone {
		held[k] = true
	}
	n.w.checkConfirmed(n, held, promised, force)
	for k := range promised {
		if !held[k] {
			n.w.violate("controlled promotion keeps what reachable peers hold", fmt.Sprintf("%s promoted without row %s that a reachable peer on its history holds", n.id, k))
		}
	}
	for _, db := range n.eng.Databases() {
		_, err := db.CutTail(func(from journal.LSN, tail []byte) error {
			n.tracef("cut %d bytes of %s at %d", len(tail), db.Name(), from)
			return nil // the tail holds no committed transaction: nothing to list in quarantined
		})
		if err != nil {
			if !n.diskFailed(err) {
				n.w.violate("promotion", fmt.Sprintf("%s: cut tail of %s: %v", n.id, db.Name(), err))
			}
			return
		}
	}
	next := n.st.Epoch + 1
	for _, e := range n.peerEpoch {
		if e >= next {
			next = e + 1
		}
	}
	if err := n.transition(repl.State{Role: repl.RolePrimary, Epoch: next, Primary: n.id}, "promotion"); err != nil {
		n.tracef("promotion refused: %v", err)
		return
	}
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
	// What the promoted node had committed is still there (acknowledged
	// and received writes survive the promotion).
	after := n.committedRows()
	for k := range before {
		if !after[k] {
			n.w.violate("promotion keeps received writes", fmt.Sprintf("%s lost row %s at its promotion", n.id, k))
		}
	}
	n.probeAll() // the announcement
}

// rowsOnHistoryOf returns the committed rows a controlled promotion must
// keep: per database, those of the nodes (this one and the answering
// peers) whose journals are prefixes of the most up-to-date journal among
// them (the newest epoch mark, then the longest). Rows on older branches
// are superseded; they go to quarantine when their node follows again.
func (n *node) rowsOnHistoryOf(answers []repl.PeerState) map[string]bool {
	out := map[string]bool{}
	for _, db := range n.eng.Databases() {
		type cand struct {
			db   *storage.DB
			h    history.History
			end  journal.LSN
			last history.Mark
		}
		mh, mend := db.ReceivedHistory()
		all := []cand{{db, mh, mend, mh.Last()}}
		for _, a := range answers {
			pdb, ok := n.w.byID[a.ID].eng.Database(db.Name())
			if !ok || !bytes.Equal(db.Latest().BaseID(), pdb.Latest().BaseID()) {
				continue
			}
			ph, pend := pdb.ReceivedHistory()
			all = append(all, cand{pdb, ph, pend, ph.Last()})
		}
		best := all[0]
		for _, c := range all[1:] {
			if c.last.Epoch > best.last.Epoch || (c.last.Epoch == best.last.Epoch && (c.last.Node > best.last.Node || (c.last.Node == best.last.Node && c.end > best.end))) {
				best = c
			}
		}
		for _, c := range all {
			if history.Match(best.h, best.end, c.h, c.end).Kind != history.OnHistory || c.db.LSN() > best.end {
				continue
			}
			if t, ok := c.db.Snapshot().Table(dbTable); ok {
				t.Scan(func(r *storage.Row) bool {
					out[fmt.Sprintf("%s/%v", db.Name(), r.Value(0))] = true
					return true
				})
			}
		}
	}
	return out
}

func (n *node) committedRows() map[string]bool {
	out := map[string]bool{}
	for _, db := range n.eng.Databases() {
		if t, ok := db.Snapshot().Table(dbTable); ok {
			t.Scan(func(r *storage.Row) bool {
				out[fmt.Sprintf("%s/%v", db.Name(), r.Value(0))] = true
				return true
			})
		}
	}
	return out
}

// demote is SET GLOBAL cluster_role = 'secondary': a primary's planned
// switchover, or a fenced node's return to service.
func (n *node) demote() {
	if n.role != repl.RolePrimary && n.role != repl.RoleFenced {
		return
	}
	if err := n.transition(repl.State{Role: repl.RoleSecondary, Epoch: n.st.Epoch, Primary: n.st.Primary}, "secondary"); err != nil {
		n.w.violate("transition", fmt.Sprintf("%s: 'secondary' refused: %v", n.id, err))
	}
}

// duties: a secondary without a link subscribes; a primary serves its
// followers; probes go out every probeEvery ticks.
func (n *node) duties() {
	w := n.w
	if w.now >= n.slowUntil && len(n.backlog) > 0 {
		// Applying again: the queued frames, in order (those of a link
		// that broke meanwhile are dropped by receive).
		queued := n.backlog
		n.backlog = nil
		for _, m := range queued {
			if n.eng == nil {
				return
			}
			if m.link == 0 || w.net.links[m.link] != nil {
				n.receive(m)
			}
		}
		if n.eng == nil {
			return
		}
	}
	if n.openAt != 0 && w.now >= n.openAt {
		n.openAt = 0
		if n.role == repl.RolePrimary {
			n.eng.OpenWrites(&storage.Writer{Epoch: n.st.Epoch, Node: n.id})
		}
	}
	if n.role == repl.RoleSecondary && n.link == 0 {
		peers := n.peers()
		to := peers[n.nextSeed%len(peers)]
		n.nextSeed++
		if w.byID[to].eng != nil {
			if id := w.net.dial(n.id, to); id != 0 {
				n.link, n.linkPeer, n.welcomed = id, to, false
				var ps []repl.Position
				for _, db := range n.eng.Databases() {
					h, end := db.ReceivedHistory()
					ps = append(ps, repl.Position{Name: db.Name(), BaseID: db.Latest().BaseID(), Hist: h, LSN: uint64(end)})
				}
				w.net.send(w, n.id, to, id, subscribeMsg{epoch: n.st.Epoch, positions: ps})
			}
		}
	}
	if n.role == repl.RolePrimary && n.openAt == 0 {
		for _, fid := range sortedKeys(n.followers) {
			n.serve(fid, n.followers[fid])
		}
		n.settleWaits()
	}
	if w.now%probeEvery == 0 && (n.role != repl.RoleSecondary || n.link == 0) {
		n.probeAll()
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// serve is the server's syncFollower for one follower.
func (n *node) serve(fid string, f *follower) {
	w := n.w
	present := map[string]bool{}
	for _, db := range n.eng.Databases() {
		present[db.Name()] = true
		p, ok := f.pos[db.Name()]
		if !ok || !p.decided {
			start := repl.Position{Name: db.Name()}
			if ok {
				start = p.start
			}
			v := repl.DBView{BaseID: db.Latest().BaseID(), Hist: db.History(), End: db.LSN(), Retained: db.Journal().Start()}
			d := repl.DecideStart(v, start)
			if d.Kind == repl.StartSeed {
				var buf bytes.Buffer
				lsn, err := db.WriteSnapshot(&buf)
				if err != nil {
					w.violate("seed", err.Error())
					return
				}
				f.pos[db.Name()] = &fpos{base: db.Latest().BaseID(), decided: true, seeding: true, sent: lsn}
				w.net.send(w, n.id, fid, f.link, seedMsg{db: db.Name(), quarantine: d.Quarantine, reason: d.Reason, copy: buf.Bytes(), lsn: lsn})
				n.tracef("seed %s to %s at %d (%s)", db.Name(), fid, lsn, d.Reason)
				continue
			}
			p.decided, p.base = true, db.Latest().BaseID()
			p.sent, p.written, p.applied = journal.LSN(p.start.LSN), journal.LSN(p.start.LSN), journal.LSN(p.start.LSN)
		}
		if p.seeding {
			continue
		}
		for p.sent < db.LSN() && !(p.sent > p.written && p.sent-p.written >= journal.LSN(w.opts.Window)) {
			frames, err := db.ReadCommitted(p.sent, batch)
			if errors.Is(err, journal.ErrNotRetained) {
				// As the server: the session ends (no floor kept the
				// journal for this follower), and its next subscription
				// is answered with a copy.
				n.tracef("stream %s to %s at %d: not retained, link %d dropped", db.Name(), fid, p.sent, f.link)
				w.net.breakLink(w, f.link)
				return
			}
			if err != nil {
				w.violate("stream", fmt.Sprintf("%s: read %s at %d: %v", n.id, db.Name(), p.sent, err))
				return
			}
			w.net.send(w, n.id, fid, f.link, framesMsg{db: db.Name(), start: p.sent, frames: frames})
			p.sent += journal.LSN(len(frames))
		}
	}
	for _, name := range sortedKeys(n.synced) {
		if s := n.synced[name]; s.lsn > f.announced[name] {
			if f.announced == nil {
				f.announced = map[string]journal.LSN{}
			}
			f.announced[name] = s.lsn
			w.net.send(w, n.id, fid, f.link, syncedMsg{db: name, base: s.base, lsn: s.lsn, by: s.by})
		}
	}
	for _, name := range sortedKeys(f.pos) {
		if !present[name] {
			w.net.send(w, n.id, fid, f.link, dropMsg{db: name, quarantine: !f.pos[name].decided})
			delete(f.pos, name)
		}
	}
}

// receive handles one delivered message.
func (n *node) receive(m message) {
	w := n.w
	switch b := m.body.(type) {
	case probeMsg:
		primary := b.state.Primary
		if b.role == repl.RolePrimary {
			primary = m.from
		}
		n.observe(m.from, b.state.Epoch, primary, false)
		if !b.reply {
			w.net.send(w, n.id, m.from, 0, probeMsg{state: n.st, role: n.role, reply: true})
		}
	case subscribeMsg:
		n.observe(m.from, b.epoch, "", false)
		if n.role != repl.RolePrimary || b.epoch > n.st.Epoch || n.openAt != 0 {
			w.net.send(w, n.id, m.from, m.link, notPrimaryMsg{state: n.st})
			return
		}
		if old := n.followers[m.from]; old != nil && old.link != m.link {
			w.net.breakLink(w, old.link)
		}
		f := &follower{link: m.link, pos: map[string]*fpos{}}
		for _, p := range b.positions {
			f.pos[p.Name] = &fpos{start: p}
		}
		n.followers[m.from] = f
		w.net.send(w, n.id, m.from, m.link, welcomeMsg{epoch: n.st.Epoch, primary: n.id})
	case notPrimaryMsg:
		n.observe(m.from, b.state.Epoch, b.state.Primary, false)
		w.net.breakLink(w, m.link)
	case welcomeMsg:
		if m.link != n.link {
			return
		}
		if v := epoch.Check(n.st.Epoch, b.epoch, true); v.Ignored() || b.epoch < n.st.Epoch {
			w.net.breakLink(w, m.link)
			return
		}
		if n.role != repl.RoleSecondary {
			w.net.breakLink(w, m.link)
			return
		}
		if err := n.transition(repl.State{Role: repl.RoleSecondary, Epoch: b.epoch, Primary: b.primary}, "following "+b.primary); err != nil {
			w.net.breakLink(w, m.link)
			return
		}
		n.welcomed = true
		// The new link's primary announces its own SYNCED_LSN.
		n.synced = nil
	case framesMsg:
		if m.link != n.link {
			return
		}
		if n.w.now < n.slowUntil || len(n.backlog) > 0 {
			n.backlog = append(n.backlog, m)
			return
		}
		db, ok := n.eng.Database(b.db)
		if !ok {
			w.violate("stream", fmt.Sprintf("%s: frames for missing database %s", n.id, b.db))
			return
		}
		if _, err := db.AppendReplicated(bg, b.start, b.frames, w.opts.DurableAcks); err != nil {
			if n.diskFailed(err) {
				return
			}
			// The server ends the link on any such error; a gap or a
			// stale epoch here means the primary streamed from a point
			// not on the follower's journal.
			w.violate("stream", fmt.Sprintf("%s: append to %s at %d from %s: %v", n.id, b.db, b.start, m.from, err))
			return
		}
		n.noteStreamed(db, m.from)
		n.ack(m, db)
	case seedMsg:
		if m.link != n.link {
			return
		}
		if db, ok := n.eng.Database(b.db); ok && b.quarantine {
			n.quarantine(db, b.reason)
		}
		db, err := n.eng.InstallSeed(b.db, bytes.NewReader(b.copy))
		if err != nil {
			if n.diskFailed(err) {
				return
			}
			w.violate("seed", fmt.Sprintf("%s: install %s: %v", n.id, b.db, err))
			return
		}
		n.noteStreamed(db, m.from)
		n.ack(m, db)
	case dropMsg:
		if m.link != n.link {
			return
		}
		db, ok := n.eng.Database(b.db)
		switch {
		case !ok:
		case b.quarantine:
			n.quarantine(db, "the primary does not have it")
		default:
			if err := n.eng.DropDatabase(b.db); err != nil && !errors.Is(err, storage.ErrNoDatabase) {
				w.violate("drop", err.Error())
			}
		}
	case syncedMsg:
		if m.link != n.link {
			return
		}
		if n.synced == nil {
			n.synced = map[string]syncedPos{}
		}
		n.synced[b.db] = syncedPos{base: b.base, lsn: b.lsn, by: b.by}
	case ackMsg:
		f := n.followers[m.from]
		if f == nil || f.link != m.link {
			return
		}
		p := f.pos[b.db]
		if p == nil || !bytes.Equal(p.base, b.base) || b.epoch != n.st.Epoch {
			return
		}
		if p.seeding && b.written >= p.sent {
			p.seeding = false
		}
		if !p.seeding && b.written > p.written {
			p.written = b.written
		}
		if !p.seeding && b.applied > p.applied {
			p.applied = b.applied
		}
	}
}

func (n *node) ack(m message, db *storage.DB) {
	a := ackMsg{db: db.Name(), base: db.Latest().BaseID(), epoch: n.st.Epoch, written: db.Journal().End(), applied: db.LSN()}
	n.w.recordAck(n.id, a)
	n.w.net.send(n.w, n.id, m.from, m.link, a)
}

// quarantine moves a database aside as the server does, and records the
// transactions it held.
func (n *node) quarantine(db *storage.DB, reason string) {
	if n.quarantined == nil {
		n.quarantined = map[txKey]bool{}
	}
	base, hist := fmt.Sprintf("%x", db.Latest().BaseID()), db.History()
	// From the journal's start, its first transaction included: if the
	// journal starts inside one, what is listed for it matches nothing.
	start, applied := db.Journal().Start(), db.LSN()
	eachTx(db, start, applied, func(lsn, _ journal.LSN, sum string) {
		n.quarantined[txKey{base: base, lsn: lsn, epoch: epochAt(hist, lsn), sum: sum}] = true
	})
	dest := filepath.Join(n.dir+"-quarantine", fmt.Sprintf("%d-%s", n.w.now, db.Name()))
	os.MkdirAll(filepath.Dir(dest), 0o755)
	if err := n.eng.MoveAside(db.Name(), dest); err != nil {
		n.w.violate("quarantine", err.Error())
	}
	// Below the journal's start, a transaction the node held is in the
	// checkpoints moved aside with it (a checkpoint let that part of the
	// journal go before the divergence was known; the report says so):
	// counted if a checkpoint in the quarantine folder is past it.
	newest := newestCheckpoint(dest)
	for k := range n.held {
		if k.base == base && k.lsn < start && k.lsn < applied && k.lsn < newest && epochAt(hist, k.lsn) == k.epoch {
			n.quarantined[k] = true
		}
	}
	n.tracef("quarantine %s (%s)", db.Name(), strings.SplitN(reason, ":", 2)[0])
}

// newestCheckpoint returns the LSN of the newest checkpoint file in dir
// (0: none).
func newestCheckpoint(dir string) journal.LSN {
	if ckpts, _ := storage.Checkpoints(dir); len(ckpts) > 0 {
		return ckpts[0].LSN
	}
	return 0
}

// overlapCommit is a one-row commit started while a group write was under
// way (Options.GroupWriteOverlap).
type overlapCommit struct {
	db     *storage.DB
	id     int64
	before journal.LSN
	done   chan overlapResult
}

type overlapResult struct {
	lsn     journal.LSN
	written journal.LSN // the journal's written end as the commit returned
	err     error
}

// duringGroupWrite is the journals' DuringGroupWrite: while the group
// commit of this node's client write writes its bytes (its journal's
// append lock free), a third of the time another one-row commit appends to
// the same database, from a goroutine of its own, as a concurrent client's
// would. The write goes on once that commit has appended (or failed); the
// commit then waits for its fsync, and the client write joins it.
func (n *node) duringGroupWrite() {
	if !n.w.opts.GroupWriteOverlap || n.w.overlapping.Load() || n.writing == nil || n.overlap != nil {
		return // the overlapping commit's own group write, or not a client write
	}
	db := n.writing
	if db.Journal().SegmentFull() || n.w.wideRow(n.w.nextID+1) {
		// The next append rolls the segment, or this row's frame is
		// too large to be held back for the group's write: either
		// takes the append lock the group write holds, so a concurrent
		// commit would append after this write, not while the write
		// waits for it here.
		return
	}
	n.overlapCommit(db, 3)
}

// duringGather is the journals' DuringGather (Options.GatherJoin): when
// the group commit of this node's one-row client write is about to fsync
// (journal.Log.SyncToGathering), waiting for its group or not, half the
// time another one-row commit appends, as a client answered with the
// last group would come back; the group commit's fsync then covers both
// (the wait, if any, ends with that append), and the client write joins
// that commit as it joins one made during a group write.
func (n *node) duringGather() {
	if !n.w.opts.GatherJoin || n.w.overlapping.Load() || n.writing == nil || n.overlap != nil {
		return // the joining commit's own group commit, or not a client write
	}
	if n.overlapCommit(n.writing, 2) {
		n.w.res.GatherJoins++
	}
}

// overlapCommit starts, one time in odds, a one-row commit to db on a
// goroutine of its own, and returns once it has appended (or failed); it
// reports whether it started one.
func (n *node) overlapCommit(db *storage.DB, odds int) bool {
	t, ok := db.Snapshot().Table(dbTable)
	if !ok || n.w.rng.IntN(odds) != 0 {
		return false
	}
	n.w.nextID++
	o := &overlapCommit{db: db, id: n.w.nextID, before: db.LSN(), done: make(chan overlapResult, 1)}
	vals := n.w.rowValues(o.id, n.id)
	n.w.overlapping.Store(true)
	n.overlap = o
	go func() {
		lsn, err := db.CommitRow(storage.RowChange{Table: t, Kind: storage.OpInsert, Vals: vals})
		o.done <- overlapResult{lsn, db.Journal().Written(), err}
	}()
	for db.LSN() == o.before && len(o.done) == 0 {
		runtime.Gosched()
	}
	return true
}

// joinOverlap waits for the commit started during the client write's group
// write, and records it as the client write's own commits are.
func (n *node) joinOverlap(name string) {
	n.writing = nil
	o := n.overlap
	if o == nil {
		return
	}
	r := <-o.done
	n.overlap = nil
	n.w.overlapping.Store(false)
	switch {
	case n.eng == nil:
		// The client write's disk failure crashed the node meanwhile.
	case r.err != nil:
		if !n.diskFailed(r.err) {
			n.w.violate("write", fmt.Sprintf("%s: commit during a group write or gathering: %v", n.id, r.err))
		}
	default:
		n.tracef("write %s id=%d during a group write or gathering", name, o.id)
		n.checkAcknowledged(name, o.id, r.lsn, r.written)
		n.committedWrite(o.db, name, o.id, o.before, r.lsn)
	}
}

// heldSnapshot is a snapshot of the simulated table a writer keeps
// (Options.HeldSnapshots): the engine it came from, the table as the
// snapshot has it, what it read then, and when it was taken.
type heldSnapshot struct {
	eng  *storage.Engine
	t    *storage.Table
	rows string
	tick int
}

// holdSnapshotTicks is how long a writer keeps a snapshot.
const holdSnapshotTicks = 40

// holdSnapshot takes a snapshot of db's simulated table and keeps it.
func (n *node) holdSnapshot(db *storage.DB) {
	t, ok := db.Snapshot().Table(dbTable)
	if !ok {
		return
	}
	n.snaps = append(n.snaps, heldSnapshot{eng: n.eng, t: t, rows: rowsOf(t), tick: n.w.now})
	n.w.res.SnapshotsHeld++
	n.tracef("hold a snapshot of %s at lsn=%d", db.Name(), db.LSN())
}
