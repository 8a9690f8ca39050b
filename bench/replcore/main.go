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
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/miraj-db/miraj/bench/internal/benchcluster"
)

var bin = flag.String("bin", "", "folder with miraj-server and miraj-cluster-pki")

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "replcore-")
	check(err)
	defer os.RemoveAll(dir)
	nodes, stop := benchcluster.Start(*bin, dir, 2, false)
	p, s := nodes[0].DB, nodes[1].DB
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

// The helpers shared with the other cluster benchmarks.
var (
	check    = benchcluster.Check
	must     = benchcluster.Must
	one      = benchcluster.One
	waitFor  = benchcluster.WaitFor
	applied  = benchcluster.Applied
	caughtUp = benchcluster.CaughtUp
)
