package system

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/miraj-db/miraj/internal/difftest"
)

// The binary log (§17.13.1–3) against a real MariaDB: a private mariadbd
// replicates a miraj-server started with --log-bin, through DDL, the
// column types, multi-table transactions, STOP/START SLAVE, rotations and
// a kill -9 of Miraj; both sides must then hold the same rows.

// needMariaDB returns mariadbd's path, or skips (fails with
// MIRAJ_REQUIRE_MARIADB=1) when MariaDB is not installed.
func needMariaDB(t *testing.T) string {
	t.Helper()
	p := difftest.FindMariaDB()
	if p == "" {
		if os.Getenv("MIRAJ_REQUIRE_MARIADB") == "1" {
			t.Fatal("mariadbd not found and MIRAJ_REQUIRE_MARIADB=1 (scripts/install-test-clients.sh)")
		}
		t.Skip("mariadbd not found: install mariadb-server (scripts/install-test-clients.sh)")
	}
	return p
}

func openMariaDB(t *testing.T, port int) *sql.DB {
	t.Helper()
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr = "root", "tcp", fmt.Sprintf("127.0.0.1:%d", port)
	c.Timeout = 10 * time.Second
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	d.SetMaxOpenConns(2)
	t.Cleanup(func() { d.Close() })
	return d
}

