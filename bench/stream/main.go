// Command stream measures large transactions replicated while they run, on
// a three-node cluster of real processes (n1 primary, n2 and n3
// secondaries; certificates from miraj-cluster-pki, free ports on
// 127.0.0.1), each figure with streaming on (the session's
// stream_transaction_mb, default 16) and off (0) in the same run:
//
//   - visibility lag: the time from the primary's statement (or COMMIT)
//     returning to n2 having applied it, median of -repeat runs, for a
//     1M-row INSERT … SELECT, a 100 MiB transaction and a 300,000-row
//     ALTER TABLE; and one transaction of -gib GiB (how it scales);
//   - small commits beside a large one: p50/p99 latency and rate of
//     single-row RECEIVED commits into another table for -window, alone,
//     while a large transaction streams (rows of 4 KiB, rows of 1 MiB),
//     and beside the same transaction unstreamed: while its statements
//     run (the machine's ceiling for the same SQL work) and while it
//     commits;
//   - abort: the Go heap in use on n2 before a large transaction, while it
//     streams, and after its ROLLBACK (nothing of it visible anywhere).
//
// It is a benchmark, not a test: it prints figures and asserts nothing.
//
//	go build -o /tmp/bin ./cmd/miraj-server ./cmd/miraj-cluster-pki
//	go run ./bench/stream -bin /tmp/bin > bench/results/stream-latest.md
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/miraj-db/miraj/bench/internal/benchcluster"
)

var (
	bin    = flag.String("bin", "", "folder with miraj-server and miraj-cluster-pki")
	repeat = flag.Int("repeat", 3, "runs of each visibility figure (the median is shown)")
	gib    = flag.Float64("gib", 1, "size of the largest transaction, GiB")
	window = flag.Duration("window", 15*time.Second, "how long the small writer runs, alone and beside a large transaction")
	only   = flag.String("only", "", "comma-separated parts to run: lag,big,small,abort (default all)")
	pprof  = flag.Bool("pprof", false, "start the nodes with --pprof: the abort figure then reads the heap after a collection (/debug/pprof/heap?gc=1)")
)

var bg = context.Background()

type node = benchcluster.Node

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "stream-")
	check(err)
	defer os.RemoveAll(dir)
	nodes, stop := benchcluster.Start(*bin, dir, 3, *pprof)
	defer stop()
	p, s := nodes[0].DB, nodes[1].DB
	must(p, "SET GLOBAL cluster_role = 'primary'")
	waitFor(func() bool { return one(p, "SELECT CONCAT(@@cluster_role, @@read_only)") == "PRIMARY0" })
	must(p, "CREATE DATABASE big")
	must(p, "CREATE TABLE big.nums (i INT PRIMARY KEY)")
	must(p, "INSERT INTO big.nums WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999) SELECT i FROM n")
	must(p, "CREATE TABLE big.blobs (id INT PRIMARY KEY, b LONGBLOB)")
	must(p, "CREATE TABLE big.side (id INT PRIMARY KEY, at BIGINT)")
	caughtUp(p, s, "big")

	var rev string
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		rev = strings.TrimSpace(string(out))
	}
	fmt.Printf("# Large transactions streamed while they run (%s, %s, %d cores, three nodes and the client on one machine)\n\n", time.Now().UTC().Format("2006-01-02"), rev, runtime.NumCPU())
	fmt.Printf("`go build -o /tmp/bin ./cmd/miraj-server ./cmd/miraj-cluster-pki && go run ./bench/stream -bin /tmp/bin -repeat %d -gib %g -window %s`\n\n", *repeat, *gib, *window)
	fmt.Println("Streaming on: the session's `stream_transaction_mb` at its default, 16; off: `SET SESSION stream_transaction_mb = 0`. Lag: from the primary's statement or COMMIT returning until n2 has applied it (APPLIED_LSN in MIRAJ_REPLICATION at the primary's).")
	fmt.Println()

	if want("lag") {
		lagFigures(p, s)
	}
	if want("big") {
		bigFigure(p, s)
	}
	if want("small") {
		smallFigure(p, s)
	}
	if want("abort") {
		abortFigure(p, nodes)
	}
}

