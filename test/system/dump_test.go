package system

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// dumpTimeout bounds one run of mariadb-dump or mariadb.
const dumpTimeout = 2 * time.Minute

// dumpSchema populates several databases with what a dump must carry:
// tables of many column types (with and without a primary key, composite
// keys, unique and secondary indexes, a foreign key), NULLs, quotes,
// backslashes and non-ASCII text, a view, triggers, a stored procedure, a
// stored function and an event.
var dumpSchema = []string{
	"CREATE DATABASE shop",
	"CREATE TABLE shop.items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(10,2), qty SMALLINT NOT NULL DEFAULT 0, " +
		"weight DOUBLE, added DATE, seen DATETIME(3), ok BOOLEAN, note TEXT, data VARBINARY(16), big BIGINT UNSIGNED, attrs JSON, " +
		"UNIQUE KEY uname (name), KEY kprice (price))",
	"CREATE TABLE shop.audit (id INT AUTO_INCREMENT PRIMARY KEY, item INT, what VARCHAR(20))",
	"CREATE TABLE shop.orders (id INT PRIMARY KEY, item INT NOT NULL, n INT, FOREIGN KEY (item) REFERENCES shop.items (id))",
	"CREATE TRIGGER shop.items_ai AFTER INSERT ON shop.items FOR EACH ROW INSERT INTO shop.audit (item, what) VALUES (NEW.id, 'added')",
	"INSERT INTO shop.items (name, price, qty, weight, added, seen, ok, note, data, big, attrs) VALUES " +
		"('apple', 1.50, 10, 0.25, '2024-01-31', '2024-01-31 12:34:56.789', TRUE, 'it''s red', X'00FF10', 18446744073709551615, '{\"c\": [1, 2]}'), " +
		"('pear', 2.25, 0, NULL, NULL, NULL, FALSE, 'back\\\\slash', NULL, 0, NULL), " +
		"('crème brûlée', NULL, 3, -1.5e10, '1999-12-31', '2000-01-01 00:00:00.000', NULL, NULL, X'', NULL, '[]')",
	"INSERT INTO shop.orders VALUES (1, 1, 5), (2, 2, NULL), (3, 1, 7)",
	"CREATE VIEW shop.stock AS SELECT name, qty * price AS value FROM shop.items WHERE qty > 0",
	"CREATE PROCEDURE shop.note(IN n INT) INSERT INTO shop.audit (item, what) VALUES (n, 'noted')",
	"CREATE FUNCTION shop.worth(n INT) RETURNS DECIMAL(12,2) READS SQL DATA BEGIN DECLARE v DECIMAL(12,2); SELECT price * qty INTO v FROM shop.items WHERE id = n; RETURN v; END",
	"CREATE EVENT shop.nightly ON SCHEDULE EVERY 1 DAY STARTS '2037-01-01 00:00:00' DO DELETE FROM shop.audit",
	"CREATE DATABASE hr",
	"CREATE TABLE hr.log (at DATETIME, msg VARCHAR(100))", // no primary key
	"INSERT INTO hr.log VALUES ('2024-05-01 08:00:00', 'start'), ('2024-05-01 08:00:00', 'start'), (NULL, NULL)",
	"CREATE TABLE hr.staff (dept CHAR(3), num INT, name VARCHAR(30), salary DECIMAL(12,2), PRIMARY KEY (dept, num))",
	"INSERT INTO hr.staff VALUES ('dev', 1, 'Ann', 5000.00), ('dev', 2, 'Bob', NULL), ('ops', 1, 'Ümit', 4200.50)",
	"CREATE TABLE hr.empty (id INT PRIMARY KEY)",
	// ENUM and SET columns have no default here: SHOW CREATE TABLE writes
	// their defaults as indexes, which no server loads back (a separate fix).
	"CREATE TABLE hr.kinds (id INT PRIMARY KEY, c ENUM('x','y'), s SET('a','b') NOT NULL, ts TIMESTAMP(3) NULL, y YEAR, t TIME, f FLOAT, " +
		"bi BIT(5), ch CHAR(4) NOT NULL DEFAULT 'ab', d INT DEFAULT 7, tiny TINYINT, med MEDIUMINT UNSIGNED, lt LONGTEXT, bl BLOB)",
	"INSERT INTO hr.kinds VALUES (1, 'y', 'a,b', '2021-02-03 04:05:06.789', 2024, '-12:30:00', 1.5, b'10101', 'zz', 3, -128, 16777215, REPEAT('x', 5000), X'DEADBEEF'), " +
		"(2, NULL, '', NULL, NULL, NULL, NULL, NULL, 'q', DEFAULT, NULL, NULL, NULL, NULL)",
	// Triggers through DDL: a renamed table keeps its trigger, a dropped
	// one loses it (a trigger left behind broke every later dump).
	"CREATE TABLE hr.tmp (a INT)",
	"CREATE TRIGGER hr.tmp_bi BEFORE INSERT ON hr.tmp FOR EACH ROW SET NEW.a = NEW.a * 10",
	"RENAME TABLE hr.tmp TO hr.tmp2",
	"INSERT INTO hr.tmp2 VALUES (1), (2)",
	"CREATE TABLE hr.gone (a INT)",
	"CREATE TRIGGER hr.gone_bi BEFORE INSERT ON hr.gone FOR EACH ROW SET NEW.a = 0",
	"DROP TABLE hr.gone",
	"CREATE DATABASE big",
	"CREATE TABLE big.n (id INT PRIMARY KEY, sq BIGINT, label VARCHAR(20), KEY ksq (sq))",
}

