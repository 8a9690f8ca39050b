package repl

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/storage/storagetest"
	"github.com/miraj-db/miraj/internal/transport"
)

// quarantineTestNode is a Node on an engine of its own holding database
// d, whose journal has 20 transactions of one row each (segments of 4 KiB),
// with the LSN each transaction starts at.
func quarantineTestNode(t *testing.T) (*Node, *storage.DB, []journal.LSN) {
	t.Helper()
	root := t.TempDir()
	eng, db, starts := storagetest.OneRowTxns(t, filepath.Join(root, "data"), "d", 20)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := &config.Cluster{Name: "c", Node: config.Node{ID: "n1"}, Members: []string{"n1"}}
	n, err := New(Options{Config: cfg, Storage: eng, StateDir: filepath.Join(root, "miraj"), Logger: quiet,
		Transport: &transport.Transport{}}) // never started: no peer is reached
	if err != nil {
		t.Fatal(err)
	}
	return n, db, starts
}

// quarantineReport quarantines db from LSN from and returns its report.
func quarantineReport(t *testing.T, n *Node, db *storage.DB, from journal.LSN) string {
	t.Helper()
	if _, err := n.quarantine.Database(n.keeper(), n.st, db, from, "test"); err != nil {
		t.Fatal(err)
	}
	reports, _ := filepath.Glob(filepath.Join(n.opts.StateDir, quarantineDir, "*", "*", "report.txt"))
	if len(reports) != 1 {
		t.Fatalf("%d reports, want 1", len(reports))
	}
	b, err := os.ReadFile(reports[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestQuarantineReportListsDivergedTransactions: with the whole diverged
// stretch still in the journal, the report lists each of its
// transactions and says nothing of checkpoints.
func TestQuarantineReportListsDivergedTransactions(t *testing.T) {
	n, db, starts := quarantineTestNode(t)
	rep := quarantineReport(t, n, db, starts[15])
	if !strings.Contains(rep, "transactions: 5 (5 committed)") {
		t.Fatalf("the report does not list the 5 transactions after LSN %d:\n%s", starts[15], rep)
	}
	if strings.Contains(rep, "no longer in the journal") {
		t.Fatalf("the report speaks of a journal cut by a checkpoint:\n%s", rep)
	}
}

// TestQuarantineReportSaysWhatACheckpointFolded: a checkpoint let the
// journal go past the point of divergence before the divergence was known
// (here as a primary without followers, which keeps no journal for
// them). The report says which transactions it can no longer list and
// where their rows are, rather than starting its list at the journal's
// start as if nothing came before.
func TestQuarantineReportSaysWhatACheckpointFolded(t *testing.T) {
	n, db, starts := quarantineTestNode(t)
	n.core.st.Role, n.core.role = RolePrimary, RolePrimary
	for range 2 {
		if err := n.st.Checkpoint(db); err != nil {
			t.Fatal(err)
		}
	}
	start := db.Journal().Start()
	if start <= starts[5] {
		t.Fatalf("the checkpoints kept the journal from LSN %d: the test needs it cut past %d", start, starts[5])
	}
	rep := quarantineReport(t, n, db, starts[5])
	want := fmt.Sprintf("The transactions from LSN %d to %d are no longer in the journal", starts[5], start)
	if !strings.Contains(rep, want) || !strings.Contains(rep, "checkpoint-") {
		t.Fatalf("the report does not say that LSN %d to %d is only in the checkpoints:\n%s", starts[5], start, rep)
	}
	if !strings.Contains(rep, fmt.Sprintf("LSN range: %d to ", starts[5])) {
		t.Fatalf("the report's range does not start at the divergence (%d):\n%s", starts[5], rep)
	}
}

// TestUnstreamedJournalIsKept: a node that is not primary keeps its whole
// journal through a checkpoint until its current primary's stream has
// written to it (a former primary, fenced or demoted, or a secondary whose
// epoch or primary changed), so that a quarantine of what diverged lists
// every transaction; once streamed to, it keeps promotion_catchup_mb (0
// here: the journal goes up to the checkpoint).
func TestUnstreamedJournalIsKept(t *testing.T) {
	checkpointAs := func(from *streamedFrom) (journal.LSN, []journal.LSN) {
		t.Helper()
		n, db, starts := quarantineTestNode(t)
		n.core.st = State{Role: RoleSecondary, Epoch: 3, Primary: "n2"}
		n.core.role = RoleSecondary
		if from != nil {
			if from.base == nil {
				from.base = db.Latest().BaseID()
			}
			n.core.streamed["d"] = *from
		}
		if err := n.st.Checkpoint(db); err != nil {
			t.Fatal(err)
		}
		return db.Journal().Start(), starts
	}
	for _, from := range []*streamedFrom{
		nil,                       // never streamed to
		{epoch: 2, primary: "n2"}, // by an earlier epoch's primary
		{epoch: 3, primary: "n4"}, // by another primary of the epoch (a partition)
		{epoch: 3, primary: "n2", base: []byte("another incarnation")},
	} {
		if start, starts := checkpointAs(from); start > starts[0] {
			t.Fatalf("streamed to by %+v: the checkpoint let the journal go up to LSN %d", from, start)
		}
	}
	if start, starts := checkpointAs(&streamedFrom{epoch: 3, primary: "N2"}); start <= starts[5] {
		t.Fatalf("streamed to by the current primary: the journal still starts at LSN %d", start)
	}
}

// TestQuarantineOfAFormerPrimaryListsEverything: a fenced former primary
// checkpoints before the new primary's decision reaches it (simulator seed
// 20692); its journal is kept, and the quarantine lists every transaction
// after the divergence.
func TestQuarantineOfAFormerPrimaryListsEverything(t *testing.T) {
	n, db, starts := quarantineTestNode(t)
	n.core.st = State{Role: RoleFenced, Epoch: 2, Primary: "n3"}
	n.core.role = RoleFenced
	for range 2 {
		if err := n.st.Checkpoint(db); err != nil {
			t.Fatal(err)
		}
	}
	rep := quarantineReport(t, n, db, starts[5])
	if !strings.Contains(rep, "transactions: 15 (15 committed)") || strings.Contains(rep, "no longer in the journal") {
		t.Fatalf("the report does not list the 15 transactions after LSN %d:\n%s", starts[5], rep)
	}
}
