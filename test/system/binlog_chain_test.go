package system

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/difftest"
)

// A chain of real servers: MariaDB → Miraj (--log-bin
// --log-slave-updates) → MariaDB. The last replica has the source's rows,
// under the source's GTIDs (server id and sequence kept, §17.13.4). A
// Miraj replica without --log-slave-updates applies the same groups and
// logs none of them.
func TestBinlogChainThroughMiraj(t *testing.T) {
	src := startMariaSource(t)
	mariadbd := needMariaDB(t)
	mid := newServer(t, t.TempDir(), "--log-bin", "--server-id", "5", "--gtid-domain-id", "1", "--log-slave-updates")
	m := mid.open("")
	quiet := newServer(t, t.TempDir(), "--log-bin", "--server-id", "6", "--gtid-domain-id", "1")
	q := quiet.open("")
	// Accounts for the last replica, made on Miraj with its binary log
	// off for the session (a MariaDB replica would otherwise apply them
	// too, under Miraj's domain 1).
	mc, err := m.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cexec(t, mc, "SET SESSION sql_log_bin = 0")
	cexec(t, mc, "CREATE USER repl@'%' IDENTIFIED BY 'replpw'")
	cexec(t, mc, "GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
	cexec(t, mc, "SET SESSION sql_log_bin = 1") // back to the pool
	mc.Close()
	if got := queryString(t, m, "SELECT @@log_slave_updates"); got != "1;" {
		t.Fatalf("@@log_slave_updates = %q", got)
	}

	mustExec(t, src.db, "CREATE DATABASE chain")
	mustExec(t, src.db, "CREATE TABLE chain.acct (id INT PRIMARY KEY, owner VARCHAR(20) NOT NULL, bal DECIMAL(12,2) NOT NULL, note TEXT)")
	mustExec(t, src.db, "CREATE TABLE chain.log (at INT, what VARCHAR(40))") // no primary key
	for i := 1; i <= 30; i++ {
		mustExec(t, src.db, "INSERT INTO chain.acct VALUES (?, ?, 100, REPEAT('n', ?))", i, fmt.Sprintf("owner%d", i), i*10)
	}
	for _, r := range []*server{mid, quiet} {
		db := r.open("")
		changeMaster(t, db, src)
		mustExec(t, db, "START SLAVE")
		catchUp(t, src, db)
	}

	// The last replica, of Miraj.
	port := difftest.StartMariaDB(t, context.Background(), mariadbd, t.TempDir())
	last := openMariaDB(t, port)
	mustExec(t, last, "SET GLOBAL server_id = 7")
	_, mirajPort, err := net.SplitHostPort(mid.addr)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, last, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s, MASTER_USER='repl', MASTER_PASSWORD='replpw', MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos", mirajPort))
	mustExec(t, last, "START SLAVE")

	// More writes at the source while the chain runs: a transaction over
	// two tables, updates, deletes, a DDL.
	for i := 1; i <= 10; i++ {
		tx, err := src.db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, tx, "UPDATE chain.acct SET bal = bal - 5 WHERE id = ?", i)
		mustExec(t, tx, "UPDATE chain.acct SET bal = bal + 5 WHERE id = ?", 31-i)
		mustExec(t, tx, "INSERT INTO chain.log VALUES (?, 'move')", i)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, src.db, "DELETE FROM chain.acct WHERE id > 25")
	mustExec(t, src.db, "ALTER TABLE chain.acct ADD COLUMN flag INT NOT NULL DEFAULT 0")
	mustExec(t, src.db, "UPDATE chain.acct SET flag = id % 3")
	catchUp(t, src, m)
	catchUp(t, src, q)
	replicaCaughtUp(t, m, last)

	// The last replica holds the source's rows, and the source's GTIDs:
	// Miraj's binary log is the source's, group for group.
	srcPos := strings.TrimSuffix(queryString(t, src.db, "SELECT @@gtid_binlog_pos"), ";")
	if !strings.HasPrefix(srcPos, fmt.Sprintf("0-%d-", sourceServerID)) {
		t.Fatalf("source's @@gtid_binlog_pos = %q", srcPos)
	}
	for _, db := range []*struct {
		name string
		pos  string
	}{{"Miraj's @@gtid_binlog_pos", queryString(t, m, "SELECT @@gtid_binlog_pos")}, {"the last replica's @@gtid_slave_pos", queryString(t, last, "SELECT @@gtid_slave_pos")}} {
		if got := strings.TrimSuffix(db.pos, ";"); got != srcPos {
			t.Errorf("%s = %q, want the source's %q", db.name, got, srcPos)
		}
	}
	for _, tb := range []string{"chain.acct", "chain.log"} {
		qs := "SELECT * FROM " + tb + " ORDER BY 1, 2"
		a, b := queryString(t, src.db, qs), queryString(t, last, qs)
		if a != b || a == "" {
			t.Fatalf("%s differs at the end of the chain:\nsource: %s\nlast:   %s", tb, a, b)
		}
	}
	// A group of the source is one group at Miraj, under its GTID.
	events := queryString(t, m, "SHOW BINLOG EVENTS")
	if !strings.Contains(events, fmt.Sprintf("GTID 0-%d-", sourceServerID)) {
		t.Errorf("Miraj's binary log names no GTID of the source:\n%s", events)
	}

	// Miraj's own write, in its domain: @@gtid_current_pos takes it beside
	// the source's position (MASTER_USE_GTID = current_pos starts there),
	// and the last replica applies it too.
	mustExec(t, m, "CREATE DATABASE own")
	if got, want := strings.TrimSuffix(queryString(t, m, "SELECT @@gtid_current_pos"), ";"), srcPos+",1-5-1"; got != want {
		t.Errorf("Miraj's @@gtid_current_pos = %q, want %q", got, want)
	}
	replicaCaughtUp(t, m, last)

	// Without --log-slave-updates: the same rows, nothing logged.
	for _, tb := range []string{"chain.acct", "chain.log"} {
		qs := "SELECT * FROM " + tb + " ORDER BY 1, 2"
		if a, b := queryString(t, src.db, qs), queryString(t, q, qs); a != b {
			t.Fatalf("%s differs on the replica without --log-slave-updates", tb)
		}
	}
	if got := queryString(t, q, "SELECT @@log_slave_updates, @@gtid_binlog_pos"); got != "0 ;" {
		t.Errorf("the replica without --log-slave-updates: @@log_slave_updates, @@gtid_binlog_pos = %q", got)
	}
}
