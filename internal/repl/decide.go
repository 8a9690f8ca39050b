package repl

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/history"
	"github.com/miraj-db/miraj/internal/journal"
)

// The decisions of replication, as pure functions of what the node knows:
// no I/O, no clock, no goroutines. The drivers (primary.go, secondary.go)
// and the simulator (cmd/miraj-sim) call the same functions, so what the
// simulator explores under faults is what the server decides.

// Epoch numbers the primaries: each designation or promotion starts a new,
// higher one. The one type, with its safeguards, is epoch.Epoch.
type Epoch = epoch.Epoch

// ErrStaleEpoch refuses a role change to an epoch lower than the node's.
var ErrStaleEpoch = errors.New("repl: epoch older than the node's")

// ErrRoleChange refuses a role change the rules do not allow.
var ErrRoleChange = errors.New("repl: role change not allowed")

// ballotLess orders states by (epoch, primary id): the order in which
// primacy goes (JudgeEpoch's tie-break); an unknown primary ("") is lowest.
func ballotLess(a, b State) bool {
	return a.Epoch < b.Epoch || (a.Epoch == b.Epoch && a.Primary < b.Primary)
}

// CheckTransition says whether a node in state cur may take state next.
// The rules (Dolt's setRoleAndEpoch, raft's term rule, with Paxos's ballot
// order for two primaries of one epoch):
//   - a lower ballot (epoch, then primary id) is never taken;
//   - a node becomes primary only in an epoch above its own;
//   - within one ballot a node may only step down (PRIMARY to FENCED or
//     SECONDARY, FENCED to SECONDARY);
//   - PROMOTING is transient and never persisted;
//   - raft mode: a vote, once given in an epoch, never changes in it; a
//     candidate elected in the epoch it campaigned in (its vote for
//     itself, no primary known) becomes primary in that epoch.
func CheckTransition(cur, next State) error {
	if next.Epoch == cur.Epoch && cur.Vote != "" && next.Vote != cur.Vote {
		return fmt.Errorf("%w: this node voted for %s in epoch %d", ErrRoleChange, cur.Vote, cur.Epoch)
	}
	elected := next.Role == RolePrimary && next.Epoch == cur.Epoch && cur.Primary == "" && cur.Vote != "" && cur.Vote == next.Primary && next.Vote == cur.Vote
	switch {
	case next.Role == RolePromoting:
		return fmt.Errorf("%w: %s is not a persisted role", ErrRoleChange, next.Role)
	case next.Role == RolePrimary && next.Primary == "":
		return fmt.Errorf("%w: a primary without an id", ErrRoleChange)
	case next.Epoch < cur.Epoch:
		return fmt.Errorf("%w: epoch %d, the node is at %d", ErrStaleEpoch, next.Epoch, cur.Epoch)
	case ballotLess(next, cur):
		return fmt.Errorf("%w: epoch %d already has primary %s, above %s", ErrRoleChange, cur.Epoch, cur.Primary, next.Primary)
	case next.Role == RolePrimary && cur != next && next.Epoch <= cur.Epoch && !elected:
		return fmt.Errorf("%w: becoming primary takes an epoch above %d", ErrRoleChange, cur.Epoch)
	case cur == next || ballotLess(cur, next):
		return nil
	}
	// Same ballot: a first vote in the term, or another role.
	switch {
	case cur.Role == next.Role && cur.Vote == "" && next.Vote != "":
		return nil
	case cur.Role == RolePrimary && (next.Role == RoleFenced || next.Role == RoleSecondary):
		return nil
	case cur.Role == RoleFenced && next.Role == RoleSecondary:
		return nil
	}
	return fmt.Errorf("%w: %s to %s within epoch %d", ErrRoleChange, cur.Role, next.Role, cur.Epoch)
}

// StartKind is how a primary starts to serve one database to a follower.
type StartKind int

const (
	// StartStream: the follower's journal lies on the primary's history;
	// frames are sent from its end.
	StartStream StartKind = iota
	// StartSeed: a full copy is sent.
	StartSeed
)

// Start is DecideStart's verdict for one database.
type Start struct {
	Kind StartKind
	// quarantine: the follower's copy holds bytes that are not on the
	// primary's history (or is another incarnation of the database): it
	// must be moved to quarantine before the copy replaces it.
	Quarantine bool
	// rebootstrap: the follower is behind what the primary retains.
	Rebootstrap bool
	Reason      string
	// Common: with Quarantine, where the follower's journal stops being
	// the primary's (what follows is not on its history).
	Common journal.LSN
}

