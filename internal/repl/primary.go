package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/transport"
)

// serveIncoming handles a link a peer opened: a secondary subscribing, or
// a probe (which is also how a new primary announces its epoch).
func (n *Node) serveIncoming(ctx context.Context, c *transport.Conn) {
	rctx, cancel := context.WithTimeout(ctx, linkTimeout)
	f, err := c.Recv(rctx)
	cancel()
	if err != nil {
		return
	}
	switch f.Type {
	case msgSubscribe:
	case msgProbe:
		n.answerProbe(ctx, c, f.Payload)
		return
	case msgPositions:
		n.answerPositions(ctx, c)
		return
	case msgCatchUp:
		n.serveCatchUp(ctx, c, f.Payload)
		return
	default:
		n.log.Warn("Cluster: unexpected message from a peer, link closed", "peer", c.Peer().ID, "type", int(f.Type))
		return
	}
	d := &dec{b: f.Payload}
	epoch := Epoch(d.u())
	advertise := d.s()
	positions := d.list()
	if err := d.end(); err != nil {
		n.log.Warn("Cluster: malformed subscription, link closed", "peer", c.Peer().ID, "err", err)
		return
	}
	// A follower of a newer primary is proof of a newer epoch: a primary
	// that sees it is fenced.
	n.observeEpoch(c.Peer().ID, epoch, "", false)
	n.mu.Lock()
	role, st := n.mu.role, n.mu.state
	n.mu.Unlock()
	if role != RolePrimary || epoch > st.Epoch {
		e := &enc{}
		e.s(string(role))
		e.u(uint64(st.Epoch))
		e.s(st.Primary)
		sctx, cancel := context.WithTimeout(ctx, sendTimeout)
		c.Send(sctx, msgNotPrimary, e.b)
		cancel()
		return
	}
	n.serveFollower(ctx, c, advertise, positions, st.Epoch)
}

// send writes one message with a bounded wait.
func send(ctx context.Context, c *transport.Conn, typ transport.Type, payload []byte) error {
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	return c.Send(sctx, typ, payload)
}

// serveFollower streams every database to one secondary until the link
// closes or the node stops being the primary of epoch.
func (n *Node) serveFollower(ctx context.Context, c *transport.Conn, advertise string, positions []Position, epoch Epoch) {
	id := c.Peer().ID
	key := strings.ToLower(id)
	// Both ends of a stream accept the stream's frame limit: a 40 MiB row
	// is one frame.
	if err := c.SetMaxFrame(transport.MaxStreamFrameBytes); err != nil {
		return
	}
	f := &follower{id: id, conn: c, positions: map[string]*followerPos{}}
	for _, p := range positions {
		f.positions[strings.ToLower(p.Name)] = &followerPos{name: p.Name, baseID: p.BaseID, hist: p.Hist,
			sent: journal.LSN(p.LSN), written: journal.LSN(p.LSN), applied: journal.LSN(p.LSN)}
	}
	n.mu.Lock()
	n.mu.followers[key] = f
	n.mu.Unlock()
	n.setPeer(id, func(p *peerStatus) {
		p.addr, p.role, p.state, p.epoch, p.connectedSince, p.lastError = advertise, RoleSecondary, "CONNECTED", epoch, time.Now(), ""
	})
	n.log.Info(fmt.Sprintf("Cluster: secondary %s connected", id), "peer", id, "addr", c.Peer().Addr.String())

	lctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		c.Close()
		wg.Wait()
		n.mu.Lock()
		// A newer link of the same secondary (it reconnected before this
		// one noticed its end) owns the peer's row now.
		current := n.mu.followers[key] == f
		n.mu.Unlock()
		if current {
			n.setPeer(id, func(p *peerStatus) {
				p.state, p.connectedSince = "DISCONNECTED", time.Time{}
				if err := c.Err(); err != nil && !errors.Is(err, transport.ErrClosed) {
					p.lastError = err.Error()
				}
			})
		}
		n.log.Info(fmt.Sprintf("Cluster: secondary %s disconnected", id), "peer", id)
	}()

	e := &enc{}
	e.u(uint64(epoch))
	e.s(n.cfg.Node.ID)
	if err := send(lctx, c, msgWelcome, e.b); err != nil {
		return
	}
	acked := make(chan struct{}, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.readAcks(lctx, c, f, epoch, acked)
	}()

	var accountsVersion uint64
	var lastHeartbeat time.Time
	for lctx.Err() == nil && n.isPrimaryOf(epoch) {
		changed := n.st.Changed()
		n.mu.Lock()
		synced := n.mu.sync.syncedCh
		n.mu.Unlock()
		more, err := n.syncFollower(lctx, c, f, &accountsVersion)
		if err != nil {
			if lctx.Err() == nil {
				n.log.Error(fmt.Sprintf("Cluster: streaming to %s failed: %v", id, err), "peer", id)
				n.setPeer(id, func(p *peerStatus) { p.lastError = err.Error() })
			}
			return
		}
		if time.Since(lastHeartbeat) >= heartbeatInterval {
			if err := n.sendHeartbeat(lctx, c); err != nil {
				return
			}
			lastHeartbeat = time.Now()
		}
		if more {
			continue // a round was cut short: go on after the heartbeat
		}
		select {
		case <-lctx.Done():
		case <-c.Done():
			return
		case <-changed:
		case <-acked: // a window may have opened
		case <-synced:
			// A commit was confirmed to its client: announce SYNCED_LSN
			// now (§17.8.6), with the next heartbeat.
			lastHeartbeat = time.Time{}
		case <-time.After(heartbeatInterval):
		}
	}
}

