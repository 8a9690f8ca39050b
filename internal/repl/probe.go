package repl

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/miraj-db/miraj/internal/transport"
)

// probeLoop asks every peer for its role and epoch every probeInterval
// while this node is a primary (a newer primary fences it), fenced, or a
// secondary without a primary (§17.4.4: the peers show REACHABLE or
// UNREACHABLE), and at once after a promotion: the probe carries this
// node's own role and epoch, so it is also the new primary's announcement.
func (n *Node) probeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.probeNow:
		case <-time.After(probeInterval):
			if n.followingPrimary() {
				continue
			}
		}
		n.probeRound(ctx)
	}
}

// followingPrimary reports whether this secondary is connected to a primary.
func (n *Node) followingPrimary() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.role != RoleSecondary {
		return false
	}
	for _, p := range n.mu.peers {
		if p.role == RolePrimary && p.state == "CONNECTED" {
			return true
		}
	}
	return false
}

// probeRound probes every peer in parallel, each bounded by probeTimeout.
func (n *Node) probeRound(ctx context.Context) {
	var wg sync.WaitGroup
	for _, addr := range n.cfg.Peers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.probe(ctx, addr)
		}()
	}
	wg.Wait()
}

func (n *Node) stateMessage() []byte {
	n.mu.Lock()
	role, st := n.mu.role, n.mu.state
	n.mu.Unlock()
	if role == RolePromoting {
		role = RoleSecondary
	}
	e := &enc{}
	e.s(string(role))
	e.u(uint64(st.Epoch))
	e.s(st.Primary)
	return e.b
}

// probe asks one peer; what it answers goes through observeEpoch.
func (n *Node) probe(ctx context.Context, addr string) {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	c, err := n.tr.Dial(pctx, "", addr)
	if err != nil {
		n.setPeerByAddr(addr, "UNREACHABLE")
		return
	}
	defer c.Close()
	if err := c.Send(pctx, msgProbe, n.stateMessage()); err != nil {
		return
	}
	m, err := c.Recv(pctx)
	if err != nil || m.Type != msgProbeReply {
		n.setPeerByAddr(addr, "UNREACHABLE")
		return
	}
	d := &dec{b: m.Payload}
	role, epoch, primary := Role(d.s()), Epoch(d.u()), d.s()
	if err := d.end(); err != nil {
		n.log.Warn("Cluster: malformed probe answer", "peer", c.Peer().ID, "err", err)
		return
	}
	id := c.Peer().ID
	n.setPeer(id, func(p *peerStatus) {
		p.addr, p.role, p.epoch = addr, role, epoch
		if p.state != "CONNECTED" && p.state != "BOOTSTRAPPING" {
			p.state = "REACHABLE"
			if role == RoleFenced {
				p.state = "FENCED"
			}
		}
	})
	if role == RolePrimary {
		primary = id
	}
	n.observeEpoch(id, epoch, primary, false)
}

// answerProbe judges a prober's state, then answers with this node's.
func (n *Node) answerProbe(ctx context.Context, c *transport.Conn, payload []byte) {
	d := &dec{b: payload}
	role, epoch, primary := Role(d.s()), Epoch(d.u()), d.s()
	if err := d.end(); err != nil {
		n.log.Warn("Cluster: malformed probe, link closed", "peer", c.Peer().ID, "err", err)
		return
	}
	id := c.Peer().ID
	if role == RolePrimary {
		primary = id
	}
	n.setPeer(id, func(p *peerStatus) {
		p.role, p.epoch = role, epoch
		if p.state != "CONNECTED" && p.state != "BOOTSTRAPPING" {
			p.state = "REACHABLE"
			if role == RoleFenced {
				p.state = "FENCED"
			}
		}
	})
	n.observeEpoch(id, epoch, primary, false)
	sctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	c.Send(sctx, msgProbeReply, n.stateMessage())
}

// setPeerByAddr records the state of the peer known at addr, if any.
func (n *Node) setPeerByAddr(addr, state string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.mu.peers {
		if strings.EqualFold(p.addr, addr) && p.state != "CONNECTED" && p.state != "BOOTSTRAPPING" {
			p.state = state
		}
	}
}
