package storage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/miraj-db/miraj/internal/journal"
)

// Checkpoints lists a folder's checkpoint files newest first (by LSN, then
// by sequence), what the quarantine report and miraj-quarantine read as
// "the newest checkpoint moved aside"; other files are left out.
func TestCheckpointsNewestFirst(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{
		"checkpoint-00000000000000000100-00000000000000000003.ckpt",
		"checkpoint-00000000000000000900-00000000000000000009.ckpt",
		"checkpoint-00000000000000000900-00000000000000000008.ckpt",
		"checkpoint-00000000000000000500-00000000000000000005.ckpt",
		"checkpoint-00000000000000000950-00000000000000000010.ckpt.tmp", // not written whole
		"checkpoint-00000000000000000990.ckpt",                          // not a checkpoint's name
		"journal-00000000000000000000.log",
	} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Checkpoints(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		lsn  journal.LSN
		name string
	}{
		{900, "checkpoint-00000000000000000900-00000000000000000009.ckpt"},
		{900, "checkpoint-00000000000000000900-00000000000000000008.ckpt"},
		{500, "checkpoint-00000000000000000500-00000000000000000005.ckpt"},
		{100, "checkpoint-00000000000000000100-00000000000000000003.ckpt"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d checkpoints %v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if got[i].LSN != w.lsn || got[i].Path != filepath.Join(dir, w.name) {
			t.Errorf("checkpoint %d: got %d %s, want %d %s", i, got[i].LSN, got[i].Path, w.lsn, w.name)
		}
	}
	if _, err := Checkpoints(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing folder: no error")
	}
}