// isPrimaryOf reports whether the node is still the primary of epoch.
func (n *Node) isPrimaryOf(epoch Epoch) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.role == RolePrimary && n.mu.state.Epoch == epoch
}

// view is what DecideStart needs of one of this primary's databases.
func view(db *storage.DB) DBView {
	return DBView{BaseID: db.Latest().BaseID(), Hist: db.History(), End: db.LSN(), Retained: db.Journal().Start()}
}

// syncFollower sends what the follower lacks, one bounded round: copies of
// databases it has not got (or whose journal is not on this primary's
// history), journal frames, drops, accounts. more reports a round cut
// short by its bounds.
func (n *Node) syncFollower(ctx context.Context, c *transport.Conn, f *follower, accountsVersion *uint64) (more bool, err error) {
	if n.opts.Accounts.Version != nil {
		// Version first, then the data: a change in between is sent
		// again at the next round, never lost.
		if v := n.opts.Accounts.Version() + 1; v != *accountsVersion {
			if err := send(ctx, c, msgAccounts, n.opts.Accounts.Data()); err != nil {
				return false, err
			}
			*accountsVersion = v
		}
	}
	dbs := n.st.Databases()
	present := map[string]bool{}
	for _, db := range dbs {
		key := strings.ToLower(db.Name())
		present[key] = true
		n.mu.Lock()
		p, ok := f.positions[key]
		n.mu.Unlock()
		if !ok || !p.decided {
			pos := Position{Name: db.Name()}
			if ok {
				pos = Position{Name: p.name, BaseID: p.baseID, Hist: p.hist, LSN: uint64(p.sent)}
			}
			d := DecideStart(view(db), pos)
			if d.Kind == StartSeed {
				if d.Rebootstrap {
					n.setPeer(f.id, func(ps *peerStatus) { ps.state = "REBOOTSTRAP_NEEDED" })
				}
				if err := n.seed(ctx, c, f, db, d); err != nil {
					return false, err
				}
				continue
			}
			n.mu.Lock()
			p.decided, p.hist = true, nil
			n.syncProgressLocked(key) // a secondary back at the end may lift a degraded state
			n.mu.Unlock()
		}
		n.mu.Lock()
		seeding := p.seeding
		n.mu.Unlock()
		if seeding {
			continue // installing the copy: nothing more until it says so
		}
		round := 0
		for {
			n.mu.Lock()
			sent, written := p.sent, p.written
			n.mu.Unlock()
			end := db.LSN()
			if sent >= end {
				break
			}
			if sent > written && sent-written >= maxInFlightBytes {
				break // the follower's database is behind: wait for its acks
			}
			if round >= maxRoundBytes {
				more = true
				break
			}
			frames, err := db.ReadCommitted(sent, maxBatchBytes)
			if err != nil {
				return false, err
			}
			e := &enc{}
			e.s(db.Name())
			e.u(uint64(sent))
			e.b = append(e.b, frames...)
			if err := send(ctx, c, msgFrames, e.b); err != nil {
				return false, err
			}
			round += len(frames)
			n.mu.Lock()
			p.sent += journal.LSN(len(frames))
			n.mu.Unlock()
		}
	}
	n.mu.Lock()
	var gone []*followerPos
	for key, p := range f.positions {
		if !present[key] {
			gone = append(gone, p)
		}
	}
	n.mu.Unlock()
	for _, p := range gone {
		// A database this primary never served on this link (the
		// follower subscribed with it) may hold writes nobody else has:
		// the follower keeps it in quarantine. One that was streamed and
		// dropped here is simply dropped.
		e := &enc{}
		e.s(p.name)
		e.flag(!p.decided)
		if err := send(ctx, c, msgDrop, e.b); err != nil {
			return false, err
		}
		n.mu.Lock()
		delete(f.positions, strings.ToLower(p.name))
		n.followerStateLocked(f) // the dropped one may have been a copy in progress
		n.mu.Unlock()
	}
	return more, nil
}

