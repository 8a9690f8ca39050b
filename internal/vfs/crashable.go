package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Op names the operation an injected fault stands for.
type Op string

const (
	OpCreate  Op = "create"
	OpWrite   Op = "write"
	OpSync    Op = "fsync"
	OpSyncDir Op = "fsync folder"
	OpRename  Op = "rename"
	OpRemove  Op = "remove"
	OpMkdir   Op = "mkdir"
)

// Crashable is a file system over the operating system's that can fail
// any write, fsync, create, rename or removal (Faults), and that can crash:
// Crash puts back what a power loss would, under the strictest reading of
// POSIX:
//
//   - a file's bytes are those of its last fsync (or none, for a file
//     never fsync'd since it was created or truncated);
//   - an entry created, renamed or removed in a folder since the folder's
//     last fsync is undone (a rename between two folders, unless both were
//     synced since), newest first. A removal is kept aside until it is
//     durable, so that a crash can put the entry back.
//
// Only what goes through it is tracked: files and folders that exist when
// it is made, or that something else writes (the journal's segments), are
// taken as durable as they are.
type Crashable struct {
	inner FS
	// trash holds removed entries until their removal is durable.
	trash  string
	faults func(op Op, path string) error

	mu struct {
		sync.Mutex
		// pending: the namespace changes not durable yet, oldest first.
		pending []*change
		// files: the files written through this FS since the last crash,
		// by their current path.
		files map[string]*fileState
		seq   int
	}
}

// change is a folder entry created, renamed or removed.
type change struct {
	kind     changeKind
	path     string // created or removed: the entry; renamed: its new path
	from     string // renamed: the old path
	trashed  string // removed: where the entry waits
	waitsFor map[string]bool
}

type changeKind int

const (
	created changeKind = iota
	renamed
	removed
)

// fileState is what a crash leaves of a file written through the FS.
type fileState struct {
	path   string
	synced []byte // the bytes as of the last fsync
	dirty  bool   // written (or truncated) since
}

// NewCrashable returns a crashable file system over the operating
// system's. trash is a folder on the same file system, outside any folder
// something lists (removed entries wait there); faults, when set, is asked
// before each write, fsync, create, rename and removal, and the operation
// fails with its error.
func NewCrashable(trash string, faults func(op Op, path string) error) *Crashable {
	c := &Crashable{inner: Default, trash: trash, faults: faults}
	c.mu.files = map[string]*fileState{}
	return c
}

func (c *Crashable) fault(op Op, path string) error {
	if c.faults == nil {
		return nil
	}
	if err := c.faults(op, path); err != nil {
		return &os.PathError{Op: string(op), Path: path, Err: err}
	}
	return nil
}

func (c *Crashable) Create(name string, perm os.FileMode) (File, error) {
	name = filepath.Clean(name)
	if err := c.fault(OpCreate, name); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.mu.files[name]
	if st == nil {
		st = &fileState{path: name}
		if data, err := os.ReadFile(name); err == nil {
			st.synced = data // there before: durable as it is
		} else if errors.Is(err, fs.ErrNotExist) {
			c.noteLocked(&change{kind: created, path: name, waitsFor: dirs(name)})
		}
	}
	f, err := c.inner.Create(name, perm)
	if err != nil {
		return nil, err
	}
	st.dirty = true
	c.mu.files[name] = st
	return &crashFile{File: f, c: c, st: st}, nil
}

func (c *Crashable) Open(name string) (File, error)             { return c.inner.Open(name) }
func (c *Crashable) ReadFile(name string) ([]byte, error)       { return c.inner.ReadFile(name) }
func (c *Crashable) ReadDir(name string) ([]os.DirEntry, error) { return c.inner.ReadDir(name) }
func (c *Crashable) Stat(name string) (os.FileInfo, error)      { return c.inner.Stat(name) }

func (c *Crashable) MkdirAll(name string, perm os.FileMode) error {
	// The folders it creates, outermost first.
	var missing []string
	for p := filepath.Clean(name); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || filepath.Dir(p) == p {
			break
		}
		missing = append([]string{p}, missing...)
	}
	if len(missing) == 0 {
		return nil
	}
	if err := c.fault(OpMkdir, name); err != nil {
		return err
	}
	if err := c.inner.MkdirAll(name, perm); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range missing {
		c.noteLocked(&change{kind: created, path: p, waitsFor: dirs(p)})
	}
	return nil
}

func (c *Crashable) Rename(oldname, newname string) error {
	oldname, newname = filepath.Clean(oldname), filepath.Clean(newname)
	if err := c.fault(OpRename, newname); err != nil {
		return err
	}
	if _, err := os.Lstat(oldname); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := os.Lstat(newname); err == nil {
		// Replacing an entry removes it, in the same folder change.
		if err := c.removeLocked(newname); err != nil {
			return err
		}
	}
	if err := c.inner.Rename(oldname, newname); err != nil {
		return err
	}
	c.movedLocked(oldname, newname)
	c.noteLocked(&change{kind: renamed, path: newname, from: oldname, waitsFor: dirs(oldname, newname)})
	return nil
}

