package repl

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/transport"
)

// Catch-up at promotion (§17.4.1): the candidate asks every reachable peer
// for its databases' positions, and fetches from the most advanced one what
// it lacks of each database. Secondaries of one primary hold byte-identical
// journals, so the candidate appends the peer's bytes at the same LSNs.
//
//	candidate → peer   Positions    (empty)
//	peer → candidate   PositionsAre n × (position, retained LSN)
//	candidate → peer   CatchUp      database, base id, from LSN, to LSN
//	peer → candidate   Frames…      database, start LSN, frames (its journal's bytes)
//	peer → candidate   CatchUpEnd   database, end LSN
const (
	msgPositions    transport.Type = 0x1E
	msgPositionsAre transport.Type = 0x1F
	msgCatchUp      transport.Type = 0x20
	msgCatchUpEnd   transport.Type = 0x21
)

// PeerDB is one database of a peer, as it answered Positions.
type PeerDB struct {
	Position
	Retained journal.LSN
}

// CatchUpStep is what the candidate fetches of one database.
type CatchUpStep struct {
	DB       string
	Peer     string // node id
	Addr     string
	BaseID   []byte
	From, To journal.LSN
	last     history.Mark // the peer's newest epoch mark
}

// newerBranch reports whether a's journal is more up to date than b's: a
// newer last epoch mark (epoch, then node), or the same and longer.
func newerBranch(a, b CatchUpStep) bool {
	if a.last != b.last {
		return newerMark(a.last, b.last)
	}
	return a.To > b.To
}

// newerMark orders epoch marks by epoch, then node id (the order of
// primacy).
func newerMark(a, b history.Mark) bool {
	if a.Epoch != b.Epoch {
		return a.Epoch > b.Epoch
	}
	return a.Node > b.Node
}

// PeerDatabases is one peer's answer to Positions.
type PeerDatabases struct {
	ID, Addr string
	DBs      []PeerDB
}

// LocalDB is what the candidate knows of one of its databases.
type LocalDB struct {
	Name   string
	BaseID []byte
	Hist   history.History
	End    journal.LSN // journal end (an unterminated tail included)
}

// PlanCatchUp chooses, for each of the candidate's databases, the peer whose
// journal extends the candidate's and is the most up to date (newest epoch
// mark, then longest), and lists the
// refusals a controlled promotion must give (§17.4.1): a peer ahead that no
// longer retains what is missing, a database a peer has and the candidate
// lacks, or has under another identity. Pure: the drivers and the simulator
// call it.
func PlanCatchUp(mine []LocalDB, peers []PeerDatabases) (plan []CatchUpStep, refusals []string) {
	byName := map[string]LocalDB{}
	for _, l := range mine {
		byName[strings.ToLower(l.Name)] = l
	}
	best := map[string]CatchUpStep{}
	for _, p := range peers {
		for _, d := range p.DBs {
			l, ok := byName[strings.ToLower(d.Name)]
			switch {
			case !ok:
				refusals = append(refusals, fmt.Sprintf("node %s has database %s that this node does not have", p.ID, d.Name))
				continue
			case !bytes.Equal(l.BaseID, d.BaseID):
				refusals = append(refusals, fmt.Sprintf("database %s has another identity on node %s", d.Name, p.ID))
				continue
			}
			// The peer is ahead if the candidate's journal lies on the
			// peer's history and the peer has more.
			v := history.Match(d.Hist, journal.LSN(d.LSN), l.Hist, l.End)
			if v.Kind != history.OnHistory {
				// Diverged. A peer whose branch is newer holds writes of a
				// later primary that this node cannot take in: promoting
				// it would send them to quarantine.
				if newerMark(d.Hist.Last(), l.Hist.Last()) {
					refusals = append(refusals, fmt.Sprintf("node %s holds database %s up to LSN %d on a newer history (epoch %d by %s) that this node's journal leaves after LSN %d",
						p.ID, d.Name, d.LSN, d.Hist.Last().Epoch, d.Hist.Last().Node, v.Common))
				}
				continue
			}
			if journal.LSN(d.LSN) <= l.End {
				continue
			}
			if d.Retained > l.End {
				refusals = append(refusals, fmt.Sprintf("node %s is ahead on database %s but no longer retains it (it keeps from LSN %d, this node ends at %d)", p.ID, d.Name, d.Retained, l.End))
				continue
			}
			// Among peers ahead on diverging branches, the newest epoch
			// wins (raft's "more up-to-date log"): an older branch holds
			// writes a newer primary superseded. Then the longest.
			step := CatchUpStep{DB: l.Name, Peer: p.ID, Addr: p.Addr, BaseID: l.BaseID, From: l.End, To: journal.LSN(d.LSN), last: d.Hist.Last()}
			if cur, has := best[strings.ToLower(d.Name)]; !has || newerBranch(step, cur) {
				best[strings.ToLower(d.Name)] = step
			}
		}
	}
	for _, s := range best {
		plan = append(plan, s)
	}
	sort.Slice(plan, func(i, j int) bool { return plan[i].DB < plan[j].DB })
	sort.Strings(refusals)
	return plan, refusals
}

// localDatabases describes this node's databases for PlanCatchUp.
func (n *Node) localDatabases() []LocalDB {
	var out []LocalDB
	for _, db := range n.st.Databases() {
		h, end := db.ReceivedHistory()
		out = append(out, LocalDB{Name: db.Name(), BaseID: db.Latest().BaseID(), Hist: h, End: end})
	}
	return out
}

