package storage

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/miraj-db/miraj/internal/vfs"
)

// Checkpoints and database folders written through a file system that
// fails one operation, then a power loss: every committed row is there
// after the restart, whichever operation failed.
func TestCheckpointAndDropSurviveFaultsAndPowerLoss(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpRename, vfs.OpSyncDir, vfs.OpRemove, ""} {
		t.Run(fmt.Sprintf("fail_%s", op), func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "data")
			var failing vfs.Op
			injected := errors.New("injected")
			fs := vfs.NewCrashable(filepath.Join(root, ".trash"), func(o vfs.Op, _ string) error {
				if o == failing {
					return injected
				}
				return nil
			})
			open := func() *Engine {
				e, err := Open(Options{Root: dir, FS: fs, Policy: SaveCommit, Bind: testBind, SegmentBytes: 4096, KeepBytes: 0,
					Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				return e
			}
			e := open()
			db := setup(t, e)
			if err := e.Checkpoint(db); err != nil {
				t.Fatal(err)
			}
			if _, err := e.CreateDatabase("spare", nil); err != nil {
				t.Fatal(err)
			}
			// Enough rows that the journal rolls segments, which the
			// checkpoint lets go.
			for i := 10; i < 200; i++ {
				tx := db.Begin()
				if _, err := tx.Insert("users", []any{int64(i), fmt.Sprintf("u%03d", i), int64(i)}); err != nil {
					t.Fatal(err)
				}
				mustCommit(t, tx)
			}
			want := committed(t, db)
			failing = op
			ckErr := e.Checkpoint(db)
			dropErr := e.DropDatabase("spare")
			if op != "" && ckErr == nil && dropErr == nil {
				t.Fatalf("no operation failed with %s failing", op)
			}
			failing = ""
			e.Crash()
			if err := fs.Crash(); err != nil {
				t.Fatal(err)
			}
			e = open()
			defer e.Close()
			db2, ok := e.Database("app")
			if !ok {
				t.Fatal("database app is gone after the power loss")
			}
			if got := committed(t, db2); got != want {
				t.Fatalf("after a power loss (checkpoint: %v, drop: %v): %s, want %s", ckErr, dropErr, got, want)
			}
			// A drop that failed before its folder's fsync may be taken
			// back by the crash; one that returned is not.
			if _, ok := e.Database("spare"); ok && dropErr == nil {
				t.Fatal("a dropped database is back after the power loss")
			}
		})
	}
}
