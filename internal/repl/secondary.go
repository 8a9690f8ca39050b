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

	"github.com/miraj-db/miraj/internal/config"
	epochpkg "github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/transport"
)

// maxQueuedMessages bounds the messages waiting for one database's apply
// worker on a secondary. With the primary's in-flight window
// (maxInFlightBytes in 1 MiB batches) a stream never fills it; a full queue
// holds the receive loop back (backpressure) rather than growing.
const maxQueuedMessages = 64

// followOnce finds the primary among the seeds and follows it until the
// link breaks or ctx ends (a promotion cancels it).
func (n *Node) followOnce(ctx context.Context) {
	for _, addr := range n.cfg.Peers() {
		if ctx.Err() != nil {
			return
		}
		c, err := n.tr.Dial(ctx, "", addr)
		if err != nil {
			n.setPeerByAddr(addr, "UNREACHABLE")
			continue
		}
		n.follow(ctx, c, addr)
		c.Close()
		if ctx.Err() != nil {
			return
		}
	}
}

// follow subscribes on c and applies what the primary sends.
func (n *Node) follow(ctx context.Context, c *transport.Conn, addr string) {
	id := c.Peer().ID
	if err := c.SetMaxFrame(transport.MaxStreamFrameBytes); err != nil {
		return
	}
	var ps []Position
	for _, db := range n.st.Databases() {
		h, end := db.ReceivedHistory()
		ps = append(ps, Position{Name: db.Name(), BaseID: db.Latest().BaseID(), Hist: h, LSN: uint64(end)})
	}
	e := &enc{}
	e.u(uint64(n.Epoch()))
	e.s(n.cfg.Node.Advertise)
	e.list(ps)
	if err := send(ctx, c, msgSubscribe, e.b); err != nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, linkTimeout)
	m, err := c.Recv(rctx)
	cancel()
	if err != nil {
		return
	}
	d := &dec{b: m.Payload}
	switch m.Type {
	case msgNotPrimary:
		role, epoch, primary := Role(d.s()), Epoch(d.u()), d.s()
		if d.end() == nil {
			n.setPeer(id, func(p *peerStatus) { p.addr, p.role, p.epoch, p.state = addr, role, epoch, "REACHABLE" })
			n.observeEpoch(id, epoch, primary, false)
		}
		return
	case msgWelcome:
	default:
		n.log.Warn("Cluster: unexpected message from a peer, link closed", "peer", id, "type", int(m.Type))
		return
	}
	epoch, primary := Epoch(d.u()), d.s()
	if err := d.end(); err != nil {
		n.log.Warn("Cluster: malformed welcome, link closed", "peer", id, "err", err)
		return
	}
	if epoch < n.Epoch() {
		n.log.Error(fmt.Sprintf("Cluster: %s announces epoch %d, older than ours (%d): not followed", id, epoch, n.Epoch()), "peer", id)
		return
	}
	if v := epochpkg.Check(n.Epoch(), epoch, true); v.Ignored() {
		n.log.Warn("Cluster: " + epochpkg.Message(v, n.Epoch(), epoch, id))
		return
	}
	if err := n.transition(State{Role: RoleSecondary, Epoch: epoch, Primary: primary}, "following "+primary); err != nil {
		n.log.Error(fmt.Sprintf("Cluster: not following %s: %v", id, err), "peer", id)
		return
	}
	n.setPeer(id, func(p *peerStatus) {
		p.addr, p.role, p.epoch, p.state, p.connectedSince, p.lastError = addr, RolePrimary, epoch, "CONNECTED", time.Now(), ""
	})
	n.log.Info(fmt.Sprintf("Cluster: following primary %s (epoch %d) at %s", id, epoch, addr), "peer", id)
	err = n.receive(ctx, c, epoch, primary)
	n.setPeer(id, func(p *peerStatus) {
		p.state, p.connectedSince = "DISCONNECTED", time.Time{}
		if err != nil && ctx.Err() == nil {
			p.lastError = err.Error()
		}
	})
	if err != nil && ctx.Err() == nil {
		n.log.Error(fmt.Sprintf("Cluster: replication from %s stopped: %v", id, err), "peer", id)
		n.mu.Lock()
		n.mu.lastError = err.Error()
		n.mu.Unlock()
	} else {
		n.log.Info(fmt.Sprintf("Cluster: disconnected from primary %s", id), "peer", id)
	}
}

