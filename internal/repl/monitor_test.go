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
