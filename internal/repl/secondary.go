package repl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/transport"
)

// followOnce finds the primary among the seeds and follows it until the
// link breaks or ctx ends (a promotion cancels it).
func (n *Node) followOnce(ctx context.Context) {
	for _, addr := range n.cfg.Peers() {
		if ctx.Err() != nil {
			return
		}
		c, err := n.tr.Dial(ctx, "", addr)
		if err != nil {
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
	var ps []dbPos
	for _, db := range n.st.Databases() {
		ps = append(ps, dbPos{Name: db.Name(), BaseID: db.Snapshot().BaseID(), LSN: uint64(db.Journal().End())})
	}
	e := &enc{}
	e.u(uint64(n.Epoch()))
	e.s(n.cfg.Node.Advertise)
	e.list(ps)
	if err := c.Send(ctx, msgSubscribe, e.b); err != nil {
		return
	}
	m, err := c.Recv(ctx)
	if err != nil {
		return
	}
	d := &dec{b: m.Payload}
	switch m.Type {
	case msgNotPrimary:
		role, epoch, primary := Role(d.s()), Epoch(d.u()), d.s()
		if d.end() == nil {
			n.setPeer(id, func(p *peerStatus) { p.addr, p.role, p.epoch, p.state = addr, role, epoch, "REACHABLE" })
			_ = primary
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
	if err := n.adoptPrimary(primary, epoch); err != nil {
		n.log.Error("Cluster: cannot record the primary", "err", err)
		return
	}
	n.setPeer(id, func(p *peerStatus) {
		p.addr, p.role, p.epoch, p.state, p.connectedSince, p.lastError = addr, RolePrimary, epoch, "CONNECTED", time.Now(), ""
	})
	n.log.Info(fmt.Sprintf("Cluster: following primary %s (epoch %d) at %s", id, epoch, addr), "peer", id)
	err = n.receive(ctx, c)
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

func (n *Node) adoptPrimary(primary string, epoch Epoch) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.state.Primary == primary && n.mu.state.Epoch == epoch {
		return nil
	}
	next := persisted{Role: RoleSecondary, Epoch: epoch, Primary: primary}
	if err := saveState(n.opts.StateDir, next); err != nil {
		return err
	}
	n.mu.state = next
	return nil
}

// seedFile is where a copy being received is written.
func (n *Node) seedFile(db string) string {
	return filepath.Join(n.opts.StateDir, "seed-"+storage.DirName(db)+".part")
}

// receive applies the primary's messages until the link fails.
func (n *Node) receive(ctx context.Context, c *transport.Conn) error {
	var seedOut *os.File
	var seedName string
	defer func() {
		if seedOut != nil {
			seedOut.Close()
			os.Remove(seedOut.Name())
		}
	}()
	durable := n.cfg.Ack == config.AckDurable
	for {
		m, err := c.Recv(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, transport.ErrClosed) {
				return nil
			}
			return err
		}
		d := &dec{b: m.Payload}
		switch m.Type {
		case msgFrames:
			name, start := d.s(), journal.LSN(d.u())
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
				return fmt.Errorf("database %s: %w", name, err)
			}
			n.mu.Lock()
			n.mu.lastApply = time.Now()
			n.mu.Unlock()
			if err := n.ack(ctx, c, db, end); err != nil {
				return err
			}
		case msgSeedBegin:
			name, base := d.s(), d.by()
			if err := d.end(); err != nil {
				return err
			}
			_ = base
			if seedOut != nil {
				return fmt.Errorf("%w: seed of %s begins inside the seed of %s", ErrProtocol, name, seedName)
			}
			if err := transport.CheckFileName(name); err != nil {
				return fmt.Errorf("database name %q refused: %w", name, err)
			}
			f, err := os.Create(n.seedFile(name))
			if err != nil {
				return err
			}
			seedOut, seedName = f, name
			n.log.Info(fmt.Sprintf("Cluster: receiving a copy of database %s", name), "database", name)
		case msgSeedChunk:
			name := d.s()
			if d.err != nil || seedOut == nil || name != seedName {
				return fmt.Errorf("%w: seed chunk out of place", ErrProtocol)
			}
			if _, err := seedOut.Write(d.b); err != nil {
				return err
			}
		case msgSeedEnd:
			name, lsn := d.s(), journal.LSN(d.u())
			if err := d.end(); err != nil || seedOut == nil || name != seedName {
				return fmt.Errorf("%w: seed end out of place", ErrProtocol)
			}
			if _, err := seedOut.Seek(0, 0); err != nil {
				return err
			}
			db, err := n.st.InstallSeed(name, seedOut)
			seedOut.Close()
			os.Remove(seedOut.Name())
			seedOut = nil
			if err != nil {
				return fmt.Errorf("database %s: installing the copy: %w", name, err)
			}
			if db.LSN() != lsn {
				return fmt.Errorf("database %s: copy at LSN %d, announced %d", name, db.LSN(), lsn)
			}
			n.log.Info(fmt.Sprintf("Cluster: copy of database %s installed at LSN %d", name, lsn), "database", name)
			if err := n.ack(ctx, c, db, db.Journal().End()); err != nil {
				return err
			}
		case msgDrop:
			name := d.s()
			if err := d.end(); err != nil {
				return err
			}
			if err := n.st.DropDatabase(name); err != nil && !errors.Is(err, storage.ErrNoDatabase) {
				return err
			}
			n.mu.Lock()
			delete(n.mu.primaryLSN, strings.ToLower(name))
			n.mu.Unlock()
			n.log.Info(fmt.Sprintf("Cluster: database %s dropped by the primary", name), "database", name)
		case msgHeartbeat:
			ps := d.list()
			if err := d.end(); err != nil {
				return err
			}
			n.mu.Lock()
			for _, p := range ps {
				n.mu.primaryLSN[strings.ToLower(p.Name)] = journal.LSN(p.LSN)
			}
			n.mu.Unlock()
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

func (n *Node) ack(ctx context.Context, c *transport.Conn, db *storage.DB, written journal.LSN) error {
	e := &enc{}
	e.s(db.Name())
	e.u(uint64(written))
	e.u(uint64(db.LSN()))
	return c.Send(ctx, msgAck, e.b)
}
