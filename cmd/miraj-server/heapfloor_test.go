package main

import (
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// heapGoal reads the heap size at which the next collection starts.
func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// With a minimum heap of 64 MiB and a small live heap, the next collection
// waits until the heap reaches 64 MiB, where Go's default waits for a few
// MiB; stopping gives Go's default back. (The goal, not a count of
// collections: how many run depends on how busy the machine is.)
func TestHeapFloorCollectsLessOften(t *testing.T) {
	runtime.GC()
	plain := heapGoal()
	h := startHeapFloor(heapPacing{minHeap: 64 << 20, growth: 25})
	floored := heapGoal()
	h.stop()
	again := heapGoal()
	t.Logf("heap goal: %d MiB with GOGC=100, %d MiB with a 64 MiB minimum heap, %d MiB after stop", plain>>20, floored>>20, again>>20)
	if floored < 60<<20 || floored > 72<<20 || plain > 32<<20 {
		t.Fatalf("heap goal %d MiB with the minimum heap, %d MiB without", floored>>20, plain>>20)
	}
	if again > 32<<20 {
		t.Fatalf("heap goal %d MiB after stop", again>>20)
	}
}

// gcPercent reads the collector's GOGC setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// Past the minimum heap, the next collection starts once the heap has grown
// by the growth share of the live heap; below it, once the heap reaches the
// minimum. (Counting collections here would depend on how fast the
// collector runs beside other tests: the setting is what the pacing
// decides.)
func TestHeapFloorPacesALargeHeapByGrowth(t *testing.T) {
	live := make([][]byte, 0, 1024)
	for i := 0; i < 96; i++ { // 96 MiB live
		live = append(live, make([]byte, 1<<20))
	}
	runtime.GC()
	h := startHeapFloor(heapPacing{minHeap: 32 << 20, growth: 25})
	large := gcPercent()
	h.stop()
	runtime.KeepAlive(live)
	if large != 25 {
		t.Fatalf("GOGC=%d with 96 MiB live past a 32 MiB minimum, want the growth, 25", large)
	}
	live = nil
	runtime.GC()
	h = startHeapFloor(heapPacing{minHeap: 1 << 30, growth: 25})
	small := gcPercent()
	h.stop()
	if small <= 1000 {
		t.Fatalf("GOGC=%d with a small live heap and a 1 GiB minimum, want the minimum's multiple", small)
	}
	if after := gcPercent(); after != 100 {
		t.Fatalf("GOGC=%d after stop", after)
	}
}

// The target is the larger of the minimum heap and the live heap plus the
// growth.
func TestHeapPacingPercent(t *testing.T) {
	p := heapPacing{minHeap: 256 << 20, growth: 25}
	for _, tc := range []struct {
		liveMB uint64
		want   int
	}{
		{32, 700},  // 32 + 224 = 256
		{200, 28},  // 200 + 56 = 256
		{240, 25},  // 240 + 60 > 256
		{1024, 25}, // past the minimum
		{256, 25},  // at it
		{0, 25600}, // an empty heap counts as 1 MiB
	} {
		if got := p.percent(tc.liveMB<<20, 0); got != tc.want {
			t.Errorf("live %d MiB: GOGC=%d, want %d", tc.liveMB, got, tc.want)
		}
	}
	// Stacks and globals count in Go's goal: 100 MiB live and 28 MiB of
	// them reach 256 MiB at 121 %.
	if got := p.percent(100<<20, 28<<20); got != 121 {
		t.Errorf("GOGC=%d with roots", got)
	}
}

func TestHeapFloorSetting(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if p, ok, err := heapFloorSetting(128, 25, getenv, log); !ok || err != nil || p.minHeap != 128<<20 || p.growth != 25 {
		t.Fatalf("pacing %+v %v %v", p, ok, err)
	}
	if _, ok, _ := heapFloorSetting(0, 25, getenv, log); ok {
		t.Fatal("paced with 0")
	}
	if _, _, err := heapFloorSetting(128, 0, getenv, log); err == nil {
		t.Fatal("growth 0 accepted")
	}
	env["GOGC"] = "200"
	if _, ok, _ := heapFloorSetting(128, 25, getenv, log); ok {
		t.Fatal("paced with GOGC set")
	}
}
