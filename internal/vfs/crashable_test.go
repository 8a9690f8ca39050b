package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func newCrashable(t *testing.T) (*Crashable, string) {
	t.Helper()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	return NewCrashable(filepath.Join(root, ".trash"), nil), data
}

func write(t *testing.T, fs FS, path, data string, sync bool) {
	t.Helper()
	f, err := fs.Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// contents returns a file's bytes, or "<none>" if it does not exist.
func contents(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func crash(t *testing.T, c *Crashable) {
	t.Helper()
	if err := c.Crash(); err != nil {
		t.Fatal(err)
	}
}

func TestCrashLosesWhatWasNotSynced(t *testing.T) {
	c, dir := newCrashable(t)
	a, b, x := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "x")
	write(t, c, a, "durable", true)
	write(t, c, b, "written only", false)
	if err := c.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	write(t, c, x, "in a folder never synced", true)
	// Before the crash, everything reads back.
	if got := contents(t, b); got != "written only" {
		t.Fatalf("b before the crash: %q", got)
	}
	crash(t, c)
	if got := contents(t, a); got != "durable" {
		t.Errorf("a: %q, want its synced bytes", got)
	}
	if got := contents(t, b); got != "" {
		t.Errorf("b: %q, want empty (its entry is durable, its bytes never synced)", got)
	}
	if got := contents(t, x); got != "<none>" {
		t.Errorf("x: %q, want gone (its folder was not synced after it was created)", got)
	}
}

func TestCrashUndoesRenamesAndRemovalsNotSynced(t *testing.T) {
	c, dir := newCrashable(t)
	p := filepath.Join(dir, "state")
	write(t, c, p, "old", true)
	if err := c.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	// The atomic-replace pattern without the folder's fsync: the old file
	// comes back.
	write(t, c, p+".tmp", "new", true)
	if err := c.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, p); got != "new" {
		t.Fatalf("before the crash: %q", got)
	}
	crash(t, c)
	if got, tmp := contents(t, p), contents(t, p+".tmp"); got != "old" || tmp != "<none>" {
		t.Fatalf("after a rename not synced: state %q, tmp %q; want old and none", got, tmp)
	}

	// With the folder's fsync, the new file stays.
	write(t, c, p+".tmp", "new", true)
	if err := c.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
	if err := c.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	crash(t, c)
	if got := contents(t, p); got != "new" {
		t.Fatalf("after a synced rename: %q", got)
	}

	// A removal not synced is undone; a synced one is not.
	if err := c.Remove(p); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, p); got != "<none>" {
		t.Fatalf("removed: %q", got)
	}
	crash(t, c)
	if got := contents(t, p); got != "new" {
		t.Fatalf("after a removal not synced: %q", got)
	}
	if err := c.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := c.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	crash(t, c)
	if got := contents(t, p); got != "<none>" {
		t.Fatalf("after a synced removal: %q", got)
	}
}

func TestCrashUndoesFolderMoves(t *testing.T) {
	c, dir := newCrashable(t)
	db, aside := filepath.Join(dir, "db"), filepath.Join(dir, "q", "t1", "db")
	if err := c.MkdirAll(db, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, c, filepath.Join(db, "ckpt"), "rows", true)
	if err := c.SyncDir(db); err != nil {
		t.Fatal(err)
	}
	if err := c.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	// Moved aside into new folders; the destination's folder synced, the
	// source's not: the move is undone, the new folders too.
	if err := c.MkdirAll(filepath.Dir(aside), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(db, aside); err != nil {
		t.Fatal(err)
	}
	if err := c.SyncDir(filepath.Dir(aside)); err != nil {
		t.Fatal(err)
	}
	crash(t, c)
	if got := contents(t, filepath.Join(db, "ckpt")); got != "rows" {
		t.Fatalf("the folder's file after an undone move: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "q")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the folders created for the move survive: %v", err)
	}

	// Every folder synced: the move holds, and a file written in the
	// moved folder before it was moved keeps its synced bytes.
	if err := c.MkdirAll(filepath.Dir(aside), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, c, filepath.Join(db, "report"), "kept", true)
	if err := c.SyncDir(db); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(db, aside); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(aside), filepath.Dir(filepath.Dir(aside)), filepath.Join(dir, "q"), dir} {
		if err := c.SyncDir(d); err != nil {
			t.Fatal(err)
		}
	}
	crash(t, c)
	if got := contents(t, filepath.Join(aside, "report")); got != "kept" {
		t.Fatalf("moved folder's report: %q", got)
	}
}

func TestFaultsFailTheOperation(t *testing.T) {
	root := t.TempDir()
	var fail Op
	c := NewCrashable(filepath.Join(root, ".trash"), func(op Op, path string) error {
		if op == fail {
			return errors.New("injected")
		}
		return nil
	})
	p := filepath.Join(root, "f")
	for _, op := range []Op{OpCreate, OpWrite, OpSync, OpRename, OpSyncDir} {
		fail = op
		f, err := c.Create(p, 0o644)
		if err == nil {
			_, err = f.Write([]byte("x"))
			if err == nil {
				err = f.Sync()
			}
			f.Close()
		}
		if err == nil {
			err = c.Rename(p, p+"2")
		}
		if err == nil {
			err = c.SyncDir(root)
		}
		var pe *os.PathError
		if !errors.As(err, &pe) || pe.Op != string(op) {
			t.Errorf("fault on %s: got %v", op, err)
		}
	}
}

// A change inside a folder that then moves, the move made durable but not
// the change: the crash undoes the change where the folder is now.
func TestCrashUndoesChangesInsideAFolderMovedSince(t *testing.T) {
	c, dir := newCrashable(t)
	tmp, final := filepath.Join(dir, ".creating-db"), filepath.Join(dir, "db")
	if err := c.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, c, filepath.Join(tmp, "format.tmp"), "v2", true)
	if err := c.SyncDir(tmp); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(filepath.Join(tmp, "format.tmp"), filepath.Join(tmp, "format")); err != nil {
		t.Fatal(err)
	}
	// Neither the folder's fsync of the rename inside it...
	if err := c.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	// ... but the move of the folder is durable.
	if err := c.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	crash(t, c)
	if got, tmpGot := contents(t, filepath.Join(final, "format")), contents(t, filepath.Join(final, "format.tmp")); got != "<none>" || tmpGot != "v2" {
		t.Fatalf("after the crash: format %q, format.tmp %q; want the rename inside undone", got, tmpGot)
	}
}
