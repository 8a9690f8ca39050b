package system

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// signal sends sig to a running node (SIGSTOP freezes it as a hung
// machine would, SIGCONT thaws it).
func (s *server) signal(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signal %v: %v", sig, err)
	}
}

// designate makes s the primary and waits until it takes writes.
func designate(t *testing.T, s *server) *sql.DB {
	t.Helper()
	db := s.open("")
	mustExec(t, db, "SET GLOBAL cluster_role = 'primary'")
	waitFor(t, "the primary to take writes", 30*time.Second, func() bool {
		return one(t, db, "SELECT CONCAT(@@cluster_role, ' ', @@read_only)") == "PRIMARY 0"
	})
	return db
}

// replPos returns a node's WRITTEN_LSN and APPLIED_LSN of a database.
func replPos(s *server, dbName string) (written, applied int64) {
	var w, a sql.NullInt64
	err := s.open("").QueryRow(fmt.Sprintf("SELECT WRITTEN_LSN, APPLIED_LSN FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = @@cluster_node_id AND `DATABASE` = '%s'", dbName)).Scan(&w, &a)
	if err != nil {
		return -1, -1
	}
	return w.Int64, a.Int64
}

// shopCluster starts a cluster of ids (extra added to every cluster.toml),
// designates the first node and creates shop.t (id INT PRIMARY KEY, v
// VARCHAR(20)). It returns the cluster, its nodes in order and a connection
// to the primary.
func shopCluster(t *testing.T, extra string, ids ...string) (*testCluster, []*server, *sql.DB) {
	t.Helper()
	c := newTestClusterWith(t, extra, ids...)
	var ns []*server
	for _, id := range ids {
		ns = append(ns, c.start(id))
	}
	logOnFailure(t, c.nodes)
	p := designate(t, ns[0])
	mustExec(t, p, "CREATE DATABASE shop")
	mustExec(t, p, "CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(20))")
	return c, ns, p
}

// caughtUp waits until every node of others has applied database shop as
// far as primary has.
func caughtUp(t *testing.T, primary *server, others ...*server) {
	t.Helper()
	target := applied(t, primary, "shop")
	for _, s := range others {
		waitFor(t, "the secondaries to catch up", 60*time.Second, func() bool { return applied(t, s, "shop") == target })
	}
}

func logOnFailure(t *testing.T, nodes map[string]*server) {
	t.Cleanup(func() {
		if t.Failed() {
			for id, s := range nodes {
				t.Logf("log of %s:\n%s", id, s.output())
			}
		}
	})
}

