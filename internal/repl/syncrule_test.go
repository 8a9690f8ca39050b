package repl

import (
	"reflect"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/journal"
)

func TestSyncNeed(t *testing.T) {
	for _, c := range []struct {
		level             SyncLevel
		replicas, members int
		want              int
	}{
		{SyncOff, 1, 3, 0},
		{SyncReceived, 1, 3, 1},
		{SyncApplied, 2, 3, 2},
		{SyncReceived, 0, 3, 1}, // at least one
		{SyncMajority, 5, 3, 1}, // 2 of 3 with the primary: replicas ignored
		{SyncMajority, 1, 5, 2}, // 3 of 5
		{SyncMajority, 1, 4, 2}, // 3 of 4
		{SyncMajority, 1, 2, 1}, // 2 of 2
	} {
		if got := SyncNeed(c.level, c.replicas, c.members); got != c.want {
			t.Errorf("SyncNeed(%s, %d, %d) = %d, want %d", c.level, c.replicas, c.members, got, c.want)
		}
	}
}

func TestSyncAcks(t *testing.T) {
	secs := []AckPos{{Written: 100, Applied: 80}, {Written: 120, Applied: 120}, {Written: 90, Applied: 90}}
	for _, c := range []struct {
		level SyncLevel
		lsn   journal.LSN
		want  int
	}{
		{SyncReceived, 100, 2},
		{SyncMajority, 100, 2},
		{SyncApplied, 100, 1}, // written is not applied
		{SyncApplied, 80, 3},
		{SyncReceived, 121, 0},
	} {
		if got := SyncAcks(c.level, c.lsn, secs); got != c.want {
			t.Errorf("SyncAcks(%s, %d) = %d, want %d", c.level, c.lsn, got, c.want)
		}
	}
}

// The texts of warning and error 9004 are the spec's (§17.8.3, §17.8.4).
func TestSyncShortfallMessages(t *testing.T) {
	req := SyncRequest{Level: SyncReceived, Replicas: 1, Timeout: 10 * time.Second, Action: SyncFallback}
	got := SyncShortfall(req, 0, 1, 1, true, false)
	want := SyncResult{Outcome: SyncWarned, Message: "Synchronous replication: transaction committed locally, 0 of 1 acknowledgement(s) received within 10000 ms"}
	if got != want {
		t.Errorf("timeout, FALLBACK: %+v", got)
	}
	req.Action = SyncError
	got = SyncShortfall(req, 0, 1, 0, false, false)
	want = SyncResult{Outcome: SyncFailed, Message: "Synchronous replication: transaction committed locally, only 0 secondary(ies) connected, 1 required"}
	if got != want {
		t.Errorf("too few, ERROR: %+v", got)
	}
	if r := SyncCancelled(); r.Outcome != SyncWarned || r.Message != "Synchronous replication: transaction committed locally, wait cancelled" {
		t.Errorf("cancelled: %+v", r)
	}
	if r := SyncNoLongerPrimary("demoted"); r.Outcome != SyncFailed || r.Message != "Synchronous replication: transaction committed locally, node is no longer primary (demoted)" {
		t.Errorf("demoted: %+v", r)
	}
}

func TestSyncedRefusals(t *testing.T) {
	synced := map[string]journal.LSN{"shop": 500, "hr": 100}
	have := map[string]journal.LSN{"shop": 400, "hr": 100}
	got := SyncedRefusals(synced, have, map[string]string{"shop": "Shop"})
	want := []string{"database Shop has writes confirmed to clients up to position 500 that no reachable node holds"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("refusals %q, want %q", got, want)
	}
	have["shop"] = 500
	if got := SyncedRefusals(synced, have, nil); len(got) != 0 {
		t.Fatalf("refused with everything held: %q", got)
	}
}

func TestParseSyncNames(t *testing.T) {
	for _, s := range []string{"off", "Received", "APPLIED", "majority"} {
		if _, ok := ParseSyncLevel(s); !ok {
			t.Errorf("level %q refused", s)
		}
	}
	if _, ok := ParseSyncLevel("sometimes"); ok {
		t.Error("an unknown level was accepted")
	}
	if a, ok := ParseSyncAction("wait"); !ok || a != SyncWait {
		t.Errorf("wait: %v %v", a, ok)
	}
}
