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

// checkTransition says whether a node in state cur may take state next.
// The rules (Dolt's setRoleAndEpoch, raft's term rule):
//   - a lower epoch is never taken;
//   - a higher epoch may be taken in any role but PROMOTING (a transient
//     state that is never persisted);
//   - within the same epoch a node may only step down (PRIMARY to FENCED or
//     SECONDARY) or learn the epoch's primary, never become primary or
//     change an epoch's known primary to another.
func checkTransition(cur, next persisted) error {
	if next.Role == RolePromoting {
		return fmt.Errorf("%w: %s is not a persisted role", ErrRoleChange, next.Role)
	}
	switch {
	case next.Epoch < cur.Epoch:
		return fmt.Errorf("%w: epoch %d, the node is at %d", ErrStaleEpoch, next.Epoch, cur.Epoch)
	case next.Epoch > cur.Epoch:
		if next.Role == RolePrimary && next.Primary == "" {
			return fmt.Errorf("%w: a primary without an id", ErrRoleChange)
		}
		return nil
	}
	// Same epoch.
	if next.Primary != cur.Primary && cur.Primary != "" {
		return fmt.Errorf("%w: epoch %d already has primary %s, not %s", ErrRoleChange, cur.Epoch, cur.Primary, next.Primary)
	}
	switch {
	case cur.Role == next.Role:
		return nil
	case cur.Role == RolePrimary && (next.Role == RoleFenced || next.Role == RoleSecondary):
		return nil
	case cur.Role == RoleFenced && next.Role == RoleSecondary:
		return nil
	}
	return fmt.Errorf("%w: %s to %s within epoch %d", ErrRoleChange, cur.Role, next.Role, cur.Epoch)
}

// startKind is how a primary starts to serve one database to a follower.
type startKind int

const (
	// startStream: the follower's journal lies on the primary's history;
	// frames are sent from its end.
	startStream startKind = iota
	// startSeed: a full copy is sent.
	startSeed
)

// start is decideStart's verdict for one database.
type start struct {
	kind startKind
	// quarantine: the follower's copy holds bytes that are not on the
	// primary's history (or is another incarnation of the database): it
	// must be moved to quarantine before the copy replaces it.
	quarantine bool
	// rebootstrap: the follower is behind what the primary retains.
	rebootstrap bool
	reason      string
}

// dbView is what the primary knows of one of its databases.
type dbView struct {
	baseID   []byte
	hist     history.History
	end      journal.LSN // end of the committed journal
	retained journal.LSN // oldest byte still in the journal
}

// decideStart chooses, for one database, between streaming from the
// follower's position and seeding it (moving its copy to quarantine when
// that copy is not a prefix of the primary's journal).
func decideStart(p dbView, f dbPos) start {
	if f.BaseID == nil && f.LSN == 0 && len(f.Hist) == 0 {
		return start{kind: startSeed, reason: "the node does not have the database"}
	}
	if !bytes.Equal(p.baseID, f.BaseID) {
		return start{kind: startSeed, quarantine: true, reason: "the node's database is another incarnation (base id differs)"}
	}
	v := history.Match(p.hist, p.end, f.Hist, journal.LSN(f.LSN))
	if v.Kind == history.Diverged {
		return start{kind: startSeed, quarantine: true,
			reason: fmt.Sprintf("journal diverged after LSN %d: %s", v.Common, v.Reason)}
	}
	if journal.LSN(f.LSN) < p.retained {
		return start{kind: startSeed, rebootstrap: true,
			reason: fmt.Sprintf("position %d no longer retained (journal starts at %d)", f.LSN, p.retained)}
	}
	return start{kind: startStream}
}

// epochNews is what a node does with an epoch a peer showed it.
type epochNews int

const (
	newsNone  epochNews = iota // nothing new, or ignored (logged)
	newsAdopt                  // a secondary adopts the higher epoch
	newsFence                  // a primary sees proof of a higher epoch: fenced at once
)

// judgeEpoch decides what seeing epoch announced (by a peer with a proven
// identity) means for a node in state cur (§17.2.5, §17.4.2).
func judgeEpoch(cur persisted, role Role, announced Epoch, fromFollowedPrimary bool) (epochNews, epoch.Verdict) {
	v := epoch.Check(cur.Epoch, announced, fromFollowedPrimary)
	if v != epoch.Accept {
		return newsNone, v
	}
	if role == RolePrimary {
		return newsFence, v
	}
	// A secondary adopts it; a node being promoted too, and its promotion
	// then fails at the transition (its planned epoch is no longer above
	// the node's).
	return newsAdopt, v
}