func want(part string) bool {
	return *only == "" || slices.Contains(strings.Split(*only, ","), part)
}

var modes = []struct {
	name string
	mb   int
}{{"on", 16}, {"off", 0}}

// lagFigures: 1M-row INSERT … SELECT, 100 MiB transaction, 300k-row ALTER.
func lagFigures(p, s *sql.DB) {
	fmt.Println("## Visibility lag on a secondary, median of", *repeat)
	fmt.Println()
	fmt.Println("| change | streaming | primary's statement / COMMIT | lag on n2 (median) | runs |")
	fmt.Println("|---|---|--:|--:|---|")
	must(p, "CREATE TABLE big.src (id INT PRIMARY KEY, a INT, b VARCHAR(40))")
	must(p, "INSERT INTO big.src SELECT a.i * 1000 + b.i, b.i, CONCAT('row ', a.i) FROM big.nums a, big.nums b")
	must(p, "CREATE TABLE big.wide (id INT PRIMARY KEY, a INT, b VARCHAR(40))")
	must(p, "INSERT INTO big.wide SELECT id, a, b FROM big.src WHERE id < 300000")
	caughtUp(p, s, "big")
	for _, m := range modes {
		var took, lags []time.Duration
		for r := 0; r < *repeat; r++ {
			must(p, "DROP TABLE IF EXISTS big.dst")
			must(p, "CREATE TABLE big.dst (id INT PRIMARY KEY, a INT, b VARCHAR(40))")
			caughtUp(p, s, "big")
			c := conn(p, m.mb)
			t0 := time.Now()
			mustc(c, "INSERT INTO big.dst SELECT * FROM big.src")
			d, lag := time.Since(t0), lagOf(p, s, "big")
			c.Close()
			took, lags = append(took, d), append(lags, lag)
		}
		row("1M-row INSERT … SELECT", m.name, took, lags)
	}
	must(p, "DROP TABLE big.dst")
	for _, m := range modes {
		var took, lags []time.Duration
		for r := 0; r < *repeat; r++ {
			c := conn(p, m.mb)
			mustc(c, "BEGIN")
			for i := 0; i < 100; i++ {
				mustc(c, fmt.Sprintf("INSERT INTO big.blobs VALUES (%d, REPEAT('x', 1048576))", i))
			}
			t0 := time.Now()
			mustc(c, "COMMIT")
			d, lag := time.Since(t0), lagOf(p, s, "big")
			c.Close()
			took, lags = append(took, d), append(lags, lag)
			must(p, "DELETE FROM big.blobs")
			caughtUp(p, s, "big")
		}
		row("100 MiB transaction (COMMIT)", m.name, took, lags)
	}
	col := 0
	for _, m := range modes {
		var took, lags []time.Duration
		for r := 0; r < *repeat; r++ {
			col++
			c := conn(p, m.mb)
			t0 := time.Now()
			mustc(c, fmt.Sprintf("ALTER TABLE big.wide ADD COLUMN c%d INT DEFAULT 7", col))
			d, lag := time.Since(t0), lagOf(p, s, "big")
			c.Close()
			took, lags = append(took, d), append(lags, lag)
		}
		row("300,000-row ALTER TABLE … ADD COLUMN", m.name, took, lags)
	}
	must(p, "DROP TABLE big.src")
	must(p, "DROP TABLE big.wide")
	caughtUp(p, s, "big")
	fmt.Println()
}

func row(what, mode string, took, lags []time.Duration) {
	fmt.Printf("| %s | %s | %s | **%s** | %s |\n", what, mode, secs(median(took)), ms(median(lags)), list(lags))
}

