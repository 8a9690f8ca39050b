// Package atomicfile replaces small files whole: a reader (or a restart
// after a crash) sees the old contents or the new, never a mix.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/miraj-db/miraj/internal/vfs"
)

// Write replaces path with data on the operating system's file system.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteFS(vfs.Default, path, data, perm)
}

// WriteFS replaces path with data: it writes a temporary file beside it,
// fsyncs it, renames it over path and fsyncs the folder.
func WriteFS(fs vfs.FS, path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	f, err := fs.Create(tmp, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		fs.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fs.Remove(tmp)
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		fs.Remove(tmp)
		return err
	}
	if err := fs.Rename(tmp, path); err != nil {
		return err
	}
	if err := fs.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("fsync %s: %w", filepath.Dir(path), err)
	}
	return nil
}

// SyncDir makes the entries of a folder (files created, renamed or
// removed in it) durable.
func SyncDir(dir string) error {
	if err := vfs.Default.SyncDir(dir); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
