package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/storage"
	"github.com/miraj-db/miraj/internal/storage/storagetest"
)

// TestListSaysWhatCheckpointsHold lists a database folder whose journal a
// checkpoint cut: from an LSN before the journal's start, the listing says
// that those transactions are only in the checkpoints, then lists what the
// journal holds; from an LSN inside it, it lists without that line.
func TestListSaysWhatCheckpointsHold(t *testing.T) {
	root := t.TempDir()
	eng, db, starts := storagetest.OneRowTxns(t, root, "d", 20)
	if err := eng.Checkpoint(db); err != nil {
		t.Fatal(err)
	}
	start := db.Journal().Start()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if start <= starts[5] {
		t.Fatalf("the checkpoint kept the journal from LSN %d: the test needs it cut past %d", start, starts[5])
	}
	dir := filepath.Join(root, storage.DirName("d"))

	var out bytes.Buffer
	if err := list(&out, dir, starts[5]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("the transactions from LSN %d to there are only in the folder's checkpoints", starts[5])) {
		t.Fatalf("from LSN %d, before the journal's start (%d), the listing does not say so:\n%s", starts[5], start, out.String())
	}
	out.Reset()
	if err := list(&out, dir, starts[19]); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); strings.Contains(got, "only in the folder's checkpoints") || !strings.Contains(got, "-- 1 transaction(s), 1 row change(s)") {
		t.Fatalf("from LSN %d, the last transaction:\n%s", starts[19], got)
	}
}
