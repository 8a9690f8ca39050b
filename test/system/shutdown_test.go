package system

import (
	"strings"
	"testing"
	"time"
)

// SHUTDOWN on a cluster's secondary stops the node as SIGTERM does
// (replication first, then the server's checkpoint): the process ends with
// 0, and started again, the node catches up with what the primary wrote
// meanwhile.
func TestShutdownClusterNode(t *testing.T) {
	c := newTestCluster(t, "n1", "n2")
	n1, n2 := c.start("n1"), c.start("n2")
	p := n1.open("")
	mustExec(t, p, "SET GLOBAL cluster_role = 'primary'")
	waitFor(t, "n1 to become PRIMARY", 30*time.Second, func() bool { return one(t, p, "SELECT @@cluster_role") == "PRIMARY" })
	mustExec(t, p, "CREATE DATABASE sd")
	mustExec(t, p, "CREATE TABLE sd.t (id INT PRIMARY KEY)")
	mustExec(t, p, "INSERT INTO sd.t VALUES (1)")
	count := func(s *server) string {
		var n string
		if err := s.open("").QueryRow("SELECT COUNT(*) FROM sd.t").Scan(&n); err != nil {
			return ""
		}
		return n
	}
	waitFor(t, "the row on n2", 30*time.Second, func() bool { return count(n2) == "1" })

	n2.open("").Exec("SHUTDOWN") // OK, or the connection ends first
	select {
	case err := <-n2.done:
		if err != nil {
			t.Fatalf("n2 after SHUTDOWN: %v\n%s", err, n2.output())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("n2 still running 60 s after SHUTDOWN\n%s", n2.output())
	}
	n2.cmd = nil
	if out := n2.output(); !strings.Contains(out, "shutdown requested by SHUTDOWN") || !strings.Contains(out, "shutdown complete") {
		t.Errorf("n2's log after SHUTDOWN:\n%s", out)
	}

	mustExec(t, p, "INSERT INTO sd.t VALUES (2)")
	n2 = c.start("n2")
	waitFor(t, "n2 to catch up after its restart", 30*time.Second, func() bool { return count(n2) == "2" })
}
