package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Errors reach the client with MySQL's code, SQLSTATE and text, as users,
// tools and ORMs read them (test/diff compares them with MariaDB's).
func TestErrorsAreMySQLs(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE dt1",
		"CREATE TABLE dt1.c (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(10) NOT NULL, ti TINYINT, d DATE, UNIQUE KEY uname (name))",
		"INSERT INTO dt1.c (name) VALUES ('alice')",
		"CREATE TABLE dt1.p (id INT PRIMARY KEY)",
		"CREATE TABLE dt1.ch (id INT PRIMARY KEY, p_id INT, CONSTRAINT fk_p FOREIGN KEY (p_id) REFERENCES dt1.p (id))",
		"INSERT INTO dt1.p VALUES (1)",
		"INSERT INTO dt1.ch VALUES (1, 1)",
		"CREATE TABLE dt1.j (id INT PRIMARY KEY, doc JSON)",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db := open("root", "", "dt1")
	for _, c := range []struct{ q, want string }{
		{"INSERT INTO c (name) VALUES ('alice')", "1062 23000 Duplicate entry 'alice' for key 'uname'"},
		{"INSERT INTO c (id, name) VALUES (1, 'bob')", "1062 23000 Duplicate entry '1' for key 'PRIMARY'"},
		{"INSERT INTO c (name) VALUES (NULL)", "1048 23000 Column 'name' cannot be null"},
		{"SELECT * FROM nopk", "1146 42S02 Table 'dt1.nopk' doesn't exist"},
		{"CREATE TABLE c (id INT)", "1050 42S01 Table 'c' already exists"},
		{"DROP TABLE nope", "1051 42S02 Unknown table 'dt1.nope'"},
		{"SELECT nosuch FROM c", "1054 42S22 Unknown column 'nosuch' in 'field list'"},
		{"SELECT id FROM c WHERE nosuch = 1", "1054 42S22 Unknown column 'nosuch' in 'where clause'"},
		{"ALTER TABLE c DROP COLUMN nosuch", "1091 42000 Can't DROP 'nosuch'; check that column/key exists"},
		{"SELECT id FROM c ORDER BY nosuch", "1054 42S22 Unknown column 'nosuch' in 'order clause'"},
		{"SELECT c.id FROM c JOIN p ON c.id = p.nosuch", "1054 42S22 Unknown column 'p.nosuch' in 'on clause'"},
		{"SELEC 1", "1064 42000 You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'SELEC 1' at line 1"},
		{"SELECT * FROM c WHERE", "1064 42000 You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '' at line 1"},
		{"INSERT INTO c (name, ti) VALUES ('x', 1), ('y', 300)", "1264 22003 Out of range value for column 'ti' at row 2"},
		{"INSERT INTO c (name, ti) VALUES ('x', 'abc')", "1366 HY000 Incorrect integer value: 'abc' for column 'ti' at row 1"},
		{"INSERT INTO c (name, d) VALUES ('x', 'not a date')", "1292 22007 Incorrect date value: 'not a date' for column 'd' at row 1"},
		{"INSERT INTO c (name) VALUES ('a name that is far too long')", "1406 22001 Data too long for column 'name' at row 1"},
		{"INSERT INTO ch VALUES (2, 99)", "1452 23000 Cannot add or update a child row: a foreign key constraint fails (`dt1`.`ch`, CONSTRAINT `fk_p` FOREIGN KEY (`p_id`) REFERENCES `p` (`id`))"},
		{"DELETE FROM p", "1451 23000 Cannot delete or update a parent row: a foreign key constraint fails (`dt1`.`ch`, CONSTRAINT `fk_p` FOREIGN KEY (`p_id`) REFERENCES `p` (`id`))"},
		{"SELECT (SELECT id FROM p UNION SELECT 2)", "1242 21000 Subquery returns more than 1 row"},
		{"USE nodb", "1049 42000 Unknown database 'nodb'"},
		{"INSERT INTO j VALUES (1, '{bad')", "3140 22032 Invalid JSON text: invalid character 'b' looking for beginning of object key string"},
	} {
		_, err := db.Exec(c.q)
		if got := mysqlErr(err); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.q, got, c.want)
		}
	}
	// A table named with its database is named so, whatever the current
	// database.
	for _, c := range []struct {
		db *sql.DB
		q  string
	}{{root, "SELECT * FROM dt1.nope"}, {db, "INSERT INTO mysql.nope VALUES (1)"}, {db, "SELECT * FROM c JOIN `dt1`.`Nope2` n ON c.id = n.id"}} {
		_, err := c.db.Exec(c.q)
		want := "1146 42S02 Table 'dt1.nope' doesn't exist"
		switch {
		case strings.Contains(c.q, "mysql"):
			want = "1146 42S02 Table 'mysql.nope' doesn't exist"
		case strings.Contains(c.q, "Nope2"):
			want = "1146 42S02 Table 'dt1.Nope2' doesn't exist"
		}
		if got := mysqlErr(err); got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.q, got, want)
		}
	}
	for q, want := range map[string]string{
		"CALL nope()":                     "1305 42000 PROCEDURE dt1.nope does not exist",
		"SHOW CREATE PROCEDURE dt1.nope2": "1305 42000 PROCEDURE dt1.nope2 does not exist",
	} {
		if _, err := db.Exec(q); mysqlErr(err) != want {
			t.Errorf("%s:\n got %s\nwant %s", q, mysqlErr(err), want)
		}
	}
	// Without a current database (a CALL of an unqualified name lost
	// the connection: go-mysql-server's planner read the missing
	// database).
	for _, q := range []string{"SELECT * FROM c", "SHOW TABLES", "SHOW TRIGGERS", "CREATE TABLE x (id INT)", "CALL nope()", "CALL `nope`()"} {
		_, err := root.Exec(q)
		if got, want := mysqlErr(err), "1046 3D000 No database selected"; got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
}