// Promoting a secondary while the primary is alive: the old primary sees
// the newer epoch and is fenced at once (writes refused with 1290); the
// third node follows the new primary. Two nodes never both take writes.
func TestOlderPrimaryIsFencedByNewerEpoch(t *testing.T) {
	c, ns, p1 := shopCluster(t, "", "n1", "n2", "n3")
	n1, n2, n3 := ns[0], ns[1], ns[2]
	mustExec(t, p1, "INSERT INTO shop.t VALUES (1, 'n1')")
	caughtUp(t, n1, n2, n3)

	// A controlled promotion while the primary is alive is refused.
	p2 := n2.open("")
	_, err := p2.Exec("SET GLOBAL cluster_role = 'primary'")
	if num, _ := mysqlError(err); num != 9003 || !strings.Contains(err.Error(), "Promotion refused: node n1 is still primary at epoch 1") {
		t.Fatalf("'primary' with the primary alive: %v, want 9003 naming n1", err)
	}
	if got := one(t, p2, "SELECT CONCAT(@@cluster_role, ' ', @@cluster_epoch)"); got != "SECONDARY 1" {
		t.Fatalf("after the refusal n2 is %s", got)
	}
	// Forced, it goes through.
	mustExec(t, p2, "SET GLOBAL cluster_role = 'force_primary'")
	waitFor(t, "n2 to take writes", 30*time.Second, func() bool {
		return one(t, p2, "SELECT CONCAT(@@cluster_role, ' ', @@read_only)") == "PRIMARY 0"
	})
	if got := one(t, p2, "SELECT @@cluster_epoch"); got != "2" {
		t.Fatalf("n2's epoch %s, want 2", got)
	}
	if !strings.Contains(n2.output(), "promotion of n2 (forced): node n1 is still primary at epoch 1") {
		t.Fatal("the forced refusal is not in n2's log")
	}
	waitFor(t, "n1 to be fenced", 20*time.Second, func() bool { return one(t, p1, "SELECT @@cluster_role") == "FENCED" })
	_, err = p1.Exec("INSERT INTO shop.t VALUES (10, 'n1 again')")
	if num, _ := mysqlError(err); num != 1290 {
		t.Fatalf("write on the fenced former primary: %v, want 1290", err)
	}
	if got := one(t, p1, "SELECT CONCAT(@@read_only, ' ', @@global.read_only, ' ', @@global.cluster_role, ' ', @@global.cluster_epoch)"); got != "1 1 FENCED 2" {
		t.Fatalf("read_only, global role and epoch on a fenced node: %s", got)
	}
	var name, value string
	if err := p1.QueryRow("SHOW GLOBAL VARIABLES LIKE 'cluster_role'").Scan(&name, &value); err != nil || value != "FENCED" {
		t.Fatalf("SHOW GLOBAL VARIABLES LIKE 'cluster_role': %q %v", value, err)
	}
	if !strings.Contains(n1.output(), "FENCED") {
		t.Fatalf("the fencing is not in n1's log")
	}
	mustExec(t, p2, "INSERT INTO shop.t VALUES (10, 'n2')")
	s3 := n3.open("")
	waitFor(t, "n3 to follow n2", 30*time.Second, func() bool {
		return one(t, s3, "SELECT COALESCE((SELECT v FROM shop.t WHERE id = 10), '')") == "n2"
	})
	if got := one(t, s3, "SELECT CONCAT(@@cluster_primary, ' ', @@cluster_epoch)"); got != "n2 2" {
		t.Fatalf("n3 follows %s", got)
	}
	if one(t, p1, "SELECT COUNT(*) FROM shop.t WHERE id = 10") != "0" {
		t.Fatal("the fenced node holds a row written after it was fenced")
	}
	// Back in service: it wrote nothing after the new epoch began, so it
	// follows n2 by the stream, without quarantine.
	mustExec(t, p1, "SET GLOBAL cluster_role = 'secondary'")
	waitFor(t, "n1 to follow n2", 30*time.Second, func() bool {
		return one(t, p1, "SELECT COALESCE((SELECT v FROM shop.t WHERE id = 10), '')") == "n2"
	})
	if got := one(t, p1, "SELECT CONCAT(@@cluster_role, ' ', @@cluster_epoch, ' ', @@cluster_primary)"); got != "SECONDARY 2 n2" {
		t.Fatalf("n1 rejoined as %s", got)
	}
	if q, _ := filepath.Glob(filepath.Join(c.dir, "data-n1", "miraj", "quarantaine", "*")); len(q) != 0 {
		t.Fatalf("n1 quarantined %v though it had nothing of its own", q)
	}
}

