package epoch

import (
	"math"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name      string
		known     Epoch
		announced Epoch
		primary   bool
		want      Verdict
	}{
		{"next", 4, 5, false, Accept},
		{"same", 5, 5, false, NotNewer},
		{"older", 5, 3, false, NotNewer},
		{"jump of exactly 1000", 5, 1005, false, Accept},
		{"jump of 1001", 5, 1006, false, IgnoreJump},
		{"jump from our primary", 5, 1_000_000, true, Accept},
		{"first epoch of a new node", 0, 1000, false, Accept},
		{"new node following its primary", 0, 50_000, true, Accept},
		{"just below 2^48", Implausible - 2, Implausible - 1, false, Accept},
		{"2^48", Implausible - 1, Implausible, false, IgnoreImplausible},
		{"2^48 from our primary", 5, Implausible, true, IgnoreImplausible},
		{"u64 max", 5, math.MaxUint64, true, IgnoreImplausible},
		{"known already implausible", math.MaxUint64, 7, false, NotNewer},
		{"no overflow near the top", Implausible - 1000, Implausible - 1, false, Accept},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Check(tc.known, tc.announced, tc.primary); got != tc.want {
				t.Fatalf("Check(%d, %d, %v) = %v, want %v", tc.known, tc.announced, tc.primary, got, tc.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	cases := []struct {
		v    Verdict
		want string
	}{
		{IgnoreJump, "epoch 2000 announced by node n2 ignored (abnormal jump of 1995 from 5, at most 1000)"},
		{IgnoreImplausible, "epoch 2000 announced by node n2 ignored (abnormal jump: implausible epoch"},
	}
	for _, tc := range cases {
		if got := Message(tc.v, 5, 2000, "n2"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Message(%v) = %q, want prefix %q", tc.v, got, tc.want)
		}
		if !tc.v.Ignored() {
			t.Errorf("%v not Ignored", tc.v)
		}
	}
	if Accept.Ignored() || NotNewer.Ignored() {
		t.Error("Accept/NotNewer reported as ignored")
	}
}

func FuzzCheck(f *testing.F) {
	f.Add(uint64(5), uint64(1006), false)
	f.Add(uint64(0), uint64(math.MaxUint64), true)
	f.Fuzz(func(t *testing.T, known, announced uint64, primary bool) {
		v := Check(Epoch(known), Epoch(announced), primary)
		switch {
		case announced >= uint64(Implausible):
			if v != IgnoreImplausible {
				t.Fatalf("implausible %d accepted: %v", announced, v)
			}
		case announced <= known:
			if v != NotNewer {
				t.Fatalf("%v for %d <= %d", v, announced, known)
			}
		case v == Accept && !primary && announced-known > MaxJump:
			t.Fatalf("jump %d accepted", announced-known)
		}
	})
}
