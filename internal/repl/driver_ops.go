package repl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
)

// The driver's storage operations: those of a database go to its apply
// worker, in order, apart from the other databases' (a copy being
// installed or a large transaction in one database does not hold back
// another's frames); a copy to send, the tails cut at promotion and the
// epoch marks run on goroutines of their own. Each posts its end to the
// loop.

// errLinkGone answers the operations of a follow link that ended before
// the worker came to them: they are dropped, as the core moved on.
var errLinkGone = errors.New("repl: the link ended before the operation")

// applyWorker applies one database's operations in order.
type applyWorker struct {
	n    *Node
	name string
	mu   struct {
		sync.Mutex
		q []queuedOp
	}
	wake chan struct{}
	quit chan struct{}
	// seed: the copy being received (owned by the worker's goroutine).
	seed *os.File
}

type queuedOp struct {
	op   Op
	link *driverLink // nil: the link is gone already
}

func (w *applyWorker) push(q queuedOp) {
	w.mu.Lock()
	w.mu.q = append(w.mu.q, q)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *applyWorker) stop() { close(w.quit) }

// storageOp carries out one of the core's storage operations.
func (n *Node) storageOp(op Op) {
	switch op.Kind {
	case OpAppend, OpSeedBegin, OpSeedChunk, OpSeedInstall, OpSeedAbort, OpDrop, OpLogBegin:
		n.worker(op.DB).push(queuedOp{op: op, link: n.links[op.Link]})
	case OpAccounts:
		var err error
		if n.opts.Accounts.Install != nil {
			if err = n.opts.Accounts.Install(op.Data); err != nil {
				err = fmt.Errorf("accounts: %w", err)
			}
		}
		n.core.OpDone(op.Link, "", err)
	case OpSnapshot:
		n.snapshot(op)
	case OpCutTails:
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			err := n.cutTails()
			n.post(func() { n.core.TailsCut(err) })
		}()
	case OpMarkEpochs:
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			for _, db := range n.st.Databases() {
				if err := db.MarkEpoch(n.ctx); err != nil {
					n.log.Error(fmt.Sprintf("Cluster: database %s: epoch mark: %v", db.Name(), err))
				}
			}
		}()
	}
}

// worker returns db's apply worker, started on first use.
func (n *Node) worker(db string) *applyWorker {
	key := strings.ToLower(db)
	if w, ok := n.workers[key]; ok {
		return w
	}
	w := &applyWorker{n: n, name: db, wake: make(chan struct{}, 1), quit: make(chan struct{})}
	n.workers[key] = w
	n.wg.Add(1)
	go w.run()
	return w
}

func (w *applyWorker) run() {
	defer w.n.wg.Done()
	defer w.dropSeed()
	for {
		w.mu.Lock()
		batch := w.mu.q
		w.mu.q = nil
		w.mu.Unlock()
		for _, q := range batch {
			select {
			case <-w.quit:
				return
			default:
			}
			w.do(q)
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-w.wake:
		case <-w.quit:
			return
		}
	}
}

