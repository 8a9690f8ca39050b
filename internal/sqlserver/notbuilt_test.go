package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Statements MySQL knows and Miraj does not answer are refused as not
// supported (1235), not as syntax errors (1064); their neighbours work
// (CREATE TABLE function_t, CREATE PROCEDURE, stored functions as dumps
// write them).
func TestNotBuiltStatements(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE nb", "CREATE TABLE nb.t (id INT PRIMARY KEY) COMMENT 'one'")
	for _, q := range []string{"SHOW ENGINE INNODB STATUS", "show engine innodb mutex", "SHOW PROFILES", "SHOW PROFILE CPU FOR QUERY 1", "HELP 'select'",
		"CREATE AGGREGATE FUNCTION g RETURNS STRING SONAME 'g.so'",
		"ALTER TABLE nb.t COMMENT 'two'", "alter table nb.t add column z int, comment = \"three\"", "ALTER TABLE `nb`.`t` ENGINE=InnoDB, COMMENT='q'"} {
		_, err := db.Exec(q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 || !strings.Contains(me.Message, "doesn't yet support") {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	// No binary log: 1381, as MySQL's with log_bin OFF; SHOW BINLOG
	// EVENTS has no rows (§17.13.2, binlog_stmt.go).
	for _, q := range []string{"SHOW BINARY LOGS", "show master logs"} {
		if _, err := db.Exec(q); mysqlErr(err) != "1381 HY000 You are not using binary logging" {
			t.Errorf("%s: %v, want 1381", q, err)
		}
	}
	if rows, err := db.Query("SHOW BINLOG EVENTS IN 'x' LIMIT 2"); err != nil || rows.Next() {
		t.Errorf("SHOW BINLOG EVENTS without a binary log: %v, want no rows", err)
	} else {
		rows.Close()
	}
	// A column's comment is a column's: the table's comment stays.
	execAll(t, db, "ALTER TABLE nb.t ADD COLUMN c INT COMMENT 'col', ADD COLUMN d INT")
	var tableComment string
	if err := db.QueryRow("SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'nb' AND TABLE_NAME = 't'").Scan(&tableComment); err != nil || tableComment != "one" {
		t.Errorf("table comment %q (%v), want one", tableComment, err)
	}
	execAll(t, db, "CREATE TABLE nb.function_t (a INT)", "CREATE PROCEDURE nb.function1() SELECT 1", "DROP PROCEDURE nb.function1", "DROP TABLE nb.function_t",
		"CREATE FUNCTION nb.f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1", "DROP FUNCTION nb.f")
	execAll(t, open("root", "", "nb"), "CREATE DEFINER=`root`@`localhost` FUNCTION `f`(x INT) RETURNS INT RETURN x", "DROP FUNCTION f",
		"/*!50003 CREATE*/ /*!50020 DEFINER=`root`@`localhost`*/ /*!50003 FUNCTION `f`(x int) RETURNS int RETURN x */",
		"/*!50003 DROP FUNCTION IF EXISTS `f` */", "/*!50003 DROP FUNCTION IF EXISTS `f` */")
	var engine, support, comment string
	var tx, xa, sp any
	if err := db.QueryRow("SHOW ENGINES").Scan(&engine, &support, &comment, &tx, &xa, &sp); err != nil {
		t.Errorf("SHOW ENGINES: %v", err)
	}
}

// CHECK, REPAIR and OPTIMIZE TABLE take MySQL's options (mariadb-check
// --check-upgrade sends FOR UPGRADE); CREATE INDEX takes ALGORITHM and LOCK
// as ALTER TABLE does.
func TestMaintenanceAndIndexOptions(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE m", "CREATE TABLE m.t (id INT PRIMARY KEY, v INT)")
	for _, q := range []string{"CHECK TABLE m.t FOR UPGRADE", "CHECK TABLE m.t QUICK FAST", "OPTIMIZE NO_WRITE_TO_BINLOG TABLE m.t", "REPAIR LOCAL TABLE m.t EXTENDED"} {
		var table, op, typ, text string
		if err := db.QueryRow(q).Scan(&table, &op, &typ, &text); err != nil || table != "m.t" || text != "OK" {
			t.Errorf("%s: %s %s %s %s (%v)", q, table, op, typ, text, err)
		}
	}
	execAll(t, db, "CREATE INDEX iv ON m.t (v) ALGORITHM=INPLACE LOCK=NONE", "CREATE UNIQUE INDEX iu ON m.t (id, v) LOCK = SHARED ALGORITHM = DEFAULT")
	var n int
	if err := db.QueryRow("SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'm' AND TABLE_NAME = 't'").Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d indexes (%v), want 3", n, err)
	}
}

// SHOW OPEN TABLES lists every table (all are held in memory); In_use
// counts table locks (TestTableLocks).
func TestShowOpenTables(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE o1", "CREATE DATABASE o2", "CREATE TABLE o1.a (id INT PRIMARY KEY)", "CREATE TABLE o1.b (id INT PRIMARY KEY)",
		"CREATE TABLE o2.a (id INT PRIMARY KEY)", "CREATE VIEW o1.v AS SELECT id FROM o1.a")
	for q, want := range map[string]string{
		"SHOW OPEN TABLES FROM o1":                                    "o1 a 0 0;o1 b 0 0;",
		"show open tables in `o2` like 'a%'":                          "o2 a 0 0;",
		"SHOW OPEN TABLES LIKE 'a'":                                   "o1 a 0 0;o2 a 0 0;",
		"SHOW OPEN TABLES FROM o1 WHERE `Table` = 'b' AND In_use = 0": "o1 b 0 0;",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		got := ""
		for rows.Next() {
			var d, tb string
			var inUse, locked int
			if err := rows.Scan(&d, &tb, &inUse, &locked); err != nil {
				t.Fatal(err)
			}
			got += fmt.Sprintf("%s %s %d %d;", d, tb, inUse, locked)
		}
		rows.Close()
		if got != want || strings.Join(cols, ",") != "Database,Table,In_use,Name_locked" {
			t.Errorf("%s: %v %q, want %q", q, cols, got, want)
		}
	}
}

// CREATE TABLE says what it does not carry out (ENGINE other than InnoDB:
// 1266, as MySQL's substitution; PARTITION BY: 1235); SHOW ERRORS lists the
// previous statement's error; FULLTEXT is 1214.
func TestTableOptionsAndShowErrors(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	c := dbConn(t, db)
	if _, err := c.ExecContext(ctx, "CREATE DATABASE o"); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"CREATE TABLE o.e (id INT PRIMARY KEY) ENGINE=MyISAM":                           "Warning|1266|Using storage engine InnoDB for table 'e'",
		"CREATE TABLE o.p (id INT PRIMARY KEY) PARTITION BY HASH(id) PARTITIONS 4":      "Warning|1235|PARTITION BY is not used: Miraj stores table 'p' whole",
		"CREATE TABLE o.i (id INT PRIMARY KEY) ENGINE = InnoDB DEFAULT CHARSET=utf8mb4": "",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := warnings(t, c); got != want {
			t.Errorf("%s: warnings %q, want %q", q, got, want)
		}
	}
	if _, err := c.ExecContext(ctx, "CREATE TABLE o.f (id INT PRIMARY KEY, s TEXT, FULLTEXT KEY ft (s))"); mysqlErr(err) != "1214 HY000 The used table type doesn't support FULLTEXT indexes" {
		t.Errorf("FULLTEXT: %v", err)
	}
	if _, err := c.ExecContext(ctx, "USE o"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "SELECT * FROM nope"); err == nil {
		t.Fatal("SELECT of a missing table succeeded")
	}
	r, err := query(t, c, "SHOW ERRORS")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.rows, "; "); got != "Error|1146|Table 'o.nope' doesn't exist" {
		t.Fatalf("SHOW ERRORS after a failed statement: %q", got)
	}
	if r, err := query(t, c, "SHOW ERRORS LIMIT 0"); err != nil || len(r.rows) != 0 {
		t.Fatalf("SHOW ERRORS LIMIT 0: %v %v", r, err)
	}
	if _, err := c.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if r, err := query(t, c, "SHOW ERRORS"); err != nil || len(r.rows) != 0 {
		t.Fatalf("SHOW ERRORS after a statement that succeeded: %v %v", r, err)
	}
}