// warnings returns SHOW WARNINGS of c as "Level Code Message" lines.
func warnings(t *testing.T, c *sql.Conn) string {
	t.Helper()
	r, err := query(t, c, "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(r.rows, "; ")
}

// IGNORE turns errors into warnings of level Warning, in MySQL's words;
// an index that duplicates no other gets no 1831 warning.
func TestWarningsAreMySQLs(t *testing.T) {
	_, open := startServer(t)
	ctx := context.Background()
	c, err := open("root", "", "").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE DATABASE w")
	exec("USE w")
	exec("DROP TABLE IF EXISTS nope")
	if got, want := warnings(t, c), "Note|1051|Unknown table 'w.nope'"; got != want {
		t.Errorf("DROP TABLE IF EXISTS: warnings %q, want %q", got, want)
	}
	exec("CREATE TABLE c (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(10) NOT NULL, city VARCHAR(20), ti TINYINT, UNIQUE KEY uname (name), KEY kcity (city))")
	if got := warnings(t, c); got != "" {
		t.Errorf("CREATE TABLE with UNIQUE KEY and KEY warns: %s", got)
	}
	exec("ALTER TABLE c ADD INDEX kti (ti)")
	if got := warnings(t, c); got != "" {
		t.Errorf("ALTER TABLE ADD INDEX of a new column warns: %s", got)
	}
	exec("ALTER TABLE c ADD INDEX kcity2 (city)")
	if got := warnings(t, c); !strings.HasPrefix(got, "Warning|1831|Duplicate index 'kcity2'") {
		t.Errorf("a real duplicate index: warnings %q", got)
	}
	res, err := c.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS w")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 0 {
		t.Errorf("CREATE DATABASE IF NOT EXISTS of a database: %d rows affected, want 0", n)
	}
	if got, want := warnings(t, c), "Note|1007|Can't create database 'w'; database exists"; got != want {
		t.Errorf("CREATE DATABASE IF NOT EXISTS of a database: warnings %q, want %q", got, want)
	}
	exec("CREATE TABLE IF NOT EXISTS c (id INT)")
	if got, want := warnings(t, c), "Note|1050|Table 'c' already exists"; got != want {
		t.Errorf("CREATE TABLE IF NOT EXISTS of a table: warnings %q, want %q", got, want)
	}
	exec("INSERT INTO c (name) VALUES ('alice')")
	exec("INSERT IGNORE INTO c (name) VALUES ('alice')")
	if got, want := warnings(t, c), "Warning|1062|Duplicate entry 'alice' for key 'uname'"; got != want {
		t.Errorf("INSERT IGNORE of a duplicate: warnings %q, want %q", got, want)
	}
	exec("INSERT IGNORE INTO c (name, ti) VALUES ('bob', 300)")
	if got, want := warnings(t, c), "Warning|1264|Out of range value for column 'ti' at row 1"; got != want {
		t.Errorf("INSERT IGNORE out of range: warnings %q, want %q", got, want)
	}
	// After a statement with a warning, the next one's own warnings.
	exec("DROP TABLE IF EXISTS nope2")
	if got, want := warnings(t, c), "Note|1051|Unknown table 'w.nope2'"; got != want {
		t.Errorf("DROP TABLE IF EXISTS after a warning: warnings %q, want %q", got, want)
	}
	exec("INSERT IGNORE INTO c (name, ti) VALUES ('carl', 1), ('alice', 2), ('dora', 999)")
	if got, want := warnings(t, c), "Warning|1062|Duplicate entry 'alice' for key 'uname'; Warning|1264|Out of range value for column 'ti' at row 3"; got != want {
		t.Errorf("two warnings: %q, want %q (in the order they were raised)", got, want)
	}
}