// bigFigure: one transaction of -gib GiB, streaming on and off.
func bigFigure(p, s *sql.DB) {
	n := int(*gib * 1024)
	fmt.Printf("## One transaction of %d MiB\n\n", n)
	fmt.Println("| streaming | statements (1 MiB each) | COMMIT | lag on n2 |")
	fmt.Println("|---|--:|--:|--:|")
	for _, m := range modes {
		c := conn(p, m.mb)
		t0 := time.Now()
		mustc(c, "BEGIN")
		for i := 0; i < n; i++ {
			mustc(c, fmt.Sprintf("INSERT INTO big.blobs VALUES (%d, REPEAT('x', 1048576))", i))
		}
		load := time.Since(t0)
		t1 := time.Now()
		mustc(c, "COMMIT")
		commit, lag := time.Since(t1), lagOf(p, s, "big")
		c.Close()
		fmt.Printf("| %s | %s | %s | **%s** |\n", m.name, secs(load), secs(commit), ms(lag))
		must(p, "DELETE FROM big.blobs")
		caughtUp(p, s, "big")
	}
	fmt.Println()
}

// smallFigure: single-row RECEIVED commits alone, beside a large
// transaction of -gib GiB that streams (rows of 4 KiB, then rows of
// 1 MiB), and beside the same transaction with streaming off: while its
// statements run (the machine's share of the same SQL work, nothing of it
// replicated yet) and while its COMMIT sends it.
func smallFigure(p, s *sql.DB) {
	fmt.Printf("## Single-row RECEIVED commits beside a %g GiB transaction\n\n", *gib)
	fmt.Println("One session, autocommit INSERTs into big.side, `cluster_sync_commit = 'received'`, for", *window, "a row; the large transaction inserts into big.blobs in another session meanwhile, 1 MiB per statement, and rolls back at the end. Semi-sync wait: the primary's mean wait for the acknowledgement (`Miraj_cluster_sync_wait_avg_ms` over the window).")
	fmt.Println()
	fmt.Println("| load | commits/s | p50 | p99 | max | mean semi-sync wait | timeouts |")
	fmt.Println("|---|--:|--:|--:|--:|--:|--:|")
	// The figures before leave GiBs of journal behind, which the nodes'
	// checkpoints remove in the background: let the disk settle first.
	time.Sleep(10 * time.Second)
	id := 1_000_000
	alone := smallWriter(p, &id, *window, nil)
	alone.row("alone")
	on := besideStreaming(p, s, &id, 4)
	besideStreaming(p, s, &id, 1024)
	off := besideUnstreamed(p, s, &id)
	fmt.Printf("\nratio beside the streaming one (4 KiB rows) / alone: p50 %.2f×, p99 %.2f×, rate %.2f×; / beside the same statements unstreamed: p50 %.2f×, p99 %.2f×, rate %.2f×\n\n",
		float64(on.p50)/float64(alone.p50), float64(on.p99)/float64(alone.p99), on.rate/alone.rate,
		float64(on.p50)/float64(off.p50), float64(on.p99)/float64(off.p99), on.rate/off.rate)
	must(p, "DELETE FROM big.blobs")
	caughtUp(p, s, "big")
}

// insertMiB inserts 1 MiB into big.blobs in one statement: rows of rowKiB
// KiB with ids from first.
func insertMiB(c *sql.Conn, first, rowKiB int) {
	var b strings.Builder
	b.WriteString("INSERT INTO big.blobs VALUES ")
	for j := 0; j < 1024/rowKiB; j++ {
		if j > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, REPEAT('y', %d))", first+j, rowKiB*1024)
	}
	mustc(c, b.String())
}

// besideStreaming runs the small writer beside a large transaction that
// streams, of rows of rowKiB KiB, from 2 s after it began (past the
// threshold).
func besideStreaming(p, s *sql.DB, id *int, rowKiB int) writerStats {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var streamed int
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := conn(p, 16)
		defer c.Close()
		mustc(c, "BEGIN")
		defer mustc(c, "ROLLBACK")
		for i := 0; float64(i) < *gib*1024; i++ {
			select {
			case <-stop:
				return
			default:
			}
			insertMiB(c, 10_000_000+i*1024, rowKiB)
			streamed = i + 1
		}
		<-stop
	}()
	time.Sleep(2 * time.Second)
	with := smallWriter(p, id, *window, nil)
	close(stop)
	wg.Wait()
	with.row(fmt.Sprintf("beside it, streaming, rows of %s (%d MiB streamed by the end)", kib(rowKiB), streamed))
	caughtUp(p, s, "big")
	return with
}

