package system

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// freePort returns a port free on 127.0.0.1 at the time of the call,
// never the same one twice in this process. The port is taken below the
// kernel's ephemeral range: a node's cluster port is written into every
// cluster.toml before the node starts, and a port the kernel could hand
// out meanwhile (to a server started with --port 0, or as the source port
// of an outgoing connection) would be taken by the time the node binds.
func freePort(t *testing.T) int {
	t.Helper()
	lo := ephemeralLow()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := 10000 + rand.IntN(lo-10000)
		if portsGiven[p] {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l.Close()
		portsGiven[p] = true
		return p
	}
	t.Fatal("no free port below the ephemeral range")
	return 0
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// ephemeralLow is the first port of the kernel's ephemeral range (32768
// when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo <= 11000 {
		return 32768
	}
	return lo
}

// testCluster is a set of nodes with certificates made by miraj-cluster-pki.
type testCluster struct {
	t     *testing.T
	dir   string
	ids   []string
	nodes map[string]*server
	// addrs: each node's inter-node address.
	addrs map[string]string
}

// port returns a node's inter-node port.
func (c *testCluster) port(id string) string {
	_, port, _ := strings.Cut(c.addrs[id], ":")
	return port
}

func pki(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(pkiBin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("miraj-cluster-pki %v: %v\n%s", args, err, out)
	}
}

// newTestCluster writes certificates and cluster.toml files for ids; no
// node is started.
func newTestCluster(t *testing.T, ids ...string) *testCluster {
	return newTestClusterWith(t, "", ids...)
}