// The statements whose results users check against MySQL: NOT IN and NOT
// EXISTS with NULLs, exact SUM and AVG with MySQL's types, ROW_COUNT()
// after DELETE, SHOW CREATE TABLE of ENUM and SET defaults.
func TestResultsAreMySQLs(t *testing.T) {
	_, open := startServer(t)
	ctx := context.Background()
	c, err := open("root", "", "").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{
		"CREATE DATABASE r", "USE r",
		"CREATE TABLE dept (id INT PRIMARY KEY, name VARCHAR(20))",
		"CREATE TABLE emp (id INT PRIMARY KEY, name VARCHAR(20), dept INT)",
		"INSERT INTO dept VALUES (1, 'Dev'), (2, 'Ops')",
		"INSERT INTO emp VALUES (1, 'ann', 1), (2, 'ben', 2), (3, 'cid', NULL), (4, 'dot', 4)",
		"CREATE TABLE m (id INT PRIMARY KEY, amount DECIMAL(30,2), qty INT)",
		"INSERT INTO m VALUES (1, 12345678901234567.89, 1), (2, 0.01, 2), (3, NULL, 3)",
		"CREATE TABLE big (n INT)",
		"INSERT INTO big WITH RECURSIVE s(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < 999) SELECT n FROM s",
		"CREATE TABLE e (id INT PRIMARY KEY, kind ENUM('x','y') NOT NULL DEFAULT 'y', flags SET('a','b') DEFAULT 'a,b', d DECIMAL(5,2) DEFAULT 1.5, price DECIMAL(8,2), ts TIMESTAMP NULL, note TEXT, city VARCHAR(10) NOT NULL DEFAULT '')",
		"CREATE TABLE d (id INT PRIMARY KEY AUTO_INCREMENT, v INT)",
		"INSERT INTO d (v) VALUES (1), (2), (3)",
		"CREATE TABLE w (id INT PRIMARY KEY, s VARCHAR(20))",
		"INSERT INTO w VALUES (1, 'apple'), (2, 'Apple'), (3, 'APPLE '), (4, 'banana'), (5, NULL)",
		"CREATE TABLE k (a INT)",
		"INSERT INTO k VALUES (1), (1), (2)",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, k := range []struct{ q, cols, rows string }{
		{q: "SELECT name FROM emp WHERE dept NOT IN (SELECT id FROM dept WHERE name = 'Dev') ORDER BY name", rows: "[ben dot]"},
		{q: "SELECT name FROM emp e WHERE NOT EXISTS (SELECT 1 FROM dept d WHERE d.id = e.dept) ORDER BY name", rows: "[cid dot]"},
		{q: "SELECT name FROM emp WHERE dept NOT IN (SELECT id FROM dept UNION SELECT NULL)", rows: "[]"},
		{q: "SELECT SUM(amount), AVG(amount) FROM m", cols: "DECIMAL DECIMAL", rows: "[12345678901234567.90|6172839450617283.950000]"},
		{q: "SELECT SUM(n) s, AVG(n) a, SUM(n * 1000000) m FROM big", cols: "DECIMAL DECIMAL DECIMAL", rows: "[499500|499.5000|499500000000]"},
		{q: "SELECT - SUM(qty) * + qty FROM m WHERE qty = 3 GROUP BY qty, qty", rows: "[-9]"},
		{q: "SELECT id, AVG(qty) OVER () a, SUM(amount) OVER (ORDER BY id) s FROM m ORDER BY id", cols: "INT DECIMAL DECIMAL",
			rows: "[1|2.0000|12345678901234567.89 2|2.0000|12345678901234567.90 3|2.0000|12345678901234567.90]"},
		{q: "WITH t AS (SELECT SUM(amount) AS total FROM m) SELECT total FROM t", cols: "DECIMAL", rows: "[12345678901234567.90]"},
		{q: "SELECT s + 1 AS t FROM (SELECT SUM(amount) s FROM m) d", cols: "DECIMAL", rows: "[12345678901234568.90]"},
		{q: "SELECT - SUM(0) FROM m", rows: "[0]"},
		{q: "SELECT STD(qty) s, VAR_SAMP(qty) v FROM m", cols: "DOUBLE DOUBLE", rows: "[0.816496580927726|1]"},
		// utf8mb4_0900_ai_ci: case-insensitive, NO PAD.
		{q: "SELECT DISTINCT s FROM w ORDER BY s", rows: "[NULL apple APPLE  banana]"},
		{q: "SELECT COUNT(DISTINCT s) FROM w", rows: "[3]"},
		{q: "SELECT DATE('2024-02-29') + INTERVAL 1 DAY a, DATE('2024-02-29') + INTERVAL 1 HOUR b", cols: "DATE DATETIME", rows: "[2024-03-01|2024-02-29 01:00:00]"},
		{q: "SELECT GREATEST(amount, 0) g, LEAST(amount, qty, 1) l FROM m WHERE id > 1 ORDER BY id", cols: "DECIMAL DECIMAL", rows: "[0.01|0.01 NULL|NULL]"},
		{q: "SELECT GREATEST(1, 2.5, '3') g", rows: "[3]"},
		{q: "SELECT GREATEST(-1.25, 0) g", cols: "DECIMAL", rows: "[0.00]"},
		{q: "SELECT TRUNCATE(1.999, 1) a, TRUNCATE(1.5, 3) e, TRUNCATE(1234, -2) b, MAKEDATE(2024, 60) c, SEC_TO_TIME(3725) d", rows: "[1.9|1.500|1200|2024-02-29|01:02:05]"},
		{q: "SELECT id FROM w WHERE s LIKE BINARY 'a%' ORDER BY id", rows: "[1]"},
		{q: "SELECT CAST('12abc' AS SIGNED) a, CAST(' -7' AS SIGNED) b, CAST('x' AS UNSIGNED) c", rows: "[12|-7|0]"},
	} {
		r, err := query(t, c, k.q)
		if err != nil {
			t.Errorf("%s: %v", k.q, err)
			continue
		}
		if got := fmt.Sprint(r.rows); got != k.rows {
			t.Errorf("%s = %s, want %s", k.q, got, k.rows)
		}
		if k.cols != "" {
			var types []string
			for _, col := range r.cols {
				types = append(types, strings.Fields(col)[1])
			}
			if got := strings.Join(types, " "); got != k.cols {
				t.Errorf("%s: column types %s, want %s", k.q, got, k.cols)
			}
		}
	}
	// Without AUTO_INCREMENT (go-mysql-server runs this one as a
	// TRUNCATE) and with.
	// A SET inside a trigger or a procedure still does its work.
	for _, q := range []string{
		"CREATE TABLE tr (id INT PRIMARY KEY, v INT)",
		"CREATE TRIGGER tr_bi BEFORE INSERT ON tr FOR EACH ROW SET NEW.v = NEW.v * 10",
		"CREATE PROCEDURE p_set() BEGIN DECLARE x INT; SET x = 7; SET @from_proc = x; INSERT INTO tr VALUES (2, x); END",
		"INSERT INTO tr VALUES (1, 4)",
		"CALL p_set()",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if r, err := query(t, c, "SELECT id, v, @from_proc FROM tr ORDER BY id"); err != nil || fmt.Sprint(r.rows) != "[1|40|7 2|70|7]" {
		t.Errorf("trigger and procedure SETs: %v %v", r.rows, err)
	}
	if res, err := c.ExecContext(ctx, "SET @a = 1, autocommit = 1"); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 0 {
		t.Errorf("SET: %d rows affected, want 0", n)
	}
	// A scalar subquery of several rows is an error, not a join.
	if _, err := query(t, c, "SELECT name FROM emp WHERE dept = (SELECT id FROM dept)"); mysqlErr(err) != "1242 21000 Subquery returns more than 1 row" {
		t.Errorf("a scalar subquery of two rows: %s", mysqlErr(err))
	}
	if r, err := query(t, c, "SELECT name FROM emp WHERE dept = (SELECT id FROM dept WHERE name = 'Ops')"); err != nil || fmt.Sprint(r.rows) != "[ben]" {
		t.Errorf("a scalar subquery of one row: %v %v", r.rows, err)
	}
	if _, err := query(t, c, "SELECT name FROM emp e WHERE dept = (SELECT d.id FROM dept d WHERE d.id >= e.dept)"); mysqlErr(err) != "1242 21000 Subquery returns more than 1 row" {
		t.Errorf("a correlated scalar subquery of two rows: %s", mysqlErr(err))
	}
	if r, err := query(t, c, "SELECT name FROM emp e WHERE dept = (SELECT d.id FROM dept d WHERE d.id = e.dept) ORDER BY name"); err != nil || fmt.Sprint(r.rows) != "[ann ben]" {
		t.Errorf("a correlated scalar subquery of one row: %v %v", r.rows, err)
	}
	if _, err := query(t, c, "SELECT CAST('12abc' AS SIGNED)"); err != nil {
		t.Fatal(err)
	}
	if got, want := warnings(t, c), "Warning|1292|Truncated incorrect INTEGER value: '12abc'"; got != want {
		t.Errorf("CAST('12abc' AS SIGNED): warnings %q, want %q", got, want)
	}
	if _, err := c.ExecContext(ctx, "DELETE FROM k"); err != nil {
		t.Fatal(err)
	}
	if r, err := query(t, c, "SELECT ROW_COUNT()"); err != nil || fmt.Sprint(r.rows) != "[3]" {
		t.Errorf("ROW_COUNT() after DELETE FROM k = %v %v, want 3", r.rows, err)
	}
	if _, err := c.ExecContext(ctx, "DELETE FROM d"); err != nil {
		t.Fatal(err)
	}
	if r, err := query(t, c, "SELECT ROW_COUNT()"); err != nil || fmt.Sprint(r.rows) != "[3]" {
		t.Errorf("ROW_COUNT() after DELETE FROM d = %v %v, want 3", r.rows, err)
	}
	if _, err := c.ExecContext(ctx, "INSERT INTO d (v) VALUES (4)"); err != nil {
		t.Fatal(err)
	}
	if r, err := query(t, c, "SELECT id FROM d"); err != nil || fmt.Sprint(r.rows) != "[4]" {
		t.Errorf("AUTO_INCREMENT after DELETE FROM d: ids %v %v, want [4]", r.rows, err)
	}
	r, err := query(t, c, "SHOW CREATE TABLE e")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(r.rows)
	for _, want := range []string{
		"`kind` enum('x','y') NOT NULL DEFAULT 'y',", "`flags` set('a','b') DEFAULT 'a,b',",
		"`d` decimal(5,2) DEFAULT '1.50',", "`price` decimal(8,2) DEFAULT NULL,",
		"`ts` timestamp NULL DEFAULT NULL,", "`note` text,",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("SHOW CREATE TABLE e has no %s:\n%s", want, got)
		}
	}
	r, err = query(t, c, "SHOW COLUMNS FROM e")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(r.rows), "[id|int|NO|PRI|NULL| kind|enum('x','y')|NO||y| flags|set('a','b')|YES||a,b| d|decimal(5,2)|YES||1.50| price|decimal(8,2)|YES||NULL| ts|timestamp|YES||NULL| note|text|YES||NULL| city|varchar(10)|NO|||]"; got != want {
		t.Errorf("SHOW COLUMNS FROM e =\n%s\nwant\n%s", got, want)
	}
	r, err = query(t, c, "SHOW VARIABLES WHERE Variable_name IN ('autocommit', 'sql_safe_updates')")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(r.rows), "[autocommit|ON sql_safe_updates|OFF]"; got != want {
		t.Errorf("SHOW VARIABLES = %s, want %s", got, want)
	}
}

// The victim of KILL QUERY gets MySQL's 1317, and SHOW PROCESSLIST shows
// its user and State as MySQL does.
func TestKillQueryVictim(t *testing.T) {
	_, open := startServer(t)
	ctx := context.Background()
	victim, err := open("root", "", "").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var id string
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := victim.ExecContext(ctx, "SELECT SLEEP(60)")
		done <- err
	}()
	admin := open("root", "", "")
	deadline := time.Now().Add(30 * time.Second)
	var row string
	for {
		r, err := query(t, admin, "SELECT USER, COMMAND, STATE, INFO FROM information_schema.PROCESSLIST WHERE ID = "+id)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.rows) == 1 && strings.Contains(r.rows[0], "SLEEP") {
			row = r.rows[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the victim's query never showed in the process list: %v", r.rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if want := "root|Query|executing|SELECT SLEEP(60)"; row != want {
		t.Errorf("process list row %q, want %q", row, want)
	}
	if _, err := admin.Exec("KILL QUERY " + id); err != nil {
		t.Fatal(err)
	}
	if got, want := mysqlErr(<-done), "1317 70100 Query execution was interrupted"; got != want {
		t.Errorf("the victim got %s, want %s", got, want)
	}
}

// EXPLAIN answers in MySQL's tabular form: a row per table read, with how
// it is read and by which index.
func TestExplainIsTabular(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE x",
		"CREATE TABLE x.t1 (id INT PRIMARY KEY, name VARCHAR(30), price DECIMAL(8,2), KEY kname (name))",
		"CREATE TABLE x.t2 (id INT PRIMARY KEY, t1_id INT, KEY (t1_id))",
		"INSERT INTO x.t1 VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)",
		"INSERT INTO x.t2 VALUES (1, 1), (2, 1)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db = open("root", "", "x")
	for _, c := range []struct{ q, want string }{
		{"EXPLAIN SELECT * FROM t1 WHERE id = 1", "[1|SIMPLE|t1|const|PRIMARY|const|1]"},
		{"EXPLAIN SELECT * FROM t1 WHERE name = 'a'", "[1|SIMPLE|t1|ref|kname|const|3]"},
		{"EXPLAIN SELECT * FROM t1", "[1|SIMPLE|t1|ALL|NULL|NULL|3]"},
		{"EXPLAIN SELECT t2.id FROM t2 JOIN t1 ON t1.id = t2.t1_id WHERE t2.id < 5", "[1|SIMPLE|t2|range|PRIMARY|NULL|2 1|SIMPLE|t1|eq_ref|PRIMARY|t2.t1_id|1]"},
		{"EXPLAIN SELECT 1", "[1|SIMPLE|NULL|NULL|NULL|NULL|NULL]"},
	} {
		r, err := query(t, db, c.q)
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if len(r.cols) != 12 || !strings.HasPrefix(r.cols[0], "id ") || !strings.HasPrefix(r.cols[11], "Extra ") {
			t.Errorf("%s: columns %v", c.q, r.cols)
		}
		var rows []string
		for _, row := range r.rows {
			f := strings.Split(row, "|")
			// id, select_type, table, type, key, ref, rows
			rows = append(rows, strings.Join([]string{f[0], f[1], f[2], f[4], f[6], f[8], f[9]}, "|"))
		}
		if got := fmt.Sprint(rows); got != c.want {
			t.Errorf("%s = %s, want %s", c.q, got, c.want)
		}
	}
}

// LOAD DATA reads quoted fields, doubled quotes and escapes as MySQL does.
func TestLoadDataEnclosedFields(t *testing.T) {
	srv, open := startServer(t)
	file := filepath.Join(StateDir(srv.cfg.Root), fileDirName, "items.csv")
	if err := os.WriteFile(file, []byte("id,name,price\n10,alpha,1.50\n11,\"be,ta\",2.50\n12,\"say \"\"hi\"\"\",\\N\n13,\"a\\\\b\",3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE l",
		"CREATE TABLE l.items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(5,2))",
		"LOAD DATA INFILE '" + file + "' INTO TABLE l.items FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\n' IGNORE 1 LINES",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r, err := query(t, db, "SELECT id, name, price FROM l.items ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(r.rows), `[10|alpha|1.50 11|be,ta|2.50 12|say "hi"|NULL 13|a\b|3.00]`; got != want {
		t.Errorf("loaded %s, want %s", got, want)
	}
}

// ALTER TABLE … AFTER a column named like a parser keyword (name, status),
// which MySQL accepts: the name is quoted before parsing.
func TestQuoteAfterColumn(t *testing.T) {
	for in, want := range map[string]string{
		"ALTER TABLE c ADD COLUMN age INT AFTER name":                      "ALTER TABLE c ADD COLUMN age INT AFTER `name`",
		"alter table c add a int after status, add b int after `x`":        "alter table c add a int after `status`, add b int after `x`",
		"ALTER TABLE c ADD d INT COMMENT 'after name' AFTER id":            "ALTER TABLE c ADD d INT COMMENT 'after name' AFTER `id`",
		"ALTER TABLE c ADD hereafter INT, ADD crafter INT AFTER hereafter": "ALTER TABLE c ADD hereafter INT, ADD crafter INT AFTER `hereafter`",
	} {
		if got := quoteAfterColumn(in); got != want {
			t.Errorf("quoteAfterColumn(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}