// dumpClients returns the paths of mariadb-dump and mariadb.
func dumpClients(t *testing.T) (dump, client string) {
	t.Helper()
	dump, err := exec.LookPath("mariadb-dump")
	requireClient(t, "mariadb-dump", "apt-get install -y mariadb-client", err == nil)
	client, err = exec.LookPath("mariadb")
	requireClient(t, "mariadb", "apt-get install -y mariadb-client", err == nil)
	return dump, client
}

func TestDumpAllDatabasesRestores(t *testing.T) {
	dump, client := dumpClients(t)

	src := newServer(t, t.TempDir())
	sdb := src.open("")
	for _, q := range dumpSchema {
		if strings.HasPrefix(q, "RENAME TABLE hr.") {
			// go-mysql-server v0.20 resolves RENAME TABLE in the
			// current database, qualified names or not.
			mustExec(t, src.open("hr"), q)
			continue
		}
		mustExec(t, sdb, q)
	}
	for i := 0; i < 2000; i += 500 {
		var vals []string
		for j := i; j < i+500; j++ {
			vals = append(vals, fmt.Sprintf("(%d, %d, 'n%d')", j, int64(j)*int64(j), j))
		}
		mustExec(t, sdb, "INSERT INTO big.n VALUES "+strings.Join(vals, ","))
	}
	if got := queryString(t, sdb, "SELECT trigger_schema, trigger_name, event_object_table FROM information_schema.TRIGGERS ORDER BY 1, 2"); got != "hr tmp_bi tmp2;shop items_ai items;" {
		t.Fatalf("triggers after RENAME and DROP TABLE: %s", got)
	}

	out := filepath.Join(t.TempDir(), "all.sql")
	// --single-transaction: one snapshot, a savepoint per table (reading a
	// view used to end the transaction, and the savepoint with it).
	runTool(t, dump, []string{"--all-databases", "--single-transaction", "--routines", "--triggers", "--events"}, src, "", out)

	dst := newServer(t, t.TempDir())
	runTool(t, client, nil, dst, out, "")
	ddb := dst.open("")

	compareServers(t, sdb, ddb)
	// The restored objects work: the trigger fires, the procedure runs.
	mustExec(t, ddb, "INSERT INTO shop.items (name, qty) VALUES ('fig', 1)")
	mustExec(t, ddb, "CALL shop.note((SELECT id FROM shop.items WHERE name = 'fig'))")
	if got := queryString(t, ddb, "SELECT a.what, i.qty FROM shop.audit a JOIN shop.items i ON i.id = a.item WHERE i.name = 'fig' ORDER BY a.id"); got != "added 1;noted 1;" {
		t.Fatalf("trigger and procedure after restore: %s", got)
	}
	// The stored function came back (dumps left functions out: SHOW
	// FUNCTION STATUS listed none).
	if got := queryString(t, ddb, "SELECT shop.worth(1)"); got != "15.00;" {
		t.Fatalf("stored function after restore: %s", got)
	}
	// Checksums tell contents apart.
	if queryString(t, sdb, "CHECKSUM TABLE shop.items") == queryString(t, ddb, "CHECKSUM TABLE shop.items") {
		t.Fatal("CHECKSUM TABLE unchanged by an insert")
	}

	// A dump with DROP DATABASE statements, restored over the changed
	// server, brings it back to the source's contents.
	out2 := filepath.Join(t.TempDir(), "all-drop.sql")
	runTool(t, dump, []string{"--all-databases", "--add-drop-database", "--lock-all-tables", "--routines", "--triggers", "--events"}, src, "", out2)
	runTool(t, client, nil, dst, out2, "")
	compareServers(t, sdb, ddb)
}

