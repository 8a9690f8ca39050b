package system

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// syncStatus reads the Miraj_cluster_sync_* counters of a node.
func syncStatus(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	rows, err := db.Query("SHOW STATUS LIKE 'Miraj_cluster_sync%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name, v string
		if err := rows.Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%s = %q: %v", name, v, err)
		}
		out[strings.TrimPrefix(name, "Miraj_cluster_sync_")] = int64(f)
	}
	return out
}

// warnings returns SHOW WARNINGS of one connection as "Level Code Message"
// lines.
func warnings(t *testing.T, conn *sql.Conn) []string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var level, msg string
		var code int
		if err := rows.Scan(&level, &code, &msg); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s", level, code, msg))
	}
	return out
}

// mysqlMessage returns a MySQL error's code and message text.
func mysqlMessage(err error) (uint16, string) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number, me.Message
	}
	return 0, ""
}

func selfSync(t *testing.T, db *sql.DB) string {
	return one(t, db, "SELECT SYNC FROM information_schema.MIRAJ_NODES WHERE STATE = 'SELF'")
}

// The variables of §17.8.2: scopes, 1229 for the global-only ones, SET
// STATEMENT for one statement, DEFAULT back to the server's value, and a
// session that has not set its own level follows SET GLOBAL.
func TestSemiSyncVariables(t *testing.T) {
	_, ns, p := shopCluster(t, "sync_timeout_ms = 4000\n", "n1", "n2")
	caughtUp(t, ns[0], ns[1])
	if got := one(t, p, "SELECT CONCAT(@@cluster_sync_commit, ' ', @@global.cluster_sync_replicas, ' ', @@global.cluster_sync_timeout, ' ', @@global.cluster_sync_timeout_action)"); got != "OFF 1 4000 FALLBACK" {
		t.Fatalf("initial values %q, want OFF 1 4000 FALLBACK (sync_timeout_ms from cluster.toml)", got)
	}
	for _, q := range []string{"SET SESSION cluster_sync_timeout = 5", "SET cluster_sync_replicas = 2", "SET SESSION cluster_sync_timeout_action = 'error'"} {
		_, err := p.Exec(q)
		if num, _ := mysqlError(err); num != 1229 {
			t.Fatalf("%s: %v, want 1229", q, err)
		}
	}
	ctx := context.Background()
	conn, err := p.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before := syncStatus(t, p)
	if _, err := conn.ExecContext(ctx, "SET STATEMENT cluster_sync_commit = 'applied' FOR INSERT INTO shop.t VALUES (1, 'applied')"); err != nil {
		t.Fatal(err)
	}
	if w := warnings(t, conn); len(w) != 0 {
		t.Fatalf("warnings after an APPLIED insert with a secondary up: %v", w)
	}
	// The statement waited until n2 applied it: it is there at once.
	if got := one(t, ns[1].open(""), "SELECT COUNT(*) FROM shop.t WHERE id = 1"); got != "1" {
		t.Fatal("the row confirmed with APPLIED is not on the secondary")
	}
	// MAJORITY of two members: the primary and n2.
	if _, err := conn.ExecContext(ctx, "SET STATEMENT cluster_sync_commit = 'majority' FOR INSERT INTO shop.t VALUES (3, 'majority')"); err != nil {
		t.Fatal(err)
	}
	if w := warnings(t, conn); len(w) != 0 {
		t.Fatalf("warnings after a MAJORITY insert with the other member up: %v", w)
	}
	after := syncStatus(t, p)
	if after["waits"] != before["waits"]+2 || after["fallbacks"] != before["fallbacks"] {
		t.Fatalf("counters %v → %v, want two more waits and no fallback", before, after)
	}
	var level string
	conn.QueryRowContext(ctx, "SELECT @@cluster_sync_commit").Scan(&level)
	if level != "OFF" {
		t.Fatalf("after SET STATEMENT the session's level is %s, want OFF again", level)
	}
	// A malformed one is a syntax error; a global-only variable is 1229.
	_, err = conn.ExecContext(ctx, "SET STATEMENT cluster_sync_commit = 'applied' INSERT INTO shop.t VALUES (2, 'x')")
	if num, _ := mysqlError(err); num != 1064 {
		t.Fatalf("SET STATEMENT without FOR: %v, want 1064", err)
	}
	_, err = conn.ExecContext(ctx, "SET STATEMENT cluster_sync_timeout = 5 FOR INSERT INTO shop.t VALUES (2, 'x')")
	if num, _ := mysqlError(err); num != 1229 {
		t.Fatalf("SET STATEMENT of a global-only variable: %v, want 1229", err)
	}
	// Ordinary session variables work too, and come back.
	var mode string
	conn.QueryRowContext(ctx, "SET STATEMENT sql_mode = '' FOR SELECT @@sql_mode").Scan(&mode)
	if mode != "" {
		t.Fatalf("sql_mode inside SET STATEMENT: %q, want empty", mode)
	}
	conn.QueryRowContext(ctx, "SELECT @@sql_mode").Scan(&mode)
	if mode == "" {
		t.Fatal("sql_mode was not restored after SET STATEMENT")
	}

	// SET GLOBAL is followed by sessions that have not set their own.
	mustExec(t, p, "SET GLOBAL cluster_sync_commit = 'received'")
	conn.QueryRowContext(ctx, "SELECT @@cluster_sync_commit").Scan(&level)
	if level != "RECEIVED" {
		t.Fatalf("a session without its own level reads %s after SET GLOBAL, want RECEIVED", level)
	}
	if got := selfSync(t, p); got != "RECEIVED" {
		t.Fatalf("SYNC on the primary's row: %s, want RECEIVED", got)
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION cluster_sync_commit = 'off'"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, p, "SET GLOBAL cluster_sync_commit = 'applied'")
	conn.QueryRowContext(ctx, "SELECT @@cluster_sync_commit").Scan(&level)
	if level != "OFF" {
		t.Fatalf("a session with its own level reads %s, want OFF", level)
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION cluster_sync_commit = DEFAULT"); err != nil {
		t.Fatal(err)
	}
	conn.QueryRowContext(ctx, "SELECT @@cluster_sync_commit").Scan(&level)
	if level != "APPLIED" {
		t.Fatalf("after SET … = DEFAULT the session reads %s, want the server's APPLIED", level)
	}
	if got := one(t, p, "SELECT SYNC FROM information_schema.MIRAJ_NODES WHERE NODE_ID = 'n2'"); got != "YES" {
		t.Fatalf("SYNC of the streaming secondary: %s, want YES", got)
	}
	// SYNCED_LSN: the primary's own, and as n2 heard it.
	synced := one(t, p, "SELECT SYNCED_LSN FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = 'n1' AND `DATABASE` = 'shop'")
	if synced == "0" {
		t.Fatal("SYNCED_LSN is 0 on the primary after a confirmed APPLIED write")
	}
	waitFor(t, "n2 to hear SYNCED_LSN", 10*time.Second, func() bool {
		return one(t, ns[1].open(""), "SELECT COALESCE(SYNCED_LSN, -1) FROM information_schema.MIRAJ_REPLICATION WHERE NODE_ID = 'n2' AND `DATABASE` = 'shop'") == synced
	})
}

// Outside a cluster the variables read their defaults and setting them has
// no effect.
func TestSemiSyncVariablesStandalone(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "SET SESSION cluster_sync_commit = 'received'")
	mustExec(t, db, "CREATE DATABASE d")
	mustExec(t, db, "CREATE TABLE d.t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO d.t VALUES (1)")
	if got := one(t, db, "SELECT CONCAT(@@global.cluster_sync_commit, ' ', @@global.cluster_sync_replicas, ' ', @@global.cluster_sync_timeout, ' ', @@global.cluster_sync_timeout_action)"); got != "OFF 1 10000 FALLBACK" {
		t.Fatalf("standalone values %q", got)
	}
	_, err := db.Exec("SET SESSION cluster_sync_timeout = 5")
	if num, _ := mysqlError(err); num != 1229 {
		t.Fatalf("SET SESSION cluster_sync_timeout: %v, want 1229", err)
	}
}

