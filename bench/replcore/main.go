// Command replcore measures two properties of the replication core on a
// two-node cluster of real processes (certificates from miraj-cluster-pki,
// free ports on 127.0.0.1):
//
//   - linear replay: one transaction of 25, 50 and 100 MiB committed on the
//     primary; the time until the secondary has applied it (from COMMIT's
//     start: the stream begins once the commit is in the journal), and MiB/s. Quadratic replay shows as MiB/s falling with size.
//   - databases apply independently: while an ALTER TABLE … ADD COLUMN of a
//     300,000-row table in one database replicates, autocommit inserts into
//     another database every 20 ms; the largest delay between an insert's
//     return on the primary and its row on the secondary.
//
// It is a benchmark, not a test: it prints figures and asserts nothing.
//
//	go build -o /tmp/bin ./cmd/miraj-server ./cmd/miraj-cluster-pki
//	go run ./bench/replcore -bin /tmp/bin
package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

var bin = flag.String("bin", "", "folder with miraj-server and miraj-cluster-pki")

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "replcore-")
	check(err)
	defer os.RemoveAll(dir)
	p, s, stop := cluster(dir)
	defer stop()

	must(p, "SET GLOBAL cluster_role = 'primary'")
	waitFor(func() bool { return one(p, "SELECT CONCAT(@@cluster_role, @@read_only)") == "PRIMARY0" })
	must(p, "CREATE DATABASE big")
	must(p, "CREATE TABLE big.t (id INT PRIMARY KEY, b LONGBLOB)")
	must(p, "CREATE DATABASE side")
	must(p, "CREATE TABLE side.t (id INT PRIMARY KEY, at BIGINT)")
	caughtUp(p, s, "big")

	fmt.Println("## Replay of one large transaction on the secondary")
	fmt.Println("| size | COMMIT on the primary | applied on the secondary (from COMMIT) | MiB/s |")
	fmt.Println("|--:|--:|--:|--:|")
	id := 0
	for _, mib := range []int{25, 50, 100} {
		c, err := p.Conn(bgctx)
		check(err)
		_, err = c.ExecContext(bgctx, "BEGIN")
		check(err)
		for i := 0; i < mib; i++ {
			id++
			_, err = c.ExecContext(bgctx, fmt.Sprintf("INSERT INTO big.t VALUES (%d, REPEAT('x', 1048576))", id))
			check(err)
		}
		t0 := time.Now()
		_, err = c.ExecContext(bgctx, "COMMIT")
		check(err)
		commit := time.Since(t0)
		c.Close()
		caughtUp(p, s, "big")
		d := time.Since(t0)
		fmt.Printf("| %d MiB | %.2f s | %.2f s | %.0f |\n", mib, commit.Seconds(), d.Seconds(), float64(mib)/d.Seconds())
		must(p, "DELETE FROM big.t WHERE id > 0")
		caughtUp(p, s, "big")
	}

	fmt.Println()
	fmt.Println("## Inserts into another database while a 300,000-row ALTER TABLE replicates")
	must(p, "CREATE TABLE big.wide (id INT PRIMARY KEY, a INT, b VARCHAR(40))")
	must(p, "CREATE TABLE big.nums (i INT PRIMARY KEY)")
	must(p, "INSERT INTO big.nums WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999) SELECT i FROM n")
	must(p, "INSERT INTO big.wide SELECT a.i * 1000 + b.i, b.i, CONCAT('row ', a.i) FROM big.nums a, big.nums b WHERE a.i < 300")
	caughtUp(p, s, "big")
	alterDone := make(chan time.Duration, 1)
	t0Alter := time.Now()
	go func() {
		t0 := time.Now()
		must(p, "ALTER TABLE big.wide ADD COLUMN c INT DEFAULT 7")
		alterDone <- time.Since(t0)
	}()
	var worst time.Duration
	var alterTook, alterApplied time.Duration
	var target string
	n := 0
	// Inserts every 20 ms from the ALTER's start until the secondary has
	// applied it.
	for alterApplied == 0 {
		if alterTook == 0 {
			select {
			case alterTook = <-alterDone:
				target = applied(p, "big")
			default:
			}
		} else if applied(s, "big") == target {
			alterApplied = time.Since(t0Alter) - alterTook
		}
		n++
		must(p, fmt.Sprintf("INSERT INTO side.t VALUES (%d, %d)", n, time.Now().UnixNano()))
		t0 := time.Now()
		waitFor(func() bool { return one(s, fmt.Sprintf("SELECT COUNT(*) FROM side.t WHERE id = %d", n)) == "1" })
		if d := time.Since(t0); d > worst {
			worst = d
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("ALTER on the primary: %.2f s; applied on the secondary %.2f s after it returned\n", alterTook.Seconds(), alterApplied.Seconds())
	fmt.Printf("inserts into another database: %d, largest delay to the secondary %.0f ms\n", n, float64(worst.Milliseconds()))
}

var bgctx = context.Background()

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "replcore:", err)
		os.Exit(1)
	}
}

