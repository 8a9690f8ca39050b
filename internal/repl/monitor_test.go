package repl

import (
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		p      CopyProgress
		sent   bool
		recent int64
		want   string
	}{
		{CopyProgress{Node: "n2", Database: "shop", Kind: "seed", Done: 10 << 20, Total: 40 << 20}, true, 5 << 20,
			"Cluster: seeding of database shop for n2: 10.0 MiB of 40.0 MiB (25.0%), 0.5 MiB/s, about 1m0s left"},
		{CopyProgress{Node: "n2", Database: "shop", Kind: "seed", Done: 3 << 20}, false, 1 << 20,
			"Cluster: seeding of database shop from the primary: 3.0 MiB received, 0.1 MiB/s"},
		{CopyProgress{Node: "n3", Database: "shop", Kind: "catchup", Done: 1 << 20, Total: 2 << 20}, false, 0,
			"Cluster: catch-up of database shop from n3: 1.0 MiB of 2.0 MiB (50.0%), 0.0 MiB/s, time left unknown"},
	} {
		if got := progressLine(tc.p, tc.sent, tc.recent, 10*time.Second); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

func TestCopiesRegistry(t *testing.T) {
	var c copies
	c.begin("n2", "shop", 100, true)
	c.add("n2", "shop", 40)
	c.add("N2", "SHOP", 10) // names compare without case
	if l := c.list(); len(l) != 1 || l[0].Done != 50 || l[0].Total != 100 || l[0].Percent() != 50 {
		t.Fatalf("list: %+v", l)
	}
	c.end("n2", "shop")
	if l := c.list(); len(l) != 0 {
		t.Fatalf("after end: %+v", l)
	}
	if line := c.add("n2", "shop", 1); line != "" {
		t.Errorf("a copy not begun logs %q", line)
	}
}

// A copy under way gives a progress line every progressLogInterval, not
// more often.
func TestCopiesProgressEveryInterval(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	c := copies{now: func() time.Time { return now }}
	c.begin("n2", "big", 100<<20, true)
	var lines []string
	for i := 0; i < 30; i++ { // 1 MiB a second for 30 s
		now = now.Add(time.Second)
		if l := c.add("n2", "big", 1<<20); l != "" {
			lines = append(lines, l)
		}
	}
	want := []string{
		"Cluster: seeding of database big for n2: 10.0 MiB of 100.0 MiB (10.0%), 1.0 MiB/s, about 1m30s left",
		"Cluster: seeding of database big for n2: 20.0 MiB of 100.0 MiB (20.0%), 1.0 MiB/s, about 1m20s left",
		"Cluster: seeding of database big for n2: 30.0 MiB of 100.0 MiB (30.0%), 1.0 MiB/s, about 1m10s left",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines in 30 s, want 3:\n%s", len(lines), lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("got  %s\nwant %s", lines[i], want[i])
		}
	}
}