// besideUnstreamed runs the small writer beside the same transaction with
// streaming off (rows of 4 KiB): while its statements run, then for a
// window in which it commits, 1 s in.
func besideUnstreamed(p, s *sql.DB, id *int) writerStats {
	c := conn(p, 0)
	defer c.Close()
	mustc(c, "BEGIN")
	built := make(chan struct{})
	go func() {
		defer close(built)
		for i := 0; float64(i) < *gib*1024; i++ {
			insertMiB(c, 30_000_000+i*1024, 4)
		}
	}()
	time.Sleep(2 * time.Second)
	during := smallWriter(p, id, *window, built)
	during.row("beside it, streaming off, while its statements run")
	<-built
	committed := make(chan time.Duration, 1)
	go func() {
		time.Sleep(time.Second)
		t0 := time.Now()
		mustc(c, "COMMIT")
		committed <- time.Since(t0)
	}()
	after := smallWriter(p, id, *window, nil)
	took := <-committed
	after.row(fmt.Sprintf("beside it, streaming off, its COMMIT 1 s into the window (COMMIT took %s)", secs(took)))
	caughtUp(p, s, "big")
	return during
}

func kib(n int) string {
	if n >= 1024 {
		return fmt.Sprintf("%d MiB", n/1024)
	}
	return fmt.Sprintf("%d KiB", n)
}

type writerStats struct {
	rate          float64
	p50, p99, max time.Duration
	syncWait      time.Duration // mean semi-sync wait of the window's commits
	timeouts      int64
}

func (ws writerStats) row(load string) {
	fmt.Printf("| %s | %.0f | %s | %s | %s | %s | %d |\n", load, ws.rate, ms(ws.p50), ms(ws.p99), ms(ws.max), ms(ws.syncWait), ws.timeouts)
}

