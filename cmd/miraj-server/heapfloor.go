package main

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The heap floor: while the live heap is small, the garbage collector
// waits until the heap has grown by the floor since the last collection,
// rather than until it has doubled (GOGC=100). A server whose tables take
// 40 MB then collects several times less often under load, where each
// collection scans every row; a server whose live heap is past the floor
// is paced as with GOGC=100, so its peak memory is unchanged. It is a
// JVM's -Xms: after each collection GOGC is set to floor/live (the next
// collection starts at live + floor), or back to 100 once the live heap
// reaches the floor.

// heapFloor adjusts the collector after each collection.
type heapFloor struct {
	floor   uint64
	mu      sync.Mutex
	samples []metrics.Sample
	stopped bool
}

// startHeapFloor installs a heap floor of floor bytes.
func startHeapFloor(floor uint64) *heapFloor {
	h := &heapFloor{floor: floor, samples: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	h.adjust()
	h.arm()
	return h
}

// gcSentinel is garbage from birth: its finalizer runs after the next
// collection, adjusts, and makes the next sentinel.
type gcSentinel struct {
	h *heapFloor
	_ [16]byte // not a tiny object: those are finalized late
}

func (h *heapFloor) arm() {
	s := &gcSentinel{h: h}
	runtime.SetFinalizer(s, func(s *gcSentinel) {
		if s.h.adjust() {
			s.h.arm()
		}
	})
}

// adjust sets the collector for the heap as the last collection left it;
// false once stopped.
func (h *heapFloor) adjust() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return false
	}
	metrics.Read(h.samples)
	live := max(h.samples[0].Value.Uint64(), 1<<20)
	pct := 100
	if live < h.floor {
		pct = int(h.floor * 100 / live)
	}
	debug.SetGCPercent(pct)
	return true
}

// stop puts the collector back to GOGC=100.
func (h *heapFloor) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	debug.SetGCPercent(100)
}

// heapFloorSetting decides the floor: floorMB unless the environment sets
// GOGC or GOMEMLIMIT (then Go's own settings rule, and why is logged).
func heapFloorSetting(floorMB int, getenv func(string) string, log *slog.Logger) uint64 {
	if floorMB <= 0 {
		return 0
	}
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		if getenv(v) != "" {
			log.Info("heap floor off: the environment sets "+v, "gc_min_heap_mb", floorMB)
			return 0
		}
	}
	return uint64(floorMB) << 20
}