// replicaCaughtUp waits until the replica has applied everything Miraj logged,
// failing at once on a replication error.
func replicaCaughtUp(t *testing.T, miraj, replica *sql.DB) {
	t.Helper()
	want := queryString(t, miraj, "SELECT @@gtid_binlog_pos")
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := slaveStatus(t, replica)
		// The IO thread retries a lost connection (a restart); it stops
		// on a fatal error (1236…).
		if st["Last_SQL_Errno"] != "0" || st["Slave_IO_Running"] == "No" {
			t.Fatalf("replication error: IO %s %q, SQL %s %q", st["Last_IO_Errno"], st["Last_IO_Error"], st["Last_SQL_Errno"], st["Last_SQL_Error"])
		}
		if got := queryString(t, replica, "SELECT @@gtid_slave_pos"); got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica at %s, Miraj at %s; status %v", queryString(t, replica, "SELECT @@gtid_slave_pos"), want, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sameTables compares the tables row by row, in primary key order, each
// value as the client reads it, and by CHECKSUM TABLE (Miraj's is
// MariaDB's sum over the same rows).
func sameTables(t *testing.T, miraj, replica *sql.DB, tables ...string) {
	t.Helper()
	for _, tb := range tables {
		q := "CHECKSUM TABLE " + tb
		if a, b := queryString(t, miraj, q), queryString(t, replica, q); a != b {
			t.Errorf("%s: Miraj %s, MariaDB %s", q, a, b)
		}
		q = "SELECT * FROM " + tb + " ORDER BY 1"
		a, b := queryString(t, miraj, q), queryString(t, replica, q)
		if a != b {
			t.Fatalf("%s differs:\nMiraj:   %s\nMariaDB: %s", tb, a, b)
		}
		if a == "" {
			t.Fatalf("%s is empty on both sides: nothing compared", tb)
		}
	}
}

// typesTable has the spec's column types (§17.13.3).
const typesTable = `CREATE TABLE shop.types (
	id INT PRIMARY KEY,
	ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED, mi MEDIUMINT, mu MEDIUMINT UNSIGNED,
	i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED,
	d DECIMAL(30,10), f FLOAT, db DOUBLE,
	dt DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(3), dd DATE, y YEAR,
	e ENUM('red','green','blue'), st SET('a','b','c'), bt BIT(10),
	bl BLOB, tx TEXT, js JSON, ch CHAR(10), vc VARCHAR(300), vb VARBINARY(20)
)`

var typesRows = []string{
	`(1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
	  '-12345678901234567890.0123456789', 1.5, -2.25e100, '2026-12-07 14:30:05.123456', '2026-01-02 03:04:05.678', '-838:59:59.000', '2026-02-28', 2155,
	  'green', 'a,c', b'1010101010', x'00ff10', 'héllo wörld', '{"a": [1, 2, {"b": null}]}', 'abc', REPEAT('x', 300), x'0102')`,
	`(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '0', 0, 0, '1000-01-01 00:00:00', '1970-01-01 00:00:01', '00:00:00', '1000-01-01', 1901,
	  'red', '', b'0', '', '', '[]', '', '', '')`,
	`(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
	`(4, 127, 1, 32767, 1, 8388607, 1, 2147483647, 1, 9223372036854775807, 1, '99999999999999999999.9999999999', -3.5, 1e-300,
	  '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999', '838:59:59.999', '9999-12-31', 0, 'blue', 'a,b,c', b'1111111111',
	  x'deadbeef', 'ok', '{"k": "v"}', 'z', 'y', x'ff')`,
	`(5, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, '-0.0000000001', 0.25, 0.125, '2000-02-29 12:00:00.5', '2000-02-29 12:00:00.5', '-00:00:01.5', '2000-02-29', 2000,
	  'red', 'b', b'1', x'61', 'b', '"s"', 'q', 'w', x'00')`,
}

func TestBinlogMariaDBReplica(t *testing.T) {
	mariadbd := needMariaDB(t)
	ctx := context.Background()
	work := t.TempDir()
	// A fixed port: the replica finds the server there after its restart.
	mirajPort := difftest.FreePort(t)
	srv := newServer(t, filepath.Join(work, "miraj"), "--port", fmt.Sprint(mirajPort), "--log-bin", "--server-id", "1", "--max-binlog-size", "16384")
	miraj := srv.open("")
	port := difftest.StartMariaDB(t, ctx, mariadbd, work)
	replica := openMariaDB(t, port)

	mustExec(t, miraj, "CREATE USER repl@'%' IDENTIFIED BY 'replpw'")
	mustExec(t, miraj, "GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
	mustExec(t, miraj, "CREATE DATABASE shop")
	mustExec(t, miraj, "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(40), qty INT NOT NULL DEFAULT 0)")
	mustExec(t, miraj, "CREATE TABLE shop.orders (id BIGINT PRIMARY KEY, item INT, note TEXT)")
	mustExec(t, miraj, typesTable)
	for _, r := range typesRows {
		mustExec(t, miraj, "INSERT INTO shop.types VALUES "+r)
	}
	mustExec(t, miraj, "INSERT INTO shop.items VALUES (1,'apple',3),(2,'pear',5),(3,'fig',0)")

	// The replica: its own server id, retries every second.
	mustExec(t, replica, "SET GLOBAL server_id = 2")
	mustExec(t, replica, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='repl', MASTER_PASSWORD='replpw', MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos",
		mirajPort))
	mustExec(t, replica, "START SLAVE")
	replicaCaughtUp(t, miraj, replica)
	sameTables(t, miraj, replica, "shop.types", "shop.items")

	// The connection serving the replica, and the replica itself, are shown.
	if pl := queryString(t, miraj, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'"); pl != "1;" {
		t.Errorf("Binlog Dump connections in the process list: %s", pl)
	}
	if h := queryString(t, miraj, "SHOW SLAVE HOSTS"); !strings.HasPrefix(h, "2 ") {
		t.Errorf("SHOW SLAVE HOSTS: %q", h)
	}

	// UPDATE, DELETE, ALTER and a transaction over two tables.
	mustExec(t, miraj, "UPDATE shop.items SET qty = qty + 10 WHERE id <= 2")
	mustExec(t, miraj, "UPDATE shop.types SET vc = 'changed', d = '1.5', tm = '-01:02:03.456' WHERE id = 1")
	mustExec(t, miraj, "DELETE FROM shop.items WHERE id = 3")
	mustExec(t, miraj, "ALTER TABLE shop.items ADD COLUMN price DECIMAL(8,2)")
	mustExec(t, miraj, "UPDATE shop.items SET price = 1.25")
	tx, err := miraj.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO shop.orders VALUES (100, 1, 'first')")
	mustExec(t, tx, "UPDATE shop.items SET qty = qty - 1 WHERE id = 1")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	replicaCaughtUp(t, miraj, replica)
	sameTables(t, miraj, replica, "shop.types", "shop.items", "shop.orders")

	// STOP SLAVE, writes meanwhile, START SLAVE: it resumes where it was.
	mustExec(t, replica, "STOP SLAVE")
	for i := 0; i < 20; i++ {
		mustExec(t, miraj, fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, 2, REPEAT('n', 500))", 200+i))
	}
	mustExec(t, replica, "START SLAVE")
	replicaCaughtUp(t, miraj, replica)
	sameTables(t, miraj, replica, "shop.orders")

	// Rotation: by FLUSH BINARY LOGS and by size (16 KiB files).
	before := queryString(t, miraj, "SHOW MASTER STATUS")
	mustExec(t, miraj, "FLUSH BINARY LOGS")
	for i := 0; i < 40; i++ {
		mustExec(t, miraj, fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, 1, REPEAT('r', 1000))", 300+i))
	}
	after := queryString(t, miraj, "SHOW MASTER STATUS")
	if strings.Fields(before)[0] == strings.Fields(after)[0] {
		t.Fatalf("no rotation: %s then %s", before, after)
	}
	replicaCaughtUp(t, miraj, replica)
	sameTables(t, miraj, replica, "shop.orders")

	// kill -9 of Miraj: the replica reconnects to the restarted server and
	// goes on with no gap and no duplicate (a duplicate row would stop it
	// with 1062).
	srv.kill()
	srv.restart()
	miraj = srv.open("")
	for i := 0; i < 10; i++ {
		mustExec(t, miraj, fmt.Sprintf("INSERT INTO shop.orders VALUES (%d, 3, 'after restart')", 400+i))
	}
	mustExec(t, miraj, "DELETE FROM shop.orders WHERE id BETWEEN 300 AND 309")
	replicaCaughtUp(t, miraj, replica)
	sameTables(t, miraj, replica, "shop.types", "shop.items", "shop.orders")
	if st := slaveStatus(t, replica); st["Slave_SQL_Running"] != "Yes" || st["Slave_IO_Running"] != "Yes" {
		t.Fatalf("replica threads after the restart: %v", st)
	}
	// MariaDB's tool decodes Miraj's files.
	tool, err := exec.LookPath("mariadb-binlog")
	if err != nil {
		t.Skip("mariadb-binlog not installed")
	}
	out, err := exec.Command(tool, "-vv", "--base64-output=decode-rows", filepath.Join(work, "miraj", "miraj-bin.000001.mrb")).CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb-binlog: %v\n%s", err, out)
	}
	for _, want := range []string{"CREATE DATABASE shop", "### INSERT INTO `shop`.`types`", "###   @11=-1", "###   @17='-838:59:59.000'", "COMMIT/*!*/;"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("mariadb-binlog output lacks %q", want)
		}
	}
}