// syncTotals reads the primary's semi-sync counters: waits, their total
// time, timeouts.
func syncTotals(p *sql.DB) (waits int64, total time.Duration, timeouts int64) {
	rows, err := p.Query("SHOW GLOBAL STATUS LIKE 'Miraj_cluster_sync_%'")
	check(err)
	defer rows.Close()
	var avg float64
	for rows.Next() {
		var k, v string
		check(rows.Scan(&k, &v))
		switch k {
		case "Miraj_cluster_sync_waits":
			waits, _ = strconv.ParseInt(v, 10, 64)
		case "Miraj_cluster_sync_wait_avg_ms":
			avg, _ = strconv.ParseFloat(v, 64)
		case "Miraj_cluster_sync_timeouts":
			timeouts, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return waits, time.Duration(avg * float64(waits) * float64(time.Millisecond)), timeouts
}

// smallWriter commits single rows for d, or until done is closed.
func smallWriter(p *sql.DB, id *int, d time.Duration, done <-chan struct{}) writerStats {
	c := conn(p, 16)
	defer c.Close()
	mustc(c, "SET SESSION cluster_sync_commit = 'received'")
	var lat []time.Duration
	w0, tot0, to0 := syncTotals(p)
	t0 := time.Now()
	for time.Since(t0) < d {
		select {
		case <-done:
			d = 0
			continue
		default:
		}
		*id++
		t := time.Now()
		mustc(c, fmt.Sprintf("INSERT INTO big.side VALUES (%d, %d)", *id, t.UnixNano()))
		lat = append(lat, time.Since(t))
	}
	el := time.Since(t0)
	w1, tot1, to1 := syncTotals(p)
	slices.Sort(lat)
	ws := writerStats{rate: float64(len(lat)) / el.Seconds(), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], max: lat[len(lat)-1], timeouts: to1 - to0}
	if w1 > w0 {
		ws.syncWait = (tot1 - tot0) / time.Duration(w1-w0)
	}
	return ws
}

// abortFigure: n2's heap before, during and after a large transaction
// that is rolled back.
func abortFigure(p *sql.DB, nodes []node) {
	mib := int(*gib * 1024)
	fmt.Printf("## Abort of a %d MiB streamed transaction\n\n", mib)
	s := nodes[1]
	before := heapMiB(s)
	c := conn(p, 16)
	mustc(c, "BEGIN")
	for i := 0; i < mib; i++ {
		mustc(c, fmt.Sprintf("INSERT INTO big.blobs VALUES (%d, REPEAT('z', 1048576))", 20_000_000+i))
	}
	// n2 has received what was streamed.
	waitFor(func() bool {
		return one(s.DB, "SELECT COALESCE(SUM(BYTES), 0) >= "+strconv.Itoa(mib<<20)+" FROM information_schema.MIRAJ_STREAMS WHERE `DATABASE` = 'big'") == "1"
	})
	during := heapMiB(s)
	var streamedBytes string
	streamedBytes = one(s.DB, "SELECT SUM(BYTES) FROM information_schema.MIRAJ_STREAMS WHERE `DATABASE` = 'big'")
	t0 := time.Now()
	mustc(c, "ROLLBACK")
	c.Close()
	waitFor(func() bool { return one(s.DB, "SELECT COUNT(*) FROM information_schema.MIRAJ_STREAMS") == "0" })
	gone := time.Since(t0)
	time.Sleep(3 * time.Second) // the next GC cycles
	after := heapMiB(s)
	visible := []string{}
	for _, n := range nodes {
		visible = append(visible, n.ID+": "+one(n.DB, "SELECT COUNT(*) FROM big.blobs WHERE id >= 20000000"))
	}
	fmt.Println("| n2's Go heap in use | before | while it streams | after the ROLLBACK |")
	fmt.Println("|---|--:|--:|--:|")
	fmt.Printf("| MiB | %d | %d | %d |\n\n", before, during, after)
	fmt.Printf("n2 had received %s bytes of it; its open transaction was gone %s after the ROLLBACK returned; rows of it visible: %s\n\n", streamedBytes, ms(gone), strings.Join(visible, ", "))
}

// heapMiB is n's Go heap in use: after a collection with -pprof, else as
// its /metrics last saw it.
func heapMiB(n node) int {
	if n.PProf != "" {
		resp, err := http.Get("http://" + n.PProf + "/debug/pprof/heap?gc=1&debug=1")
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if m := heapInuseRE.FindSubmatch(b); m != nil {
			v, _ := strconv.ParseInt(string(m[1]), 10, 64)
			return int(v >> 20)
		}
		return -1
	}
	resp, err := http.Get("http://" + n.HTTP + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "go_memstats_heap_inuse_bytes" {
			v, _ := strconv.ParseFloat(f[1], 64)
			return int(v / (1 << 20))
		}
	}
	return -1
}

func conn(p *sql.DB, mb int) *sql.Conn {
	c, err := p.Conn(bg)
	check(err)
	mustc(c, fmt.Sprintf("SET SESSION stream_transaction_mb = %d", mb))
	return c
}

// lagOf waits for n2 to apply what the primary has applied now, and
// returns how long that took.
func lagOf(p, s *sql.DB, name string) time.Duration {
	t0 := time.Now()
	target := applied(p, name)
	waitFor(func() bool { return applied(s, name) == target })
	return time.Since(t0)
}

func median(d []time.Duration) time.Duration {
	c := slices.Clone(d)
	slices.Sort(c)
	return c[len(c)/2]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
func list(d []time.Duration) string {
	var out []string
	for _, x := range d {
		out = append(out, ms(x))
	}
	return strings.Join(out, ", ")
}

func mustc(c *sql.Conn, q string) {
	_, err := c.ExecContext(bg, q)
	if err != nil {
		if len(q) > 80 {
			q = q[:80] + "…"
		}
		check(fmt.Errorf("%s: %w", q, err))
	}
}

var heapInuseRE = regexp.MustCompile(`# HeapInuse = (\d+)`)

// The helpers shared with the other cluster benchmarks.
var (
	check    = benchcluster.Check
	must     = benchcluster.Must
	one      = benchcluster.One
	waitFor  = benchcluster.WaitFor
	applied  = benchcluster.Applied
	caughtUp = benchcluster.CaughtUp
)
