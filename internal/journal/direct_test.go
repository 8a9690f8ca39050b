package journal

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// directSupported reports whether dir's file system takes direct I/O.
func directSupported(t *testing.T, dir string) bool {
	f, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	return directIO(f)
}

// forEachWriteMode runs fn with the log written in each mode: direct I/O
// (where the test folder's file system takes it), buffered, and in blocks
// through the page cache. open opens a log in dir in that mode.
func forEachWriteMode(t *testing.T, fn func(t *testing.T, open func(dir string, segmentBytes int64) *Log)) {
	for _, m := range []struct {
		name   string
		mode   WriteMode
		direct bool
	}{{"direct", WriteAuto, true}, {"buffered", WriteBuffered, false}, {"blocks", WriteBlocks, true}} {
		t.Run(m.name, func(t *testing.T) {
			if m.mode == WriteAuto && !directSupported(t, t.TempDir()) {
				t.Skipf("the file system of %s does not take direct I/O", t.TempDir())
			}
			fn(t, func(dir string, segmentBytes int64) *Log {
				t.Helper()
				l, err := Open(Options{Dir: dir, SegmentBytes: segmentBytes, Writes: m.mode,
					Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
				if err != nil {
					t.Fatal(err)
				}
				l.mu.Lock()
				direct := l.mu.direct
				l.mu.Unlock()
				if direct != m.direct {
					t.Fatalf("writes in blocks: %v, want %v", direct, m.direct)
				}
				return l
			})
		})
	}
}

// Direct I/O is used where Linux's file systems take it (ext4, xfs, btrfs,
// tmpfs since 6.6); the test says so when the test folder's does not.
func TestDirectIOWhereTheFileSystemTakesIt(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("direct I/O is Linux's")
	}
	dir := t.TempDir()
	if !directSupported(t, dir) {
		t.Skipf("the file system of %s does not take direct I/O", dir)
	}
	l, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.mu.direct {
		t.Fatal("the log writes through the page cache where direct I/O is available")
	}
}

// Frames of every size, many ending inside a block, survive closing and
// reopening the log, appends after a reopen (which rewrite the last block
// from the bytes read back), segment rolls and a truncation inside a block.
func TestAppendsAcrossBlocksReadBack(t *testing.T) {
	forEachWriteMode(t, func(t *testing.T, open func(string, int64) *Log) {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(1, 2))
		var want []string
		l := open(dir, 40<<10)
		appendSome := func(n int) {
			for range n {
				p := fmt.Sprintf("%d:%s", len(want), strings.Repeat("x", rng.IntN(3000)))
				var err error
				var end LSN
				b := tx(p)
				if rng.IntN(2) == 0 {
					_, end, err = l.Append(b)
				} else {
					_, end, err = l.AppendDeferred(b)
				}
				if err != nil {
					t.Fatal(err)
				}
				// The log keeps no reference to the caller's buffer,
				// which may serve another append at once.
				for i := range b {
					b[i] = 0xff
				}
				if rng.IntN(3) > 0 {
					if err := l.SyncTo(context.Background(), end); err != nil {
						t.Fatal(err)
					}
				}
				want = append(want, p, "commit")
			}
		}
		check := func(when string) {
			t.Helper()
			if got := readAll(t, l); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("%s: read back %d frames, want %d (first difference at %d)", when, len(got), len(want), firstDiff(got, want))
			}
		}
		appendSome(60)
		check("written")
		for round := range 3 {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = open(dir, 40<<10)
			check(fmt.Sprintf("reopened %d", round))
			appendSome(25)
			check(fmt.Sprintf("appended after reopen %d", round))
		}
		// Cut the log inside a block (after a transaction whose end is not
		// on a block boundary), append, reopen.
		var cut LSN
		var keep int
		l.Read(l.mu.segments[len(l.mu.segments)-1], func(lsn LSN, typ FrameType, _ []byte) error {
			if typ == FrameCommit && (lsn+HeaderBytes)%blockBytes != 0 && cut == 0 {
				cut = lsn + HeaderBytes
			}
			return nil
		})
		if cut == 0 {
			t.Fatal("no transaction ends inside a block of the last segment")
		}
		n := 0
		l.Read(l.Start(), func(lsn LSN, typ FrameType, _ []byte) error {
			if lsn < cut {
				n++
			}
			return nil
		})
		keep = n
		if err := l.Truncate(cut); err != nil {
			t.Fatal(err)
		}
		want = want[:keep]
		check("truncated")
		appendSome(10)
		check("appended after the truncation")
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = open(dir, 40<<10)
		defer l.Close()
		check("reopened after the truncation")
	})
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// ReadRange answers the same bytes from the log's recent bytes in memory as
// from its files, across the point where the bytes kept in memory start.
func TestReadRangeFromMemoryAndFile(t *testing.T) {
	forEachWriteMode(t, func(t *testing.T, open func(string, int64) *Log) {
		l := open(t.TempDir(), DefaultSegmentBytes)
		defer l.Close()
		var all []byte
		var starts []LSN
		for i := 0; int64(len(all)) < 3*recentBytes; i++ {
			b := tx(fmt.Sprintf("%06d%s", i, strings.Repeat("y", i%700)))
			start, _, err := l.Append(b)
			if err != nil {
				t.Fatal(err)
			}
			starts = append(starts, start)
			all = append(all, b...)
		}
		if l.mu.recentStart == 0 || len(l.mu.recent) < recentBytes {
			t.Fatalf("memory keeps [%d, +%d) of a log of %d bytes", l.mu.recentStart, len(l.mu.recent), len(all))
		}
		for _, from := range []LSN{0, starts[len(starts)/3], l.mu.recentStart - 10, starts[len(starts)-5]} {
			// A frame boundary at or before from.
			i := 0
			for i+1 < len(starts) && starts[i+1] <= from {
				i++
			}
			from = starts[i]
			got, err := l.ReadRange(from, l.End(), 64<<10)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || !bytes.Equal(got, all[from:int(from)+len(got)]) {
				t.Fatalf("ReadRange from %d: %d bytes that differ from the log's", from, len(got))
			}
		}
	})
}

// A crash keeps every transaction that was fsync'd, in each write mode, and
// the log goes on from there: appends after the restart rewrite the last
// block from the bytes read back.
func TestCrashKeepsWhatWasSynced(t *testing.T) {
	forEachWriteMode(t, func(t *testing.T, open func(string, int64) *Log) {
		dir := t.TempDir()
		var synced []string
		for round := range 4 {
			l := open(dir, 40<<10)
			if got := readAll(t, l); strings.Join(got, ",") != strings.Join(synced, ",") {
				t.Fatalf("round %d: read back %d frames, want the %d synced", round, len(got), len(synced))
			}
			for i := range 30 {
				p := fmt.Sprintf("%d-%d%s", round, i, strings.Repeat("z", i*37))
				_, end, err := l.AppendDeferred(tx(p))
				if err != nil {
					t.Fatal(err)
				}
				if i < 20 {
					if err := l.SyncTo(context.Background(), end); err != nil {
						t.Fatal(err)
					}
					synced = append(synced, p, "commit")
				}
			}
			if err := l.Crash(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
