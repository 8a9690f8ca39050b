package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const frameData FrameType = 10

func tx(payloads ...string) []byte {
	var b []byte
	for _, p := range payloads {
		b = AppendFrame(b, frameData, []byte(p))
	}
	return AppendFrame(b, FrameCommit, nil)
}

func openLog(t *testing.T, dir string, logBuf *bytes.Buffer) *Log {
	t.Helper()
	l, err := Open(Options{Dir: dir, SegmentBytes: 256, Logger: slog.New(slog.NewTextHandler(logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func readAll(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	if err := l.Read(l.Start(), func(lsn LSN, typ FrameType, p []byte) error {
		if typ == FrameCommit {
			out = append(out, "commit")
		} else {
			out = append(out, string(p))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFrameRoundTrip(t *testing.T) {
	b := AppendFrame(nil, frameData, []byte("hello"))
	typ, p, n, ok := DecodeFrame(b)
	if !ok || typ != frameData || string(p) != "hello" || n != len(b) {
		t.Fatalf("decode = %v %q %d %v", typ, p, n, ok)
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x40
		if _, _, _, ok := DecodeFrame(c); ok {
			t.Fatalf("flipped byte %d not detected", i)
		}
	}
}

func TestAppendReopenAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	var lb bytes.Buffer
	l := openLog(t, dir, &lb)
	var want []string
	for i := 0; i < 40; i++ {
		p := fmt.Sprintf("row-%02d", i)
		if _, end, err := l.Append(tx(p)); err != nil {
			t.Fatal(err)
		} else if err := l.SyncTo(context.Background(), end); err != nil {
			t.Fatal(err)
		}
		want = append(want, p, "commit")
	}
	end := l.End()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segs, _ := listSegments(dir)
	if len(segs) < 3 {
		t.Fatalf("expected several segments, got %d", len(segs))
	}
	l = openLog(t, dir, &lb)
	defer l.Close()
	if l.End() != end {
		t.Fatalf("end after reopen = %d, want %d", l.End(), end)
	}
	if got := readAll(t, l); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("read back %v", got)
	}
}

func TestTornTailIsCut(t *testing.T) {
	dir := t.TempDir()
	var lb bytes.Buffer
	l := openLog(t, dir, &lb)
	l.Append(tx("a"))
	_, committed, _ := l.Append(tx("b"))
	l.Close()
	// A crash in the middle of writing the next transaction: its first
	// frame complete, the second torn.
	seg := filepath.Join(dir, segmentName(0))
	f, _ := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
	next := tx("c", "dddddddddddd")
	f.Write(next[:len(next)-12])
	f.Close()

	l = openLog(t, dir, &lb)
	defer l.Close()
	if l.End() != committed {
		t.Fatalf("end = %d, want %d (last commit)", l.End(), committed)
	}
	if !strings.Contains(lb.String(), "torn frame") {
		t.Fatalf("torn tail not logged: %s", lb.String())
	}
	if got := readAll(t, l); strings.Join(got, ",") != "a,commit,b,commit" {
		t.Fatalf("read back %v", got)
	}
}

func TestUncommittedFramesAreCut(t *testing.T) {
	dir := t.TempDir()
	var lb bytes.Buffer
	l := openLog(t, dir, &lb)
	_, committed, _ := l.Append(tx("a"))
	l.Append(AppendFrame(nil, frameData, []byte("no commit marker")))
	l.Close()
	l = openLog(t, dir, &lb)
	defer l.Close()
	if l.End() != committed {
		t.Fatalf("end = %d, want %d", l.End(), committed)
	}
	if !strings.Contains(lb.String(), "after the last commit marker") {
		t.Fatalf("cut not logged: %s", lb.String())
	}
}

// A replica appends a transaction's frames as they arrive, and a segment
// rolls between them: the frames of a transaction whose commit frame never
// came can span segments. Recovery cuts all of them, whole segments
// included, so that the log ends at its last commit, as it does when the
// tail fits in one segment.
func TestUnterminatedTailAcrossSegmentsIsCut(t *testing.T) {
	dir := t.TempDir()
	var lb bytes.Buffer
	l := openLog(t, dir, &lb)
	_, committed, _ := l.Append(tx("a"))
	for _, p := range []string{strings.Repeat("x", 300), "y", strings.Repeat("z", 300), "w"} {
		if _, _, err := l.Append(AppendFrame(nil, frameData, []byte(p))); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	if segs, _ := listSegments(dir); len(segs) < 3 {
		t.Fatalf("the tail is in %d segments, want it across three", len(segs))
	}
	l = openLog(t, dir, &lb)
	if l.End() != committed {
		t.Fatalf("end = %d, want the last commit's end %d", l.End(), committed)
	}
	if got := readAll(t, l); strings.Join(got, ",") != "a,commit" {
		t.Fatalf("log holds %q after recovery", got)
	}
	if !strings.Contains(lb.String(), "after the last commit marker") || !strings.Contains(lb.String(), "segments_removed=2") {
		t.Fatalf("cut not logged: %s", lb.String())
	}
	// What is written next follows the last commit, and a reopening finds
	// it there, with nothing of the cut tail.
	if _, _, err := l.Append(tx("b")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = openLog(t, dir, &lb)
	defer l.Close()
	if got := readAll(t, l); strings.Join(got, ",") != "a,commit,b,commit" {
		t.Fatalf("log holds %q after a second reopening", got)
	}
}

func TestCorruptFrameBeforeLastCommitIsAnError(t *testing.T) {
	dir := t.TempDir()
	var lb bytes.Buffer
	l := openLog(t, dir, &lb)
	l.Append(tx("first"))
	l.Append(tx("second"))
	l.Append(tx("third"))
	l.Close()
	seg := filepath.Join(dir, segmentName(0))
	data, _ := os.ReadFile(seg)
	off := len(tx("first")) + HeaderBytes + 2 // inside the payload of "second"
	data[off] ^= 0xff
	os.WriteFile(seg, data, 0o644)
	size := len(data)

	_, err := Open(Options{Dir: dir, SegmentBytes: 256, Logger: slog.New(slog.NewTextHandler(&lb, nil))})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open error = %v, want ErrCorrupt", err)
	}
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.File != seg || ce.Offset != int64(len(tx("first"))) {
		t.Fatalf("error %v does not name %s at offset %d", err, seg, len(tx("first")))
	}
	if st, _ := os.Stat(seg); st.Size() != int64(size) {
		t.Fatalf("corrupt journal was truncated to %d bytes", st.Size())
	}
}

func TestGroupCommitSharesFsyncs(t *testing.T) {
	dir := t.TempDir()
	var lb bytes.Buffer
	l, err := Open(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(&lb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				_, end, err := l.Append(tx(fmt.Sprintf("w%d-%d", w, i)))
				if err != nil {
					t.Error(err)
					return
				}
				if err := l.SyncTo(context.Background(), end); err != nil {
					t.Error(err)
					return
				}
				if l.Durable() < end {
					t.Errorf("durable %d < end %d after SyncTo", l.Durable(), end)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(readAll(t, l)); n != 8*50*2 {
		t.Fatalf("read %d frames", n)
	}

	// Eight commits appended, then eight waiters at once: the first
	// caller's fsync covers every one of them.
	before := l.Fsyncs()
	var ends [8]LSN
	for i := range ends {
		if _, ends[i], err = l.Append(tx(fmt.Sprintf("g%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range ends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.SyncTo(context.Background(), ends[i]); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := l.Fsyncs() - before; n != 1 {
		t.Fatalf("8 commits waiting together took %d fsyncs, want 1", n)
	}
	// Nothing new written: no fsync at all.
	if err := l.SyncTo(context.Background(), ends[7]); err != nil || l.Fsyncs()-before != 1 {
		t.Fatalf("a SyncTo of durable bytes fsync'd again (%v)", err)
	}
}

func TestRemoveBefore(t *testing.T) {
	dir := t.TempDir()
	var lb bytes.Buffer
	l := openLog(t, dir, &lb)
	defer l.Close()
	for i := 0; i < 40; i++ {
		l.Append(tx(fmt.Sprintf("row-%02d", i)))
	}
	mid := l.End() / 2
	if err := l.RemoveBefore(mid); err != nil {
		t.Fatal(err)
	}
	if l.Start() == 0 || l.Start() > mid {
		t.Fatalf("start after RemoveBefore(%d) = %d", mid, l.Start())
	}
	if err := l.Read(0, func(LSN, FrameType, []byte) error { return nil }); err == nil {
		t.Fatal("reading a removed position succeeded")
	}
	if len(readAll(t, l)) == 0 {
		t.Fatal("nothing left to read")
	}
}

// Removing old segments' files (slow for large files) holds up neither
// appends nor End; a removal that fails stops there, leaving a run of
// consecutive segments that the next open reads.
func TestRemoveBeforeOutsideTheLock(t *testing.T) {
	dir := t.TempDir()
	var lb bytes.Buffer
	l := openLog(t, dir, &lb)
	var cut LSN // a commit's end, where a checkpoint could be
	for i := 0; i < 200; i++ {
		_, end, err := l.Append(tx(fmt.Sprintf("row-%03d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if i == 150 {
			cut = end
		}
	}
	removed, failAt := 0, 3
	defer func() { removeFile = os.Remove }()
	removeFile = func(path string) error {
		done := make(chan struct{})
		go func() {
			defer close(done)
			l.End()
			l.Append(tx("beside the removal"))
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("End and Append waited for a segment's file removal")
		}
		if removed == failAt {
			return errors.New("injected failure")
		}
		removed++
		return os.Remove(path)
	}
	if err := l.RemoveBefore(cut); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("RemoveBefore with a failing removal: %v", err)
	}
	removeFile = os.Remove
	end := l.End()
	l.Close()
	// Opened again from a checkpoint at the cut, as a database is: the
	// files left (from the failed one on) are consecutive, and the log
	// ends where it did.
	again, err := Open(Options{Dir: dir, SegmentBytes: 256, StartLSN: cut, Logger: slog.New(slog.NewTextHandler(&lb, nil))})
	if err != nil {
		t.Fatalf("open after a failed removal: %v", err)
	}
	defer again.Close()
	if again.End() != end || again.Start() > cut {
		t.Fatalf("after a failed removal and a restart: log %d–%d, want it to end at %d and hold %d", again.Start(), again.End(), end, cut)
	}
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(AppendFrame(nil, frameData, []byte("x")))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		typ, p, n, ok := DecodeFrame(b)
		if !ok {
			return
		}
		again := AppendFrame(nil, typ, p)
		if !bytes.Equal(again, b[:n]) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// The current segment holds zeros ahead of the log (zeroAheadLocked): after
// a process crash, recovery takes them for the log's end without a word,
// keeps a last frame whose payload ends in zero bytes, and cuts a torn
// frame written over them as any torn tail; damage inside the log is still
// an error. A closed log's file ends where the log does.
func TestZerosAheadOfTheLog(t *testing.T) {
	open := func(dir string, lb *bytes.Buffer) (*Log, error) {
		return Open(Options{Dir: dir, SegmentBytes: 1 << 20, Logger: slog.New(slog.NewTextHandler(lb, nil))})
	}
	seg := func(dir string) string { return filepath.Join(dir, segmentName(0)) }
	size := func(dir string) int64 {
		fi, err := os.Stat(seg(dir))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	// write appends two transactions, the last frame's payload ending in
	// zero bytes, and leaves the log open as a killed process would.
	write := func(dir string) LSN {
		var lb bytes.Buffer
		l, err := open(dir, &lb)
		if err != nil {
			t.Fatal(err)
		}
		l.Append(tx("a"))
		_, end, _ := l.Append(AppendFrame(tx("b"), FrameCommit, []byte{7, 0, 0}))
		if err := l.SyncTo(context.Background(), end); err != nil {
			t.Fatal(err)
		}
		if size(dir) <= int64(end) {
			t.Fatalf("segment of %d bytes for a log ending at %d: no zeros ahead", size(dir), end)
		}
		return end
	}

	dir := t.TempDir()
	end := write(dir)
	var lb bytes.Buffer
	l, err := open(dir, &lb)
	if err != nil {
		t.Fatal(err)
	}
	if l.End() != end || lb.Len() != 0 {
		t.Fatalf("reopened at %d (log: %q), want %d and nothing logged", l.End(), lb.String(), end)
	}
	if got := strings.Join(readAll(t, l), ","); got != "a,commit,b,commit,commit" {
		t.Fatalf("read back %q", got)
	}
	_, end2, _ := l.Append(tx("c"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if size(dir) != int64(end2) {
		t.Fatalf("closed log's segment is %d bytes, the log ends at %d", size(dir), end2)
	}

	// A torn frame over the zeros is cut, and logged.
	dir = t.TempDir()
	end = write(dir)
	f, _ := os.OpenFile(seg(dir), os.O_WRONLY, 0)
	torn := tx("dddddddddddd")
	f.WriteAt(torn[:15], int64(end)) // the header and 6 of the 12 payload bytes
	f.Close()
	lb.Reset()
	if l, err = open(dir, &lb); err != nil {
		t.Fatal(err)
	}
	if l.End() != end || !strings.Contains(lb.String(), "torn frame") {
		t.Fatalf("reopened at %d (log: %q), want %d and the torn frame logged", l.End(), lb.String(), end)
	}
	l.Close()

	// Damage inside the log, zeros after it: an error naming file and offset.
	dir = t.TempDir()
	end = write(dir)
	f, _ = os.OpenFile(seg(dir), os.O_WRONLY, 0)
	f.WriteAt([]byte{0xff}, 3)
	f.Close()
	if _, err := open(dir, &lb); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), seg(dir)) {
		t.Fatalf("open of a damaged log: %v, want ErrCorrupt naming %s", err, seg(dir))
	}
}

// Only the last segment holds zeros: a roll cuts them off the one it ends.
func TestRolledSegmentsEndWithTheLog(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir, SegmentBytes: 64, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 10; i++ {
		l.Append(tx(fmt.Sprintf("row-%02d", i)))
	}
	segs, _ := listSegments(dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	for i := 0; i+1 < len(segs); i++ {
		fi, err := os.Stat(filepath.Join(dir, segmentName(segs[i])))
		if err != nil {
			t.Fatal(err)
		}
		if LSN(fi.Size()) != segs[i+1]-segs[i] {
			t.Fatalf("segment %d holds %d bytes, the next starts %d bytes after it", segs[i], fi.Size(), segs[i+1]-segs[i])
		}
	}
}

// A segment that rolls (and is closed) while a committer fsyncs it: the
// roll made it durable, so the fsync's failure on the closed file is not
// the log's.
func TestFsyncOfARolledSegment(t *testing.T) {
	dir := t.TempDir()
	var l *Log
	rollNow := false
	var err error
	l, err = Open(Options{Dir: dir, SegmentBytes: 64, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
		Faults: func(op FaultOp) error {
			if op == FaultSync && rollNow {
				rollNow = false
				// Another committer appends and rolls the segment
				// between the leader's look at it and its fsync.
				if _, _, err := l.Append(tx("rolls")); err != nil {
					t.Error(err)
				}
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, end, _ := l.Append(tx("0123456789012345678901234567890123456789012345678901234567890123"))
	rollNow = true
	if err := l.SyncTo(context.Background(), end); err != nil {
		t.Fatalf("SyncTo across a roll: %v", err)
	}
	if segs, _ := listSegments(dir); len(segs) != 2 {
		t.Fatalf("%d segments, want 2 (the roll happened)", len(segs))
	}
	if _, _, err := l.Append(tx("after")); err != nil {
		t.Fatalf("append after: %v", err)
	}
}

// TestDeferredAppendsShareOneWrite: deferred appends are part of the log at
// once (End, readers) and reach the file in one write(2) with the fsync
// that covers them; an Append writes the pending ones first, in order.
func TestDeferredAppendsShareOneWrite(t *testing.T) {
	var writes, syncs int
	l, err := Open(Options{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
		Faults: func(op FaultOp) error {
			if op == FaultWrite {
				writes++
			} else {
				syncs++
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var end LSN
	for i := range 8 {
		if _, end, err = l.AppendDeferred(tx(fmt.Sprintf("d%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if writes != 0 || l.End() != end || l.Durable() >= end {
		t.Fatalf("after 8 deferred appends: %d writes, end %d (want %d), durable %d", writes, l.End(), end, l.Durable())
	}
	if err := l.SyncTo(context.Background(), end); err != nil {
		t.Fatal(err)
	}
	if writes != 1 || syncs != 1 || l.Durable() != end {
		t.Fatalf("SyncTo of 8 deferred appends: %d writes, %d fsyncs, durable %d of %d; want 1, 1, all", writes, syncs, l.Durable(), end)
	}

	// A reader sees deferred frames before their fsync.
	if _, _, err := l.AppendDeferred(tx("r")); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, l)
	if len(got) != 18 || got[16] != "r" {
		t.Fatalf("read %v", got)
	}
	// An Append writes what is pending first.
	if _, _, err := l.AppendDeferred(tx("p")); err != nil {
		t.Fatal(err)
	}
	if _, end, err = l.Append(tx("a")); err != nil {
		t.Fatal(err)
	}
	raw, err := l.ReadBytes(l.Start(), end)
	if err != nil {
		t.Fatal(err)
	}
	var tail []string
	if err := ScanFrames(raw, l.Start(), func(_ LSN, typ FrameType, p []byte) error {
		if typ != FrameCommit {
			tail = append(tail, string(p))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(tail[len(tail)-3:], ",") != "r,p,a" {
		t.Fatalf("log ends with %v, want r,p,a", tail)
	}
}

var errInjected = errors.New("injected disk error")

// TestDeferredAppendsModel runs random appends (deferred or not), fsyncs,
// reads, injected write and fsync errors and power losses against a model
// of the log: a reader sees every transaction appended, in order; after a
// power loss the log holds a prefix of them, whole transactions only, that
// includes every one a SyncTo returned for.
func TestDeferredAppendsModel(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		dir := t.TempDir()
		failNext := FaultOp("")
		open := func() *Log {
			l, err := Open(Options{Dir: dir, SegmentBytes: 512, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
				Faults: func(op FaultOp) error {
					if op == failNext {
						failNext = ""
						return errInjected
					}
					return nil
				}})
			if err != nil {
				t.Fatalf("seed %d: reopen: %v", seed, err)
			}
			return l
		}
		l := open()
		var model []string // the transactions' payloads, in log order
		var ends []LSN     // where each ends
		durable := 0       // how many are known on disk
		reopen := func() {
			failNext = ""
			if err := l.Crash(); err != nil {
				t.Fatalf("seed %d: crash: %v", seed, err)
			}
			l = open()
			got := readPayloads(t, l)
			if len(got) < durable || len(got) > len(model) || strings.Join(got, ",") != strings.Join(model[:len(got)], ",") {
				t.Fatalf("seed %d: after a power loss the log holds %v; appended %v, %d of them synced", seed, got, model, durable)
			}
			model, ends, durable = got, ends[:len(got)], len(got)
		}
		for step := 0; step < 300; step++ {
			var err error
			switch k := rng.IntN(20); {
			case k < 9: // append, deferred or not
				p := fmt.Sprintf("s%d-%s", step, strings.Repeat("x", rng.IntN(120)))
				var end LSN
				if k < 7 {
					_, end, err = l.AppendDeferred(tx(p))
				} else {
					_, end, err = l.Append(tx(p))
				}
				if err == nil {
					model, ends = append(model, p), append(ends, end)
				}
			case k < 13: // a commit's fsync
				if len(ends) == 0 {
					continue
				}
				i := rng.IntN(len(ends))
				if err = l.SyncTo(context.Background(), ends[i]); err == nil {
					if l.Durable() < ends[i] {
						t.Fatalf("seed %d: durable %d < %d after SyncTo", seed, l.Durable(), ends[i])
					}
					durable = max(durable, i+1)
				}
			case k < 16: // a reader
				var got []string
				if got, err = tryReadPayloads(l); err == nil && strings.Join(got, ",") != strings.Join(model, ",") {
					t.Fatalf("seed %d: read %v, appended %v", seed, got, model)
				}
				if err == nil && l.End() != l.Start()+LSN(len(mustReadBytes(t, l))) {
					t.Fatalf("seed %d: raw bytes do not reach the end %d", seed, l.End())
				}
			case k < 18:
				failNext = []FaultOp{FaultWrite, FaultSync}[rng.IntN(2)]
			default:
				reopen()
			}
			if err != nil {
				if !errors.Is(err, errInjected) && !errors.Is(err, ErrFailed) {
					t.Fatalf("seed %d: %v", seed, err)
				}
				reopen() // a failed log refuses writes: the server restarts
			}
		}
		l.Close()
	}
}

func tryReadPayloads(l *Log) ([]string, error) {
	var out []string
	err := l.Read(l.Start(), func(_ LSN, typ FrameType, p []byte) error {
		if typ != FrameCommit {
			out = append(out, string(p))
		}
		return nil
	})
	return out, err
}

func readPayloads(t *testing.T, l *Log) []string {
	t.Helper()
	out, err := tryReadPayloads(l)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustReadBytes(t *testing.T, l *Log) []byte {
	t.Helper()
	b, err := l.ReadBytes(l.Start(), l.End())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendsGoOnDuringTheGroupWrite: while the group commit writes the
// pending frames (direct I/O takes tens of microseconds), appends are not
// held up: a commit appends under its database's commit lock, and every
// other commit would wait behind it. The frames appended meanwhile follow
// the ones in flight, and the next fsync makes them durable.
func TestAppendsGoOnDuringTheGroupWrite(t *testing.T) {
	for _, m := range []struct {
		name string
		mode WriteMode
	}{{"auto", WriteAuto}, {"buffered", WriteBuffered}, {"blocks", WriteBlocks}} {
		mode := m.mode
		t.Run(m.name, func(t *testing.T) {
			var armed sync.Once
			inWrite, release := make(chan struct{}), make(chan struct{})
			block := false
			var mu sync.Mutex
			dir := t.TempDir()
			l, err := Open(Options{Dir: dir, Writes: mode, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)),
				Faults: func(op FaultOp) error {
					mu.Lock()
					b := block
					mu.Unlock()
					if op == FaultWrite && b {
						armed.Do(func() { close(inWrite); <-release })
					}
					return nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			_, endA, err := l.AppendDeferred(tx("a"))
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			block = true
			mu.Unlock()
			synced := make(chan error, 1)
			go func() { synced <- l.SyncTo(context.Background(), endA) }()
			<-inWrite // the group's write of a is under way

			type appended struct {
				start, end LSN
				err        error
			}
			done := make(chan appended, 1)
			go func() {
				s, e, err := l.AppendDeferred(tx("b"))
				done <- appended{s, e, err}
			}()
			var b appended
			select {
			case b = <-done:
			case <-time.After(10 * time.Second):
				close(release)
				t.Fatal("AppendDeferred waited for the group commit's write")
			}
			if b.err != nil || b.start != endA || l.End() != b.end {
				t.Fatalf("append during the write: %d to %d (%v), end %d; want it to start at %d, after the bytes in flight", b.start, b.end, b.err, l.End(), endA)
			}
			close(release)
			if err := <-synced; err != nil {
				t.Fatal(err)
			}
			if d := l.Durable(); d < endA {
				t.Fatalf("durable %d after SyncTo(%d)", d, endA)
			}
			if err := l.SyncTo(context.Background(), b.end); err != nil {
				t.Fatal(err)
			}
			if err := l.Crash(); err != nil {
				t.Fatal(err)
			}
			l, err = Open(Options{Dir: dir, Writes: mode, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if got := strings.Join(readPayloads(t, l), ","); got != "a,b" {
				t.Fatalf("after a power loss: %s, want a,b", got)
			}
		})
	}
}

// TestConcurrentCommitsKeepTheirOrder: commits from several goroutines
// (deferred appends, each followed by its SyncTo, as the storage's commits
// do) across segment rolls: each goroutine's frames are read back in its
// order, every one of them, and after a power loss every commit whose
// SyncTo returned is there.
func TestConcurrentCommitsKeepTheirOrder(t *testing.T) {
	forEachWriteMode(t, func(t *testing.T, open func(dir string, segmentBytes int64) *Log) {
		dir := t.TempDir()
		l := open(dir, 4096)
		const workers, each = 8, 150
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					_, end, err := l.AppendDeferred(tx(fmt.Sprintf("w%d-%03d", w, i)))
					if err == nil {
						err = l.SyncTo(context.Background(), end)
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := l.Crash(); err != nil {
			t.Fatal(err)
		}
		l = open(dir, 4096)
		defer l.Close()
		next := make([]int, workers)
		for _, p := range readPayloads(t, l) {
			var w, i int
			if _, err := fmt.Sscanf(p, "w%d-%d", &w, &i); err != nil || w >= workers || i != next[w] {
				t.Fatalf("frame %q out of order (worker %d expects %d)", p, w, next[w])
			}
			next[w]++
		}
		for w, n := range next {
			if n != each {
				t.Fatalf("worker %d: %d of %d synced commits after a power loss", w, n, each)
			}
		}
	})
}

// BenchmarkGroupCommit is committers appending a 200-byte transaction and
// waiting for its fsync, on the test's temporary folder's file system.
func BenchmarkGroupCommit(b *testing.B) {
	for _, committers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("committers=%d", committers), func(b *testing.B) {
			l, err := Open(Options{Dir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			frames := tx(strings.Repeat("x", 200))
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for range committers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						_, end, err := l.AppendDeferred(frames)
						if err == nil {
							err = l.SyncTo(context.Background(), end)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/float64(l.Fsyncs()), "commits/fsync")
		})
	}
}

// A commit that fsyncs for an autocommit write (SyncToGathering) first
// waits for as many commits as the last fsync covered plus those that came
// while it ran; one fsync then covers the group. A wait in vain ends, and
// the next group commits go without waiting.
func TestGroupCommitGathersItsGroup(t *testing.T) {
	var lb bytes.Buffer
	l, err := Open(Options{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&lb, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	appendOne := func(name string) LSN {
		t.Helper()
		_, end, err := l.AppendDeferred(tx(name))
		if err != nil {
			t.Fatal(err)
		}
		return end
	}
	gathering := func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.mu.gatherCh != nil
	}

	// A group of two, and one commit that came while its fsync ran: the
	// next group is of three.
	var wg sync.WaitGroup
	ends := []LSN{appendOne("a1"), appendOne("a2")}
	l.opts.DuringGroupWrite = func() { appendOne("a3") }
	if err := l.SyncTo(ctx, ends[1]); err != nil {
		t.Fatal(err)
	}
	l.opts.DuringGroupWrite = nil
	if l.gr.group != 2 || l.gr.arrived != 1 {
		t.Fatalf("last group %d, arrived %d; want 2 and 1", l.gr.group, l.gr.arrived)
	}

	// a3 is there; b1's fsync waits for a third commit.
	before := l.Fsyncs()
	b1 := appendOne("b1")
	done := make(chan error, 1)
	go func() { done <- l.SyncToGathering(ctx, b1) }()
	for !gathering() {
		select {
		case err := <-done:
			t.Fatalf("SyncToGathering returned (%v) without waiting for its group", err)
		default:
			runtime.Gosched()
		}
	}
	b2 := appendOne("b2")
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := l.SyncTo(ctx, b2); err != nil {
			t.Error(err)
		}
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n := l.Fsyncs() - before; n != 1 || l.Durable() < b2 {
		t.Fatalf("a group of three took %d fsyncs (durable %d, want %d), want 1", n, l.Durable(), b2)
	}
	if l.GroupWaitsMissed() != 0 {
		t.Fatalf("%d waits missed, want 0", l.GroupWaitsMissed())
	}

	// Nobody comes: the wait ends, is counted, and the next two group
	// commits do not wait.
	c1 := appendOne("c1")
	if err := l.SyncToGathering(ctx, c1); err != nil || l.Durable() < c1 {
		t.Fatalf("lone gathering commit: %v, durable %d < %d", err, l.Durable(), c1)
	}
	if l.GroupWaitsMissed() != 1 || l.gr.rest != 2 {
		t.Fatalf("waits missed %d, rest %d; want 1 and 2", l.GroupWaitsMissed(), l.gr.rest)
	}
	for i := range 2 {
		l.gr.group, l.gr.arrived = 3, 0 // a group waited for, were it not resting
		c := appendOne(fmt.Sprintf("d%d", i))
		if err := l.SyncToGathering(ctx, c); err != nil || l.Durable() < c {
			t.Fatalf("resting group commit %d: %v", i, err)
		}
	}
	if l.GroupWaitsMissed() != 1 || l.gr.rest != 0 {
		t.Fatalf("resting group commits waited: missed %d, rest %d", l.GroupWaitsMissed(), l.gr.rest)
	}
	if got := readAll(t, l); len(got) != 2*8 {
		t.Fatalf("read %d frames, want 16: %v", len(got), got)
	}
}
