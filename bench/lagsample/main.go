// Command lagsample samples the replication lag of secondaries at a fixed
// interval over one open connection and writes one TSV line per secondary
// and sample. bench/replication.sh uses it: the mariadb client, one process
// per query, cannot keep a 100 ms pace on a loaded machine.
//
//	lagsample -mode miraj -primary 127.0.0.1:PORT -db sbtest -out lag.tsv
//	lagsample -mode mariadb -primary 127.0.0.1:P1 -replica 127.0.0.1:P2 -out lag.tsv
//
// It stops on SIGTERM or SIGINT, or after -duration. SIGUSR1 says the load
// has ended: from then on samples are marked "drain", and it stops at the
// first sample where every replica has a byte lag of 0, printing
// "drained_ms=N" (time since SIGUSR1) on stderr, or "drained_ms=timeout"
// after -drain-timeout. Columns:
//
//	ms       milliseconds since the start
//	phase    load (before SIGUSR1) or drain
//	node     secondary (miraj: NODE_ID; mariadb: "replica")
//	bytes    miraj: PRIMARY_LSN - APPLIED_LSN of that secondary's row for -db in
//	         information_schema.MIRAJ_REPLICATION on the primary;
//	         mariadb: primary's binlog Position - replica's Exec_Master_Log_Pos
//	         (empty when the two name different binlog files)
//	seconds  miraj: LAG_SECONDS of SHOW CLUSTER STATUS; mariadb:
//	         Seconds_Behind_Master (empty when NULL)
//	query_ms time the queries of that sample took
package main