// A secondary that received writes the new primary never had (the old
// primary died before the promoted node got them, and the promoted node
// could not reach it to catch up) does not splice the new primary's journal
// onto its own: the divergence is detected, its database
// goes to quarantine with a report, and it is copied again. The old
// primary, restarted, learns of the newer epoch before any write.
func TestDivergedSecondaryIsQuarantined(t *testing.T) {
	c, ns, p1 := shopCluster(t, "", "n1", "n2", "n3")
	n1, n2, n3 := ns[0], ns[1], ns[2]
	for i := 1; i <= 10; i++ {
		mustExec(t, p1, fmt.Sprintf("INSERT INTO shop.t VALUES (%d, 'both')", i))
	}
	caughtUp(t, n1, n2, n3)
	// n2 down (killed: a frozen one would still find the rows in its
	// socket buffers), rows 11-20 reach n3 only, then the primary dies.
	n2.kill()
	for i := 11; i <= 20; i++ {
		mustExec(t, p1, fmt.Sprintf("INSERT INTO shop.t VALUES (%d, 'only n1 and n3')", i))
	}
	caughtUp(t, n1, n3)
	n1.kill()
	n2.restart()

	// n3 frozen: the promotion cannot catch up from it (an unreachable
	// peer does not stop a promotion), so n2 becomes primary without
	// rows 11-20.
	n3.signal(syscall.SIGSTOP)
	p2 := designate(t, n2)
	n3.signal(syscall.SIGCONT)
	mustExec(t, p2, "INSERT INTO shop.t VALUES (100, 'n2')")
	s3 := n3.open("")
	waitFor(t, "n3 to follow n2", 60*time.Second, func() bool {
		var v sql.NullString
		s3.QueryRow("SELECT v FROM shop.t WHERE id = 100").Scan(&v)
		return v.String == "n2"
	})
	if got := one(t, s3, "SELECT COUNT(*) FROM shop.t WHERE id BETWEEN 11 AND 20"); got != "0" {
		t.Fatalf("n3 kept %s rows the new primary never had in its live database", got)
	}
	if a, b := tableSum(t, s3, "shop.t"), tableSum(t, p2, "shop.t"); a != b {
		t.Fatalf("n3 and n2 differ: %s %s", a, b)
	}
	reports, _ := filepath.Glob(filepath.Join(c.dir, "data-n3", "miraj", "quarantaine", "*", "shop", "report.txt"))
	if len(reports) != 1 {
		t.Fatalf("n3's quarantine reports: %v", reports)
	}
	rep, _ := os.ReadFile(reports[0])
	for _, want := range []string{"database:  shop", "diverged", "LSN range"} {
		if !strings.Contains(string(rep), want) {
			t.Fatalf("report lacks %q:\n%s", want, rep)
		}
	}
	// The quarantined folder still holds rows 11-20: a standalone server
	// started on a copy of it shows them.
	q := t.TempDir()
	if out, err := execCommand("cp", "-r", filepath.Dir(reports[0]), filepath.Join(q, "shop")); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	qs := newServer(t, q)
	if got := one(t, qs.open(""), "SELECT COUNT(*) FROM shop.t WHERE id BETWEEN 11 AND 20"); got != "10" {
		t.Fatalf("the quarantined database holds %s of rows 11-20", got)
	}
	qs.kill()
	// From the copy on, n3's journal is n2's, byte for byte.
	for i := 101; i <= 150; i++ {
		mustExec(t, p2, fmt.Sprintf("INSERT INTO shop.t VALUES (%d, 'n2 streamed')", i))
	}
	caughtUp(t, n2, n3)
	compareJournals(t, filepath.Join(c.dir, "data-n2", "shop"), filepath.Join(c.dir, "data-n3", "shop"))

	// The old primary comes back: it asks its peers before taking any
	// write, and is fenced.
	n1.restart()
	p1 = n1.open("")
	waitFor(t, "the old primary to be fenced", 30*time.Second, func() bool { return one(t, p1, "SELECT @@cluster_role") == "FENCED" })
	_, err := p1.Exec("INSERT INTO shop.t VALUES (200, 'n1')")
	if num, _ := mysqlError(err); num != 1290 {
		t.Fatalf("write on the restarted former primary: %v, want 1290", err)
	}
	// Back in service: rows 11-20, which only n1 and n3 had, go to n1's
	// quarantine; its database becomes n2's.
	mustExec(t, p1, "SET GLOBAL cluster_role = 'secondary'")
	waitFor(t, "n1 to follow n2", 60*time.Second, func() bool {
		var v sql.NullString
		p1.QueryRow("SELECT v FROM shop.t WHERE id = 150").Scan(&v)
		return v.String == "n2 streamed"
	})
	if a, b := tableSum(t, p1, "shop.t"), tableSum(t, p2, "shop.t"); a != b {
		t.Fatalf("n1 and n2 differ after the rejoin: %s %s", a, b)
	}
	if reports, _ := filepath.Glob(filepath.Join(c.dir, "data-n1", "miraj", "quarantaine", "*", "shop", "report.txt")); len(reports) != 1 {
		t.Fatalf("n1's quarantine: %v", reports)
	}
}

