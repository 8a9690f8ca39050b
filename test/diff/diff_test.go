// Package diff runs the differential corpus (corpus/*.sql) against a
// miraj-server and a private MariaDB 10.11, both started here on free ports
// of 127.0.0.1, and fails on any difference that intended.txt does not list.
//
// Settings (environment):
//
//	MIRAJ_REQUIRE_MARIADB=1   fail instead of skipping when mariadbd is not installed
//	MIRAJ_DIFF_FILES=GLOB     the corpus files to run (default corpus/*.sql)
//	MIRAJ_DIFF_REPORT=FILE    write the full report there (it is logged with -v too)
//	MIRAJ_DIFF_SERVER=BIN     run this miraj-server binary instead of building ./cmd/miraj-server
//	                          (to measure another commit: its differences are reported, the run fails)
//	MIRAJ_DIFF_KEEP=1         keep the servers' data and logs (the path is logged)
//	MIRAJ_DIFF_PROPOSE=FILE   write there an entry of intended.txt for each statement with
//	                          unexpected differences, its reason to be written (TODO)
package diff

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/difftest"
)

// runTimeout bounds a whole run: the corpus takes seconds; a hang is a bug.
const runTimeout = 5 * time.Minute

func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("the differential corpus: not in the fast tier (-short)")
	}
	mariadbd := difftest.FindMariaDB()
	if mariadbd == "" {
		if os.Getenv("MIRAJ_REQUIRE_MARIADB") == "1" {
			t.Fatal("mariadbd not found (install mariadb-server: scripts/install-test-clients.sh) and MIRAJ_REQUIRE_MARIADB=1")
		}
		t.Skip("mariadbd not found: install mariadb-server (scripts/install-test-clients.sh) to run the differential corpus")
	}
	pattern := os.Getenv("MIRAJ_DIFF_FILES")
	if pattern == "" {
		pattern = "corpus/*.sql"
	}
	scripts, err := difftest.LoadScripts(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) == 0 {
		t.Fatalf("no corpus file matches %s", pattern)
	}
	list, err := difftest.LoadIntended("intended.txt")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if os.Getenv("MIRAJ_DIFF_KEEP") == "1" {
		if work, err = os.MkdirTemp("", "miraj-difftest-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("servers' data and logs in %s", work)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()

	miraj := difftest.StartMiraj(t, ctx, work, os.Getenv("MIRAJ_DIFF_SERVER"))
	maria := difftest.StartMariaDB(t, ctx, mariadbd, work)
	results, err := difftest.Run(ctx,
		difftest.Target{Name: "miraj", Host: "127.0.0.1", Port: miraj, User: "root"},
		difftest.Target{Name: "mariadb", Host: "127.0.0.1", Port: maria, User: "root"},
		scripts)
	if err != nil {
		t.Fatal(err)
	}
	rep := difftest.Compare(results, list)
	var buf bytes.Buffer
	rep.Write(&buf)
	if path := os.Getenv("MIRAJ_DIFF_PROPOSE"); path != "" {
		var p bytes.Buffer
		rep.Propose(&p)
		if err := os.WriteFile(path, p.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if path := os.Getenv("MIRAJ_DIFF_REPORT"); path != "" {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Log("\n" + buf.String())
	if n := len(rep.Unexpected()); n > 0 {
		t.Errorf("%d unexpected differences (fix them, or list them in test/diff/intended.txt with a reason)", n)
	}
	if n := len(rep.Stale); n > 0 {
		t.Errorf("%d entries of intended.txt match no difference: remove them", n)
	}
}