// newTestClusterWith adds extra to the [cluster] table of every node's
// cluster.toml.
func newTestClusterWith(t *testing.T, extra string, ids ...string) *testCluster {
	dir := t.TempDir()
	c := &testCluster{t: t, dir: dir, ids: ids, nodes: map[string]*server{}, addrs: map[string]string{}}
	pki(t, "init-ca", "--name", "test", "--out", filepath.Join(dir, "pki"))
	addrs := c.addrs
	var seeds []string
	for _, id := range ids {
		addrs[id] = "127.0.0.1:" + strconv.Itoa(freePort(t))
		seeds = append(seeds, strconv.Quote(addrs[id]))
	}
	var members []string
	for _, id := range ids {
		members = append(members, strconv.Quote(id))
	}
	for _, id := range ids {
		nd := filepath.Join(dir, id)
		pki(t, "issue-node", "--ca", filepath.Join(dir, "pki"), "--id", id, "--san", "127.0.0.1", "--out", nd)
		cfg := fmt.Sprintf("[node]\nid = %q\nlisten = %q\nadvertise = %q\n\n[cluster]\nname = \"test\"\nseeds = [%s]\ntls_cert = \"node.pem\"\ntls_key = \"node-key.pem\"\ntls_ca = \"cluster-ca.pem\"\nmembers = [%s]\n%s",
			id, addrs[id], addrs[id], strings.Join(seeds, ", "), strings.Join(members, ", "), extra)
		if err := os.WriteFile(filepath.Join(nd, "cluster.toml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func (c *testCluster) start(id string) *server {
	s := newServer(c.t, filepath.Join(c.dir, "data-"+id), "--cluster-config", filepath.Join(c.dir, id, "cluster.toml"))
	c.nodes[id] = s
	return s
}

func one(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var v sql.NullString
	if err := db.QueryRow(q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v.String
}

// tableSum hashes a table's rows in primary key order.
func tableSum(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	h := sha256.New()
	h.Write([]byte(queryString(t, db, "SELECT * FROM "+table+" ORDER BY 1")))
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

// idSet returns the integers in the first column of query's rows.
func idSet(t *testing.T, db *sql.DB, query string) map[int64]bool {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	set := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		set[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return set
}

// applied returns a node's APPLIED_LSN of a database (its own row).
func applied(t *testing.T, s *server, dbName string) string {
	var v sql.NullString
	err := s.open("").QueryRow(fmt.Sprintf("SELECT APPLIED_LSN FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = @@cluster_node_id AND `DATABASE` = '%s'", dbName)).Scan(&v)
	if err != nil {
		return "" // not there yet
	}
	return v.String
}

func TestClusterReplication(t *testing.T) {
	c := newTestCluster(t, "n1", "n2", "n3", "n4")
	n1, n2, n3 := c.start("n1"), c.start("n2"), c.start("n3")
	p := n1.open("")
	if got := one(t, p, "SELECT @@cluster_role"); got != "SECONDARY" {
		t.Fatalf("a new node's role is %s, want SECONDARY", got)
	}
	_, err := p.Exec("CREATE DATABASE too_early")
	if num, _ := mysqlError(err); num != 1290 {
		t.Fatalf("write before designation: %v, want 1290", err)
	}
	mustExec(t, p, "SET GLOBAL cluster_role = 'primary'")
	waitFor(t, "n1 to become PRIMARY", 30*time.Second, func() bool { return one(t, p, "SELECT @@cluster_role") == "PRIMARY" })
	if got := one(t, p, "SELECT @@cluster_epoch"); got != "1" {
		t.Fatalf("epoch = %s", got)
	}

	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(40), qty INT, KEY iq (qty))",
		"INSERT INTO shop.items VALUES (1, 'apple', 3), (2, 'pear', 5)",
		"CREATE VIEW shop.big AS SELECT name FROM shop.items WHERE qty > 4",
		"CREATE USER 'reader'@'%' IDENTIFIED BY 'pw'",
		"GRANT SELECT ON shop.* TO 'reader'@'%'",
		"CREATE DATABASE scratch",
		"CREATE TABLE scratch.t (x INT)",
	} {
		mustExec(t, p, q)
	}
	mustExec(t, p, "DROP DATABASE scratch")
	if _, err := p.Exec("RENAME TABLE shop.items TO shop.goods"); func() uint16 { n, _ := mysqlError(err); return n }() != 1290 {
		t.Fatalf("RENAME TABLE in a cluster (§17.7): %v, want 1290", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("primary's view: %s\n%s\nprimary's log:\n%s", queryString(t, p, "SHOW CLUSTER STATUS"),
				queryString(t, p, "SELECT * FROM information_schema.MIRAJ_REPLICATION"), n1.output())
		}
	})
	for _, s := range []*server{n2, n3} {
		db := s.open("")
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("node log:\n%s", s.output())
			}
		})
		waitFor(t, "the rows on a secondary", 30*time.Second, func() bool {
			rows, err := db.Query("SELECT name FROM shop.big")
			if err != nil {
				return false
			}
			defer rows.Close()
			return rows.Next()
		})
		if got := queryString(t, db, "SELECT id, name, qty FROM shop.items ORDER BY id"); got != "1 apple 3;2 pear 5;" {
			t.Fatalf("secondary rows: %s", got)
		}
		if got := one(t, db, "SELECT @@read_only"); got != "1" {
			t.Fatalf("@@read_only on a secondary = %s", got)
		}
		if got := one(t, db, "SELECT @@cluster_primary"); got != "n1" {
			t.Fatalf("@@cluster_primary = %s", got)
		}
		waitFor(t, "the dropped database to go", 30*time.Second, func() bool {
			return queryString(t, db, "SHOW DATABASES LIKE 'scratch'") == ""
		})
		reader, err := sql.Open("mysql", s.dsn("reader", "pw", "shop"))
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the account on a secondary", 30*time.Second, func() bool { return reader.Ping() == nil })
		reader.Close()
		for _, q := range []string{
			"INSERT INTO shop.items VALUES (9, 'x', 1)",
			"UPDATE shop.items SET qty = 0",
			"CREATE TABLE shop.other (x INT)",
			"DROP TABLE shop.items",
			"CREATE DATABASE other",
			"CREATE USER 'x'@'%'",
			"LOCK TABLES shop.items WRITE",
			"ALTER USER 'reader'@'%' ACCOUNT LOCK",
		} {
			_, err := db.Exec(q)
			if num, state := mysqlError(err); num != 1290 || state != "HY000" {
				t.Fatalf("%s on a secondary: %v, want 1290", q, err)
			}
		}
		// What a secondary still allows.
		conn, _ := db.Conn(context.Background())
		for _, q := range []string{
			"SET @a = 1",
			"START TRANSACTION", "SELECT COUNT(*) FROM shop.items", "COMMIT",
			"CREATE TEMPORARY TABLE shop.tmp (x INT)", "INSERT INTO shop.tmp VALUES (1)",
			"LOCK TABLES shop.items READ", "UNLOCK TABLES", "FLUSH TABLES",
			"CHECK TABLE shop.items", "REPAIR TABLE shop.items",
			// Locking reads, as on a MySQL server with read_only.
			"START TRANSACTION", "SELECT * FROM shop.items FOR UPDATE", "SELECT * FROM shop.items FOR SHARE NOWAIT", "COMMIT",
			"CHECKSUM TABLE shop.items",
		} {
			mustExec(t, conn, q)
		}
		conn.Close()
	}

	// A write load; a secondary killed with SIGKILL in the middle catches
	// up from its own position, without a new copy.
	mustExec(t, p, "CREATE TABLE shop.lt (id INT PRIMARY KEY, v VARCHAR(64), n INT)")
	var stop atomic.Bool
	var wg sync.WaitGroup
	var written atomic.Int64
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, _ := sql.Open("mysql", n1.dsn("root", "", "shop"))
			defer db.Close()
			for i := 0; !stop.Load(); i++ {
				id := w*1_000_000 + i
				if _, err := db.Exec("INSERT INTO lt VALUES (?, ?, ?)", id, strings.Repeat("v", i%60), i); err == nil {
					written.Add(1)
				}
				if i%5 == 0 {
					db.Exec("UPDATE lt SET n = n + 1 WHERE id = ?", id-1)
				}
				if i%7 == 0 {
					db.Exec("DELETE FROM lt WHERE id = ?", id-3)
				}
			}
		}()
	}
	waitFor(t, "load", 60*time.Second, func() bool { return written.Load() > 300 })
	n2.kill()
	waitFor(t, "more load", 60*time.Second, func() bool { return written.Load() > 900 })
	n2.restart()
	// A new, empty node joins and is seeded.
	n4 := c.start("n4")
	waitFor(t, "n4 to be seeded", 60*time.Second, func() bool { return applied(t, n4, "shop") != "" })
	after := written.Load()
	waitFor(t, "more load", 60*time.Second, func() bool { return written.Load() > after+500 })
	stop.Store(true)
	wg.Wait()

	target := applied(t, n1, "shop")
	for _, s := range []*server{n2, n3, n4} {
		waitFor(t, "secondaries to catch up", 60*time.Second, func() bool { return applied(t, s, "shop") == target })
	}
	// The primary's view agrees once the secondaries have acknowledged.
	for _, id := range []string{"n2", "n3", "n4"} {
		waitFor(t, "the primary to see "+id+" caught up", 30*time.Second, func() bool {
			got := one(t, p, fmt.Sprintf("SELECT CONCAT(STATE, ' ', LAG_BYTES) FROM information_schema.MIRAJ_NODES WHERE NODE_ID = '%s'", id))
			return got == "CONNECTED 0"
		})
	}
	if strings.Contains(n2.output(), "receiving a copy of database shop") {
		t.Fatalf("n2 was seeded again after kill -9 instead of resuming:\n%s", n2.output())
	}
	if !strings.Contains(n4.output(), "copy of database shop installed") {
		t.Fatalf("n4 was not seeded:\n%s", n4.output())
	}
	want := tableSum(t, p, "shop.lt")
	for _, s := range []*server{n2, n3, n4} {
		if got := tableSum(t, s.open(""), "shop.lt"); got != want {
			t.Fatalf("table checksum on a secondary %s, primary %s", got, want)
		}
	}
	for _, id := range []string{"n2", "n3", "n4"} {
		if got := one(t, p, "SELECT STATE FROM information_schema.MIRAJ_NODES WHERE NODE_ID = '"+id+"'"); got != "CONNECTED" {
			t.Fatalf("%s is %s on the primary, want CONNECTED; SHOW CLUSTER STATUS: %s", id, got, queryString(t, p, "SHOW CLUSTER STATUS"))
		}
	}
	for _, id := range []string{"n2", "n3", "n4"} {
		compareJournals(t, filepath.Join(c.dir, "data-n1", "shop"), filepath.Join(c.dir, "data-"+id, "shop"))
	}

	// The primary restarts: it is primary again, and its secondaries
	// resume the stream where they were, without a new copy.
	n1.stop()
	n1.restart()
	p = n1.open("")
	if got := one(t, p, "SELECT CONCAT(@@cluster_role, ' ', @@cluster_epoch)"); got != "PRIMARY 1" {
		t.Fatalf("after restart: %s", got)
	}
	// It takes writes once it has asked its peers whether a newer
	// primary exists (a few milliseconds when they answer).
	waitFor(t, "the restarted primary to take writes", 10*time.Second, func() bool { return one(t, p, "SELECT @@read_only") == "0" })
	mustExec(t, p, "INSERT INTO shop.items VALUES (3, 'fig', 7)")
	target = applied(t, n1, "shop")
	waitFor(t, "n3 to resume", 60*time.Second, func() bool { return applied(t, n3, "shop") == target })
	if k := strings.Count(n3.output(), "receiving a copy of database shop"); k != 1 {
		t.Fatalf("n3 received %d copies of shop; the restart of the primary must not cause another", k)
	}
}