// Planned switchover (§17.4.3) under a write load that retries on 1290:
// the primary steps down, a secondary is promoted (catching up from the
// former primary what it lacked), and everyone follows it by the stream:
// no copy, no quarantine, no acknowledged write lost.
func TestPlannedSwitchover(t *testing.T) {
	c, ns, p1 := shopCluster(t, "", "n1", "n2", "n3")
	n1, n2, n3 := ns[0], ns[1], ns[2]
	caughtUp(t, n1, n2, n3)
	dbs := []*sql.DB{p1, n2.open(""), n3.open("")}
	var mu sync.Mutex
	var acked []int
	var stop atomic.Bool
	var refused atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The application: writes to the node it believes primary, and
		// on 1290 tries the next one.
		at := 0
		for id := 1; !stop.Load(); id++ {
			for {
				_, err := dbs[at].Exec(fmt.Sprintf("INSERT INTO shop.t VALUES (%d, 'w')", id))
				if err == nil {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
					break
				}
				refused.Add(1)
				at = (at + 1) % len(dbs)
				if stop.Load() {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	waitFor(t, "writes on n1", 30*time.Second, func() bool { return count() >= 200 })
	mustExec(t, p1, "SET GLOBAL cluster_role = 'secondary'")
	if got := one(t, p1, "SELECT CONCAT(@@cluster_role, ' ', @@read_only)"); got != "SECONDARY 1" {
		t.Fatalf("after stepping down n1 is %s", got)
	}
	p2 := dbs[1]
	waitFor(t, "n2's promotion to be accepted", 30*time.Second, func() bool {
		_, err := p2.Exec("SET GLOBAL cluster_role = 'primary'")
		return err == nil
	})
	waitFor(t, "n2 to take writes", 30*time.Second, func() bool {
		return one(t, p2, "SELECT CONCAT(@@cluster_role, ' ', @@read_only)") == "PRIMARY 0"
	})
	before := count()
	waitFor(t, "writes on n2", 30*time.Second, func() bool { return count() >= before+200 })
	stop.Store(true)
	<-done
	caughtUp(t, n2, n1, n3)
	want := tableSum(t, p2, "shop.t")
	for _, db := range dbs {
		if got := tableSum(t, db, "shop.t"); got != want {
			a, b := queryString(t, db, "SELECT * FROM shop.t ORDER BY 1"), queryString(t, p2, "SELECT * FROM shop.t ORDER BY 1")
			k := 0
			for k < len(a) && k < len(b) && a[k] == b[k] {
				k++
			}
			t.Fatalf("a node's rows differ from the new primary's at byte %d: %q vs %q", k, a[max(0, k-40):min(len(a), k+40)], b[max(0, k-40):min(len(b), k+40)])
		}
	}
	present := idSet(t, p2, "SELECT id FROM shop.t")
	lost := 0
	for _, id := range acked {
		if !present[int64(id)] {
			lost++
		}
	}
	t.Logf("acknowledged %d writes, %d refused with 1290 during the switchover, %d lost", len(acked), refused.Load(), lost)
	if lost != 0 {
		t.Fatalf("%d acknowledged writes lost in a planned switchover", lost)
	}
	// n3 got its one copy when it joined n1, and none since; n1 none.
	for _, id := range []string{"n1", "n3"} {
		if k := strings.Count(c.nodes[id].output(), "receiving a copy of database shop"); id == "n1" && k != 0 || id == "n3" && k != 1 {
			t.Fatalf("%s received %d copies of shop during the switchover", id, k)
		}
		if q, _ := filepath.Glob(filepath.Join(c.dir, "data-"+id, "miraj", "quarantaine", "*")); len(q) != 0 {
			t.Fatalf("%s quarantined %v", id, q)
		}
	}
}

// A secondary promoted while it holds part of a transaction whose commit
// frame never came keeps those frames (they are the old primary's, and
// any other follower may hold them too) and ends the transaction with an
// abort frame right after its epoch mark: none of it is visible, then or
// after a restart, and its keys take writes at once.
func TestPromotionEndsUnterminatedTransaction(t *testing.T) {
	c := newTestCluster(t, "n1", "n2")
	n1, n2 := c.start("n1"), c.start("n2")
	logOnFailure(t, c.nodes)
	p1 := designate(t, n1)
	mustExec(t, p1, "CREATE DATABASE shop")
	mustExec(t, p1, "CREATE TABLE shop.big (id INT PRIMARY KEY, b LONGBLOB)")
	mustExec(t, p1, "INSERT INTO shop.big VALUES (0, 'small')")
	caughtUp(t, n1, n2)

	// n2 frozen: the primary's stream of a 60 MiB transaction fills the
	// socket buffers and waits; the primary frozen next, n2 thawed reads
	// what the buffers hold: part of the transaction.
	n2.signal(syscall.SIGSTOP)
	conn, err := p1.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, conn, "SET SESSION stream_transaction_mb = 0") // sent after its COMMIT
	mustExec(t, conn, "BEGIN")
	for i := 1; i <= 60; i++ {
		mustExec(t, conn, fmt.Sprintf("INSERT INTO shop.big VALUES (%d, REPEAT('x', 1048576))", i))
	}
	mustExec(t, conn, "COMMIT")
	conn.Close()
	// The primary's sender has put part of the transaction on the link
	// (n2, stopped, reads none of it yet).
	waitFor(t, "n1 to send part of the transaction to n2", 30*time.Second, func() bool {
		var sent sql.NullInt64
		p1.QueryRow("SELECT SENT_LSN FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = 'n2' AND `DATABASE` = 'shop'").Scan(&sent)
		_, a := replPos(n1, "shop")
		return sent.Valid && sent.Int64 >= a
	})
	n1.signal(syscall.SIGSTOP)
	defer n1.kill()
	n2.signal(syscall.SIGCONT)
	waitFor(t, "n2 to hold part of the transaction", 30*time.Second, func() bool {
		w, a := replPos(n2, "shop")
		return w > a
	})
	w, a := replPos(n2, "shop")
	t.Logf("n2 wrote %d bytes of the transaction beyond its last commit", w-a)

	p2 := designate(t, n2)
	if got := one(t, p2, "SELECT COUNT(*) FROM shop.big"); got != "1" {
		t.Fatalf("n2 shows %s rows, want only the committed one", got)
	}
	if got := one(t, p2, "SELECT COUNT(*) FROM information_schema.MIRAJ_STREAMS"); got != "0" {
		t.Fatalf("n2 still lists %s open transactions after its promotion", got)
	}
	mustExec(t, p2, "INSERT INTO shop.big VALUES (1, 'after')") // a key the transaction wrote
	if !strings.Contains(n2.output(), "open transactions of another writer ended") {
		t.Fatal("the abort of the open transaction is not in the log")
	}
	if w2, _ := replPos(n2, "shop"); w2 < w {
		t.Fatalf("n2's journal ends at %d after the promotion, before the %d it had written", w2, w)
	}
	var name, ended string
	if err := p2.QueryRow("SHOW GLOBAL STATUS LIKE 'Miraj_stream_rolled_back'").Scan(&name, &ended); err != nil || ended != "1" {
		t.Fatalf("Miraj_stream_rolled_back: %q, %v", ended, err)
	}
	if tails, _ := filepath.Glob(filepath.Join(c.dir, "data-n2", "miraj", "quarantaine", "*", "shop", "*.journal")); len(tails) != 0 {
		t.Fatalf("quarantined tails: %v", tails)
	}
	n2.stop()
	n2.restart()
	p2 = n2.open("")
	if got := queryString(t, p2, "SELECT id FROM shop.big ORDER BY id"); got != "0;1;" {
		t.Fatalf("after a restart n2 holds rows %s, want 0 and 1", got)
	}
}

// A 40 MiB row is one journal frame: it replicates (the stream's frame
// limit holds on both ends of the link).
func TestLargeRowReplicates(t *testing.T) {
	c := newTestCluster(t, "n1", "n2")
	n1, n2 := c.start("n1"), c.start("n2")
	logOnFailure(t, c.nodes)
	p1 := designate(t, n1)
	mustExec(t, p1, "CREATE DATABASE shop")
	mustExec(t, p1, "CREATE TABLE shop.blobs (id INT PRIMARY KEY, b LONGBLOB)")
	const size = 40 << 20
	mustExec(t, p1, "INSERT INTO shop.blobs VALUES (1, REPEAT('y', "+strconv.Itoa(size)+"))")
	s2 := n2.open("")
	waitFor(t, "the 40 MiB row on the secondary", 60*time.Second, func() bool {
		var n sql.NullInt64
		s2.QueryRow("SELECT LENGTH(b) FROM shop.blobs WHERE id = 1").Scan(&n)
		return n.Int64 == size
	})
	mustExec(t, p1, "INSERT INTO shop.blobs VALUES (2, 'after')")
	waitFor(t, "the next row", 30*time.Second, func() bool {
		var v sql.NullString
		s2.QueryRow("SELECT b FROM shop.blobs WHERE id = 2").Scan(&v)
		return v.String == "after"
	})
}

func execCommand(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).CombinedOutput()
}

// The promoted node catches up from the most advanced reachable secondary
// (§17.4.1): n3, cut off (the isolation test hook) while the rows were
// written, is promoted after the primary's loss and gets every row from
// n2; n2 follows it by the stream.
func TestPromotionCatchesUpFromThePeer(t *testing.T) {
	c, ns, p1 := shopCluster(t, "test_hooks = true\n", "n1", "n2", "n3")
	n1, n2, n3 := ns[0], ns[1], ns[2]
	caughtUp(t, n1, n2, n3)
	marker := filepath.Join(c.dir, "data-n3", "miraj", "cluster-isolate")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to lose n3", 30*time.Second, func() bool {
		return one(t, p1, "SELECT STATE FROM information_schema.MIRAJ_NODES WHERE NODE_ID = 'n3'") != "CONNECTED"
	})
	for i := 1; i <= 100; i++ {
		mustExec(t, p1, fmt.Sprintf("INSERT INTO shop.t VALUES (%d, 'row %d')", i, i))
	}
	caughtUp(t, n1, n2)
	n1.kill()
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}

	p3 := n3.open("")
	waitFor(t, "n3's promotion to be accepted", 30*time.Second, func() bool {
		_, err := p3.Exec("SET GLOBAL cluster_role = 'primary'")
		return err == nil
	})
	waitFor(t, "n3 to take writes", 30*time.Second, func() bool {
		return one(t, p3, "SELECT CONCAT(@@cluster_role, ' ', @@read_only)") == "PRIMARY 0"
	})
	if got := one(t, p3, "SELECT COUNT(*) FROM shop.t"); got != "100" {
		t.Fatalf("n3 promoted with %s rows, want 100", got)
	}
	log := n3.output()
	if !strings.Contains(log, "catch-up planned from n2") || !strings.Contains(log, "catch-up from n2 finished") {
		t.Fatalf("the catch-up is not in n3's log")
	}
	if !strings.Contains(n2.output(), "catch-up of n3 served") {
		t.Fatal("n2 does not log the catch-up it served")
	}
	mustExec(t, p3, "INSERT INTO shop.t VALUES (101, 'n3')")
	s2 := n2.open("")
	waitFor(t, "n2 to follow n3", 30*time.Second, func() bool {
		var v sql.NullString
		s2.QueryRow("SELECT v FROM shop.t WHERE id = 101").Scan(&v)
		return v.String == "n3"
	})
	if k := strings.Count(n2.output(), "receiving a copy of database shop"); k != 1 {
		t.Fatalf("n2 received %d copies of shop; following the promoted n3 must not take another", k)
	}
	if q, _ := filepath.Glob(filepath.Join(c.dir, "data-n2", "miraj", "quarantaine", "*")); len(q) != 0 {
		t.Fatalf("n2 quarantined %v", q)
	}
}

