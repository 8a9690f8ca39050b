package system

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miraj-db/miraj/internal/difftest"
)

// Miraj as a replica of a real MariaDB source (§17.13.4): a private
// mariadbd with its binary log in ROW format, a miraj-server process that
// replicates it. Skipped without mariadbd, unless MIRAJ_REQUIRE_MARIADB=1.

// mariaSource is a private MariaDB keeping a binary log.
type mariaSource struct {
	port int
	db   *sql.DB
}

// sourceServerID is the source's server_id: Miraj's is 1.
const sourceServerID = 2

// catchUpTimeout bounds how long the replica may take to apply what the
// source wrote.
const catchUpTimeout = 120 * time.Second

func startMariaSource(t *testing.T) *mariaSource {
	t.Helper()
	mariadbd := difftest.FindMariaDB()
	if mariadbd == "" {
		if os.Getenv("MIRAJ_REQUIRE_MARIADB") == "1" {
			t.Fatal("mariadbd not found (install mariadb-server: scripts/install-test-clients.sh) and MIRAJ_REQUIRE_MARIADB=1")
		}
		t.Skip("mariadbd not found: install mariadb-server to run the binary log replica tests")
	}
	work := t.TempDir()
	port := difftest.StartMariaDBArgs(t, context.Background(), mariadbd, work,
		"--log-bin="+filepath.Join(work, "mariadb", "mariadb-bin"), "--server-id="+strconv.Itoa(sourceServerID),
		"--binlog-format=ROW", "--max-connections=200")
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/?multiStatements=true&loc=UTC", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE USER repl@'%' IDENTIFIED BY 'replpw'")
	mustExec(t, db, "GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
	return &mariaSource{port: port, db: db}
}

// changeMaster points the replica at src.
func changeMaster(t *testing.T, rep *sql.DB, src *mariaSource) {
	t.Helper()
	mustExec(t, rep, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='repl', MASTER_PASSWORD='replpw', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1", src.port))
}

// slaveStatus reads SHOW SLAVE STATUS as a map (empty: no row).
func slaveStatus(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	return statusOf(t, db, "SHOW SLAVE STATUS")
}

func statusOf(t *testing.T, db *sql.DB, q string) map[string]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := map[string]string{}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, c := range cols {
			if vals[i].Valid {
				out[c] = vals[i].String
			} else {
				out[c] = "NULL"
			}
		}
	}
	return out
}

// catchUp waits until the replica has applied all the source wrote; it
// fails at once when a replica thread stops.
func catchUp(t *testing.T, src *mariaSource, rep *sql.DB) {
	t.Helper()
	pos := strings.TrimSuffix(queryString(t, src.db, "SELECT @@gtid_binlog_pos"), ";")
	deadline := time.Now().Add(catchUpTimeout)
	for {
		var n sql.NullInt64
		if err := rep.QueryRow("SELECT MASTER_GTID_WAIT(?, 1)", pos).Scan(&n); err != nil {
			t.Fatalf("MASTER_GTID_WAIT: %v", err)
		}
		if n.Valid && n.Int64 == 0 {
			return
		}
		st := slaveStatus(t, rep)
		if st["Slave_SQL_Running"] != "Yes" || st["Slave_IO_Running"] == "No" || time.Now().After(deadline) {
			t.Fatalf("replica did not reach %s: IO %s (%s %s), SQL %s (%s %s), gtid_slave_pos %s", pos,
				st["Slave_IO_Running"], st["Last_IO_Errno"], st["Last_IO_Error"], st["Slave_SQL_Running"], st["Last_SQL_Errno"], st["Last_SQL_Error"],
				queryString(t, rep, "SELECT @@gtid_slave_pos"))
		}
	}
}

// sameRows compares a query's rows on both sides, row by row.
func sameRows(t *testing.T, src *mariaSource, rep *sql.DB, srcQuery, repQuery string) {
	t.Helper()
	a, b := queryString(t, src.db, srcQuery), queryString(t, rep, repQuery)
	if a != b {
		as, bs := strings.Split(a, ";"), strings.Split(b, ";")
		for i := 0; i < len(as) || i < len(bs); i++ {
			var x, y string
			if i < len(as) {
				x = as[i]
			}
			if i < len(bs) {
				y = bs[i]
			}
			if x != y {
				t.Fatalf("%s: row %d differs (%d rows on MariaDB, %d on Miraj)\nMariaDB: %s\nMiraj:   %s", srcQuery, i+1, len(as)-1, len(bs)-1, x, y)
			}
		}
	}
	if a == "" {
		t.Fatalf("%s: no rows to compare", srcQuery)
	}
}

// sameTable compares a table's rows on both sides, in the given order, and
// its CHECKSUM TABLE (Miraj's is MariaDB's sum over the same rows).
func sameTable(t *testing.T, src *mariaSource, rep *sql.DB, table, order string) {
	t.Helper()
	q := "SELECT * FROM " + table + " ORDER BY " + order
	sameRows(t, src, rep, q, q)
	q = "CHECKSUM TABLE " + table
	if a, b := queryString(t, src.db, q), queryString(t, rep, q); a != b {
		t.Errorf("%s: MariaDB %s, Miraj %s", q, a, b)
	}
}

