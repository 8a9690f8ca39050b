package journal

import "testing"

func TestGroupSizesBuckets(t *testing.T) {
	var g groupSizes
	for _, n := range []uint64{0, 1, 2, 3, 4, 5, 64, 65, 1000} {
		g.note(n)
	}
	got := g.load()
	want := GroupSizes{Counts: [8]uint64{2, 1, 2, 1, 0, 0, 1, 2}, Sum: 0 + 1 + 2 + 3 + 4 + 5 + 64 + 65 + 1000}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
