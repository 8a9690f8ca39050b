package history

import (
	"github.com/miraj-db/miraj/internal/epoch"
	"testing"

	"github.com/miraj-db/miraj/internal/journal"
)

func h(ms ...Mark) History { return History(ms) }
func m(e uint64, lsn journal.LSN) Mark {
	return Mark{Epoch: epochOf(e), Node: "n", LSN: lsn}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		name   string
		p      History
		pEnd   journal.LSN
		f      History
		fEnd   journal.LSN
		kind   Kind
		common journal.LSN
	}{
		{"both empty, behind", nil, 100, nil, 40, OnHistory, 40},
		{"both empty, equal", nil, 100, nil, 100, OnHistory, 100},
		{"both empty, ahead", nil, 100, nil, 140, Diverged, 100},
		{"same epoch, behind", h(m(1, 0)), 100, h(m(1, 0)), 60, OnHistory, 60},
		{"same epoch, ahead (old primary kept writing)", h(m(1, 0)), 100, h(m(1, 0)), 160, Diverged, 100},
		{"primary moved on, follower behind the new mark", h(m(1, 0), m(2, 80)), 200, h(m(1, 0)), 70, OnHistory, 70},
		{"primary moved on, follower at the new mark", h(m(1, 0), m(2, 80)), 200, h(m(1, 0)), 80, OnHistory, 80},
		{"primary moved on, follower past the new mark", h(m(1, 0), m(2, 80)), 200, h(m(1, 0)), 95, Diverged, 80},
		{"follower has the new epoch too", h(m(1, 0), m(2, 80)), 200, h(m(1, 0), m(2, 80)), 150, OnHistory, 150},
		{"two primaries: different marks at the same point", h(m(1, 0), m(2, 80)), 200, h(m(1, 0), m(3, 80)), 90, Diverged, 80},
		{"follower has a mark the primary lacks", h(m(1, 0)), 80, h(m(1, 0), m(2, 80)), 120, Diverged, 80},
		{"follower without marks, primary with", h(m(1, 50)), 200, nil, 40, OnHistory, 40},
		{"follower without marks past the primary's first mark", h(m(1, 50)), 200, nil, 60, Diverged, 50},
		{"primary without marks, follower with", nil, 200, h(m(4, 30)), 60, Diverged, 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Match(c.p, c.pEnd, c.f, c.fEnd)
			if v.Kind != c.kind || v.Common != c.common {
				t.Fatalf("Match = %v common %d (%s), want %v common %d", v.Kind, v.Common, v.Reason, c.kind, c.common)
			}
			if v.Kind == Diverged && v.Reason == "" {
				t.Fatal("a divergence without a reason")
			}
		})
	}
}

func TestAppendAndCheck(t *testing.T) {
	var hist History
	var err error
	if hist, err = hist.Append(m(1, 0)); err != nil {
		t.Fatal(err)
	}
	if hist, err = hist.Append(m(3, 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := hist.Append(m(3, 20)); err == nil {
		t.Fatal("same epoch twice accepted")
	}
	if _, err := hist.Append(m(4, 5)); err == nil {
		t.Fatal("mark before the previous one accepted")
	}
	if err := hist.Check(); err != nil {
		t.Fatal(err)
	}
	if err := (History{m(2, 0), m(1, 5)}).Check(); err == nil {
		t.Fatal("decreasing epochs pass Check")
	}
	if hist.Last() != m(3, 10) {
		t.Fatalf("Last = %v", hist.Last())
	}
}

func epochOf(e uint64) epochT { return epochT(e) }

type epochT = epoch.Epoch