// compareServers compares the user databases of two servers: every table's
// checksum, definition and rows, and the views, triggers, routines and
// events.
func compareServers(t *testing.T, sdb, ddb *sql.DB) {
	t.Helper()
	dbs := userDatabases(t, sdb)
	if got := userDatabases(t, ddb); strings.Join(got, ",") != strings.Join(dbs, ",") {
		t.Fatalf("databases after restore: %v, want %v", got, dbs)
	}
	if strings.Join(dbs, ",") != "big,hr,shop" {
		t.Fatalf("databases: %v", dbs)
	}
	tables := 0
	for _, db := range dbs {
		for _, tb := range baseTables(t, sdb, db) {
			tables++
			name := fmt.Sprintf("`%s`.`%s`", db, tb)
			for _, q := range []string{
				"CHECKSUM TABLE " + name,
				"SHOW CREATE TABLE " + name,
				"SELECT * FROM " + name + " ORDER BY " + allColumns(t, sdb, db, tb),
				"SELECT COUNT(*) FROM " + name,
			} {
				want, got := queryString(t, sdb, q), queryString(t, ddb, q)
				if got != want {
					t.Errorf("%s:\n restored %s\n source   %s", q, got, want)
				}
			}
		}
	}
	if tables != 9 {
		t.Fatalf("%d tables compared, want 9", tables)
	}
	for _, q := range []string{
		"SELECT * FROM shop.stock ORDER BY name",
		"SELECT trigger_schema, trigger_name, event_manipulation, event_object_table, action_timing, action_statement FROM information_schema.TRIGGERS ORDER BY 1, 2",
		"SELECT routine_schema, routine_name, routine_type, routine_definition FROM information_schema.ROUTINES WHERE routine_schema IN ('shop', 'hr', 'big') ORDER BY 1, 2",
		"SELECT event_schema, event_name, event_definition, interval_value, interval_field, status FROM information_schema.EVENTS ORDER BY 1, 2",
		"SELECT table_schema, table_name, view_definition FROM information_schema.VIEWS WHERE table_schema = 'shop'",
	} {
		want, got := queryString(t, sdb, q), queryString(t, ddb, q)
		if got != want {
			t.Errorf("%s:\n restored %s\n source   %s", q, got, want)
		}
		if want == "" {
			t.Errorf("%s: no rows on the source", q)
		}
	}
}

// runTool runs a MariaDB client tool against s, reading stdin from in and
// writing stdout to out (files; "" for none), and fails the test unless it
// exits 0 with nothing on stderr.
func runTool(t *testing.T, bin string, args []string, s *server, in, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dumpTimeout)
	defer cancel()
	cmd := toolCommand(ctx, t, bin, s, "root", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if in != "" {
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdout = f
	}
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
}

// toolCommand is a MariaDB client tool's command connecting to s as user
// over TCP, with args.
func toolCommand(ctx context.Context, t *testing.T, bin string, s *server, user string, args ...string) *exec.Cmd {
	t.Helper()
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	return exec.CommandContext(ctx, bin, append([]string{"-h" + host, "-P" + port, "-u" + user, "--protocol=TCP"}, args...)...)
}