// DBView is what the primary knows of one of its databases.
type DBView struct {
	BaseID   []byte
	Hist     history.History
	End      journal.LSN // end of the committed journal
	Retained journal.LSN // oldest byte still in the journal
}

// DecideStart chooses, for one database, between streaming from the
// follower's position and seeding it (moving its copy to quarantine when
// that copy is not a prefix of the primary's journal).
func DecideStart(p DBView, f Position) Start {
	if f.BaseID == nil && f.LSN == 0 && len(f.Hist) == 0 {
		return Start{Kind: StartSeed, Reason: "the node does not have the database"}
	}
	if !bytes.Equal(p.BaseID, f.BaseID) {
		return Start{Kind: StartSeed, Quarantine: true, Reason: "the node's database is another incarnation (base id differs)"}
	}
	v := history.Match(p.Hist, p.End, f.Hist, journal.LSN(f.LSN))
	if v.Kind == history.Diverged {
		return Start{Kind: StartSeed, Quarantine: true, Common: v.Common,
			Reason: fmt.Sprintf("journal diverged after LSN %d: %s", v.Common, v.Reason)}
	}
	if journal.LSN(f.LSN) < p.Retained {
		return Start{Kind: StartSeed, Rebootstrap: true,
			Reason: fmt.Sprintf("position %d no longer retained (journal starts at %d)", f.LSN, p.Retained)}
	}
	return Start{Kind: StartStream}
}

// EpochNews is what a node does with an epoch a peer showed it.
type EpochNews int

const (
	NewsNone  EpochNews = iota // nothing new, or ignored (logged)
	NewsAdopt                  // a secondary adopts the higher epoch
	NewsFence                  // a primary sees proof of a higher epoch: fenced at once
)

// JudgeEpoch decides what seeing epoch announced, whose primary is
// announcedPrimary ("" when unknown), means for node self in state cur
// (§17.2.5, §17.4.2).
//
// Two nodes promoted on the two sides of a partition, neither reaching the
// other, can both take the same epoch (manual mode has no vote to make it
// unique). Primacy is then ordered by (epoch, node id), as Paxos orders
// ballots: a primary that meets another primary of its own epoch with a
// greater id is fenced like one that meets a higher epoch. Their journals'
// marks name different nodes, so no follower takes one's frames for the
// other's (history.Match compares the node too).
func JudgeEpoch(cur State, role Role, self string, announced Epoch, announcedPrimary string, fromFollowedPrimary bool) (EpochNews, epoch.Verdict) {
	if role == RolePrimary && announced == cur.Epoch && announcedPrimary != "" && announcedPrimary > self {
		return NewsFence, epoch.Accept
	}
	v := epoch.Check(cur.Epoch, announced, fromFollowedPrimary)
	if v != epoch.Accept {
		return NewsNone, v
	}
	if role == RolePrimary {
		return NewsFence, v
	}
	// A secondary adopts it; a node being promoted too, and its promotion
	// then fails at the transition (its planned epoch is no longer above
	// the node's).
	return NewsAdopt, v
}

// PromotionRefusals lists why a controlled promotion of node self (in state
// cur) must be refused, from its peers' answers to a probe (§17.4.1): a
// live primary, another node already primary or being promoted, a peer
// still connected to a primary this node no longer sees. An unreachable
// peer is no reason: losing the primary is the normal case.
func PromotionRefusals(cur State, answers []PeerState) []string {
	var out []string
	for _, a := range answers {
		switch {
		case a.Role == RolePrimary && a.ID == cur.Primary:
			out = append(out, fmt.Sprintf("node %s is still primary at epoch %d", a.ID, a.Epoch))
		case a.Role == RolePrimary:
			out = append(out, fmt.Sprintf("node %s is already primary at epoch %d", a.ID, a.Epoch))
		case a.Flags&FlagPromoting != 0:
			out = append(out, fmt.Sprintf("node %s is being promoted", a.ID))
		case a.Flags&FlagFollowing != 0:
			out = append(out, fmt.Sprintf("node %s is still connected to primary %s", a.ID, a.Primary))
		}
	}
	return out
}
