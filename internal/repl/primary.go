package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/transport"
)

// serveIncoming handles a link a peer opened: a secondary subscribing.
func (n *Node) serveIncoming(ctx context.Context, c *transport.Conn) {
	f, err := c.Recv(ctx)
	if err != nil {
		return
	}
	if f.Type != msgSubscribe {
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
	n.mu.Lock()
	role, st := n.mu.role, n.mu.state
	n.mu.Unlock()
	if role != RolePrimary || epoch > st.Epoch {
		e := &enc{}
		e.s(string(role))
		e.u(uint64(st.Epoch))
		e.s(st.Primary)
		c.Send(ctx, msgNotPrimary, e.b)
		return
	}
	n.serveFollower(ctx, c, advertise, positions)
}

// serveFollower streams every database to one secondary until the link
// closes or the node stops being primary.
func (n *Node) serveFollower(ctx context.Context, c *transport.Conn, advertise string, positions []dbPos) {
	id := c.Peer().ID
	key := strings.ToLower(id)
	f := &follower{id: id, positions: map[string]*followerPos{}}
	for _, p := range positions {
		f.positions[strings.ToLower(p.Name)] = &followerPos{name: p.Name, baseID: p.BaseID, sent: journal.LSN(p.LSN), written: journal.LSN(p.LSN), applied: journal.LSN(p.LSN)}
	}
	n.mu.Lock()
	epoch := n.mu.state.Epoch
	n.mu.followers[key] = f
	n.mu.Unlock()
	n.setPeer(id, func(p *peerStatus) {
		p.addr, p.role, p.state, p.epoch, p.connectedSince, p.lastError = advertise, RoleSecondary, "CONNECTED", epoch, time.Now(), ""
	})
	n.log.Info(fmt.Sprintf("Cluster: secondary %s connected", id), "peer", id, "addr", c.Peer().Addr.String())
	defer func() {
		n.setPeer(id, func(p *peerStatus) {
			p.state, p.connectedSince = "DISCONNECTED", time.Time{}
			if err := c.Err(); err != nil && !errors.Is(err, transport.ErrClosed) {
				p.lastError = err.Error()
			}
		})
		n.log.Info(fmt.Sprintf("Cluster: secondary %s disconnected", id), "peer", id)
	}()

	e := &enc{}
	e.u(uint64(epoch))
	e.s(n.cfg.Node.ID)
	if err := c.Send(ctx, msgWelcome, e.b); err != nil {
		return
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go n.readAcks(lctx, c, f)

	var accountsVersion uint64
	var lastHeartbeat time.Time
	for lctx.Err() == nil && n.Role() == RolePrimary {
		changed := n.st.Changed()
		if err := n.syncFollower(lctx, c, f, &accountsVersion); err != nil {
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
		select {
		case <-lctx.Done():
		case <-c.Done():
			return
		case <-changed:
		case <-time.After(heartbeatInterval):
		}
	}
}

// syncFollower sends what the follower lacks: copies of databases it has
// not got (or not this incarnation of, or too far behind), journal frames,
// drops, accounts.
func (n *Node) syncFollower(ctx context.Context, c *transport.Conn, f *follower, accountsVersion *uint64) error {
	if n.opts.Accounts.Version != nil {
		// Version first, then the data: a change in between is sent
		// again at the next round, never lost.
		if v := n.opts.Accounts.Version() + 1; v != *accountsVersion {
			if err := c.Send(ctx, msgAccounts, n.opts.Accounts.Data()); err != nil {
				return err
			}
			*accountsVersion = v
		}
	}
	dbs := n.st.Databases()
	present := map[string]bool{}
	for _, db := range dbs {
		key := strings.ToLower(db.Name())
		present[key] = true
		base := db.Snapshot().BaseID()
		n.mu.Lock()
		p, ok := f.positions[key]
		n.mu.Unlock()
		start := db.Journal().Start()
		if !ok || !bytes.Equal(p.baseID, base) || p.sent < start || p.sent > db.LSN() {
			reason := "no common history"
			switch {
			case ok && bytes.Equal(p.baseID, base) && p.sent < start:
				reason = fmt.Sprintf("position %d no longer retained (journal starts at %d)", p.sent, start)
				n.setPeer(f.id, func(ps *peerStatus) { ps.state = "REBOOTSTRAP_NEEDED" })
			case ok && bytes.Equal(p.baseID, base):
				reason = fmt.Sprintf("position %d beyond the primary's log end %d", p.sent, db.LSN())
			}
			if err := n.seed(ctx, c, f, db, reason); err != nil {
				return err
			}
			continue
		}
		for p.sent < db.LSN() {
			frames, err := db.ReadCommitted(p.sent, maxBatchBytes)
			if err != nil {
				return err
			}
			e := &enc{}
			e.s(db.Name())
			e.u(uint64(p.sent))
			e.b = append(e.b, frames...)
			if err := c.Send(ctx, msgFrames, e.b); err != nil {
				return err
			}
			n.mu.Lock()
			p.sent += journal.LSN(len(frames))
			n.mu.Unlock()
		}
	}
	for key, p := range f.positions {
		if present[key] {
			continue
		}
		e := &enc{}
		e.s(p.name)
		if err := c.Send(ctx, msgDrop, e.b); err != nil {
			return err
		}
		n.mu.Lock()
		delete(f.positions, key)
		n.mu.Unlock()
	}
	return nil
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
	if err := w.c.Send(w.ctx, msgSeedChunk, e.b); err != nil {
		return err
	}
	w.sent += int64(n)
	w.buf = append(w.buf[:0], w.buf[n:]...)
	return nil
}

// seed sends a consistent copy of db; streaming resumes from its LSN.
func (n *Node) seed(ctx context.Context, c *transport.Conn, f *follower, db *storage.DB, reason string) error {
	key := strings.ToLower(db.Name())
	base := db.Snapshot().BaseID()
	n.mu.Lock()
	f.positions[key] = &followerPos{name: db.Name(), baseID: base, seeding: true}
	n.mu.Unlock()
	n.setPeer(f.id, func(p *peerStatus) { p.state = "BOOTSTRAPPING" })
	n.log.Info(fmt.Sprintf("Cluster: seeding of database %s for %s started (%s)", db.Name(), f.id, reason), "peer", f.id, "database", db.Name())
	start := time.Now()

	e := &enc{}
	e.s(db.Name())
	e.by(base)
	// The LSN is known once the copy is taken; SeedEnd carries it.
	if err := c.Send(ctx, msgSeedBegin, e.b); err != nil {
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
	e = &enc{}
	e.s(db.Name())
	e.u(uint64(lsn))
	if err := c.Send(ctx, msgSeedEnd, e.b); err != nil {
		return err
	}
	// The secondary has the copy once it says so (its first Ack):
	// until then it is still installing it, BOOTSTRAPPING, and its
	// positions are not known.
	n.mu.Lock()
	f.positions[key] = &followerPos{name: db.Name(), baseID: base, sent: lsn, seeding: true}
	n.mu.Unlock()
	secs := time.Since(start).Seconds()
	n.log.Info(fmt.Sprintf("Cluster: seeding of database %s for %s finished: %d bytes in %.2f s", db.Name(), f.id, w.sent, secs),
		"peer", f.id, "database", db.Name(), "lsn", lsn, "bytes", w.sent)
	return nil
}

func (n *Node) sendHeartbeat(ctx context.Context, c *transport.Conn) error {
	var ps []dbPos
	for _, db := range n.st.Databases() {
		ps = append(ps, dbPos{Name: db.Name(), BaseID: db.Snapshot().BaseID(), LSN: uint64(db.LSN())})
	}
	e := &enc{}
	e.list(ps)
	return c.Send(ctx, msgHeartbeat, e.b)
}

// readAcks records the follower's acknowledgements.
func (n *Node) readAcks(ctx context.Context, c *transport.Conn, f *follower) {
	for {
		m, err := c.Recv(ctx)
		if err != nil {
			c.Close()
			return
		}
		if m.Type != msgAck {
			n.log.Warn("Cluster: unexpected message from a secondary, link closed", "peer", f.id, "type", int(m.Type))
			c.Close()
			return
		}
		d := &dec{b: m.Payload}
		name, written, applied := d.s(), journal.LSN(d.u()), journal.LSN(d.u())
		if err := d.end(); err != nil {
			n.log.Warn("Cluster: malformed acknowledgement, link closed", "peer", f.id, "err", err)
			c.Close()
			return
		}
		n.mu.Lock()
		p, ok := f.positions[strings.ToLower(name)]
		if ok && p.seeding && written >= p.sent {
			// The first acknowledgement after a copy: it is installed.
			p.seeding = false
			seeding := false
			for _, q := range f.positions {
				seeding = seeding || q.seeding
			}
			if ps, has := n.mu.peers[strings.ToLower(f.id)]; has && !seeding {
				ps.state = "CONNECTED"
			}
		}
		if ok && !p.seeding {
			if written > p.written {
				p.written = written
			}
			if applied > p.applied {
				p.applied = applied
				f.lastApply = time.Now()
			}
		}
		n.mu.Unlock()
	}
}