// Both secondaries stopped (SIGSTOP: their links stay open, nothing is
// acknowledged) or isolated: the timeout behaviours, the degraded state and
// its end, KILL QUERY and a demotion during a wait, and the counters.
func TestSemiSyncTimeoutsAndDegradedState(t *testing.T) {
	_, ns, p := shopCluster(t, "test_hooks = true\nsync_timeout_ms = 1500\n", "n1", "n2", "n3")
	n1, n2, n3 := ns[0], ns[1], ns[2]
	caughtUp(t, n1, n2, n3)
	ctx := context.Background()
	conn, err := p.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string) error { _, err := conn.ExecContext(ctx, q); return err }
	if err := exec("SET SESSION cluster_sync_commit = 'received'"); err != nil {
		t.Fatal(err)
	}
	if err := exec("INSERT INTO shop.t VALUES (1, 'both up')"); err != nil {
		t.Fatal(err)
	}
	if w := warnings(t, conn); len(w) != 0 {
		t.Fatalf("warnings with both secondaries up: %v", w)
	}
	if got := one(t, p, "SELECT COUNT(*) FROM information_schema.MIRAJ_NODES WHERE SYNC = 'YES'"); got != "2" {
		t.Fatalf("secondaries counted toward acks: %s, want 2", got)
	}

	// Stopped secondaries: the wait times out.
	n2.signal(syscall.SIGSTOP)
	n3.signal(syscall.SIGSTOP)
	waitStopped(t, n2, n3)
	stopped := true
	defer func() {
		if stopped {
			n2.signal(syscall.SIGCONT)
			n3.signal(syscall.SIGCONT)
		}
	}()
	before := syncStatus(t, p)
	mustExec(t, p, "SET GLOBAL cluster_sync_timeout_action = 'ERROR'")
	start := time.Now()
	err = exec("INSERT INTO shop.t VALUES (2, 'timeout error')")
	num, msg := mysqlMessage(err)
	if num != 9004 || msg != "Synchronous replication: transaction committed locally, 0 of 1 acknowledgement(s) received within 1500 ms" {
		t.Fatalf("ERROR on timeout: %v, want 9004 with the spec's text", err)
	}
	t.Logf("the timed-out write returned after %v", time.Since(start).Round(time.Millisecond))
	if got := one(t, p, "SELECT v FROM shop.t WHERE id = 2"); got != "timeout error" {
		t.Fatalf("the row of the 9004 error is not committed on the primary: %q", got)
	}
	if got := selfSync(t, p); got != "DEGRADED" {
		t.Fatalf("SYNC on the primary after a timeout: %s, want DEGRADED", got)
	}
	waitFor(t, "the degraded line in the log", 5*time.Second, func() bool {
		return strings.Contains(n1.output(), "synchronous replication degraded on database shop: no acknowledgement from 1 secondary(ies) in 1500 ms")
	})
	// Degraded: the next write does not wait; FALLBACK warns.
	mustExec(t, p, "SET GLOBAL cluster_sync_timeout_action = 'FALLBACK'")
	start = time.Now()
	if err := exec("INSERT INTO shop.t VALUES (3, 'degraded fallback')"); err != nil {
		t.Fatalf("FALLBACK in the degraded state: %v", err)
	}
	if took := time.Since(start); took > 1200*time.Millisecond {
		t.Logf("note: the degraded write took %v", took)
	}
	w := warnings(t, conn)
	if len(w) != 1 || !strings.HasPrefix(w[0], "Warning 9004 Synchronous replication: transaction committed locally, 0 of 1 acknowledgement(s)") {
		t.Fatalf("warnings of a degraded FALLBACK write: %v", w)
	}
	after := syncStatus(t, p)
	for name, d := range map[string]int64{"waits": 2, "errors": 1, "fallbacks": 1, "timeouts": 2} {
		if after[name]-before[name] != d {
			t.Errorf("counter %s moved by %d, want %d (%v → %v)", name, after[name]-before[name], d, before, after)
		}
	}
	if after["wait_max_ms"] < 1500 {
		t.Errorf("wait_max_ms %d after a wait of 1500 ms", after["wait_max_ms"])
	}
	if after["degraded_bases"] != 1 {
		t.Errorf("degraded_bases %d, want 1", after["degraded_bases"])
	}

	// A secondary comes back: it catches up and the state is lifted.
	n2.signal(syscall.SIGCONT)
	waitFor(t, "the degraded state to end", 30*time.Second, func() bool { return selfSync(t, p) == "RECEIVED" || selfSync(t, p) == "OFF" })
	waitFor(t, "the 'restored' line in the primary's log", 5*time.Second, func() bool {
		return strings.Contains(n1.output(), "synchronous replication restored on database shop")
	})
	if err := exec("INSERT INTO shop.t VALUES (4, 'restored')"); err != nil {
		t.Fatal(err)
	}
	if w := warnings(t, conn); len(w) != 0 {
		t.Fatalf("warnings after the secondary returned: %v", w)
	}
	n3.signal(syscall.SIGCONT)
	stopped = false
	caughtUp(t, n1, n2, n3)

	// Both isolated: too few secondaries, decided at once.
	for _, id := range []string{"n2", "n3"} {
		marker := isolateMarker(t, ns, id)
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(marker)
	}
	waitFor(t, "the secondaries cut off", 30*time.Second, func() bool {
		return one(t, p, "SELECT COUNT(*) FROM information_schema.MIRAJ_NODES WHERE SYNC = 'YES'") == "0"
	})
	mustExec(t, p, "SET GLOBAL cluster_sync_timeout_action = 'ERROR'")
	err = exec("INSERT INTO shop.t VALUES (5, 'isolated')")
	if num, msg := mysqlMessage(err); num != 9004 || msg != "Synchronous replication: transaction committed locally, only 0 secondary(ies) connected, 1 required" {
		t.Fatalf("ERROR with no secondary: %v", err)
	}
	mustExec(t, p, "SET GLOBAL cluster_sync_timeout_action = 'FALLBACK'")
	if err := exec("INSERT INTO shop.t VALUES (6, 'isolated')"); err != nil {
		t.Fatal(err)
	}
	if w := warnings(t, conn); len(w) != 1 || w[0] != "Warning 9004 Synchronous replication: transaction committed locally, only 0 secondary(ies) connected, 1 required" {
		t.Fatalf("FALLBACK with no secondary: %v", w)
	}
	if got := one(t, p, "SELECT COUNT(*) FROM shop.t WHERE id IN (5, 6)"); got != "2" {
		t.Fatal("the isolated writes are not committed on the primary")
	}
	if got := syncStatus(t, p)["secondaries"]; got != 0 {
		t.Fatalf("Miraj_cluster_sync_secondaries %d with both isolated", got)
	}

	// WAIT: KILL QUERY ends the wait with a warning, the write stands.
	mustExec(t, p, "SET GLOBAL cluster_sync_timeout_action = 'WAIT'")
	var connID int64
	conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID)
	done := make(chan error, 1)
	go func() { done <- exec("INSERT INTO shop.t VALUES (7, 'killed wait')") }()
	waitFor(t, "the session to wait", 10*time.Second, func() bool { return syncStatus(t, p)["waits"] > after["waits"]+2 })
	select {
	case err := <-done:
		t.Fatalf("WAIT returned before the KILL: %v", err)
	default:
	}
	mustExec(t, p, fmt.Sprintf("KILL QUERY %d", connID))
	if err := <-done; err != nil {
		t.Fatalf("a wait ended by KILL QUERY: %v, want success with a warning", err)
	}
	if w := warnings(t, conn); len(w) != 1 || w[0] != "Warning 9004 Synchronous replication: transaction committed locally, wait cancelled" {
		t.Fatalf("warnings after KILL QUERY: %v", w)
	}
	if got := syncStatus(t, p)["cancelled"]; got != 1 {
		t.Fatalf("cancelled = %d, want 1", got)
	}

	// WAIT: KILL CONNECTION closes the waiting connection; the write
	// stands.
	victim, err := p.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var victimID int64
	victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&victimID)
	if _, err := victim.ExecContext(ctx, "SET SESSION cluster_sync_commit = 'received'"); err != nil {
		t.Fatal(err)
	}
	waiting := syncStatus(t, p)["waits"]
	go func() {
		_, err := victim.ExecContext(ctx, "INSERT INTO shop.t VALUES (9, 'killed connection')")
		done <- err
	}()
	waitFor(t, "the session to wait", 10*time.Second, func() bool { return syncStatus(t, p)["waits"] > waiting })
	mustExec(t, p, fmt.Sprintf("KILL CONNECTION %d", victimID))
	err = <-done
	t.Logf("the killed connection's INSERT returned: %v", err)
	if num, _ := mysqlError(err); err == nil || (num != 0 && num != 1927) {
		t.Fatalf("KILL CONNECTION during a wait: %v, want the connection closed (1927)", err)
	}
	victim.Close()
	if got := one(t, p, "SELECT COUNT(*) FROM shop.t WHERE id = 9"); got != "1" {
		t.Fatal("the write of the killed connection is not committed")
	}

	// WAIT: a demotion ends the wait with error 9004.
	waiting = syncStatus(t, p)["waits"]
	go func() { done <- exec("INSERT INTO shop.t VALUES (8, 'demoted wait')") }()
	waitFor(t, "the session to wait", 10*time.Second, func() bool { return syncStatus(t, p)["waits"] > waiting })
	mustExec(t, p, "SET GLOBAL cluster_role = 'secondary'")
	err = <-done
	if num, msg := mysqlMessage(err); num != 9004 || msg != "Synchronous replication: transaction committed locally, node is no longer primary (demoted)" {
		t.Fatalf("a wait ended by a demotion: %v", err)
	}
	waitFor(t, "the interrupted line", 5*time.Second, func() bool {
		return strings.Contains(n1.output(), "1 session(s) waiting for acknowledgements interrupted: demoted")
	})
	if got := one(t, p, "SELECT COUNT(*) FROM shop.t WHERE id IN (7, 8)"); got != "2" {
		t.Fatal("the writes of the interrupted waits are not committed")
	}
}