// do carries out one operation and posts its end.
func (w *applyWorker) do(q queuedOp) {
	n, op := w.n, q.op
	if q.link != nil && q.link.kind == LinkFollow && q.link.dead.Load() {
		switch op.Kind {
		case OpAppend:
			n.post(func() { n.core.Appended(op.Link, op.DB, 0, errLinkGone) })
		case OpSeedInstall:
			w.dropSeed()
			n.post(func() { n.core.SeedInstalled(op.Link, op.DB, 0, op.At, errLinkGone) })
		case OpSeedAbort:
			w.dropSeed()
		case OpLogBegin:
			n.post(func() { n.core.LogBegun(op.Link, op.DB, errLinkGone) })
		default:
			n.post(func() { n.core.OpDone(op.Link, op.DB, errLinkGone) })
		}
		return
	}
	switch op.Kind {
	case OpAppend:
		if !n.replica.Has(op.DB) {
			err := fmt.Errorf("%w: frames for unknown database %s", ErrProtocol, op.DB)
			n.post(func() { n.core.Appended(op.Link, op.DB, 0, err) })
			return
		}
		// Written first, and acknowledged as such (RECEIVED), then applied.
		end, err := n.replica.Write(n.ctx, op.DB, op.At, op.Data, op.Durable)
		n.post(func() { n.core.Appended(op.Link, op.DB, end, err); n.noteCatchUp() })
		if err != nil {
			return
		}
		err = n.replica.Apply(op.DB)
		n.post(func() { n.core.Applied(op.Link, op.DB, err) })
	case OpSeedBegin:
		err := w.seedBegin(op)
		n.post(func() { n.core.OpDone(op.Link, op.DB, err) })
	case OpSeedChunk:
		var err error
		if w.seed == nil {
			err = fmt.Errorf("%w: seed chunk out of place", ErrProtocol)
		} else {
			_, err = w.seed.Write(op.Data)
			n.noteCopy(n.mon.copies.add(n.cfg.Node.ID, op.DB, int64(len(op.Data))))
		}
		n.post(func() { n.core.OpDone(op.Link, op.DB, err) })
	case OpSeedInstall:
		lsn, err := w.install(op)
		n.post(func() { n.core.SeedInstalled(op.Link, op.DB, lsn, op.At, err) })
	case OpSeedAbort:
		w.dropSeed()
	case OpDrop:
		err := w.drop(op)
		n.post(func() { n.core.OpDone(op.Link, op.DB, err) })
	case OpLogBegin:
		err := n.opts.LogStore.Begin(op.DB, op.BaseID, op.Hist, op.At, op.Quarantine, op.Common, op.Reason)
		n.post(func() { n.core.LogBegun(op.Link, op.DB, err) })
	}
}

// logStoreTrimInterval: how often a log-store node lets go of the journal
// its upstream and its followers no longer need.
const logStoreTrimInterval = 10 * time.Second

// trimLogStore removes, in each database of the log store, the journal
// before the core's retention floor.
func (n *Node) trimLogStore(ls *LogStore) {
	for _, db := range ls.Databases() {
		floor, ok := n.core.RetentionFloor(db)
		if !ok || floor <= db.Retained {
			continue
		}
		if err := ls.RemoveBefore(db.Name, floor); err != nil {
			n.log.Warn(fmt.Sprintf("Cluster: log store: database %s: removing the journal before LSN %d: %v", db.Name, floor, err))
		}
	}
}

// keeper is the node's place, for a quarantine report.
func (n *Node) keeper() Keeper { return Keeper{Epoch: n.Epoch(), Primary: n.PrimaryID()} }

// seedFile is where a copy being received is written (a scratch file,
// read back by InstallSeed: not state, so on the operating system's file
// system, whatever Options.FS is).
func (n *Node) seedFile(db string) string {
	return filepath.Join(n.opts.StateDir, "seed-"+storage.DirName(db)+".part")
}

func (w *applyWorker) seedBegin(op Op) error {
	n := w.n
	w.dropSeed()
	if _, ok := n.st.Database(op.DB); ok && op.Quarantine {
		if _, err := n.replica.SetAside(op.DB, op.Common, "re-seeded from the primary: "+op.Reason); err != nil {
			return err
		}
	}
	f, err := os.Create(n.seedFile(op.DB))
	if err != nil {
		return err
	}
	w.seed = f
	n.mon.copies.begin(n.cfg.Node.ID, op.DB, 0, false)
	return nil
}

func (w *applyWorker) install(op Op) (journal.LSN, error) {
	if w.seed == nil {
		return 0, fmt.Errorf("%w: seed end out of place", ErrProtocol)
	}
	if _, err := w.seed.Seek(0, 0); err != nil {
		return 0, err
	}
	lsn, err := w.n.replica.Install(op.DB, w.seed)
	w.dropSeed()
	return lsn, err
}