// An isolated primary (test_hooks marker) keeps taking writes nobody
// receives; it dies, another node is promoted; restarted, it is fenced
// before any write; returned to service, its writes go to quarantine with a
// report that lists them, and its database becomes the new primary's.
func TestIsolatedPrimaryWritesGoToQuarantine(t *testing.T) {
	c, ns, p1 := shopCluster(t, "test_hooks = true\n", "n1", "n2", "n3")
	n1, n2, n3 := ns[0], ns[1], ns[2]
	for i := 1; i <= 10; i++ {
		mustExec(t, p1, fmt.Sprintf("INSERT INTO shop.t VALUES (%d, 'all')", i))
	}
	caughtUp(t, n1, n2, n3)
	marker := filepath.Join(c.dir, "data-n1", "miraj", "cluster-isolate")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 cut off", 10*time.Second, func() bool {
		return one(t, p1, "SELECT COUNT(*) FROM information_schema.MIRAJ_NODES WHERE STATE = 'CONNECTED'") == "0"
	})
	for i := 100; i <= 104; i++ {
		mustExec(t, p1, fmt.Sprintf("INSERT INTO shop.t VALUES (%d, 'isolated n1')", i))
	}
	n1.kill()
	p2 := designate(t, n2)
	mustExec(t, p2, "INSERT INTO shop.t VALUES (11, 'n2')")
	os.Remove(marker)
	n1.restart()
	p1 = n1.open("")
	waitFor(t, "n1 to be fenced", 30*time.Second, func() bool { return one(t, p1, "SELECT @@cluster_role") == "FENCED" })
	_, err := p1.Exec("INSERT INTO shop.t VALUES (200, 'n1')")
	if num, _ := mysqlError(err); num != 1290 {
		t.Fatalf("a write on the fenced node: %v, want 1290", err)
	}
	mustExec(t, p1, "SET GLOBAL cluster_role = 'secondary'")
	waitFor(t, "n1 to follow n2", 60*time.Second, func() bool {
		var v sql.NullString
		p1.QueryRow("SELECT v FROM shop.t WHERE id = 11").Scan(&v)
		return v.String == "n2"
	})
	if got := one(t, p1, "SELECT COUNT(*) FROM shop.t WHERE id >= 100"); got != "0" {
		t.Fatalf("n1 kept %s of its isolated rows in its live database", got)
	}
	if a, b := tableSum(t, p1, "shop.t"), tableSum(t, p2, "shop.t"); a != b {
		t.Fatalf("n1 and n2 differ: %s %s", a, b)
	}
	reports, _ := filepath.Glob(filepath.Join(c.dir, "data-n1", "miraj", "quarantaine", "*", "shop", "report.txt"))
	if len(reports) != 1 {
		t.Fatalf("n1's quarantine reports: %v", reports)
	}
	rep, _ := os.ReadFile(reports[0])
	for _, want := range []string{"transactions: 5 (5 committed), rows changed: 5", "commit times:", "INSERT INTO `t` VALUES (100, 'isolated n1')", "INSERT INTO `t` VALUES (104, 'isolated n1')"} {
		if !strings.Contains(string(rep), want) {
			t.Fatalf("the report lacks %q:\n%s", want, rep)
		}
	}
	if strings.Contains(string(rep), "VALUES (5, 'all')") {
		t.Fatalf("the report lists a row that is on the primary's history:\n%s", rep)
	}
	out, err := execCommand(quarantineBin, filepath.Dir(reports[0]))
	if err != nil || !strings.Contains(string(out), "INSERT INTO `t` VALUES (102, 'isolated n1');") {
		t.Fatalf("miraj-quarantine: %v\n%s", err, out)
	}
}