func isolateMarker(t *testing.T, ns []*server, id string) string {
	t.Helper()
	for _, s := range ns {
		if strings.HasSuffix(s.root, "data-"+id) {
			return s.root + "/miraj/cluster-isolate"
		}
	}
	t.Fatalf("no node %s", id)
	return ""
}

// Read-after-write: with APPLIED, a row inserted on the primary is seen by
// a read on the secondary right after; with OFF it often is not, which
// shows the check can fail.
func TestSemiSyncReadAfterWrite(t *testing.T) {
	_, ns, p := shopCluster(t, "", "n1", "n2")
	caughtUp(t, ns[0], ns[1])
	sec := ns[1].open("")
	misses := func(level string, from int) int {
		ctx := context.Background()
		conn, err := p.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET SESSION cluster_sync_commit = '"+level+"'"); err != nil {
			t.Fatal(err)
		}
		stmt, err := sec.Prepare("SELECT COUNT(*) FROM shop.t WHERE id = ?")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		missed := 0
		for i := from; i < from+1000; i++ {
			if _, err := conn.ExecContext(ctx, "INSERT INTO shop.t VALUES (?, 'raw')", i); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := stmt.QueryRow(i).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				missed++
				if level != "off" {
					t.Logf("insert %d missed on the secondary; warnings: %v", i, warnings(t, conn))
				}
			}
		}
		return missed
	}
	applied := misses("applied", 1)
	// OFF misses depend on timing: up to three batches of 1000.
	off := 0
	for b := 0; b < 3 && off == 0; b++ {
		off = misses("off", 10_001+b*1000)
	}
	t.Logf("1000 inserts each followed by a read on the secondary: APPLIED %d misses, OFF %d misses", applied, off)
	if applied != 0 {
		t.Errorf("APPLIED: %d reads on the secondary missed the row just confirmed", applied)
	}
	if off == 0 {
		t.Errorf("OFF: no read missed: the check cannot tell the levels apart")
	}
}