// followerStateLocked shows a connected secondary BOOTSTRAPPING while one
// of its databases is being copied, CONNECTED otherwise.
func (n *Node) followerStateLocked(f *follower) {
	ps, ok := n.mu.peers[strings.ToLower(f.id)]
	if !ok || n.mu.followers[strings.ToLower(f.id)] != f {
		return
	}
	state := "CONNECTED"
	for _, q := range f.positions {
		if q.seeding {
			state = "BOOTSTRAPPING"
		}
	}
	if ps.state == "CONNECTED" || ps.state == "BOOTSTRAPPING" || ps.state == "REBOOTSTRAP_NEEDED" {
		ps.state = state
	}
}

// chunkWriter sends what is written to it as SeedChunk messages.
type chunkWriter struct {
	ctx  context.Context
	c    *transport.Conn
	name string
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

func (w *chunkWriter) flush(n int) error {
	e := &enc{}
	e.s(w.name)
	e.b = append(e.b, w.buf[:n]...)
	if err := send(w.ctx, w.c, msgSeedChunk, e.b); err != nil {
		return err
	}
	w.sent += int64(n)
	w.buf = append(w.buf[:0], w.buf[n:]...)
	return nil
}

// seed sends a consistent copy of db; streaming resumes from its LSN once
// the follower acknowledges it.
func (n *Node) seed(ctx context.Context, c *transport.Conn, f *follower, db *storage.DB, d Start) error {
	key := strings.ToLower(db.Name())
	base := db.Latest().BaseID()
	p := &followerPos{name: db.Name(), baseID: base, decided: true, seeding: true}
	n.mu.Lock()
	f.positions[key] = p
	n.mu.Unlock()
	n.setPeer(f.id, func(p *peerStatus) { p.state = "BOOTSTRAPPING" })
	n.log.Info(fmt.Sprintf("Cluster: seeding of database %s for %s started (%s)", db.Name(), f.id, d.Reason), "peer", f.id, "database", db.Name())
	start := time.Now()

	e := &enc{}
	e.s(db.Name())
	e.by(base)
	e.flag(d.Quarantine)
	e.s(d.Reason)
	e.u(uint64(d.Common))
	// The LSN is known once the copy is taken; SeedEnd carries it.
	if err := send(ctx, c, msgSeedBegin, e.b); err != nil {
		return err
	}
	w := &chunkWriter{ctx: ctx, c: c, name: db.Name()}
	lsn, err := db.WriteSnapshot(w)
	if err != nil {
		return err
	}
	if len(w.buf) > 0 {
		if err := w.flush(len(w.buf)); err != nil {
			return err
		}
	}
	// The secondary has the copy once it says so (its first Ack with
	// written ≥ lsn): until then it is still installing it, BOOTSTRAPPING,
	// and its positions are not known. Recorded before SeedEnd goes out:
	// that ack can come back before this goroutine runs again.
	n.mu.Lock()
	p.sent = lsn
	n.mu.Unlock()
	e = &enc{}
	e.s(db.Name())
	e.u(uint64(lsn))
	if err := send(ctx, c, msgSeedEnd, e.b); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	n.log.Info(fmt.Sprintf("Cluster: seeding of database %s for %s finished: %d bytes in %.2f s", db.Name(), f.id, w.sent, secs),
		"peer", f.id, "database", db.Name(), "lsn", lsn, "bytes", w.sent)
	return nil
}

func (n *Node) sendHeartbeat(ctx context.Context, c *transport.Conn) error {
	var ps, synced []Position
	n.mu.Lock()
	confirmed := n.syncedLocked()
	n.mu.Unlock()
	for _, db := range n.st.Databases() {
		base := db.Latest().BaseID()
		ps = append(ps, Position{Name: db.Name(), BaseID: base, LSN: uint64(db.LSN())})
		if s, ok := confirmed[strings.ToLower(db.Name())]; ok {
			synced = append(synced, Position{Name: db.Name(), BaseID: base, LSN: uint64(s)})
		}
	}
	e := &enc{}
	e.list(ps)
	e.list(synced)
	return send(ctx, c, msgHeartbeat, e.b)
}

// readAcks records the follower's acknowledgements; a follower silent for
// linkTimeout (it answers every heartbeat) is cut.
func (n *Node) readAcks(ctx context.Context, c *transport.Conn, f *follower, epoch Epoch, acked chan<- struct{}) {
	for {
		rctx, cancel := context.WithTimeout(ctx, linkTimeout)
		m, err := c.Recv(rctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				n.log.Warn(fmt.Sprintf("Cluster: secondary %s: %v", f.id, linkError(err)), "peer", f.id)
			}
			c.Close()
			return
		}
		if m.Type == msgKeepalive {
			continue
		}
		if m.Type != msgAck {
			n.log.Warn("Cluster: unexpected message from a secondary, link closed", "peer", f.id, "type", int(m.Type))
			c.Close()
			return
		}
		d := &dec{b: m.Payload}
		name, base, ackEpoch, written, applied := d.s(), d.by(), Epoch(d.u()), journal.LSN(d.u()), journal.LSN(d.u())
		if err := d.end(); err != nil {
			n.log.Warn("Cluster: malformed acknowledgement, link closed", "peer", f.id, "err", err)
			c.Close()
			return
		}
		n.mu.Lock()
		p, ok := f.positions[strings.ToLower(name)]
		// An ack for another incarnation of the database (a copy being
		// replaced) or of another epoch says nothing about this stream.
		ok = ok && bytes.Equal(p.baseID, base) && ackEpoch == epoch
		if ok && p.seeding && p.sent > 0 && written >= p.sent {
			// The first acknowledgement after a copy: it is installed.
			p.seeding = false
			n.followerStateLocked(f)
		}
		if ok && !p.seeding {
			if written > p.written {
				p.written = written
			}
			if applied > p.applied {
				p.applied = applied
				f.lastApply = time.Now()
			}
			n.syncProgressLocked(strings.ToLower(name))
		}
		n.mu.Unlock()
		select {
		case acked <- struct{}{}:
		default:
		}
	}
}

// linkError words a receive failure: a deadline is a silent peer.
func linkError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("nothing received for %s, link closed", linkTimeout)
	}
	return err
}