// seedFile is where a copy being received is written.
func (n *Node) seedFile(db string) string {
	return filepath.Join(n.opts.StateDir, "seed-"+storage.DirName(db)+".part")
}

// applyWorker applies one database's messages in order, apart from the
// other databases': a copy being installed, a large transaction or DDL in
// one database does not hold back another's frames.
type applyWorker struct {
	name string
	q    chan transport.Frame
	// primary: the link's primary, as its welcome named it (the node's
	// state names the same).
	primary string
	// seed: the copy being received (owned by the worker's goroutine).
	seed *os.File
}

// receive reads the primary's messages until the link fails, handing each
// database's to its worker; ctx's end, a worker's failure or a silent link
// (linkTimeout) ends it, and every worker has exited when it returns.
func (n *Node) receive(ctx context.Context, c *transport.Conn, epoch Epoch, primary string) error {
	lctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	workers := map[string]*applyWorker{}
	defer func() {
		cancel(nil)
		for _, w := range workers {
			close(w.q)
		}
		wg.Wait()
	}()
	durable := n.cfg.Ack == config.AckDurable
	dispatch := func(name string, m transport.Frame) error {
		key := strings.ToLower(name)
		w, ok := workers[key]
		if !ok {
			if err := transport.CheckFileName(name); err != nil {
				return fmt.Errorf("database name %q refused: %w", name, err)
			}
			w = &applyWorker{name: name, q: make(chan transport.Frame, maxQueuedMessages), primary: primary}
			workers[key] = w
			wg.Add(1)
			go func() {
				defer wg.Done()
				n.runWorker(lctx, c, w, epoch, durable, cancel)
			}()
		}
		select {
		case w.q <- m:
			return nil
		case <-lctx.Done():
			return context.Cause(lctx)
		}
	}
	for {
		rctx, rcancel := context.WithTimeout(lctx, linkTimeout)
		m, err := c.Recv(rctx)
		rcancel()
		if err != nil {
			if cause := context.Cause(lctx); cause != nil && ctx.Err() == nil && !errors.Is(cause, context.Canceled) {
				return cause // a worker failed
			}
			if ctx.Err() != nil || errors.Is(err, transport.ErrClosed) {
				return nil
			}
			return linkError(err)
		}
		d := &dec{b: m.Payload}
		switch m.Type {
		case msgFrames, msgSeedBegin, msgSeedChunk, msgSeedEnd, msgDrop:
			name := d.s()
			if d.err != nil {
				return d.err
			}
			if err := dispatch(name, m); err != nil {
				return err
			}
		case msgHeartbeat:
			ps, synced := d.list(), d.list()
			if err := d.end(); err != nil {
				return err
			}
			n.mu.Lock()
			for _, p := range ps {
				n.mu.primaryLSN[strings.ToLower(p.Name)] = journal.LSN(p.LSN)
			}
			// The primary announces every database it confirmed a
			// commit of: what it does not list, it has not.
			clear(n.mu.sync.synced)
			for _, p := range synced {
				n.mu.sync.synced[strings.ToLower(p.Name)] = journal.LSN(p.LSN)
			}
			n.mu.Unlock()
			if err := send(lctx, c, msgKeepalive, nil); err != nil {
				return err
			}
		case msgAccounts:
			if n.opts.Accounts.Install != nil {
				if err := n.opts.Accounts.Install(m.Payload); err != nil {
					return fmt.Errorf("accounts: %w", err)
				}
			}
		default:
			return fmt.Errorf("%w: message type %#x", ErrProtocol, int(m.Type))
		}
	}
}

// dropSeed removes the copy being received, if any.
func (w *applyWorker) dropSeed(n *Node) {
	if w.seed == nil {
		return
	}
	w.seed.Close()
	os.Remove(w.seed.Name())
	w.seed = nil
	n.mu.Lock()
	n.mu.seeding--
	n.mu.Unlock()
}

// runWorker applies w's messages until its queue closes; a failure ends the
// whole link (fail), since the stream cannot skip a message.
func (n *Node) runWorker(ctx context.Context, c *transport.Conn, w *applyWorker, epoch Epoch, durable bool, fail context.CancelCauseFunc) {
	defer w.dropSeed(n)
	for m := range w.q {
		if ctx.Err() != nil {
			continue // drain: the link is ending
		}
		if err := n.applyMessage(ctx, c, w, m, epoch, durable); err != nil {
			if ctx.Err() == nil {
				fail(fmt.Errorf("database %s: %w", w.name, err))
			}
		}
	}
}