// A former primary's writes that no one else received go to quarantine
// listed one by one, even when the node checkpointed after it was fenced
// and before it rejoined (a clean stop checkpoints): with
// promotion_catchup_mb = 0 a secondary keeps no journal behind its
// checkpoints, but a node whose current primary has not streamed to it yet
// keeps all of its journal, since what diverges goes to quarantine. The
// diverged writes span more than one 64 MiB journal segment, so a
// checkpoint could let the first go.
func TestFencedPrimaryCheckpointKeepsDivergedJournal(t *testing.T) {
	c, ns, p1 := shopCluster(t, "promotion_catchup_mb = 0", "n1", "n2")
	n1, n2 := ns[0], ns[1]
	mustExec(t, p1, "CREATE TABLE shop.big (id INT PRIMARY KEY, b LONGTEXT)")
	mustExec(t, p1, "INSERT INTO shop.t VALUES (1, 'both')")
	caughtUp(t, n1, n2)
	n2.kill()
	const diverged = 100 // rows of 1 MB: about 100 MB of journal
	for i := 1; i <= diverged; i++ {
		mustExec(t, p1, fmt.Sprintf("INSERT INTO shop.big VALUES (%d, REPEAT('x', 1000000))", i))
	}
	n1.kill()
	n2.restart()
	p2 := designate(t, n2)
	mustExec(t, p2, "INSERT INTO shop.t VALUES (2, 'n2')")

	// n1 comes back, is fenced, and stops cleanly: a checkpoint.
	n1.restart()
	p1 = n1.open("")
	waitFor(t, "the old primary to be fenced", 30*time.Second, func() bool { return one(t, p1, "SELECT @@cluster_role") == "FENCED" })
	n1.stop()
	n1.restart()
	p1 = n1.open("")
	waitFor(t, "the old primary to be fenced again", 30*time.Second, func() bool { return one(t, p1, "SELECT @@cluster_role") == "FENCED" })
	mustExec(t, p1, "SET GLOBAL cluster_role = 'secondary'")
	waitFor(t, "n1 to follow n2", 60*time.Second, func() bool {
		var v sql.NullString
		p1.QueryRow("SELECT v FROM shop.t WHERE id = 2").Scan(&v)
		return v.String == "n2"
	})
	reports, _ := filepath.Glob(filepath.Join(c.dir, "data-n1", "miraj", "quarantaine", "*", "shop", "report.txt"))
	if len(reports) != 1 {
		t.Fatalf("n1's quarantine reports: %v", reports)
	}
	rep, _ := os.ReadFile(reports[0])
	if want := fmt.Sprintf("transactions: %d (%d committed), rows changed: %d", diverged, diverged, diverged); !strings.Contains(string(rep), want) || strings.Contains(string(rep), "no longer in the journal") {
		t.Fatalf("n1's quarantine report does not list the %d diverged transactions (%q):\n%s", diverged, want, rep)
	}
}
