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
// It returns the answers, in seed order, and the addresses that did not
// answer.
func (n *Node) probeRound(ctx context.Context) (answers []PeerState, unreachable []string) {
	peers := n.cfg.Peers()
	got := make([]PeerState, len(peers))
	ok := make([]bool, len(peers))
	var wg sync.WaitGroup
	for i, addr := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], ok[i] = n.probe(ctx, addr)
		}()
	}
	wg.Wait()
	for i := range peers {
		if ok[i] {
			answers = append(answers, got[i])
		} else {
			unreachable = append(unreachable, peers[i])
		}
	}
	return answers, unreachable
}

// Probe flags: what a peer says of itself beyond its role and epoch (the
// facts a controlled promotion checks, §17.4.1).
const (
	FlagPromoting = 1 << 0 // being promoted
	FlagFollowing = 1 << 1 // a secondary connected to its primary
)

func (n *Node) stateMessage() []byte {
	following := n.followingPrimary()
	n.mu.Lock()
	role, st := n.mu.role, n.mu.state
	n.mu.Unlock()
	var flags uint64
	if role == RolePromoting {
		role, flags = RoleSecondary, FlagPromoting
	}
	if following {
		flags |= FlagFollowing
	}
	e := &enc{}
	e.s(string(role))
	e.u(uint64(st.Epoch))
	e.s(st.Primary)
	e.u(flags)
	e.u(uint64(max(n.ownLag(), 0)))
	return e.b
}

// ownLag is what this secondary lacks of the log ends its primary last
// announced, over its databases (§17.4.4: shown by the peers that probe it).
func (n *Node) ownLag() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.role == RolePrimary {
		return 0
	}
	var lag int64
	for _, db := range n.st.Databases() {
		if p, ok := n.mu.primaryLSN[strings.ToLower(db.Name())]; ok && p > db.LSN() {
			lag += int64(p - db.LSN())
		}
	}
	return lag
}

// PeerState is a peer's answer to a probe.
type PeerState struct {
	ID      string
	Addr    string
	Role    Role
	Epoch   Epoch
	Primary string
	Flags   uint64
	Lag     int64 // bytes the peer lacks of what its primary announced
}

func decodeState(b []byte) (PeerState, error) {
	d := &dec{b: b}
	ps := PeerState{Role: Role(d.s()), Epoch: Epoch(d.u()), Primary: d.s(), Flags: d.u(), Lag: int64(d.u())}
	return ps, d.end()
}

// probe asks one peer; what it answers goes through observeEpoch. ok is
// false when the peer did not answer.
func (n *Node) probe(ctx context.Context, addr string) (ps PeerState, ok bool) {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	c, err := n.tr.Dial(pctx, "", addr)
	if err != nil {
		n.setPeerByAddr(addr, "UNREACHABLE")
		return ps, false
	}
	defer c.Close()
	if err := c.Send(pctx, msgProbe, n.stateMessage()); err != nil {
		return ps, false
	}
	m, err := c.Recv(pctx)
	if err != nil || m.Type != msgProbeReply {
		n.setPeerByAddr(addr, "UNREACHABLE")
		return ps, false
	}
	ps, err = decodeState(m.Payload)
	if err != nil {
		n.log.Warn("Cluster: malformed probe answer", "peer", c.Peer().ID, "err", err)
		return ps, false
	}
	ps.ID, ps.Addr = c.Peer().ID, addr
	n.setPeer(ps.ID, func(p *peerStatus) {
		p.addr, p.role, p.epoch, p.lag = addr, ps.Role, ps.Epoch, ps.Lag
		if p.state != "CONNECTED" && p.state != "BOOTSTRAPPING" {
			p.state = "REACHABLE"
			if ps.Role == RoleFenced {
				p.state = "FENCED"
			}
		}
	})
	primary := ps.Primary
	if ps.Role == RolePrimary {
		primary = ps.ID
	}
	n.observeEpoch(ps.ID, ps.Epoch, primary, false)
	return ps, true
}

// answerProbe judges a prober's state, then answers with this node's.
func (n *Node) answerProbe(ctx context.Context, c *transport.Conn, payload []byte) {
	ps, err := decodeState(payload)
	if err != nil {
		n.log.Warn("Cluster: malformed probe, link closed", "peer", c.Peer().ID, "err", err)
		return
	}
	role, epoch, primary := ps.Role, ps.Epoch, ps.Primary
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