// typesColumns are the columns of r.types compared as text; the JSON
// column is compared by value (MariaDB keeps the text as written).
const typesColumns = "id, ti, tiu, si, siu, mi, miu, i, iu, bi, biu, d30, d5, f, db, dt, dt6, ts, ts3, tm, dte, y, e, s, HEX(bt), c, vc, tx, HEX(bl), HEX(vb), HEX(bn)"

func TestBinlogReplicaFromMariaDB(t *testing.T) {
	src := startMariaSource(t)
	s := newServer(t, t.TempDir())
	rep := s.open("")

	// Nothing configured: no row, START SLAVE 1200.
	if st := slaveStatus(t, rep); len(st) != 0 {
		t.Fatalf("SHOW SLAVE STATUS before CHANGE MASTER: %v", st)
	}
	if _, err := rep.Exec("START SLAVE"); err == nil {
		t.Fatal("START SLAVE without CHANGE MASTER succeeded")
	} else if code, _ := mysqlError(err); code != 1200 {
		t.Fatalf("START SLAVE without CHANGE MASTER: %v, want 1200", err)
	}
	if _, err := rep.Exec("CHANGE MASTER TO MASTER_HOST='x', MASTER_BOGUS=1"); err == nil {
		t.Fatal("an unknown CHANGE MASTER option was accepted")
	} else if code, _ := mysqlError(err); code != 1064 {
		t.Fatalf("unknown option: %v, want 1064", err)
	}

	// Written before the replica starts: it begins at the source's first
	// group (empty gtid_slave_pos).
	mustExec(t, src.db, "CREATE DATABASE r")
	mustExec(t, src.db, `CREATE TABLE r.types (id INT PRIMARY KEY,
		ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
		i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED, d30 DECIMAL(30,10), d5 DECIMAL(5,2), f FLOAT, db DOUBLE,
		dt DATETIME, dt6 DATETIME(6), ts TIMESTAMP NULL, ts3 TIMESTAMP(3) NULL, tm TIME, dte DATE, y YEAR,
		e ENUM('red','green','blue'), s SET('a','b','c','d'), bt BIT(10), c CHAR(5), vc VARCHAR(100), tx TEXT, bl BLOB,
		vb VARBINARY(20), bn BINARY(4), j JSON)`)
	mustExec(t, src.db, `INSERT INTO r.types VALUES
		(1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
		 12345678901234567890.0123456789, -999.99, 1.5, -2.25e100, '2024-02-29 23:59:59', '1999-12-31 23:59:59.123456',
		 '2038-01-19 03:14:07', '2001-02-03 04:05:06.789', '-838:59:59', '1000-01-01', 2155,
		 'blue', 'a,d', b'1010101010', 'ab', 'it''s a \\ "quote" ü€😀', REPEAT('long text ', 100), X'00FF10', X'DEADBEEF', X'01020304',
		 '{"k": [1, 2, {"x": null}]}'),
		(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '1970-01-01 00:00:00', '1970-01-01 00:00:00.000001', NULL, NULL,
		 '00:00:00', '9999-12-31', 1901, 'red', '', b'0', '', '', '', '', '', X'00000000', 'null'),
		(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	mustExec(t, src.db, "CREATE TABLE r.acct (id INT PRIMARY KEY, owner VARCHAR(20) NOT NULL, bal DECIMAL(12,2) NOT NULL)")
	mustExec(t, src.db, "CREATE TABLE r.journal (acct INT, amount DECIMAL(12,2), note VARCHAR(50))") // no primary key
	for i := 1; i <= 20; i++ {
		mustExec(t, src.db, "INSERT INTO r.acct VALUES (?, ?, 100)", i, fmt.Sprintf("owner%d", i))
	}
	// Multi-table transactions.
	for i := 1; i <= 10; i++ {
		tx, err := src.db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, tx, "UPDATE r.acct SET bal = bal - 10 WHERE id = ?", i)
		mustExec(t, tx, "UPDATE r.acct SET bal = bal + 10 WHERE id = ?", 21-i)
		mustExec(t, tx, "INSERT INTO r.journal VALUES (?, -10, 'move'), (?, 10, 'move')", i, 21-i)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, src.db, "INSERT INTO r.journal VALUES (1, 1, 'dup'), (1, 1, 'dup')")
	mustExec(t, src.db, "DELETE FROM r.journal WHERE note = 'dup' LIMIT 1") // a row without key, by all its columns
	mustExec(t, src.db, "UPDATE r.types SET vc = CONCAT(vc, '!'), f = f * 2, e = 'green', s = 'b,c' WHERE id = 1")
	mustExec(t, src.db, "UPDATE r.types SET id = 30 WHERE id = 3") // a key change
	mustExec(t, src.db, "DELETE FROM r.acct WHERE id = 20")

	changeMaster(t, rep, src)
	mustExec(t, rep, "START SLAVE")
	catchUp(t, src, rep)
	sameRows(t, src, rep, "SELECT "+typesColumns+" FROM r.types ORDER BY id", "SELECT "+typesColumns+" FROM r.types ORDER BY id")
	sameRows(t, src, rep, "SELECT id, j IS NULL, JSON_EXTRACT(j, '$.k[1]'), JSON_TYPE(j) FROM r.types ORDER BY id",
		"SELECT id, j IS NULL, JSON_EXTRACT(j, '$.k[1]'), JSON_TYPE(j) FROM r.types ORDER BY id")
	sameTable(t, src, rep, "r.acct", "id")
	sameTable(t, src, rep, "r.journal", "acct, amount, note")

	st := slaveStatus(t, rep)
	for k, want := range map[string]string{"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes", "Master_Host": "127.0.0.1",
		"Master_User": "repl", "Using_Gtid": "Slave_Pos", "Last_SQL_Errno": "0", "Last_IO_Errno": "0", "Master_Server_Id": strconv.Itoa(sourceServerID)} {
		if st[k] != want {
			t.Errorf("SHOW SLAVE STATUS %s = %q, want %q", k, st[k], want)
		}
	}
	srcPos := strings.TrimSuffix(queryString(t, src.db, "SELECT @@gtid_binlog_pos"), ";")
	if got := strings.TrimSuffix(queryString(t, rep, "SELECT @@gtid_slave_pos"), ";"); got != srcPos {
		t.Errorf("@@gtid_slave_pos = %s, source's @@gtid_binlog_pos = %s", got, srcPos)
	}
	if all := statusOf(t, rep, "SHOW ALL SLAVES STATUS"); all["Connection_name"] != "" || all["Gtid_Slave_Pos"] != srcPos || all["Slave_SQL_Running"] != "Yes" {
		t.Errorf("SHOW ALL SLAVES STATUS: %v", all)
	}
	if got := queryString(t, rep, "SELECT domain_id, server_id, seq_no FROM miraj.gtid_slave_pos"); !strings.HasPrefix(got, "0 2 ") {
		t.Errorf("miraj.gtid_slave_pos = %q", got)
	}

	// DDL in its database, with a later row change through the new
	// column.
	ddlConn, err := src.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, ddlConn, "USE r")
	mustExec(t, ddlConn, "ALTER TABLE acct ADD COLUMN note VARCHAR(20) NOT NULL DEFAULT 'none'")
	// DDL logged in a database it drops, then in the database gone.
	mustExec(t, ddlConn, "CREATE DATABASE scratch")
	mustExec(t, ddlConn, "USE scratch")
	mustExec(t, ddlConn, "DROP DATABASE scratch")
	mustExec(t, ddlConn, "CREATE DATABASE scratch")
	mustExec(t, ddlConn, "CREATE TABLE scratch.x (a INT PRIMARY KEY)")
	mustExec(t, ddlConn, "INSERT INTO scratch.x VALUES (1)")
	ddlConn.Close()
	mustExec(t, src.db, "UPDATE r.acct SET note = 'rich' WHERE bal > 100")
	mustExec(t, src.db, "CREATE TABLE r.gone (x INT)")
	mustExec(t, src.db, "DROP TABLE r.gone")
	catchUp(t, src, rep)
	sameTable(t, src, rep, "r.acct", "id")
	sameTable(t, src, rep, "scratch.x", "a")
	if got := queryString(t, rep, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'r' AND TABLE_NAME = 'gone'"); got != "0;" {
		t.Errorf("r.gone still on the replica: %s", got)
	}

	// CHANGE MASTER while running: 1198.
	if _, err := rep.Exec("CHANGE MASTER TO MASTER_CONNECT_RETRY=2"); err == nil {
		t.Fatal("CHANGE MASTER while running succeeded")
	} else if code, _ := mysqlError(err); code != 1198 {
		t.Fatalf("CHANGE MASTER while running: %v, want 1198", err)
	}

	// STOP SLAVE: nothing applied; START SLAVE: resumes.
	mustExec(t, rep, "STOP SLAVE")
	mustExec(t, src.db, "INSERT INTO r.acct (id, owner, bal) VALUES (100, 'late', 5)")
	time.Sleep(300 * time.Millisecond)
	if got := queryString(t, rep, "SELECT COUNT(*) FROM r.acct WHERE id = 100"); got != "0;" {
		t.Fatalf("applied while stopped: %s", got)
	}
	if st := slaveStatus(t, rep); st["Slave_IO_Running"] != "No" || st["Slave_SQL_Running"] != "No" {
		t.Fatalf("after STOP SLAVE: IO %s SQL %s", st["Slave_IO_Running"], st["Slave_SQL_Running"])
	}
	mustExec(t, rep, "START SLAVE")
	catchUp(t, src, rep)
	sameTable(t, src, rep, "r.acct", "id")

	// FLUSH TABLES WITH READ LOCK holds the SQL thread between groups.
	ctx := context.Background()
	lockConn, err := rep.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, lockConn, "FLUSH TABLES WITH READ LOCK")
	mustExec(t, src.db, "INSERT INTO r.acct (id, owner, bal) VALUES (101, 'locked', 1)")
	waitFor(t, "the SQL thread to wait for the read lock", 30*time.Second, func() bool {
		return slaveStatus(t, rep)["Slave_SQL_Running_State"] == "Waiting for global read lock"
	})
	if got := queryString(t, rep, "SELECT COUNT(*) FROM r.acct WHERE id = 101"); got != "0;" {
		t.Fatalf("applied under the global read lock: %s", got)
	}
	// STOP SLAVE ends the wait; the group comes again at START SLAVE.
	stopped := make(chan error, 1)
	go func() { _, err := rep.Exec("STOP SLAVE"); stopped <- err }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("STOP SLAVE under the global read lock: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("STOP SLAVE waited for the global read lock")
	}
	mustExec(t, lockConn, "UNLOCK TABLES")
	mustExec(t, rep, "START SLAVE")
	lockConn.Close()
	catchUp(t, src, rep)
	sameTable(t, src, rep, "r.acct", "id")

	// A group Miraj cannot apply (a duplicate key): the SQL thread stops
	// at its start, nothing of it applied; skipped with
	// sql_slave_skip_counter.
	mustExec(t, rep, "INSERT INTO r.acct (id, owner, bal) VALUES (200, 'replica', 0)")
	tx, err := src.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO r.journal VALUES (200, 0, 'half')")
	mustExec(t, tx, "INSERT INTO r.acct (id, owner, bal) VALUES (200, 'source', 0)")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the SQL thread to stop on the duplicate key", 30*time.Second, func() bool {
		return slaveStatus(t, rep)["Slave_SQL_Running"] == "No"
	})
	st = slaveStatus(t, rep)
	if st["Last_SQL_Errno"] != "1062" || !strings.Contains(st["Last_SQL_Error"], "Could not execute Write_rows_v1 event on table r.acct") ||
		!strings.Contains(st["Last_SQL_Error"], "Error_code: 1062") || st["Slave_IO_Running"] != "Yes" {
		t.Fatalf("after a duplicate key: IO %s, Last_SQL_Errno %s, Last_SQL_Error %q", st["Slave_IO_Running"], st["Last_SQL_Errno"], st["Last_SQL_Error"])
	}
	if got := queryString(t, rep, "SELECT COUNT(*) FROM r.journal WHERE note = 'half'"); got != "0;" {
		t.Fatalf("half of the failed group applied: %s", got)
	}
	if !strings.Contains(s.output(), "Could not execute Write_rows_v1 event on table r.acct") {
		t.Errorf("the SQL thread's error is not in the server's log")
	}
	mustExec(t, rep, "SET GLOBAL sql_slave_skip_counter = 1")
	mustExec(t, rep, "START SLAVE")
	mustExec(t, rep, "DELETE FROM r.acct WHERE id = 200")
	mustExec(t, src.db, "DELETE FROM r.acct WHERE id = 200")
	mustExec(t, src.db, "DELETE FROM r.journal WHERE note = 'half'")
	waitFor(t, "the SQL thread to stop on the missing row", 30*time.Second, func() bool {
		return slaveStatus(t, rep)["Last_SQL_Errno"] == "1032"
	})
	// slave_skip_errors ignores the event that fails with a listed code.
	mustExec(t, rep, "SET GLOBAL slave_skip_errors = '1032'")
	mustExec(t, rep, "START SLAVE")
	catchUp(t, src, rep)
	mustExec(t, rep, "SET GLOBAL slave_skip_errors = 'OFF'")
	sameTable(t, src, rep, "r.acct", "id")
	sameTable(t, src, rep, "r.journal", "acct, amount, note")

	// A STATEMENT-format event: refused, with what to do.
	mustExec(t, src.db, "CREATE TABLE r.stmt (x INT PRIMARY KEY)")
	stmtConn, err := src.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, stmtConn, "SET SESSION binlog_format = 'STATEMENT'")
	mustExec(t, stmtConn, "INSERT INTO r.stmt VALUES (1)")
	mustExec(t, stmtConn, "SET SESSION binlog_format = 'ROW'")
	stmtConn.Close()
	waitFor(t, "the SQL thread to stop on a STATEMENT event", 30*time.Second, func() bool {
		return slaveStatus(t, rep)["Slave_SQL_Running"] == "No"
	})
	if st := slaveStatus(t, rep); !strings.Contains(st["Last_SQL_Error"], "STATEMENT format") {
		t.Fatalf("STATEMENT event: Last_SQL_Error %q", st["Last_SQL_Error"])
	}
	mustExec(t, rep, "SET GLOBAL sql_slave_skip_counter = 1")
	mustExec(t, rep, "START SLAVE")
	mustExec(t, src.db, "INSERT INTO r.acct (id, owner, bal) VALUES (300, 'after', 3)")
	catchUp(t, src, rep)
	sameTable(t, src, rep, "r.acct", "id")

	// The same server_id on both sides: 1593, the IO thread stops.
	mustExec(t, rep, "STOP SLAVE")
	mustExec(t, src.db, "SET GLOBAL server_id = 1")
	mustExec(t, rep, "START SLAVE")
	waitFor(t, "the IO thread to stop on equal server ids", 30*time.Second, func() bool {
		st := slaveStatus(t, rep)
		return st["Slave_IO_Running"] == "No" && st["Last_IO_Errno"] == "1593"
	})
	mustExec(t, rep, "STOP SLAVE")
	mustExec(t, src.db, fmt.Sprintf("SET GLOBAL server_id = %d", sourceServerID))

	// A position the source does not have: its 1236 stops the IO thread.
	good := strings.TrimSuffix(queryString(t, rep, "SELECT @@gtid_slave_pos"), ";")
	mustExec(t, rep, "SET GLOBAL gtid_slave_pos = '0-2-99999999'")
	mustExec(t, rep, "START SLAVE")
	waitFor(t, "the IO thread to stop on the source's 1236", 30*time.Second, func() bool {
		st := slaveStatus(t, rep)
		return st["Slave_IO_Running"] == "No" && st["Last_IO_Errno"] == "1236"
	})
	if st := slaveStatus(t, rep); !strings.Contains(st["Last_IO_Error"], "Got fatal error 1236 from master") {
		t.Fatalf("Last_IO_Error %q", st["Last_IO_Error"])
	}
	mustExec(t, rep, "STOP SLAVE")
	if _, err := rep.Exec("SET GLOBAL gtid_slave_pos = 'nonsense'"); err == nil {
		t.Fatal("SET gtid_slave_pos = 'nonsense' succeeded")
	}
	mustExec(t, rep, "SET GLOBAL gtid_slave_pos = ?", good)
	mustExec(t, rep, "START SLAVE")
	if _, err := rep.Exec("SET GLOBAL gtid_slave_pos = ?", good); err == nil {
		t.Fatal("SET gtid_slave_pos while running succeeded")
	}
	mustExec(t, src.db, "INSERT INTO r.acct (id, owner, bal) VALUES (301, 'again', 3)")
	catchUp(t, src, rep)
	sameTable(t, src, rep, "r.acct", "id")

	// read_only refuses the writes of accounts without SUPER,
	// super_read_only those of every account; the SQL thread goes on.
	mustExec(t, rep, "CREATE USER app@'%' IDENTIFIED BY 'apppw'")
	mustExec(t, rep, "GRANT ALL ON *.* TO app@'%'")
	mustExec(t, rep, "REVOKE SUPER ON *.* FROM app@'%'")
	app, err := sql.Open("mysql", s.dsn("app", "apppw", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	// SUPER for CHANGE MASTER and START / STOP / RESET SLAVE; REPLICATION
	// CLIENT (part of ALL) for SHOW SLAVE STATUS.
	for _, q := range []string{"CHANGE MASTER TO MASTER_CONNECT_RETRY = 5", "STOP SLAVE", "START SLAVE", "RESET SLAVE"} {
		if _, err := app.Exec(q); err == nil {
			t.Fatalf("%s without SUPER succeeded", q)
		} else if code, _ := mysqlError(err); code != 1227 {
			t.Fatalf("%s without SUPER: %v, want 1227", q, err)
		}
	}
	if st := slaveStatus(t, app); st["Slave_SQL_Running"] != "Yes" {
		t.Fatalf("SHOW SLAVE STATUS with REPLICATION CLIENT: %v", st)
	}
	mustExec(t, rep, "SET GLOBAL read_only = 1")
	if _, err := app.Exec("INSERT INTO r.acct (id, owner, bal) VALUES (900, 'app', 0)"); err == nil {
		t.Fatal("a write under read_only succeeded")
	} else if code, _ := mysqlError(err); code != 1290 {
		t.Fatalf("a write under read_only: %v, want 1290", err)
	}
	mustExec(t, rep, "CREATE DATABASE local_only") // root has SUPER
	mustExec(t, rep, "SET GLOBAL super_read_only = 1")
	if _, err := rep.Exec("CREATE DATABASE local_too"); err == nil {
		t.Fatal("a write under super_read_only succeeded")
	} else if code, _ := mysqlError(err); code != 1290 {
		t.Fatalf("a write under super_read_only: %v, want 1290", err)
	}
	mustExec(t, src.db, "INSERT INTO r.acct (id, owner, bal) VALUES (400, 'read only', 4)")
	catchUp(t, src, rep)
	sameTable(t, src, rep, "r.acct", "id")
	mustExec(t, rep, "SET GLOBAL read_only = 0")
	if got := queryString(t, rep, "SELECT @@global.read_only, @@global.super_read_only"); got != "0 0;" {
		t.Fatalf("after SET GLOBAL read_only = 0: %s", got)
	}
	mustExec(t, app, "CREATE DATABASE app_db")

	// A restart resumes the threads; the configuration is private.
	fi, err := os.Stat(filepath.Join(s.root, "miraj", "replica-source.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("replica-source.json mode %v, want 0600", fi.Mode().Perm())
	}
	s.stop()
	mustExec(t, src.db, "INSERT INTO r.acct (id, owner, bal) VALUES (302, 'while down', 3)")
	s.restart()
	rep = s.open("")
	catchUp(t, src, rep)
	sameTable(t, src, rep, "r.acct", "id")

	// RESET SLAVE ALL: 1198 while running; then the configuration is gone.
	if _, err := rep.Exec("RESET SLAVE ALL"); err == nil {
		t.Fatal("RESET SLAVE ALL while running succeeded")
	}
	mustExec(t, rep, "STOP REPLICA")
	mustExec(t, rep, "RESET REPLICA ALL")
	if st := slaveStatus(t, rep); len(st) != 0 {
		t.Fatalf("SHOW SLAVE STATUS after RESET SLAVE ALL: %v", st)
	}
	if _, err := os.Stat(filepath.Join(s.root, "miraj", "replica-source.json")); !os.IsNotExist(err) {
		t.Fatalf("replica-source.json after RESET SLAVE ALL: %v", err)
	}
}

// TestBinlogReplicaKill9Resumes: Miraj killed while it applies a stream
// of groups, each writing two databases, resumes exactly after the last
// group it committed: every id once in each table, none missing.
func TestBinlogReplicaKill9Resumes(t *testing.T) {
	src := startMariaSource(t)
	s := newServer(t, t.TempDir())
	rep := s.open("")
	mustExec(t, src.db, "CREATE DATABASE r1")
	mustExec(t, src.db, "CREATE DATABASE r2")
	mustExec(t, src.db, "CREATE TABLE r1.a (id INT PRIMARY KEY, v VARCHAR(20))")
	mustExec(t, src.db, "CREATE TABLE r2.b (id INT PRIMARY KEY, n INT)")
	mustExec(t, src.db, "CREATE TABLE r2.counter (k INT PRIMARY KEY, n INT)")
	mustExec(t, src.db, "INSERT INTO r2.counter VALUES (1, 0)")
	changeMaster(t, rep, src)
	mustExec(t, rep, "START SLAVE")

	const groups = 3000
	var wg sync.WaitGroup
	wg.Add(1)
	writeErr := make(chan error, 1)
	go func() {
		defer wg.Done()
		for i := 1; i <= groups; i++ {
			tx, err := src.db.Begin()
			if err == nil {
				_, err = tx.Exec("INSERT INTO r1.a VALUES (?, ?)", i, fmt.Sprintf("v%d", i))
			}
			if err == nil {
				_, err = tx.Exec("INSERT INTO r2.b VALUES (?, ?)", i, i*2)
			}
			if err == nil {
				_, err = tx.Exec("UPDATE r2.counter SET n = n + 1 WHERE k = 1")
			}
			if err == nil {
				err = tx.Commit()
			}
			if err != nil {
				writeErr <- err
				return
			}
		}
	}()
	waitFor(t, "the replica to apply some groups", 60*time.Second, func() bool {
		var n int
		rep.QueryRow("SELECT COUNT(*) FROM r1.a").Scan(&n)
		return n > 200
	})
	s.kill()
	s.restart()
	rep = s.open("")
	wg.Wait()
	select {
	case err := <-writeErr:
		t.Fatalf("source writes: %v", err)
	default:
	}
	catchUp(t, src, rep)
	sameTable(t, src, rep, "r1.a", "id")
	sameTable(t, src, rep, "r2.b", "id")
	sameTable(t, src, rep, "r2.counter", "k")
	if got := queryString(t, rep, "SELECT COUNT(*), MIN(id), MAX(id) FROM r1.a"); got != fmt.Sprintf("%d 1 %d;", groups, groups) {
		t.Fatalf("r1.a after the crash: %s", got)
	}
}

// TestBinlogReplicaSysbench: 60 s of sysbench oltp_write_only on the
// source (at most 300 transactions a second, which the replica applies as
// they come on this machine) ends in identical tables on Miraj.
func TestBinlogReplicaSysbench(t *testing.T) {
	src := startMariaSource(t)
	if _, err := exec.LookPath("sysbench"); err != nil {
		if os.Getenv("MIRAJ_REQUIRE_MARIADB") == "1" {
			t.Fatal("sysbench not found and MIRAJ_REQUIRE_MARIADB=1")
		}
		t.Skip("sysbench not found")
	}
	s := newServer(t, t.TempDir())
	rep := s.open("")
	changeMaster(t, rep, src)
	mustExec(t, rep, "START SLAVE")
	mustExec(t, src.db, "CREATE DATABASE sbtest")
	args := []string{"oltp_write_only", "--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=" + strconv.Itoa(src.port),
		"--mysql-user=root", "--mysql-db=sbtest", "--tables=2", "--table-size=2000", "--threads=2", "--time=60", "--rate=300", "--report-interval=0"}
	for _, phase := range []string{"prepare", "run"} {
		out, err := exec.Command("sysbench", append(args, phase)...).CombinedOutput()
		if err != nil {
			t.Fatalf("sysbench %s: %v\n%s", phase, err, out)
		}
	}
	catchUp(t, src, rep)
	for _, tbl := range []string{"sbtest.sbtest1", "sbtest.sbtest2"} {
		sameTable(t, src, rep, tbl, "id")
	}
}

// streamProxy stands between the replica and the source and, when armed,
// damages the next row event of the binary log stream: flips a byte of its
// rows (a corrupt checksum) or cuts its end (a truncated event).
type streamProxy struct {
	ln     net.Listener
	target string
	mode   atomic.Int32 // proxyPass, proxyFlip or proxyTruncate
}

const (
	proxyPass = iota
	proxyFlip
	proxyTruncate
)

func startStreamProxy(t *testing.T, target string) *streamProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &streamProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.handle(c)
		}
	}()
	return p
}

func (p *streamProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// readProxyPacket reads one MySQL packet: its 4-byte header and payload.
func readProxyPacket(r io.Reader) ([]byte, []byte, error) {
	hdr := make([]byte, 4)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	payload := make([]byte, n)
	_, err := io.ReadFull(r, payload)
	return hdr, payload, err
}

func (p *streamProxy) handle(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	var dumping atomic.Bool
	go func() {
		defer s.Close()
		for {
			hdr, payload, err := readProxyPacket(c)
			if err != nil {
				return
			}
			// COM_BINLOG_DUMP (0x12) starts the stream.
			if hdr[3] == 0 && len(payload) > 0 && payload[0] == 0x12 {
				dumping.Store(true)
			}
			if _, err := s.Write(append(hdr, payload...)); err != nil {
				return
			}
		}
	}()
	for {
		hdr, payload, err := readProxyPacket(s)
		if err != nil {
			return
		}
		// An event: 0x00, then its header (timestamp 4, type 1, …);
		// types 23-25 and 30-32 are the row events.
		if dumping.Load() && len(payload) > 40 && payload[0] == 0 {
			switch typ := payload[5]; {
			case typ >= 23 && typ <= 25 || typ >= 30 && typ <= 32:
				switch p.mode.Swap(proxyPass) {
				case proxyFlip:
					payload[len(payload)-6] ^= 0xFF
				case proxyTruncate:
					payload = payload[:len(payload)-9]
					n := len(payload)
					hdr[0], hdr[1], hdr[2] = byte(n), byte(n>>8), byte(n>>16)
				}
			}
		}
		if _, err := c.Write(append(hdr, payload...)); err != nil {
			return
		}
	}
}

// TestBinlogReplicaBadStream: a corrupt checksum and a truncated event
// stop the IO thread with MariaDB's error, nothing of the group applied;
// START SLAVE then fetches the group again, whole.
func TestBinlogReplicaBadStream(t *testing.T) {
	src := startMariaSource(t)
	proxy := startStreamProxy(t, fmt.Sprintf("127.0.0.1:%d", src.port))
	s := newServer(t, t.TempDir())
	rep := s.open("")
	mustExec(t, src.db, "CREATE DATABASE r")
	mustExec(t, src.db, "CREATE TABLE r.t (id INT PRIMARY KEY, v VARCHAR(50))")
	mustExec(t, src.db, "INSERT INTO r.t VALUES (1, 'first')")
	mustExec(t, rep, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='repl', MASTER_PASSWORD='replpw', MASTER_CONNECT_RETRY=1", proxy.port()))
	mustExec(t, rep, "START SLAVE")
	catchUp(t, src, rep)
	for _, tc := range []struct {
		mode int32
		code string
		text string
	}{
		{proxyFlip, "1743", "checksum verification failed"},
		{proxyTruncate, "", ""},
	} {
		proxy.mode.Store(tc.mode)
		id := 10 + tc.mode
		tx, err := src.db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, tx, "UPDATE r.t SET v = 'changed' WHERE id = 1")
		mustExec(t, tx, "INSERT INTO r.t VALUES (?, 'damaged on the way')", id)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the IO thread to stop on a damaged event", 30*time.Second, func() bool {
			return slaveStatus(t, rep)["Slave_IO_Running"] == "No"
		})
		st := slaveStatus(t, rep)
		if st["Last_IO_Errno"] == "0" || st["Last_IO_Error"] == "" || (tc.code != "" && st["Last_IO_Errno"] != tc.code) ||
			!strings.Contains(st["Last_IO_Error"], tc.text) || st["Slave_SQL_Running"] != "Yes" {
			t.Fatalf("mode %d: IO %s, Last_IO_Errno %s, Last_IO_Error %q, SQL %s", tc.mode, st["Slave_IO_Running"], st["Last_IO_Errno"], st["Last_IO_Error"], st["Slave_SQL_Running"])
		}
		t.Logf("mode %d: %s %s", tc.mode, st["Last_IO_Errno"], st["Last_IO_Error"])
		if !strings.Contains(s.output(), st["Last_IO_Error"]) {
			t.Errorf("mode %d: the IO thread's error is not in the server's log", tc.mode)
		}
		if got := queryString(t, rep, "SELECT v FROM r.t WHERE id = 1"); got != "first;" && tc.mode == proxyFlip {
			t.Fatalf("mode %d: part of the damaged group applied: %s", tc.mode, got)
		}
		if got := queryString(t, rep, "SELECT COUNT(*) FROM r.t WHERE id = ?", id); got != "0;" {
			t.Fatalf("mode %d: the damaged group applied", tc.mode)
		}
		mustExec(t, rep, "START SLAVE")
		catchUp(t, src, rep)
		sameTable(t, src, rep, "r.t", "id")
		mustExec(t, src.db, "UPDATE r.t SET v = 'first' WHERE id = 1")
		catchUp(t, src, rep)
	}
}

// writeTestCA writes a CA and a certificate it signs for 127.0.0.1 into
// dir (ca.pem, cert.pem, key.pem).
func writeTestCA(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "replica test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*pem.Block{
		"ca.pem":   {Type: "CERTIFICATE", Bytes: caDER},
		"cert.pem": {Type: "CERTIFICATE", Bytes: der},
		"key.pem":  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBinlogReplicaTLS: MASTER_SSL with MASTER_SSL_VERIFY_SERVER_CERT
// replicates from a source that requires TLS of the account; a CA that did
// not sign the source's certificate keeps the IO thread retrying with the
// reason in Last_IO_Error.
func TestBinlogReplicaTLS(t *testing.T) {
	mariadbd := difftest.FindMariaDB()
	if mariadbd == "" {
		if os.Getenv("MIRAJ_REQUIRE_MARIADB") == "1" {
			t.Fatal("mariadbd not found and MIRAJ_REQUIRE_MARIADB=1")
		}
		t.Skip("mariadbd not found")
	}
	certs, other := t.TempDir(), t.TempDir()
	writeTestCA(t, certs)
	writeTestCA(t, other)
	work := t.TempDir()
	port := difftest.StartMariaDBArgs(t, context.Background(), mariadbd, work,
		"--log-bin="+filepath.Join(work, "mariadb", "mariadb-bin"), "--server-id=2", "--binlog-format=ROW",
		"--ssl-ca="+filepath.Join(certs, "ca.pem"), "--ssl-cert="+filepath.Join(certs, "cert.pem"), "--ssl-key="+filepath.Join(certs, "key.pem"))
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", port))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	src := &mariaSource{port: port, db: db}
	mustExec(t, db, "CREATE USER repl@'%' IDENTIFIED BY 'replpw' REQUIRE SSL")
	mustExec(t, db, "GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
	mustExec(t, db, "CREATE DATABASE r")
	mustExec(t, db, "CREATE TABLE r.t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO r.t VALUES (1), (2)")

	s := newServer(t, t.TempDir())
	rep := s.open("")
	change := fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='repl', MASTER_PASSWORD='replpw', MASTER_CONNECT_RETRY=1, ", port)
	// Not verified against the right CA: refused, retried.
	mustExec(t, rep, change+"MASTER_SSL=1, MASTER_SSL_VERIFY_SERVER_CERT=1, MASTER_SSL_CA='"+filepath.Join(other, "ca.pem")+"'")
	mustExec(t, rep, "START SLAVE")
	waitFor(t, "the IO thread to report the certificate", 30*time.Second, func() bool {
		return strings.Contains(slaveStatus(t, rep)["Last_IO_Error"], "certificate")
	})
	if st := slaveStatus(t, rep); st["Slave_IO_Running"] != "Connecting" {
		t.Fatalf("with the wrong CA: Slave_IO_Running %s", st["Slave_IO_Running"])
	}
	mustExec(t, rep, "STOP SLAVE")
	// Without TLS: the account requires it (1045), retried.
	mustExec(t, rep, change+"MASTER_SSL=0")
	mustExec(t, rep, "START SLAVE")
	waitFor(t, "the IO thread to report the refused account", 30*time.Second, func() bool {
		return slaveStatus(t, rep)["Last_IO_Errno"] == "1045"
	})
	mustExec(t, rep, "STOP SLAVE")
	// The right CA.
	mustExec(t, rep, change+"MASTER_SSL=1, MASTER_SSL_VERIFY_SERVER_CERT=1, MASTER_SSL_CA='"+filepath.Join(certs, "ca.pem")+"'")
	mustExec(t, rep, "START SLAVE")
	catchUp(t, src, rep)
	sameTable(t, src, rep, "r.t", "id")
	if st := slaveStatus(t, rep); st["Master_SSL_Allowed"] != "Yes" || st["Master_SSL_Verify_Server_Cert"] != "Yes" {
		t.Fatalf("SHOW SLAVE STATUS: SSL %s, verify %s", st["Master_SSL_Allowed"], st["Master_SSL_Verify_Server_Cert"])
	}
}

// TestBinlogReplicaPositionMode: MASTER_USE_GTID = no with a file and a
// position; MASTER_POS_WAIT; a kill -9 resumes from the position committed
// with the rows.
func TestBinlogReplicaPositionMode(t *testing.T) {
	src := startMariaSource(t)
	mustExec(t, src.db, "CREATE DATABASE r")
	mustExec(t, src.db, "CREATE TABLE r.t (id INT PRIMARY KEY, n INT)")
	var file string
	var pos int64
	var ignored1, ignored2 sql.NullString // Binlog_Do_DB, Binlog_Ignore_DB
	if err := src.db.QueryRow("SHOW MASTER STATUS").Scan(&file, &pos, &ignored1, &ignored2); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 50; i++ {
		mustExec(t, src.db, "INSERT INTO r.t VALUES (?, ?)", i, i)
	}
	s := newServer(t, t.TempDir())
	rep := s.open("")
	// The replica starts after the CREATE TABLE: it makes the table itself.
	mustExec(t, rep, "CREATE DATABASE r")
	mustExec(t, rep, "CREATE TABLE r.t (id INT PRIMARY KEY, n INT)")
	mustExec(t, rep, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='repl', MASTER_PASSWORD='replpw', MASTER_LOG_FILE='%s', MASTER_LOG_POS=%d, MASTER_HEARTBEAT_PERIOD=0.5", src.port, file, pos))
	mustExec(t, rep, "START SLAVE")
	waitPos := func() {
		t.Helper()
		var f string
		var p int64
		if err := src.db.QueryRow("SHOW MASTER STATUS").Scan(&f, &p, &ignored1, &ignored2); err != nil {
			t.Fatal(err)
		}
		var n sql.NullInt64
		if err := rep.QueryRow("SELECT MASTER_POS_WAIT(?, ?, 60)", f, p).Scan(&n); err != nil || !n.Valid || n.Int64 != 0 {
			st := slaveStatus(t, rep)
			t.Fatalf("MASTER_POS_WAIT(%s, %d) = %v, %v; SQL %s %s", f, p, n, err, st["Last_SQL_Errno"], st["Last_SQL_Error"])
		}
	}
	waitPos()
	sameTable(t, src, rep, "r.t", "id")
	if st := slaveStatus(t, rep); st["Using_Gtid"] != "No" || st["Relay_Master_Log_File"] != file {
		t.Fatalf("Using_Gtid %s, Relay_Master_Log_File %s", st["Using_Gtid"], st["Relay_Master_Log_File"])
	}
	waitFor(t, "a heartbeat from the idle source", 20*time.Second, func() bool {
		n, _ := strconv.Atoi(statusOf(t, rep, "SHOW ALL SLAVES STATUS")["Slave_received_heartbeats"])
		return n > 0
	})
	s.kill()
	for i := 51; i <= 80; i++ {
		mustExec(t, src.db, "UPDATE r.t SET n = n + 1 WHERE id = ?", i-50)
		mustExec(t, src.db, "INSERT INTO r.t VALUES (?, ?)", i, i)
	}
	s.restart()
	rep = s.open("")
	waitPos()
	sameTable(t, src, rep, "r.t", "id")
}