// Kill -9 of the primary under a RECEIVED load, rounds after rounds: every
// write confirmed without a warning (sync_timeout_action = "error": a
// shortfall is an error, so an OK is a confirmation) is on the final
// primary, none only in a quarantine.
//
// MIRAJ_SEMISYNC_ROUNDS sets the number of rounds (5 by default, 30 for
// the full run).
func TestSemiSyncSurvivesPrimaryKills(t *testing.T) {
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("MIRAJ_SEMISYNC_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	r := failoverRounds(t, "sync_commit = \"received\"\nsync_timeout_action = \"error\"\nsync_timeout_ms = 2000\n", rounds)
	if r.lost+r.quarantined > 0 {
		t.Errorf("%d writes confirmed at RECEIVED are not on the final primary (%d only in a quarantine)", r.lost+r.quarantined, r.quarantined)
	}
	if r.acknowledged == 0 {
		t.Error("no write was confirmed")
	}
}

// waitStopped waits until every thread of each server is stopped
// (SIGSTOP takes effect asynchronously): state T in /proc.
func waitStopped(t *testing.T, ss ...*server) {
	t.Helper()
	for _, s := range ss {
		pid := s.cmd.Process.Pid
		waitFor(t, "the server to stop", 10*time.Second, func() bool {
			tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
			if err != nil || len(tasks) == 0 {
				return false
			}
			for _, task := range tasks {
				stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
				if err != nil {
					return false
				}
				// The state follows the command name in parentheses.
				i := strings.LastIndexByte(string(stat), ')')
				if i < 0 || i+2 >= len(stat) || (stat[i+2] != 'T' && stat[i+2] != 't') {
					return false
				}
			}
			return true
		})
	}
}
