package journal

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
)

// fsyncWatch records, at each fsync of a log, the end of the bytes written
// to the file when it began: the most an fsync can make durable.
type fsyncWatch struct {
	mu     sync.Mutex
	l      *Log
	starts []LSN
}

func (w *fsyncWatch) fault(op FaultOp) error {
	if op != FaultSync {
		return nil
	}
	w.l.mu.Lock()
	written := w.l.mu.written
	w.l.mu.Unlock()
	w.mu.Lock()
	w.starts = append(w.starts, written)
	w.mu.Unlock()
	return nil
}

// covered is the end of the bytes written before the latest fsync began.
func (w *fsyncWatch) covered() LSN {
	w.mu.Lock()
	defer w.mu.Unlock()
	var m LSN
	for _, s := range w.starts {
		m = max(m, s)
	}
	return m
}

var writeModes = map[string]WriteMode{"buffered": WriteBuffered, "blocks": WriteBlocks}

// openWatched opens a log whose fsyncs w watches. Its segments do not roll
// (a roll's fsync runs with the lock the watch takes).
func openWatched(t *testing.T, mode WriteMode, w *fsyncWatch) *Log {
	t.Helper()
	l, err := Open(Options{Dir: t.TempDir(), SegmentBytes: 1 << 20, Writes: mode, Faults: w.fault,
		Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w.l = l
	return l
}

// TestDurableNeverPassesWhatAnFsyncFound: commits from several goroutines;
// at every moment, the log's durable end is at most the end of the bytes
// written before the latest fsync began, and each commit's SyncTo returns
// once that covers it.
func TestDurableNeverPassesWhatAnFsyncFound(t *testing.T) {
	for name, mode := range writeModes {
		t.Run(name, func(t *testing.T) {
			w := &fsyncWatch{}
			l := openWatched(t, mode, w)
			defer l.Close()
			const workers, each = 8, 200
			var wg sync.WaitGroup
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						_, end, err := l.AppendDeferred(tx(fmt.Sprintf("w%d-%03d", g, i)))
						if err == nil {
							err = l.SyncTo(context.Background(), end)
						}
						if err != nil {
							t.Error(err)
							return
						}
						// Durable first: an fsync may begin between the two reads.
						if d, c := l.Durable(), w.covered(); d > c || d < end {
							t.Errorf("durable %d after SyncTo(%d); the fsyncs found at most %d written", d, end, c)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}
