package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql/types"

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
	if got := out.String(); strings.Contains(got, "only in the folder's checkpoints") || !strings.HasSuffix(got, "transaction(s), 1 row change(s)\n") {
		t.Fatalf("from LSN %d, the last transaction:\n%s", starts[19], got)
	}
}

// TestListSQLValueTypes lists a journal whose row holds TIME, JSON and
// geometry values, which storage encodes with the SQL layer's codecs
// (tags 64–66, internal/storage/sqlvalues): the tool, which does not link
// the SQL layer, reads them.
func TestListSQLValueTypes(t *testing.T) {
	root := t.TempDir()
	row := []any{int64(1), types.Timespan(-(838*3600 + 59*60 + 59) * 1_000_000),
		types.JSONDocument{Val: map[string]any{"a": []any{float64(1), "x", nil, true}}},
		types.Point{SRID: 4326, X: 1.5, Y: -2}}
	eng, _ := storagetest.OneTxn(t, root, "d", row)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := list(&out, filepath.Join(root, storage.DirName("d")), 0); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("INSERT INTO `t` VALUES (1, %v, %v, %v);", row[1], row[2], row[3])
	if got := out.String(); !strings.Contains(got, want) || !strings.HasSuffix(got, "transaction(s), 1 row change(s)\n") {
		t.Fatalf("listing:\n%s\nwant the line %s", got, want)
	}
}