// askPositions asks every reachable peer for its databases, in parallel,
// each bounded by probeTimeout.
func (n *Node) askPositions(ctx context.Context) []PeerDatabases {
	peers := n.cfg.Peers()
	got := make([]*PeerDatabases, len(peers))
	var wg sync.WaitGroup
	for i, addr := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			c, err := n.tr.Dial(pctx, "", addr)
			if err != nil {
				return
			}
			defer c.Close()
			if c.Send(pctx, msgPositions, nil) != nil {
				return
			}
			m, err := c.Recv(pctx)
			if err != nil || m.Type != msgPositionsAre {
				return
			}
			d := &dec{b: m.Payload}
			k := d.u()
			if k > maxListEntries {
				return
			}
			pd := &PeerDatabases{ID: c.Peer().ID, Addr: addr}
			for j := uint64(0); j < k && d.err == nil; j++ {
				pd.DBs = append(pd.DBs, PeerDB{Position: d.pos(), Retained: journal.LSN(d.u())})
			}
			if d.end() != nil {
				n.log.Warn("Cluster: malformed positions", "peer", pd.ID)
				return
			}
			got[i] = pd
		}()
	}
	wg.Wait()
	var out []PeerDatabases
	for _, g := range got {
		if g != nil {
			out = append(out, *g)
		}
	}
	return out
}

// answerPositions tells a candidate this node's databases.
func (n *Node) answerPositions(ctx context.Context, c *transport.Conn) {
	dbs := n.st.Databases()
	e := &enc{}
	e.u(uint64(len(dbs)))
	for _, db := range dbs {
		h, end := db.ReceivedHistory()
		e.pos(Position{Name: db.Name(), BaseID: db.Latest().BaseID(), Hist: h, LSN: uint64(end)})
		e.u(uint64(db.Journal().Start()))
	}
	send(ctx, c, msgPositionsAre, e.b)
}

// serveCatchUp streams the journal bytes a candidate asked for.
func (n *Node) serveCatchUp(ctx context.Context, c *transport.Conn, payload []byte) {
	d := &dec{b: payload}
	name, base, from, to := d.s(), d.by(), journal.LSN(d.u()), journal.LSN(d.u())
	if err := d.end(); err != nil {
		n.log.Warn("Cluster: malformed catch-up request, link closed", "peer", c.Peer().ID, "err", err)
		return
	}
	if err := c.SetMaxFrame(transport.MaxStreamFrameBytes); err != nil {
		return
	}
	n.log.Info(fmt.Sprintf("Cluster: catch-up requested by %s (database %s, LSN %d to %d)", c.Peer().ID, name, from, to))
	db, ok := n.st.Database(name)
	if !ok || !bytes.Equal(db.Latest().BaseID(), base) || db.Journal().End() < to {
		n.log.Warn(fmt.Sprintf("Cluster: catch-up of %s: database %s is not here as asked", c.Peer().ID, name))
		return
	}
	for pos := from; pos < to; {
		frames, err := db.Journal().ReadRange(pos, to, maxBatchBytes)
		if err != nil {
			n.log.Warn(fmt.Sprintf("Cluster: catch-up of %s: %v", c.Peer().ID, err))
			return
		}
		e := &enc{}
		e.s(name)
		e.u(uint64(pos))
		e.b = append(e.b, frames...)
		if err := send(ctx, c, msgFrames, e.b); err != nil {
			return
		}
		pos += journal.LSN(len(frames))
	}
	e := &enc{}
	e.s(name)
	e.u(uint64(to))
	if send(ctx, c, msgCatchUpEnd, e.b) == nil {
		n.log.Info(fmt.Sprintf("Cluster: catch-up of %s served (%d bytes)", c.Peer().ID, to-from))
	}
}

// catchUp fetches one planned step into the local journal.
func (n *Node) catchUp(ctx context.Context, s CatchUpStep) error {
	db, ok := n.st.Database(s.DB)
	if !ok {
		return fmt.Errorf("database %s vanished", s.DB)
	}
	c, err := n.tr.Dial(ctx, s.Peer, s.Addr)
	if err != nil {
		return fmt.Errorf("catch-up from %s: %w", s.Peer, err)
	}
	defer c.Close()
	if err := c.SetMaxFrame(transport.MaxStreamFrameBytes); err != nil {
		return err
	}
	e := &enc{}
	e.s(s.DB)
	e.by(s.BaseID)
	e.u(uint64(s.From))
	e.u(uint64(s.To))
	if err := send(ctx, c, msgCatchUp, e.b); err != nil {
		return fmt.Errorf("catch-up from %s: %w", s.Peer, err)
	}
	durable := true // the promoted node's journal: durable before it serves
	for {
		rctx, cancel := context.WithTimeout(ctx, linkTimeout)
		m, err := c.Recv(rctx)
		cancel()
		if err != nil {
			return fmt.Errorf("catch-up from %s: %w", s.Peer, linkError(err))
		}
		d := &dec{b: m.Payload}
		name := d.s()
		switch {
		case m.Type == msgFrames && strings.EqualFold(name, s.DB):
			start := journal.LSN(d.u())
			if d.err != nil {
				return d.err
			}
			if _, err := db.AppendReplicated(ctx, start, d.b, durable); err != nil {
				return fmt.Errorf("catch-up from %s: %w", s.Peer, err)
			}
		case m.Type == msgCatchUpEnd && strings.EqualFold(name, s.DB):
			if end := journal.LSN(d.u()); d.end() != nil || db.Journal().End() != end {
				return fmt.Errorf("catch-up from %s: ended at %d, journal at %d", s.Peer, end, db.Journal().End())
			}
			return nil
		default:
			return fmt.Errorf("%w: catch-up message %#x", ErrProtocol, int(m.Type))
		}
	}
}
