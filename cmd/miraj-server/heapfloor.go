package main

import (
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Heap pacing. Go's default (GOGC=100) lets the heap double between
// collections. For a database whose tables are its heap, that is wrong at
// both ends:
//
//   - a small database (tables of 40 MB) would be collected every 40 MB of
//     statements, each collection scanning every row. Below the minimum
//     heap size the collector waits until the heap reaches it (a JVM's
//     -Xms): a few collections where there were dozens.
//   - a large database would need twice its tables' memory at peak. Past
//     the minimum, the collector runs once the heap has grown by a set
//     share of the live heap (15 % by default): the tables' memory and a
//     little more, for a few more collections. Compact rows (storage/row.go)
//     hold no pointers, so a collection follows one pointer per row and
//     its cost stays small.
//
// After each collection GOGC is set to what the next target needs.

// heapPacing is the pacing the server asks for.
type heapPacing struct {
	minHeap uint64 // bytes; the heap may grow to this before a collection
	growth  int    // percent of the live heap past minHeap
}

// heapFloor adjusts the collector after each collection.
type heapFloor struct {
	pacing  heapPacing
	mu      sync.Mutex
	samples []metrics.Sample
	stopped bool
}

// startHeapFloor installs the pacing p.
func startHeapFloor(p heapPacing) *heapFloor {
	h := &heapFloor{pacing: p, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}}
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
	live := h.samples[0].Value.Uint64()
	roots := h.samples[1].Value.Uint64() + h.samples[2].Value.Uint64()
	debug.SetGCPercent(h.pacing.percent(live, roots))
	return true
}

// percent is the GOGC that starts the next collection at the target for a
// live heap of live bytes. Go's goal is live + (live + roots) × GOGC/100,
// roots being the goroutine stacks and globals it scans.
func (p heapPacing) percent(live, roots uint64) int {
	base := max(live+roots, 1<<20)
	pct := p.growth
	if live < p.minHeap {
		pct = max(pct, int((p.minHeap-live)*100/base))
	}
	return max(pct, 1)
}

// stop puts the collector back to GOGC=100.
func (h *heapFloor) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	debug.SetGCPercent(100)
}

// heapFloorSetting decides the pacing: off (ok false) when minMB is 0 or
// the environment sets GOGC or GOMEMLIMIT (then Go's own settings rule, and
// why is logged).
func heapFloorSetting(minMB, growth int, getenv func(string) string, log *slog.Logger) (p heapPacing, ok bool, err error) {
	if growth < 1 {
		return p, false, fmt.Errorf("--gc-heap-growth-percent %d: must be at least 1", growth)
	}
	if minMB <= 0 {
		return p, false, nil
	}
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		if getenv(v) != "" {
			log.Info("heap pacing off: the environment sets "+v, "gc_min_heap_mb", minMB, "gc_heap_growth_percent", growth)
			return p, false, nil
		}
	}
	return heapPacing{minHeap: uint64(minMB) << 20, growth: growth}, true, nil
}