// userDatabases lists the databases other than the server's own.
func userDatabases(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var out []string
	for _, name := range strings.Split(strings.TrimSuffix(queryString(t, db, "SHOW DATABASES"), ";"), ";") {
		switch name {
		case "information_schema", "mysql", "performance_schema", "sys", "":
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func baseTables(t *testing.T, db *sql.DB, schema string) []string {
	t.Helper()
	var out []string
	for _, row := range strings.Split(strings.TrimSuffix(queryString(t, db, "SHOW FULL TABLES FROM `"+schema+"`"), ";"), ";") {
		if name, kind, ok := strings.Cut(row, " "); ok && kind == "BASE TABLE" {
			out = append(out, name)
		}
	}
	return out
}

// allColumns is an ORDER BY list of every column of a table, so that a
// table without a primary key has one row order too.
func allColumns(t *testing.T, db *sql.DB, schema, table string) string {
	t.Helper()
	cols := queryString(t, db, "SELECT column_name FROM information_schema.COLUMNS WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position", schema, table)
	var out []string
	for _, c := range strings.Split(strings.TrimSuffix(cols, ";"), ";") {
		out = append(out, "`"+c+"`")
	}
	return strings.Join(out, ", ")
}

// TestViewReadKeepsTransaction: reading a view, in a text or a prepared
// statement, leaves the transaction open (go-mysql-server marked such a
// statement DDL, which committed the transaction).
func TestViewReadKeepsTransaction(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE vt")
	mustExec(t, db, "CREATE TABLE vt.t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO vt.t VALUES (1, 10)")
	mustExec(t, db, "CREATE VIEW vt.w AS SELECT id, v FROM vt.t")
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{
		"START TRANSACTION",
		"INSERT INTO vt.t VALUES (2, 20)",
		"SAVEPOINT sp",
		"SELECT * FROM vt.w",
		"INSERT INTO vt.t SELECT id + 10, v FROM vt.w",
		"ROLLBACK TO SAVEPOINT sp",
	} {
		mustExec(t, c, q)
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM vt.w WHERE id > ?", 0).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows seen in the transaction: %d %v, want 2", n, err)
	}
	mustExec(t, c, "ROLLBACK")
	if got := queryString(t, db, "SELECT id FROM vt.t ORDER BY id"); got != "1;" {
		t.Fatalf("after ROLLBACK: %s, want only the committed row", got)
	}
}

// A dump taken with --lock-all-tables (FLUSH TABLES WITH READ LOCK) or
// --lock-tables (LOCK TABLES … READ) while
// transactions keep writing the same key into two tables holds the same
// keys in both: nothing commits between the reads of the two tables. The
// writes wait during the dump and go on after it.
func TestDumpUnderGlobalReadLockIsConsistent(t *testing.T) {
	dump, client := dumpClients(t)

	src := newServer(t, t.TempDir())
	sdb := src.open("")
	mustExec(t, sdb, "CREATE DATABASE pair")
	mustExec(t, sdb, "CREATE TABLE pair.a (id INT PRIMARY KEY, pad VARCHAR(100))")
	mustExec(t, sdb, "CREATE TABLE pair.b (id INT PRIMARY KEY)")
	// Rows enough in a that reading it takes a while before b is read.
	for i := 0; i < 30000; i += 1000 {
		var vals []string
		for j := i; j < i+1000; j++ {
			vals = append(vals, fmt.Sprintf("(%d, REPEAT('x', 100))", -1-j))
		}
		mustExec(t, sdb, "INSERT INTO pair.a VALUES "+strings.Join(vals, ","))
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	wrote := make(chan int, 1)
	go func() {
		n := 0
		defer func() { wrote <- n }()
		c, err := sdb.Conn(ctx)
		if err != nil {
			return
		}
		defer c.Close()
		for ctx.Err() == nil {
			tx, err := c.BeginTx(ctx, nil)
			if err != nil {
				return
			}
			if _, err := tx.Exec("INSERT INTO pair.a (id) VALUES (?)", n); err != nil {
				tx.Rollback()
				return
			}
			if _, err := tx.Exec("INSERT INTO pair.b VALUES (?)", n); err != nil {
				tx.Rollback()
				return
			}
			if err := tx.Commit(); err != nil {
				return
			}
			n++
		}
	}()
	waitFor := func(min int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var n int
			if err := sdb.QueryRow("SELECT COUNT(*) FROM pair.b").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n >= min {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the writer committed %d transactions, want %d", n, min)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(50)
	// --lock-all-tables takes FLUSH TABLES WITH READ LOCK; without it,
	// --lock-tables (the default) LOCK TABLES … READ.
	var outs []string
	for _, lock := range []string{"--lock-all-tables", "--lock-tables"} {
		out := filepath.Join(t.TempDir(), "pair.sql")
		runTool(t, dump, []string{lock, "--databases", "pair"}, src, "", out)
		var atDump int
		if err := sdb.QueryRow("SELECT COUNT(*) FROM pair.b").Scan(&atDump); err != nil {
			t.Fatal(err)
		}
		waitFor(atDump + 50) // the writes went on after the dump
		outs = append(outs, out)
	}
	stop()
	<-wrote

	for i, out := range outs {
		dst := newServer(t, t.TempDir())
		runTool(t, client, nil, dst, out, "")
		ddb := dst.open("")
		a := queryString(t, ddb, "SELECT COUNT(*), MAX(id) FROM pair.a WHERE id >= 0")
		b := queryString(t, ddb, "SELECT COUNT(*), MAX(id) FROM pair.b")
		if a != b {
			t.Fatalf("dump %d: it holds %s of the pairs in a and %s in b: a commit went in between", i, a, b)
		}
	}
}