// applyMessage carries out one message for w's database.
func (n *Node) applyMessage(ctx context.Context, c *transport.Conn, w *applyWorker, m transport.Frame, epoch Epoch, durable bool) error {
	d := &dec{b: m.Payload}
	name := d.s()
	switch m.Type {
	case msgFrames:
		start := journal.LSN(d.u())
		frames := d.b
		if d.err != nil {
			return d.err
		}
		db, ok := n.st.Database(name)
		if !ok {
			return fmt.Errorf("%w: frames for unknown database %s", ErrProtocol, name)
		}
		end, err := db.AppendReplicated(ctx, start, frames, durable)
		if err != nil {
			return err
		}
		n.noteStreamed(db, epoch, w.primary)
		n.mu.Lock()
		n.mu.lastApply = time.Now()
		n.mu.Unlock()
		return n.ack(ctx, c, db, end, epoch)
	case msgSeedBegin:
		base, quarantine, reason, common := d.by(), d.flag(), d.s(), journal.LSN(d.u())
		if err := d.end(); err != nil {
			return err
		}
		_ = base
		if w.seed != nil {
			return fmt.Errorf("%w: a second copy begins inside the first", ErrProtocol)
		}
		if db, ok := n.st.Database(name); ok && quarantine {
			if err := n.quarantineDatabase(db, common, "re-seeded from the primary: "+reason); err != nil {
				return err
			}
		}
		f, err := os.Create(n.seedFile(name))
		if err != nil {
			return err
		}
		w.seed = f
		n.mu.Lock()
		n.mu.seeding++
		n.mu.Unlock()
		n.log.Info(fmt.Sprintf("Cluster: receiving a copy of database %s (%s)", name, reason), "database", name)
	case msgSeedChunk:
		if d.err != nil || w.seed == nil {
			return fmt.Errorf("%w: seed chunk out of place", ErrProtocol)
		}
		if _, err := w.seed.Write(d.b); err != nil {
			return err
		}
	case msgSeedEnd:
		lsn := journal.LSN(d.u())
		if err := d.end(); err != nil || w.seed == nil {
			return fmt.Errorf("%w: seed end out of place", ErrProtocol)
		}
		if _, err := w.seed.Seek(0, 0); err != nil {
			return err
		}
		db, err := n.st.InstallSeed(name, w.seed)
		w.dropSeed(n)
		if err != nil {
			return fmt.Errorf("installing the copy: %w", err)
		}
		if db.LSN() != lsn {
			return fmt.Errorf("copy at LSN %d, announced %d", db.LSN(), lsn)
		}
		n.noteStreamed(db, epoch, w.primary)
		n.log.Info(fmt.Sprintf("Cluster: copy of database %s installed at LSN %d", name, lsn), "database", name)
		return n.ack(ctx, c, db, db.Journal().End(), epoch)
	case msgDrop:
		quarantine := d.flag()
		if err := d.end(); err != nil {
			return err
		}
		db, ok := n.st.Database(name)
		switch {
		case !ok:
		case quarantine:
			if err := n.quarantineDatabase(db, 0, "the primary does not have this database"); err != nil {
				return err
			}
		default:
			if err := n.st.DropDatabase(name); err != nil && !errors.Is(err, storage.ErrNoDatabase) {
				return err
			}
			n.log.Info(fmt.Sprintf("Cluster: database %s dropped by the primary", name), "database", name)
		}
		n.mu.Lock()
		delete(n.mu.primaryLSN, strings.ToLower(name))
		n.mu.Unlock()
	}
	return nil
}

// ack tells the primary how far this node has written and applied a
// database, naming the database's identity and the epoch it follows.
func (n *Node) ack(ctx context.Context, c *transport.Conn, db *storage.DB, written journal.LSN, epoch Epoch) error {
	e := &enc{}
	e.s(db.Name())
	e.by(db.Latest().BaseID())
	e.u(uint64(epoch))
	e.u(uint64(written))
	e.u(uint64(db.LSN()))
	return send(ctx, c, msgAck, e.b)
}