func (c *Crashable) Remove(name string) error {
	name = filepath.Clean(name)
	if err := c.fault(OpRemove, name); err != nil {
		return err
	}
	fi, err := os.Lstat(name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		if ents, err := os.ReadDir(name); err != nil {
			return err
		} else if len(ents) > 0 {
			return &os.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.removeLocked(name)
}

func (c *Crashable) RemoveAll(name string) error {
	name = filepath.Clean(name)
	if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := c.fault(OpRemove, name); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.removeLocked(name)
}

// removeLocked moves name into the trash until its removal is durable.
func (c *Crashable) removeLocked(name string) error {
	if err := os.MkdirAll(c.trash, 0o755); err != nil {
		return err
	}
	c.mu.seq++
	trashed := filepath.Join(c.trash, fmt.Sprintf("%d", c.mu.seq))
	if err := os.Rename(name, trashed); err != nil {
		return err
	}
	c.movedLocked(name, trashed)
	c.noteLocked(&change{kind: removed, path: name, trashed: trashed, waitsFor: dirs(name)})
	return nil
}

func (c *Crashable) SyncDir(name string) error {
	if err := c.fault(OpSyncDir, name); err != nil {
		return err
	}
	if err := c.inner.SyncDir(name); err != nil {
		return err
	}
	name = filepath.Clean(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.mu.pending[:0]
	for _, ch := range c.mu.pending {
		delete(ch.waitsFor, name)
		if len(ch.waitsFor) > 0 {
			kept = append(kept, ch)
			continue
		}
		if ch.kind == removed {
			// Durable: the entry is gone for good.
			os.RemoveAll(ch.trashed)
			c.forgetLocked(ch.trashed)
		}
	}
	c.mu.pending = kept
	return nil
}

// Crash puts the files and folders written through c back as a power loss
// would leave them (see Crashable), and forgets what it tracked. The
// caller has stopped every writer first.
func (c *Crashable) Crash() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for i := len(c.mu.pending) - 1; i >= 0; i-- {
		ch := c.mu.pending[i]
		switch ch.kind {
		case created:
			c.forgetLocked(ch.path)
			keep(os.RemoveAll(ch.path))
		case renamed:
			keep(c.putBackLocked(ch.path, ch.from))
		case removed:
			keep(c.putBackLocked(ch.trashed, ch.path))
		}
	}
	c.mu.pending = nil
	for _, st := range c.mu.files {
		if !st.dirty {
			continue
		}
		if _, err := os.Lstat(st.path); err != nil {
			continue
		}
		keep(os.WriteFile(st.path, st.synced, 0o644))
	}
	c.mu.files = map[string]*fileState{}
	keep(os.RemoveAll(c.trash))
	return first
}

// putBackLocked moves an entry back to where it was before a change that
// a crash undoes. An entry there now was made since, in a folder not
// synced since either (something not written through c, as a journal
// creating its folder): the crash takes it back too.
func (c *Crashable) putBackLocked(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		c.forgetLocked(to)
		if err := os.RemoveAll(to); err != nil {
			return err
		}
	}
	if err := os.Rename(from, to); err != nil {
		return err
	}
	c.movedLocked(from, to)
	return nil
}

// noteLocked records a namespace change not durable yet.
func (c *Crashable) noteLocked(ch *change) {
	c.mu.pending = append(c.mu.pending, ch)
}

// movedLocked follows an entry (a file or a whole folder) from old to new:
// the files under it, and the folders the pending changes wait for.
func (c *Crashable) movedLocked(old, new string) {
	moved := func(p string) (string, bool) {
		if p == old {
			return new, true
		}
		if strings.HasPrefix(p, old+string(filepath.Separator)) {
			return new + p[len(old):], true
		}
		return p, false
	}
	files := map[string]*fileState{}
	for p, st := range c.mu.files {
		if np, ok := moved(p); ok {
			st.path = np
		}
		files[st.path] = st
	}
	c.mu.files = files
	// A pending change keeps the names it was made under in their folder
	// (undone newest first, each finds the names as they were right after
	// it; the entry named old now may be another one). But a change made
	// inside a folder that moves follows it, as do the folders a change
	// waits for: the folder's fsync makes the changes in it durable under
	// either name, and a move made durable is not undone.
	inside := func(p string) string {
		if strings.HasPrefix(p, old+string(filepath.Separator)) {
			return new + p[len(old):]
		}
		return p
	}
	for _, ch := range c.mu.pending {
		ch.path = inside(ch.path)
		if ch.from != "" {
			ch.from = inside(ch.from)
		}
		w := map[string]bool{}
		for d := range ch.waitsFor {
			nd, _ := moved(d)
			w[nd] = true
		}
		ch.waitsFor = w
	}
}

// forgetLocked stops tracking the files under p (removed for good).
func (c *Crashable) forgetLocked(p string) {
	for q := range c.mu.files {
		if q == p || strings.HasPrefix(q, p+string(filepath.Separator)) {
			delete(c.mu.files, q)
		}
	}
}

// dirs returns the folders of paths, whose fsync makes an entry change
// in them durable.
func dirs(paths ...string) map[string]bool {
	out := map[string]bool{}
	for _, p := range paths {
		out[filepath.Dir(filepath.Clean(p))] = true
	}
	return out
}

// crashFile is a file written through a Crashable.
type crashFile struct {
	File
	c  *Crashable
	st *fileState
}

func (f *crashFile) Write(p []byte) (int, error) {
	if err := f.c.fault(OpWrite, f.Name()); err != nil {
		return 0, err
	}
	f.c.mu.Lock()
	f.st.dirty = true
	f.c.mu.Unlock()
	return f.File.Write(p)
}

func (f *crashFile) Sync() error {
	if err := f.c.fault(OpSync, f.Name()); err != nil {
		return err
	}
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	data, err := os.ReadFile(f.st.path)
	if err != nil {
		return err
	}
	f.st.synced, f.st.dirty = data, false
	return nil
}