// compareJournals checks that two journals hold the same bytes at every LSN
// both hold.
func compareJournals(t *testing.T, a, b string) {
	t.Helper()
	ra, rb := readJournal(t, a), readJournal(t, b)
	lo := max(ra.start, rb.start)
	hi := min(ra.start+int64(len(ra.data)), rb.start+int64(len(rb.data)))
	if hi-lo < 1000 {
		t.Fatalf("journals %s and %s share only %d bytes", a, b, hi-lo)
	}
	if !bytes.Equal(ra.data[lo-ra.start:hi-ra.start], rb.data[lo-rb.start:hi-rb.start]) {
		t.Fatalf("journals %s and %s differ between LSN %d and %d", a, b, lo, hi)
	}
}

type journalBytes struct {
	start int64
	data  []byte
}

func readJournal(t *testing.T, dir string) journalBytes {
	segs, _ := filepath.Glob(filepath.Join(dir, "*.journal"))
	sort.Strings(segs)
	if len(segs) == 0 {
		t.Fatalf("no journal in %s", dir)
	}
	var out journalBytes
	for i, s := range segs {
		lsn, _ := strconv.ParseInt(strings.TrimSuffix(filepath.Base(s), ".journal"), 10, 64)
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			out.start = lsn
		} else if lsn != out.start+int64(len(out.data)) {
			t.Fatalf("%s: segments not contiguous", dir)
		}
		out.data = append(out.data, data...)
	}
	return out
}

// A node whose cluster address is taken refuses to start, naming the
// address, rather than serve SQL as a node no peer can reach.
func TestClusterPortTakenRefusesToStart(t *testing.T) {
	c := newTestCluster(t, "n1", "n2")
	cfg, err := os.ReadFile(filepath.Join(c.dir, "n1", "cluster.toml"))
	if err != nil {
		t.Fatal(err)
	}
	addr := regexp.MustCompile(`listen = "([^"]+)"`).FindSubmatch(cfg)[1]
	l, err := net.Listen("tcp", string(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := exec.Command(serverBin, "--root", filepath.Join(c.dir, "data-n1"), "--port", "0",
		"--cluster-config", filepath.Join(c.dir, "n1", "cluster.toml"))
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the server kept running with its cluster port taken:\n%s", out)
	}
	if err == nil {
		t.Fatalf("the server exited 0 with its cluster port taken:\n%s", out)
	}
	if want := "listen " + string(addr); !strings.Contains(string(out), want) || !strings.Contains(string(out), "address already in use") {
		t.Fatalf("the error does not name the address (%q):\n%s", want, out)
	}
}
