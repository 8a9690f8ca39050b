package system

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCascade: n3 is configured with n2 as its upstream. It streams n1's
// writes through n2 (n1 never has a link to it), falls back to n1 while n2
// is stopped, and goes back to n2 once n2 follows n1 again.
func TestCascade(t *testing.T) {
	c := newTestCluster(t, "n1", "n2", "n3")
	cfg := filepath.Join(c.dir, "n3", "cluster.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	adv := fmt.Sprintf("advertise = %q\n", c.addrs["n3"])
	b = []byte(strings.Replace(string(b), adv, adv+fmt.Sprintf("upstream = %q\n", c.addrs["n2"]), 1))
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	n1, n2, n3 := c.start("n1"), c.start("n2"), c.start("n3")
	p, s3 := n1.open(""), n3.open("")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("n3's view: %s\nn3's log:\n%s\nn2's log:\n%s", queryString(t, s3, "SHOW CLUSTER STATUS"), n3.output(), n2.output())
		}
	})
	mustExec(t, p, "SET GLOBAL cluster_role = 'primary'")
	waitFor(t, "n1 to become PRIMARY", 30*time.Second, func() bool { return one(t, p, "SELECT @@cluster_role") == "PRIMARY" })
	mustExec(t, p, "CREATE DATABASE shop")
	mustExec(t, p, "CREATE TABLE shop.t (id INT PRIMARY KEY, v INT)")
	next := 0
	write := func(k int) {
		for i := 0; i < k; i++ {
			next++
			mustExec(t, p, fmt.Sprintf("INSERT INTO shop.t VALUES (%d, %d)", next, next*7))
		}
	}
	has := func(db string) func() bool {
		return func() bool {
			var n int
			err := s3.QueryRow("SELECT COUNT(*) FROM " + db).Scan(&n)
			return err == nil && n == next
		}
	}
	// upstreamOf: the node n3 streams from, as its MIRAJ_NODES says (the
	// row CONNECTED).
	upstreamOf := func() string {
		var id string
		if err := s3.QueryRow("SELECT NODE_ID FROM information_schema.MIRAJ_NODES WHERE STATE = 'CONNECTED'").Scan(&id); err != nil {
			return ""
		}
		return id
	}
	write(20)
	waitFor(t, "n3 to stream through n2", 60*time.Second, func() bool { return upstreamOf() == "n2" })
	waitFor(t, "n1's rows on n3", 30*time.Second, has("shop.t"))
	if got := one(t, s3, "SELECT @@cluster_primary"); got != "n1" {
		t.Fatalf("n3's @@cluster_primary = %s, want n1", got)
	}
	// n1 serves n2 alone: n3 is not its follower.
	if st := one(t, p, "SELECT STATE FROM information_schema.MIRAJ_NODES WHERE NODE_ID = 'n3'"); st == "CONNECTED" {
		t.Fatalf("n1 shows n3 %s: n3 should stream through n2", st)
	}
	if st := one(t, n2.open(""), "SELECT STATE FROM information_schema.MIRAJ_NODES WHERE NODE_ID = 'n3'"); st != "CONNECTED" {
		t.Fatalf("n2 shows n3 %s, want CONNECTED (it relays to n3)", st)
	}
	if !strings.Contains(n2.output(), "secondary n3 connected, relayed the log of primary n1") {
		t.Fatal("n2's log does not say it relays to n3")
	}

	// n2 stops: n3 follows n1 directly and keeps up.
	n2.stop()
	write(10)
	waitFor(t, "n3 to follow n1 directly", 60*time.Second, func() bool { return upstreamOf() == "n1" })
	waitFor(t, "the writes made while n2 was down on n3", 30*time.Second, has("shop.t"))

	// n2 is back: n3 goes back to it.
	n2.restart()
	write(10)
	waitFor(t, "n3 back on n2", 60*time.Second, func() bool { return upstreamOf() == "n2" })
	write(10)
	waitFor(t, "the last writes on n3", 30*time.Second, has("shop.t"))
	if a, b := tableSum(t, p, "shop.t"), tableSum(t, s3, "shop.t"); a != b {
		t.Fatalf("n3's rows differ from n1's: %s vs %s", b, a)
	}
}
