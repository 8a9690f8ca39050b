// Package history is the epoch history of a database's journal and the
// log-matching rule that decides whether one journal lies on another's
// history (raft's log matching, applied to Miraj's journals).
//
// Every primary of epoch E writes, in each database's journal and before
// any write of that epoch, an epoch mark (E, its node id) at the journal's
// end. The marks of a journal, in order, are its History: the bytes from
// one mark to the next were all written by the primary of the first one's
// epoch. Since an epoch has one primary, and a follower only appends bytes
// streamed to it from a point Match accepted, two journals holding the same
// mark at the same LSN hold the same bytes up to that mark, and agree after
// it as far as both extend within that epoch.
//
// The package is pure: no I/O, no clock, no goroutines. Storage keeps a
// database's History in its catalog (applied from the journal like rows);
// replication and the simulator call Match.
//
//	v := history.Match(primaryHist, primaryEnd, followerHist, followerEnd)
//	switch v.Kind {
//	case history.OnHistory: // stream from followerEnd
//	case history.Diverged:  // follower bytes [v.Common, followerEnd) are not the primary's: quarantine
//	}
package history

import (
	"fmt"

	"github.com/miraj-db/miraj/internal/epoch"
	"github.com/miraj-db/miraj/internal/journal"
)

// Mark is one epoch mark: the primary Node of Epoch wrote it at LSN.
type Mark struct {
	Epoch epoch.Epoch
	Node  string
	LSN   journal.LSN
}

func (m Mark) String() string { return fmt.Sprintf("(epoch %d by %s at %d)", m.Epoch, m.Node, m.LSN) }

// History is a journal's marks in journal order.
// Invariant: epochs strictly increase and LSNs never decrease.
type History []Mark

// Last returns the newest mark, or the zero Mark for a journal that has
// none (created before epoch marks, or outside a cluster).
func (h History) Last() Mark {
	if len(h) == 0 {
		return Mark{}
	}
	return h[len(h)-1]
}

// Check verifies the invariant; a broken one is corruption of the journal
// or of a message.
func (h History) Check() error {
	for i := 1; i < len(h); i++ {
		if h[i].Epoch <= h[i-1].Epoch || h[i].LSN < h[i-1].LSN {
			return fmt.Errorf("history: mark %s after %s", h[i], h[i-1])
		}
	}
	return nil
}

// Append returns h with m added, refusing a mark that does not extend it.
func (h History) Append(m Mark) (History, error) {
	if last := h.Last(); len(h) > 0 && (m.Epoch <= last.Epoch || m.LSN < last.LSN) {
		return h, fmt.Errorf("history: mark %s cannot follow %s", m, last)
	}
	out := make(History, len(h), len(h)+1)
	copy(out, h)
	return append(out, m), nil
}

// endOf returns where the epoch of h[i] ends in a journal ending at end: at
// the next mark, or at end.
func endOf(h History, i int, end journal.LSN) journal.LSN {
	if i+1 < len(h) {
		return h[i+1].LSN
	}
	return end
}

// Kind is Match's verdict.
type Kind int

const (
	// OnHistory: the follower's journal is a prefix of the primary's;
	// streaming resumes at the follower's end.
	OnHistory Kind = iota
	// Diverged: the follower holds bytes after Common that the primary
	// does not have (another primary's writes, or a tail the primary
	// never had). They must go to quarantine before the follower can
	// follow; Common is where the two journals last agree.
	Diverged
)

func (k Kind) String() string {
	if k == OnHistory {
		return "on history"
	}
	return "diverged"
}

// Verdict is the outcome of Match.
type Verdict struct {
	Kind Kind
	// Common is the end of the longest common prefix: the follower's end
	// when OnHistory.
	Common journal.LSN
	// Reason explains a divergence in words for the log and the report.
	Reason string
}

// Match decides whether the follower's journal (history f, end fEnd) lies
// on the primary's (history p, end pEnd). Both journals are of the same
// database identity (the caller compares base ids first).
//
// The rule, as raft's: find the newest mark the two histories share (same
// epoch, same node, same LSN; everything before it then agrees). The follower
// is on the primary's history if it has no mark after that one and does
// not extend past the shared epoch's end in the primary's journal.
// Journals with no marks at all share an implicit start at LSN 0.
func Match(p History, pEnd journal.LSN, f History, fEnd journal.LSN) Verdict {
	// k: number of leading marks the histories share.
	k := 0
	for k < len(p) && k < len(f) && p[k] == f[k] {
		k++
	}
	// The shared epoch's end in each journal (k == 0: the stretch before
	// any mark, which ends at each journal's first mark).
	var pEpochEnd, fEpochEnd journal.LSN
	if k == 0 {
		pEpochEnd, fEpochEnd = pEnd, fEnd
		if len(p) > 0 {
			pEpochEnd = p[0].LSN
		}
		if len(f) > 0 {
			fEpochEnd = f[0].LSN
		}
	} else {
		pEpochEnd, fEpochEnd = endOf(p, k-1, pEnd), endOf(f, k-1, fEnd)
	}
	common := min(pEpochEnd, fEpochEnd)
	if k == len(f) && fEnd <= pEpochEnd {
		return Verdict{Kind: OnHistory, Common: fEnd}
	}
	var reason string
	switch {
	case k < len(f) && k < len(p):
		reason = fmt.Sprintf("follower has mark %s where the primary has %s", f[k], p[k])
	case k < len(f):
		reason = fmt.Sprintf("follower has mark %s that the primary lacks", f[k])
	default:
		shared := "before any epoch mark"
		if k > 0 {
			shared = fmt.Sprintf("of epoch %d", f[k-1].Epoch)
		}
		reason = fmt.Sprintf("follower has writes %s up to LSN %d; on the primary that stretch ends at %d", shared, fEnd, pEpochEnd)
	}
	return Verdict{Kind: Diverged, Common: common, Reason: reason}
}
