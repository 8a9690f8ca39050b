package repl

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
)

// Semi-synchronous commit (§17.8): the pure rules. The node (sync.go) and
// the simulator apply them; nothing here does I/O or reads a clock.

// SyncLevel is @@cluster_sync_commit: what a commit waits for.
type SyncLevel uint8

const (
	SyncOff      SyncLevel = iota // confirmed once committed on the primary
	SyncReceived                  // …once written to the log of N secondaries
	SyncApplied                   // …once applied by N secondaries
	SyncMajority                  // …once written by a majority of the members
)

var syncLevelNames = [...]string{"OFF", "RECEIVED", "APPLIED", "MAJORITY"}

func (l SyncLevel) String() string {
	if int(l) < len(syncLevelNames) {
		return syncLevelNames[l]
	}
	return fmt.Sprintf("SyncLevel(%d)", int(l))
}

// ParseSyncLevel reads a level, in any case.
func ParseSyncLevel(s string) (SyncLevel, bool) {
	for i, name := range syncLevelNames {
		if strings.EqualFold(s, name) {
			return SyncLevel(i), true
		}
	}
	return SyncOff, false
}

// SyncAction is @@cluster_sync_timeout_action (§17.8.3).
type SyncAction uint8

const (
	SyncFallback SyncAction = iota // confirmed with warning 9004
	SyncError                      // error 9004, the write stays committed
	SyncWait                       // no limit: until the acks, a KILL or a demotion
)

var syncActionNames = [...]string{"FALLBACK", "ERROR", "WAIT"}

func (a SyncAction) String() string {
	if int(a) < len(syncActionNames) {
		return syncActionNames[a]
	}
	return fmt.Sprintf("SyncAction(%d)", int(a))
}

// ParseSyncAction reads an action, in any case.
func ParseSyncAction(s string) (SyncAction, bool) {
	for i, name := range syncActionNames {
		if strings.EqualFold(s, name) {
			return SyncAction(i), true
		}
	}
	return SyncFallback, false
}

// SyncRequest is what one statement's commit asks for in one database.
type SyncRequest struct {
	Level    SyncLevel
	Replicas int // @@cluster_sync_replicas (ignored by MAJORITY)
	Timeout  time.Duration
	Action   SyncAction
}

// AckPos is what one streaming secondary has acknowledged of a database.
type AckPos struct {
	Written journal.LSN
	Applied journal.LSN
}

// SyncNeed is how many secondaries must acknowledge a commit at level:
// replicas for RECEIVED and APPLIED; for MAJORITY, a majority of members
// (the seeds and the primary) less the primary itself.
func SyncNeed(level SyncLevel, replicas, members int) int {
	switch level {
	case SyncOff:
		return 0
	case SyncMajority:
		return members / 2
	}
	if replicas < 1 {
		replicas = 1
	}
	return replicas
}

// SyncAcks counts the secondaries holding lsn at level: written for
// RECEIVED and MAJORITY, applied for APPLIED.
func SyncAcks(level SyncLevel, lsn journal.LSN, secondaries []AckPos) int {
	n := 0
	for _, p := range secondaries {
		have := p.Written
		if level == SyncApplied {
			have = p.Applied
		}
		if have >= lsn {
			n++
		}
	}
	return n
}

// SyncOutcome is how a wait ended.
type SyncOutcome uint8

const (
	SyncConfirmed SyncOutcome = iota // the acks arrived: plain OK
	SyncWarned                       // OK with warning 9004
	SyncFailed                       // error 9004; the write stays committed
)

// SyncResult is a wait's end: the outcome and, unless confirmed, the text
// of warning or error 9004.
type SyncResult struct {
	Outcome SyncOutcome
	Message string
}

const syncPrefix = "Synchronous replication: transaction committed locally, "

// SyncShortfall decides a wait the acks did not end: after its timeout
// (timedOut), or at once because fewer secondaries stream than needed, or
// because the database is degraded. FALLBACK warns, ERROR fails; WAIT
// never comes here.
func SyncShortfall(req SyncRequest, acks, need, streaming int, timedOut, degraded bool) SyncResult {
	var msg string
	switch {
	case timedOut:
		msg = fmt.Sprintf("%d of %d acknowledgement(s) received within %d ms", acks, need, req.Timeout.Milliseconds())
	case streaming < need:
		msg = fmt.Sprintf("only %d secondary(ies) connected, %d required", streaming, need)
	case degraded:
		msg = fmt.Sprintf("%d of %d acknowledgement(s) received: the database is in the degraded state after a timeout, writes do not wait until the secondaries catch up", acks, need)
	}
	if req.Action == SyncError {
		return SyncResult{Outcome: SyncFailed, Message: syncPrefix + msg}
	}
	return SyncResult{Outcome: SyncWarned, Message: syncPrefix + msg}
}

// SyncCancelled is a wait interrupted by KILL QUERY: success with warning.
func SyncCancelled() SyncResult {
	return SyncResult{Outcome: SyncWarned, Message: syncPrefix + "wait cancelled"}
}

// SyncNoLongerPrimary is a wait interrupted because the node stopped being
// primary (why: demoted, fenced).
func SyncNoLongerPrimary(why string) SyncResult {
	return SyncResult{Outcome: SyncFailed, Message: syncPrefix + "node is no longer primary (" + why + ")"}
}

// SyncedRefusals is the guarantee at promotion (§17.8.6): a database whose
// writes were confirmed to clients up to synced, beyond what this node will
// hold after its catch-up (have), would lose them.
func SyncedRefusals(synced, have map[string]journal.LSN, names map[string]string) []string {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(synced)) {
		if s := synced[key]; s > have[key] {
			name := names[key]
			if name == "" {
				name = key
			}
			out = append(out, fmt.Sprintf("database %s has writes confirmed to clients up to position %d that no reachable node holds", name, s))
		}
	}
	return out
}

// PromotionSyncedRefusals is SyncedRefusals for a candidate: what it will
// hold of each database after its planned catch-up, against the SYNCED_LSN
// it knows (by lower-case database name).
func PromotionSyncedRefusals(local []LocalDB, plan []CatchUpStep, synced map[string]journal.LSN) []string {
	have, names := map[string]journal.LSN{}, map[string]string{}
	for _, l := range local {
		key := strings.ToLower(l.Name)
		have[key], names[key] = l.End, l.Name
	}
	for _, s := range plan {
		if key := strings.ToLower(s.DB); s.To > have[key] {
			have[key] = s.To
		}
	}
	return SyncedRefusals(synced, have, names)
}