import (
	"bufio"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

type sample struct {
	node    string
	bytes   string
	seconds string
}

func main() {
	mode := flag.String("mode", "miraj", "miraj or mariadb")
	primary := flag.String("primary", "", "primary's client address host:port")
	replica := flag.String("replica", "", "mariadb: replica's client address host:port")
	dbName := flag.String("db", "sbtest", "miraj: database whose lag is sampled")
	user := flag.String("user", "root", "user")
	password := flag.String("password", "", "password")
	interval := flag.Duration("interval", 100*time.Millisecond, "sampling interval")
	duration := flag.Duration("duration", 0, "stop after this long (0: on SIGTERM/SIGINT only)")
	out := flag.String("out", "-", "TSV output file (- for stdout)")
	drainTimeout := flag.Duration("drain-timeout", 5*time.Minute, "after SIGUSR1, give up waiting for a zero lag after this long")
	flag.Parse()

	p, err := open(*primary, *user, *password)
	if err != nil {
		fatal(err)
	}
	var r *sql.DB
	switch *mode {
	case "miraj":
	case "mariadb":
		if r, err = open(*replica, *user, *password); err != nil {
			fatal(err)
		}
	default:
		fatal(fmt.Errorf("unknown -mode %q", *mode))
	}

	w := os.Stdout
	if *out != "-" {
		if w, err = os.Create(*out); err != nil {
			fatal(err)
		}
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "ms\tphase\tnode\tbytes\tseconds\tquery_ms")

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	ended := make(chan os.Signal, 1)
	signal.Notify(ended, syscall.SIGUSR1)
	var drainStart time.Time
	var drainDeadline <-chan time.Time
	drained := ""
	var deadline <-chan time.Time
	if *duration > 0 {
		deadline = time.After(*duration)
	}
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	start := time.Now()
	n, failures := 0, 0
	var lastErr error
loop:
	for {
		t0 := time.Now()
		var ss []sample
		if *mode == "miraj" {
			ss, err = sampleMiraj(p, *dbName)
		} else {
			ss, err = sampleMariaDB(p, r)
		}
		q := time.Since(t0)
		if err != nil {
			failures++
			lastErr = err
		}
		phase := "load"
		if !drainStart.IsZero() {
			phase = "drain"
		}
		zero := err == nil && len(ss) > 0
		for _, s := range ss {
			fmt.Fprintf(bw, "%d\t%s\t%s\t%s\t%s\t%.1f\n", t0.Sub(start).Milliseconds(), phase, s.node, s.bytes, s.seconds,
				float64(q.Microseconds())/1000)
			zero = zero && s.bytes == "0"
		}
		n++
		if phase == "drain" && zero {
			drained = strconv.FormatInt(t0.Sub(drainStart).Milliseconds(), 10)
			break loop
		}
		select {
		case <-stop:
			break loop
		case <-deadline:
			break loop
		case <-ended:
			drainStart = time.Now()
			drainDeadline = time.After(*drainTimeout)
			continue // sample at once
		case <-drainDeadline:
			drained = "timeout"
			break loop
		case <-tick.C:
		}
	}
	if err := bw.Flush(); err != nil {
		fatal(err)
	}
	if w != os.Stdout {
		w.Close()
	}
	el := time.Since(start)
	fmt.Fprintf(os.Stderr, "lagsample: %d samples in %.1f s (mean interval %.0f ms), %d failed",
		n, el.Seconds(), float64(el.Milliseconds())/float64(max(n, 1)), failures)
	if lastErr != nil {
		fmt.Fprintf(os.Stderr, " (last error: %v)", lastErr)
	}
	fmt.Fprintln(os.Stderr)
	if drained != "" {
		fmt.Fprintf(os.Stderr, "drained_ms=%s\n", drained)
	}
}

func open(addr, user, password string) (*sql.DB, error) {
	if addr == "" {
		return nil, fmt.Errorf("address missing")
	}
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr = user, password, "tcp", addr
	c.AllowNativePasswords = true
	c.Timeout = 5 * time.Second
	c.InterpolateParams = true
	db, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db, db.Ping()
}

// sampleMiraj reads every secondary's position for db from the primary's
// MIRAJ_REPLICATION (its own rows have no SENT_LSN) and the seconds from
// SHOW CLUSTER STATUS.
func sampleMiraj(p *sql.DB, db string) ([]sample, error) {
	rows, err := p.Query("SELECT NODE_ID, SENT_LSN, APPLIED_LSN, PRIMARY_LSN FROM information_schema.MIRAJ_REPLICATION WHERE `DATABASE` = ?", db)
	if err != nil {
		return nil, err
	}
	var ss []sample
	idx := map[string]int{}
	for rows.Next() {
		var node string
		var sent, applied, prim sql.NullInt64
		if err := rows.Scan(&node, &sent, &applied, &prim); err != nil {
			rows.Close()
			return nil, err
		}
		if !sent.Valid {
			continue // the primary's own row
		}
		s := sample{node: node}
		if applied.Valid && prim.Valid {
			s.bytes = strconv.FormatInt(prim.Int64-applied.Int64, 10)
		}
		idx[strings.ToLower(node)] = len(ss)
		ss = append(ss, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	m, err := query(p, "SHOW CLUSTER STATUS")
	if err != nil {
		return ss, err
	}
	for _, row := range m {
		if row["STATE"] == "SELF" {
			continue
		}
		if i, ok := idx[strings.ToLower(row["NODE_ID"])]; ok {
			ss[i].seconds = row["LAG_SECONDS"]
		}
	}
	return ss, nil
}

// sampleMariaDB compares the primary's binlog position with what the
// replica's SQL thread has executed.
func sampleMariaDB(p, r *sql.DB) ([]sample, error) {
	ms, err := query(p, "SHOW MASTER STATUS")
	if err != nil {
		return nil, err
	}
	rs, err := query(r, "SHOW SLAVE STATUS")
	if err != nil {
		return nil, err
	}
	if len(ms) != 1 || len(rs) != 1 {
		return nil, fmt.Errorf("SHOW MASTER STATUS: %d rows, SHOW SLAVE STATUS: %d rows", len(ms), len(rs))
	}
	s := sample{node: "replica", seconds: rs[0]["Seconds_Behind_Master"]}
	if ms[0]["File"] == rs[0]["Relay_Master_Log_File"] {
		a, err1 := strconv.ParseInt(ms[0]["Position"], 10, 64)
		b, err2 := strconv.ParseInt(rs[0]["Exec_Master_Log_Pos"], 10, 64)
		if err1 == nil && err2 == nil {
			s.bytes = strconv.FormatInt(a-b, 10)
		}
	}
	return []sample{s}, nil
}

// query returns every row as column name -> value ("" for NULL).
func query(db *sql.DB, q string) ([]map[string]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = vals[i].String
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "lagsample:", err)
	os.Exit(1)
}