// dropSeed removes the copy being received, if any.
func (w *applyWorker) dropSeed() {
	if w.seed == nil {
		return
	}
	w.seed.Close()
	os.Remove(w.seed.Name())
	w.seed = nil
	w.n.mon.copies.end(w.n.cfg.Node.ID, w.name)
}

func (w *applyWorker) drop(op Op) error {
	n := w.n
	ok := n.replica.Has(op.DB)
	switch {
	case !ok:
	case op.Quarantine:
		_, err := n.replica.SetAside(op.DB, 0, "the primary does not have this database")
		return err
	default:
		if err := n.replica.Drop(op.DB); err != nil {
			return err
		}
		n.log.Info(fmt.Sprintf("Cluster: database %s dropped by the primary", op.DB), "database", op.DB)
	}
	return nil
}

// snapshot writes a copy of a database for a follower, in chunks the
// core sends on its link; it waits while the link has much queued.
func (n *Node) snapshot(op Op) {
	l := n.links[op.Link]
	db, ok := n.st.Database(op.DB)
	if l == nil || !ok {
		n.core.SnapshotDone(op.Link, op.DB, 0, 0, storage.ErrNoDatabase)
		return
	}
	var peer string
	if cl := n.core.links[op.Link]; cl != nil {
		peer = cl.peer
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		cw := &chunkWriter{n: n, l: l, op: op, peer: peer}
		lsn, err := db.WriteSnapshotSized(cw, func(total int64) { n.mon.copies.begin(peer, op.DB, total, true) })
		if err == nil {
			err = cw.flush(len(cw.buf))
		}
		if err != nil {
			n.mon.copies.end(peer, op.DB)
		} // else shown until the follower has installed it (monitor.go)
		n.post(func() { n.core.SnapshotDone(op.Link, op.DB, lsn, cw.sent, err) })
	}()
}

// chunkWriter hands what is written to it to the core as chunks.
type chunkWriter struct {
	n    *Node
	l    *driverLink
	op   Op
	peer string // the follower's id, for the progress (monitor.go)
	buf  []byte
	sent int64
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for len(w.buf) >= seedChunkBytes {
		if err := w.flush(seedChunkBytes); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (w *chunkWriter) flush(k int) error {
	if k == 0 {
		return nil
	}
	for {
		queued, space := w.l.queuedBytes()
		if queued < maxQueuedSendBytes {
			break
		}
		select {
		case <-space:
		case <-w.n.ctx.Done():
			return w.n.ctx.Err()
		}
	}
	if w.l.dead.Load() {
		return errLinkGone
	}
	chunk := append([]byte(nil), w.buf[:k]...)
	gone := false
	if !w.n.call(context.Background(), func() { gone = !w.n.core.SnapshotChunk(w.op.Link, w.op.DB, chunk) }) || gone {
		return errLinkGone
	}
	w.sent += int64(k)
	w.n.noteCopy(w.n.mon.copies.add(w.peer, w.op.DB, int64(k)))
	w.buf = append(w.buf[:0], w.buf[k:]...)
	return nil
}

// cutTails cuts every database's unterminated tail into quarantine (a
// transaction of the former primary whose commit frame never came).
func (n *Node) cutTails() error {
	for _, db := range n.st.Databases() {
		cut, err := db.CutTail(func(from journal.LSN, tail []byte) error {
			_, err := n.quarantine.Tail(n.keeper(), db, from, tail)
			return err
		})
		if err != nil {
			return fmt.Errorf("database %s: %w", db.Name(), err)
		}
		if cut > 0 {
			n.log.Warn(fmt.Sprintf("Cluster: database %s: %d bytes of an unterminated transaction cut at LSN %d and kept in quarantine", db.Name(), cut, db.LSN()))
		}
	}
	return nil
}
