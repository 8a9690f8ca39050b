// Package vfs is the file system Miraj writes its state files through:
// the cluster state, checkpoints, database folders (create, drop, copy
// install, quarantine) and quarantine reports. The server uses Default,
// the operating system's; the simulator uses a Crashable file system,
// which fails writes and fsyncs on demand and, at a crash, loses what was
// not made durable (pebble's vfs and errorfs).
//
// The journal's segments are not written through it: the journal has its
// own fault injection and crash model (journal.Options.Faults,
// journal.Log.Crash), on the same folders.
//
// Concurrency: an FS is safe for concurrent use; a File is used by one
// goroutine at a time.
//
//	f, err := fs.Create(path, 0o644)
//	… f.Write(data); f.Sync(); f.Close()
//	fs.Rename(path, final); fs.SyncDir(filepath.Dir(final))
package vfs

import (
	"io"
	"os"
	"path/filepath"
)

// File is a file opened through an FS.
type File interface {
	io.Reader
	io.Writer
	io.Closer
	// Sync makes what was written durable (fsync).
	Sync() error
	Name() string
}

// FS is the file operations Miraj's state files use. A created or renamed
// entry, or a removed one, is durable only once its folder is synced
// (SyncDir); a file's bytes only once the file is (File.Sync).
type FS interface {
	// Create creates or truncates name, open for writing.
	Create(name string, perm os.FileMode) (File, error)
	// Open opens name for reading.
	Open(name string) (File, error)
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]os.DirEntry, error)
	Stat(name string) (os.FileInfo, error)
	MkdirAll(name string, perm os.FileMode) error
	// Rename moves oldname to newname, replacing a file there.
	Rename(oldname, newname string) error
	Remove(name string) error
	RemoveAll(name string) error
	// SyncDir makes the entries of a folder durable.
	SyncDir(name string) error
}

// Default is the operating system's file system.
var Default FS = osFS{}

// Or returns fs, or Default when fs is nil (an options struct's zero value).
func Or(fs FS) FS {
	if fs == nil {
		return Default
	}
	return fs
}

type osFS struct{}

func (osFS) Create(name string, perm os.FileMode) (File, error) {
	return os.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
}
func (osFS) Open(name string) (File, error)               { return os.Open(name) }
func (osFS) ReadFile(name string) ([]byte, error)         { return os.ReadFile(name) }
func (osFS) ReadDir(name string) ([]os.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) Stat(name string) (os.FileInfo, error)        { return os.Stat(name) }
func (osFS) MkdirAll(name string, perm os.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                  { return os.RemoveAll(name) }

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// MkdirAllSync creates name and any folder above it that is missing, each
// made durable in its parent (MkdirAll alone leaves new folders that a
// crash may take back, with whatever was put in them since).
func MkdirAllSync(fs FS, name string, perm os.FileMode) error {
	var missing []string
	for p := filepath.Clean(name); ; p = filepath.Dir(p) {
		if _, err := fs.Stat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		missing = append(missing, p)
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fs.MkdirAll(name, perm); err != nil {
		return err
	}
	// Outermost last: its parent existed before.
	for _, p := range missing {
		if err := fs.SyncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}
