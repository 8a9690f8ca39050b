package system

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setNodeKeys adds lines to the [node] table of id's cluster.toml.
func (c *testCluster) setNodeKeys(id string, lines ...string) {
	c.t.Helper()
	cfg := filepath.Join(c.dir, id, "cluster.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	adv := fmt.Sprintf("advertise = %q\n", c.addrs[id])
	b = []byte(strings.Replace(string(b), adv, adv+strings.Join(lines, "\n")+"\n", 1))
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// TestLogStoreNode: n2 is a log-store node (node.kind = "log-store"), n3 a
// full secondary that streams through it (upstream = n2). n2 keeps the
// journals without tables, is shown LOG_STORE, acknowledges RECEIVED
// commits, relays byte-identical frames to n3, sends n3 to n1 for its first
// copy, refuses to become primary, and, when n1 dies while n3 was down, is
// where n3's promotion catches up from: no confirmed write is lost.
func TestLogStoreNode(t *testing.T) {
	c := newTestCluster(t, "n1", "n2", "n3")
	c.setNodeKeys("n2", `kind = "log-store"`)
	c.setNodeKeys("n3", fmt.Sprintf("upstream = %q", c.addrs["n2"]))
	n1, n2, n3 := c.start("n1"), c.start("n2"), c.start("n3")
	p, s2, s3 := n1.open(""), n2.open(""), n3.open("")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("n2's log:\n%s\nn3's log:\n%s", n2.output(), n3.output())
		}
	})
	mustExec(t, p, "SET GLOBAL cluster_role = 'primary'")
	waitFor(t, "n1 to become PRIMARY", 30*time.Second, func() bool { return one(t, p, "SELECT @@cluster_role") == "PRIMARY" })
	mustExec(t, p, "CREATE DATABASE shop")
	mustExec(t, p, "CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(20))")
	waitFor(t, "n2 to hold shop's journal", 30*time.Second, func() bool {
		return one(t, s2, "SELECT COUNT(*) FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = 'n2' AND `DATABASE` = 'shop'") == "1"
	})

	// RECEIVED commits, acknowledged by the log store (n3 may too).
	conn := p
	mustExec(t, conn, "SET GLOBAL cluster_sync_commit = 'RECEIVED'")
	mustExec(t, conn, "SET GLOBAL cluster_sync_timeout_action = 'ERROR'")
	next := 0
	write := func(k int) {
		for i := 0; i < k; i++ {
			next++
			mustExec(t, conn, fmt.Sprintf("INSERT INTO shop.t VALUES (%d, 'row %d')", next, next))
		}
	}
	write(20)

	// Shown as LOG_STORE on the primary and on itself; no tables on it.
	if r := one(t, p, "SELECT ROLE FROM information_schema.MIRAJ_NODES WHERE NODE_ID = 'n2'"); r != "LOG_STORE" {
		t.Fatalf("n1 shows n2 as %s, want LOG_STORE", r)
	}
	if r := one(t, s2, "SELECT ROLE FROM information_schema.MIRAJ_NODES WHERE STATE = 'SELF'"); r != "LOG_STORE" {
		t.Fatalf("n2 shows itself as %s, want LOG_STORE", r)
	}
	if got := one(t, s2, "SELECT COALESCE(APPLIED_LSN, 'NULL') FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = 'n2' AND `DATABASE` = 'shop'"); got != "NULL" {
		t.Fatalf("n2's APPLIED_LSN of shop = %s, want NULL (it applies nothing)", got)
	}
	if got := one(t, s2, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'shop'"); got != "0" {
		t.Fatalf("n2 has a database shop with tables (%s): a log-store node keeps journals only", got)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "data-n2", "miraj", "logstore", "shop", "journal")); err != nil {
		t.Fatalf("n2's journal of shop: %v", err)
	}

	// n3 got its copy from n1 (n2 has none to give), then streams through n2.
	upstreamOf := func() string {
		var id string
		if err := s3.QueryRow("SELECT NODE_ID FROM information_schema.MIRAJ_NODES WHERE STATE = 'CONNECTED'").Scan(&id); err != nil {
			return ""
		}
		return id
	}
	rows := func() string {
		var n int
		if err := s3.QueryRow("SELECT COUNT(*) FROM shop.t").Scan(&n); err != nil {
			return "-1"
		}
		return fmt.Sprint(n)
	}
	waitFor(t, "n3 to stream through n2", 90*time.Second, func() bool { return upstreamOf() == "n2" })
	write(10)
	waitFor(t, "n1's rows on n3 through n2", 30*time.Second, func() bool { return rows() == fmt.Sprint(next) })
	// A database created now: n2 begins its journal, and sends n3, which
	// needs a copy of it, to a node with tables.
	// (Without waits: a database no follower streams yet has no
	// acknowledgement to wait for.)
	mustExec(t, p, "SET GLOBAL cluster_sync_commit = 'OFF'")
	mustExec(t, p, "CREATE DATABASE shop2")
	mustExec(t, p, "CREATE TABLE shop2.t (id INT PRIMARY KEY)")
	mustExec(t, p, "INSERT INTO shop2.t VALUES (1), (2), (3)")
	mustExec(t, p, "SET GLOBAL cluster_sync_commit = 'RECEIVED'")
	waitFor(t, "n2 to send n3 to n1 for its copy of shop2", 30*time.Second, func() bool {
		return strings.Contains(n2.output(), "database shop2 needs a full copy") && strings.Contains(n2.output(), "is a log-store node and holds the log only")
	})
	waitFor(t, "shop2 on n3", 60*time.Second, func() bool {
		var n int
		return s3.QueryRow("SELECT COUNT(*) FROM shop2.t").Scan(&n) == nil && n == 3
	})
	waitFor(t, "n3 back on n2", 90*time.Second, func() bool { return upstreamOf() == "n2" })
	write(5)
	waitFor(t, "n1's rows on n3 through n2", 30*time.Second, func() bool { return rows() == fmt.Sprint(next) })
	if got := one(t, s2, "SELECT ROLE FROM information_schema.MIRAJ_NODES WHERE NODE_ID = 'n3'"); got != "SECONDARY" {
		t.Fatalf("n2 shows n3 as %s", got)
	}
	// Byte-identical journals: the primary's, the log store's, and the
	// far secondary's that it relayed.
	compareJournals(t, filepath.Join(c.dir, "data-n1", "shop"), filepath.Join(c.dir, "data-n2", "miraj", "logstore", "shop", "journal"))
	compareJournals(t, filepath.Join(c.dir, "data-n1", "shop"), filepath.Join(c.dir, "data-n3", "shop"))

	// A log-store node never becomes primary.
	_, err := s2.Exec("SET GLOBAL cluster_role = 'primary'")
	if code, _ := mysqlError(err); code != 9003 || !strings.Contains(err.Error(), "log-store node") {
		t.Fatalf("promoting n2: %v, want 9003 naming the log-store node", err)
	}

	// n3 stops; n1 confirms more writes (n2 is the only acknowledgement);
	// n1 dies; n3 comes back and is promoted: it catches up from n2.
	n3.stop()
	write(25)
	confirmed := next
	n1.kill()
	n3.restart()
	s3 = n3.open("")
	waitFor(t, "n3 to see n1 gone", 30*time.Second, func() bool {
		_, err := s3.Exec("SET GLOBAL cluster_role = 'primary'")
		return err == nil
	})
	waitFor(t, "n3 to become PRIMARY", 30*time.Second, func() bool { return one(t, s3, "SELECT @@cluster_role") == "PRIMARY" })
	if got := rows(); got != fmt.Sprint(confirmed) {
		t.Fatalf("n3 holds %s rows after its promotion, %d were confirmed", got, confirmed)
	}
	if !strings.Contains(n3.output(), "catch-up planned from n2") {
		t.Fatal("n3's log does not show the catch-up from the log store n2")
	}
	// The log store follows the new primary and acknowledges its writes.
	conn = s3
	mustExec(t, conn, "SET GLOBAL cluster_sync_commit = 'RECEIVED'")
	mustExec(t, conn, "SET GLOBAL cluster_sync_timeout_action = 'ERROR'")
	waitFor(t, "n2 to follow n3", 30*time.Second, func() bool {
		return one(t, s3, "SELECT COUNT(*) FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = 'n2' AND `DATABASE` = 'shop' AND WRITTEN_LSN = PRIMARY_LSN AND APPLIED_LSN IS NULL") == "1"
	})
	write(5)
}
