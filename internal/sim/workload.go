package sim

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
)

// The workload of a simulated node: client writes of every kind the
// storage takes (one-row commits in place, transactions left open across
// other commits, row changes by key, deferred deletes, savepoints,
// reindexes, commits during a group write), and the records the checkers
// read (the ledger, the transactions a node holds).

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

// txKey names one transaction of one database incarnation: the stretch of
// journal from lsn to the end of its end frame, end, whose end frame the
// ballot epoch wrote (see eachTxIn).
type txKey struct {
	base     string
	lsn, end journal.LSN
	epoch    ballot
	sum      string
}

// clientWrite commits one row if the node takes writes, and records it.
func (n *node) clientWrite() {
	if n.stalled() {
		return
	}
	if n.eng.ReadOnly() {
		return
	}
	if role := n.core.Role(); role != repl.RolePrimary {
		n.w.violate("writer", fmt.Sprintf("%s takes writes in role %s", n.id, role))
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
	if n.beginStream(db, name) {
		return
	}
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
		if f := n.w.faulty; f != nil && f.commitStale {
			// A storage that does not look at what the change was worked
			// out on.
			c.Seen, _ = t.Get(seen)
		}
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
	rolledBack := false
	count := func(want int64, when string) {
		got := tx.Modified()
		if f := n.w.faulty; f != nil && f.countKeepsRolledBack && rolledBack {
			got++ // a count the rollback to a savepoint leaves as it was
		}
		if got != want {
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
	rolledBack = true
	count(1, "after ROLLBACK TO the savepoint between them")
	n.w.res.SavepointRollbacks++
	return true
}

// faultyStorage breaks on purpose a storage answer that the workload
// checks itself (TestCheckersFire).
type faultyStorage struct {
	// commitStale: CommitRow commits a change worked out on a row that
	// another commit has replaced since ("row commit").
	commitStale bool
	// countKeepsRolledBack: Tx.Modified still counts a change rolled back
	// to a savepoint ("tx change count").
	countKeepsRolledBack bool
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
		sw := &syncWait{row: fmt.Sprintf("%s/%v", name, id), db: name, base: db.Latest().BaseID(), lsn: lsn, req: req}
		n.w.nextWait++
		if res, waiting := n.core.WaitSync(n.w.nextWait, name, lsn, req); waiting {
			n.waits[n.w.nextWait] = sw
		} else {
			n.syncEnded(sw, res)
		}
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
	eachTx(db, from, to, func(lsn, end journal.LSN, sum string) {
		n.w.ledger[ledgerKey{base: base, lsn: lsn, epoch: endBallot(hist, end)}] = sum
	})
}

// ballot names who wrote a stretch of journal: the epoch and node of its
// mark (two nodes promoted apart may share an epoch, never a ballot).
type ballot struct {
	epoch epoch.Epoch
	node  string
}

func (b ballot) String() string { return fmt.Sprintf("%d/%s", b.epoch, b.node) }

// endBallot is the ballot that wrote the end frame of a transaction
// ending at end (its last byte's): the key of a transaction in the ledger.
// Not the ballot at its first byte: a new primary's epoch mark may follow
// frames of transactions the former one left open (storage/stream.go), in
// the stretch of journal eachTxIn reports as one transaction.
func endBallot(h history.History, end journal.LSN) ballot { return epochAt(h, end-1) }

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
	return eachTxIn(data, from, partial, fn)
}

// eachTxIn calls fn for each transaction that ends in data, the journal's
// bytes from LSN from (the first one left out when partial: the bytes
// start inside it), with a digest of its frames.
//
// A "transaction" here is the stretch of journal from the end of one end
// frame (commit or abort) to the end of the next: with streamed
// transactions (storage/stream.go) it holds the frames streamed meanwhile
// by transactions still open, interleaved, not only the frames of the
// transaction that ends it. The checkers compare these stretches byte for
// byte at the same position and ballot, which is as strict as comparing
// transactions: every byte before the last end frame is in one stretch,
// and one writer wrote each stretch, except that a new primary's epoch
// mark can follow frames another writer left open, which is why the
// ballot of a stretch is the one at its end frame (endBallot). Grouping
// frames by transaction id instead would not work where a journal starts
// (after a checkpoint) inside an open transaction: the frames of it
// before the start are in the checkpoint, not in the journal.
func eachTxIn(data []byte, from journal.LSN, partial bool, fn func(lsn, end journal.LSN, sum string)) error {
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

// dbView is what a node held of one database when it answered a
// promotion's question of positions: the controlled promotion that asked
// must keep those rows, not ones the node took in after it answered.
type dbView struct {
	base    []byte
	h       history.History
	end     journal.LSN // the journal's end, an unterminated tail included
	applied journal.LSN
	rows    []string
}

// views describes n's databases as they are.
func (n *node) views() map[string]dbView {
	out := map[string]dbView{}
	for _, db := range n.eng.Databases() {
		h, end := db.ReceivedHistory()
		v := dbView{base: db.Latest().BaseID(), h: h, end: end, applied: db.LSN()}
		if t, ok := db.Snapshot().Table(dbTable); ok {
			t.Scan(func(r *storage.Row) bool {
				v.rows = append(v.rows, fmt.Sprintf("%s/%v", db.Name(), r.Value(0)))
				return true
			})
		}
		out[db.Name()] = v
	}
	return out
}

// rowsOnHistoryOf returns the committed rows a controlled promotion must
// keep: per database, those of the nodes (this one, and the peers it
// decided on as they answered) whose journals are prefixes of the most
// up-to-date journal among them (the newest epoch mark, then the
// longest). Rows on older branches are superseded; they go to quarantine
// when their node follows again.
func (n *node) rowsOnHistoryOf(answers []repl.PeerState) map[string]bool {
	out := map[string]bool{}
	mine := n.views()
	for _, name := range slices.Sorted(maps.Keys(mine)) {
		all := []dbView{mine[name]}
		for _, a := range answers {
			if pv, ok := n.answered[a.ID][name]; ok && bytes.Equal(pv.base, mine[name].base) {
				all = append(all, pv)
			}
		}
		best := all[0]
		for _, c := range all[1:] {
			cl, bl := c.h.Last(), best.h.Last()
			if cl.Epoch > bl.Epoch || (cl.Epoch == bl.Epoch && (cl.Node > bl.Node || (cl.Node == bl.Node && c.end > best.end))) {
				best = c
			}
		}
		for _, c := range all {
			if history.Match(best.h, best.end, c.h, c.end).Kind != history.OnHistory || c.applied > best.end {
				continue
			}
			for _, r := range c.rows {
				out[r] = true
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

// quarantine moves a database aside through the server's code, and
// records the transactions it held. It reports false if a disk fault
// failed it (the node restarted).
func (n *node) quarantine(db *storage.DB, from journal.LSN, reason string) bool {
	if n.quarantined == nil {
		n.quarantined = map[txKey]string{}
	}
	base, hist := fmt.Sprintf("%x", db.Latest().BaseID()), db.History()
	// From the journal's start, its first transaction included: if the
	// journal starts inside one, what is listed for it matches nothing.
	start, applied := db.Journal().Start(), db.LSN()
	var listed []txKey
	eachTx(db, start, applied, func(lsn, end journal.LSN, sum string) {
		listed = append(listed, txKey{base: base, lsn: lsn, end: end, epoch: endBallot(hist, end), sum: sum})
	})
	dest, err := n.replica.SetAside(db.Name(), from, reason)
	// A folder is returned once the database is in it, even if its
	// report could not be written.
	if dest != "" {
		for _, k := range listed {
			n.quarantined[k] = dest
		}
		// Below the journal's start, a transaction the node held is in
		// the checkpoints moved aside with it (a checkpoint let that part
		// of the journal go before the divergence was known; the report
		// says so): counted if a checkpoint in the folder is past it.
		newest := newestCheckpoint(dest)
		for k := range n.held {
			if k.base == base && k.lsn < start && k.lsn < applied && k.lsn < newest && endBallot(hist, k.end) == k.epoch {
				n.quarantined[k] = dest
			}
		}
	}
	if err != nil {
		if !n.diskFailed(err) {
			n.w.violate("quarantine", err.Error())
		}
		return false
	}
	n.tracef("quarantine %s (%s)", db.Name(), strings.SplitN(reason, ":", 2)[0])
	return true
}

// inQuarantine reports whether k was moved to a quarantine folder that
// is still on disk.
func (n *node) inQuarantine(k txKey) bool {
	dir, ok := n.quarantined[k]
	if !ok {
		return false
	}
	_, err := os.Stat(dir)
	return err == nil
}

// keeper is the node's place, for a quarantine report.
func (n *node) keeper() repl.Keeper { return repl.Keeper{Epoch: n.st.Epoch, Primary: n.st.Primary} }

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