func must(db *sql.DB, q string) {
	_, err := db.Exec(q)
	check(err)
}

func one(db *sql.DB, q string) string {
	var v sql.NullString
	if err := db.QueryRow(q).Scan(&v); err != nil {
		return ""
	}
	return v.String
}

func waitFor(cond func() bool) {
	deadline := time.Now().Add(10 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			check(fmt.Errorf("timed out"))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func applied(db *sql.DB, name string) string {
	return one(db, "SELECT APPLIED_LSN FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = @@cluster_node_id AND `DATABASE` = '"+name+"'")
}

func caughtUp(p, s *sql.DB, name string) {
	target := applied(p, name)
	waitFor(func() bool { return applied(s, name) == target })
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer l.Close()
	return l.Addr().String()
}

var readyRE = regexp.MustCompile(`msg="miraj server ready" addr=(\S+)`)

// cluster starts two nodes and returns a connection to each.
func cluster(dir string) (p, s *sql.DB, stop func()) {
	run := func(args ...string) {
		out, err := exec.Command(filepath.Join(*bin, "miraj-cluster-pki"), args...).CombinedOutput()
		if err != nil {
			check(fmt.Errorf("miraj-cluster-pki %v: %v\n%s", args, err, out))
		}
	}
	run("init-ca", "--name", "bench", "--out", filepath.Join(dir, "pki"))
	ids := []string{"n1", "n2"}
	addrs := map[string]string{"n1": freeAddr(), "n2": freeAddr()}
	var procs []*exec.Cmd
	var dbs []*sql.DB
	for _, id := range ids {
		nd := filepath.Join(dir, id)
		run("issue-node", "--ca", filepath.Join(dir, "pki"), "--id", id, "--san", "127.0.0.1", "--out", nd)
		cfg := fmt.Sprintf("[node]\nid = %q\nlisten = %q\nadvertise = %q\n\n[cluster]\nname = \"bench\"\nseeds = [%q, %q]\ntls_cert = \"node.pem\"\ntls_key = \"node-key.pem\"\ntls_ca = \"cluster-ca.pem\"\nmembers = [\"n1\", \"n2\"]\n",
			id, addrs[id], addrs[id], addrs["n1"], addrs["n2"])
		check(os.WriteFile(filepath.Join(nd, "cluster.toml"), []byte(cfg), 0o644))
		cmd := exec.Command(filepath.Join(*bin, "miraj-server"), "--root", filepath.Join(dir, "data-"+id), "--port", "0",
			"--cluster-config", filepath.Join(nd, "cluster.toml"), "--log=false")
		pr, err := cmd.StderrPipe()
		check(err)
		check(cmd.Start())
		procs = append(procs, cmd)
		sc := bufio.NewScanner(pr)
		var addr string
		for sc.Scan() {
			if m := readyRE.FindStringSubmatch(sc.Text()); m != nil {
				addr = m[1]
				break
			}
		}
		go func() {
			for sc.Scan() {
			}
		}()
		db, err := sql.Open("mysql", "root@tcp("+addr+")/")
		check(err)
		dbs = append(dbs, db)
	}
	return dbs[0], dbs[1], func() {
		for _, c := range procs {
			c.Process.Kill()
			c.Wait()
		}
	}
}
