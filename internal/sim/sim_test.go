package sim

import (
	"bytes"
	"testing"
)

// A seed replays to the same trace.
func TestReplayIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	o := OptionsFromSeed(7, t.TempDir())
	o.Trace = &a
	Run(o)
	o = OptionsFromSeed(7, t.TempDir())
	o.Trace = &b
	Run(o)
	if a.String() != b.String() {
		t.Fatalf("two runs of seed 7 differ:\n%s\n----\n%s", a.String(), b.String())
	}
	if a.Len() == 0 {
		t.Fatal("empty trace")
	}
}

func TestSeeds(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := Run(OptionsFromSeed(seed, t.TempDir()))
		for _, v := range r.Violations {
			t.Error(v)
		}
		if r.Writes == 0 {
			t.Errorf("seed %d: no write was acknowledged", seed)
		}
	}
}
