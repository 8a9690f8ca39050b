package main

import (
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"testing"
)

var sink []byte

// garbageGCs allocates about mb MiB of short-lived garbage and returns how
// many collections ran meanwhile.
func garbageGCs(mb int) uint32 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < mb*16; i++ {
		sink = make([]byte, 64<<10)
	}
	runtime.ReadMemStats(&after)
	return after.NumGC - before.NumGC
}

// With a floor of 64 MiB and a small live heap, 512 MiB of garbage costs a
// handful of collections; with GOGC=100 alone, dozens.
func TestHeapFloorCollectsLessOften(t *testing.T) {
	plain := garbageGCs(512)
	h := startHeapFloor(64 << 20)
	floored := garbageGCs(512)
	h.stop()
	t.Logf("collections for 512 MiB of garbage: %d with GOGC=100, %d with a 64 MiB floor", plain, floored)
	if floored > 16 || floored*3 > plain {
		t.Fatalf("%d collections with the floor, %d without", floored, plain)
	}
	if again := garbageGCs(512); again*3 < plain {
		t.Fatalf("after stop, %d collections (GOGC=100 gave %d)", again, plain)
	}
}

// gcPercent reads the collector's GOGC setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// Past the floor, the collector is paced as with GOGC=100; below it, the
// next collection waits for the floor's worth of new heap. (Counting
// collections here would depend on how fast the collector runs beside
// other tests: the setting is what the floor decides.)
func TestHeapFloorStepsAsideForALargeHeap(t *testing.T) {
	live := make([][]byte, 0, 1024)
	for i := 0; i < 96; i++ { // 96 MiB live
		live = append(live, make([]byte, 1<<20))
	}
	runtime.GC()
	h := startHeapFloor(32 << 20)
	large := gcPercent()
	h.stop()
	runtime.KeepAlive(live)
	if large != 100 {
		t.Fatalf("GOGC=%d with 96 MiB live and a 32 MiB floor, want 100", large)
	}
	live = nil
	runtime.GC()
	h = startHeapFloor(1 << 30)
	small := gcPercent()
	h.stop()
	if small <= 1000 {
		t.Fatalf("GOGC=%d with a small live heap and a 1 GiB floor, want the floor's multiple", small)
	}
	if after := gcPercent(); after != 100 {
		t.Fatalf("GOGC=%d after stop", after)
	}
}

func TestHeapFloorSetting(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if got := heapFloorSetting(128, getenv, log); got != 128<<20 {
		t.Fatalf("floor %d", got)
	}
	if got := heapFloorSetting(0, getenv, log); got != 0 {
		t.Fatalf("floor %d with 0", got)
	}
	env["GOGC"] = "200"
	if got := heapFloorSetting(128, getenv, log); got != 0 {
		t.Fatalf("floor %d with GOGC set", got)
	}
}
