package repl

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

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
	// Raft mode's election (§17.9, core_elect.go).
	msgVote      transport.Type = 0x22
	msgVoteReply transport.Type = 0x23
	// Log-store nodes (logstore.go).
	msgLogBegin      transport.Type = 0x24
	msgLogState      transport.Type = 0x25
	msgCopyElsewhere transport.Type = 0x26
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
