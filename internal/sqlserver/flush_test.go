package sqlserver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/storage"
)

func TestFlushCommand(t *testing.T) {
	for _, c := range []struct {
		q    string
		opts string // "" when not handled here
		rest string
	}{
		{"FLUSH STATUS", "STATUS", ""},
		{"/* x */ flush local Error Logs, hosts; SELECT 1", "ERROR LOGS,HOSTS", " SELECT 1"},
		{"FLUSH NO_WRITE_TO_BINLOG LOGS", "LOGS", ""},
		{"FLUSH ENGINE LOGS ;", "ENGINE LOGS", ""},
		{"FLUSH PRIVILEGES, STATUS", "PRIVILEGES,STATUS", ""},
		{"FLUSH GENERAL LOGS, SLOW LOGS, RELAY LOGS, BINARY LOGS", "GENERAL LOGS,SLOW LOGS,RELAY LOGS,BINARY LOGS", ""},
		// The planner's alone, or not handled here.
		{"FLUSH PRIVILEGES", "", ""},
		{"FLUSH BINARY LOGS", "BINARY LOGS", ""},
		{"FLUSH TABLES", "", ""},
		{"FLUSH TABLES WITH READ LOCK", "", ""},
		{"FLUSH STATUS, TABLES", "STATUS,TABLES", ""},
		{"FLUSH LOGS, TABLES, HOSTS, THREADS", "LOGS,TABLES,HOSTS,THREADS", ""},
		{"FLUSH TABLES t1, t2", "", ""},
		{"FLUSH RELAY LOGS FOR CHANNEL 'c'", "", ""},
		{"FLUSH ENGINE", "", ""},
		{"FLUSH QUERY CACHE", "", ""},
		{"SELECT 1", "", ""},
	} {
		opts, end, ok := flushCommand(c.q)
		got := strings.Join(opts, ",")
		if !ok {
			got = ""
		}
		if got != c.opts || ok && c.q[end:] != c.rest {
			t.Errorf("%q: %q (rest %q), want %q (rest %q)", c.q, got, c.q[end:], c.opts, c.rest)
		}
	}
}

// FLUSH STATUS starts the session's counters again (the global ones keep
// theirs); FLUSH LOGS and ENGINE LOGS make the journals durable; the log
// files and host cache Miraj does not have are flushed with nothing to do;
// each needs RELOAD.
func TestFlushStatements(t *testing.T) {
	srv, open := startServerWith(t, Config{Policy: storage.SavePeriodic, SaveInterval: time.Hour})
	root := open("root", "", "")
	root.SetMaxOpenConns(1) // one session
	for _, q := range []string{"CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY)",
		"CREATE USER 'ro'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON *.* TO 'ro'@'%'"} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	status := func(scope, name string) uint64 {
		t.Helper()
		var n string
		var v uint64
		if err := root.QueryRow(fmt.Sprintf("SHOW %s STATUS LIKE '%s'", scope, name)).Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i := 0; i < 5; i++ {
		if _, err := root.Exec("SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := status("SESSION", "Com_select"); n < 5 {
		t.Fatalf("session Com_select = %d before FLUSH STATUS", n)
	}
	globalBefore := status("GLOBAL", "Com_select")
	time.Sleep(1100 * time.Millisecond) // Uptime counts seconds
	if _, err := root.Exec("FLUSH STATUS"); err != nil {
		t.Fatal(err)
	}
	if n := status("SESSION", "Com_select"); n != 0 {
		t.Errorf("session Com_select = %d after FLUSH STATUS, want 0", n)
	}
	if n := status("SESSION", "Bytes_received"); n == 0 || n > 200 {
		t.Errorf("session Bytes_received = %d after FLUSH STATUS: want the bytes of the one statement since", n)
	}
	if n := status("GLOBAL", "Com_select"); n < globalBefore {
		t.Errorf("global Com_select went from %d to %d: FLUSH STATUS resets the session's only", globalBefore, n)
	}
	if up, since := status("GLOBAL", "Uptime"), status("GLOBAL", "Uptime_since_flush_status"); since >= up {
		t.Errorf("Uptime_since_flush_status = %d, Uptime = %d: want it counted from the FLUSH STATUS", since, up)
	}

	if _, err := root.Exec("INSERT INTO f.t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	db, _ := srv.storage.Database("f")
	j := db.Journal()
	if j.Durable() >= j.End() {
		t.Fatalf("the commit is durable (%d of %d) before its fsync is due", j.Durable(), j.End())
	}
	if _, err := root.Exec("FLUSH ENGINE LOGS"); err != nil {
		t.Fatal(err)
	}
	if j.Durable() != j.End() {
		t.Fatalf("after FLUSH ENGINE LOGS the journal is durable to %d of %d", j.Durable(), j.End())
	}
	if _, err := root.Exec("INSERT INTO f.t VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Exec("FLUSH LOCAL LOGS"); err != nil || j.Durable() != j.End() {
		t.Fatalf("FLUSH LOCAL LOGS: %v, durable to %d of %d", err, j.Durable(), j.End())
	}
	for _, q := range []string{"FLUSH ERROR LOGS, GENERAL LOGS, SLOW LOGS, RELAY LOGS", "FLUSH HOSTS", "FLUSH NO_WRITE_TO_BINLOG PRIVILEGES, HOSTS"} {
		if _, err := root.Exec(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	ro := open("ro", "pw", "")
	for _, q := range []string{"FLUSH STATUS", "FLUSH LOGS", "FLUSH HOSTS"} {
		_, err := ro.Exec(q)
		if got, want := mysqlErr(err), "1227 42000 Access denied; you need (at least one of) the RELOAD privilege(s) for this operation"; got != want {
			t.Errorf("%s without RELOAD: %s, want %s", q, got, want)
		}
	}
}
