package sqlserver

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/miraj-db/miraj/internal/storage"
)

// TestTimeDigits: TIME(n) columns keep n digits after the seconds, rounded
// half away from zero as MySQL 8 rounds them, in INSERT, UPDATE, ON
// DUPLICATE KEY UPDATE and ALTER TABLE ADD COLUMN; results carry the
// digits (the column's decimals and the text), comparisons see the stored
// value, and SHOW CREATE TABLE and information_schema show them. A plain
// TIME keeps whole seconds and is shown as time.
func TestTimeDigits(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE DATABASE p")
	exec("CREATE TABLE p.t (id INT PRIMARY KEY, a TIME, b TIME(6), c TIME(3), d TIME(1), z TIME(0))")
	exec("INSERT INTO p.t VALUES (1, '12:34:56.789', '12:34:56.789', '12:34:56.7896', '-12:34:56.75', '00:00:00.5')")
	exec("INSERT INTO p.t VALUES (2, '12:34:56', '12:34:56', '12:34:56', '838:59:59', '1:2:3')")
	exec("UPDATE p.t SET c = '01:02:03.4567' WHERE id = 2")
	exec("INSERT INTO p.t (id, d) VALUES (2, '1:00:00') ON DUPLICATE KEY UPDATE d = '10:00:00.04'")
	exec("ALTER TABLE p.t ADD COLUMN e TIME(2) AFTER id")
	exec("UPDATE p.t SET e = '10:00:00.125'")
	exec("ALTER TABLE p.t MODIFY COLUMN z TIME(4)")
	exec("UPDATE p.t SET z = '00:00:01.00005' WHERE id = 2")

	check := func(q string, want ...string) {
		t.Helper()
		r, err := query(t, db, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := strings.Join(r.rows, "\n"); got != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %s\nwant %s", q, got, strings.Join(want, "\n"))
		}
	}
	check("SELECT * FROM p.t ORDER BY id",
		"1|10:00:00.13|12:34:57|12:34:56.789000|12:34:56.790|-12:34:56.8|00:00:01.0000",
		"2|10:00:00.13|12:34:56|12:34:56.000000|01:02:03.457|10:00:00.0|00:00:01.0001")
	check("SELECT id FROM p.t WHERE c = '12:34:56.79'", "1")
	check("SELECT id FROM p.t WHERE c > '12:34:56.789' AND d < 0", "1")
	check("SELECT id FROM p.t ORDER BY d", "1", "2")

	// The binary protocol (a statement with a parameter) sends the same
	// digits: go-sql-driver writes a binary TIME with its column's decimals.
	r, err := query(t, db, "SELECT c, d, z FROM p.t WHERE id > ? ORDER BY id", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(r.rows, "\n"), "12:34:56.790|-12:34:56.8|00:00:01.0000\n01:02:03.457|10:00:00.0|00:00:01.0001"; got != want {
		t.Errorf("binary protocol:\n got %s\nwant %s", got, want)
	}

	r, err = query(t, db, "SELECT a, b, c, d, e, z FROM p.t WHERE id = 1")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"dec=0,0", "dec=6,6", "dec=3,3", "dec=1,1", "dec=2,2", "dec=4,4"} {
		if !strings.Contains(r.cols[i], want) {
			t.Errorf("column %s: %s, want %s", r.names[i], r.cols[i], want)
		}
	}

	r, err = query(t, db, "SHOW CREATE TABLE p.t")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`a` time DEFAULT NULL", "`b` time(6) DEFAULT NULL", "`c` time(3) DEFAULT NULL",
		"`d` time(1) DEFAULT NULL", "`e` time(2) DEFAULT NULL", "`z` time(4) DEFAULT NULL"} {
		if !strings.Contains(r.rows[0], want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, r.rows[0])
		}
	}
	check("SELECT COLUMN_NAME, COLUMN_TYPE, DATETIME_PRECISION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'p' AND DATA_TYPE = 'time' ORDER BY ORDINAL_POSITION",
		"e|time(2)|2", "a|time|0", "b|time(6)|6", "c|time(3)|3", "d|time(1)|1", "z|time(4)|4")

	// Defaults keep the column's digits, and a copy of the table (LIKE,
	// AS SELECT) its types and defaults.
	exec("CREATE TABLE p.dft (id INT PRIMARY KEY, c TIME(3) DEFAULT '00:00:01.5', d TIME(1) NOT NULL DEFAULT '10:00:00.25')")
	exec("INSERT INTO p.dft (id) VALUES (1)")
	exec("CREATE TABLE p.dlike LIKE p.dft")
	exec("CREATE TABLE p.dsel AS SELECT * FROM p.dft")
	for _, tbl := range []string{"dft", "dlike", "dsel"} {
		r, err = query(t, db, "SHOW CREATE TABLE p."+tbl)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"`c` time(3) DEFAULT '00:00:01.500'", "`d` time(1) NOT NULL DEFAULT '10:00:00.3'"} {
			if !strings.Contains(r.rows[0], want) {
				t.Errorf("SHOW CREATE TABLE %s lacks %q:\n%s", tbl, want, r.rows[0])
			}
		}
	}
	check("SELECT * FROM p.dsel", "1|00:00:01.500|10:00:00.3")
	check("SELECT COLUMN_DEFAULT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'p' AND TABLE_NAME = 'dft' AND COLUMN_NAME = 'c'", "00:00:01.500")

	// ALTER … MODIFY rounds the rows to the new digits, to whole seconds
	// for a TIME.
	exec("CREATE TABLE p.m (id INT PRIMARY KEY, c TIME(3))")
	exec("INSERT INTO p.m VALUES (1, '12:34:56.789'), (2, '-00:00:00.05')")
	exec("ALTER TABLE p.m MODIFY c TIME(1)")
	check("SELECT c FROM p.m ORDER BY id", "12:34:56.8", "-00:00:00.1")
	exec("ALTER TABLE p.m MODIFY c TIME")
	check("SELECT c FROM p.m ORDER BY id", "12:34:57", "00:00:00")

	// Where the digits would be lost, TIME(n) is refused (1235); a length
	// beyond 6 is 1426.
	for _, q := range []string{
		"PREPARE s FROM 'CREATE TABLE p.prep (c TIME(3))'",
		"CREATE PROCEDURE p.pr() BEGIN CREATE TABLE p.inproc (c TIME(6)); END",
		"CREATE PROCEDURE p.pr() BEGIN IF 1 THEN ALTER TABLE p.t ADD COLUMN f TIME(2); END IF; END",
	} {
		_, err := db.Exec(q)
		if me, ok := err.(*mysql.MySQLError); !ok || me.Number != 1235 {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	exec("CREATE PROCEDURE p.pr() BEGIN CREATE TABLE p.inproc (c TIME); END")
	if _, err := db.Exec("CREATE TABLE p.bad (tm TIME(7))"); err == nil || err.(*mysql.MySQLError).Number != 1426 {
		t.Errorf("TIME(7): %v, want 1426", err)
	}
}

// TestTimeDigitsSurviveRestart: a TIME(n) column's digits and values come
// back after a restart, from the journal and from a checkpoint.
func TestTimeDigitsSurviveRestart(t *testing.T) {
	keepServerDefaults(t)
	root := t.TempDir()
	start := func(root string) (*sql.DB, func()) {
		s, err := New(Config{Root: root, Policy: storage.SaveCommit})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		c := mysql.NewConfig()
		c.User, c.Net, c.Addr = "root", "tcp", s.Addr().String()
		c.AllowNativePasswords = true
		db, err := sql.Open("mysql", c.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		return db, func() { db.Close(); cancel(); <-done }
	}
	const sel = "SELECT id, c, d, CAST(c AS CHAR) FROM p.t ORDER BY id"
	want := []string{"1|12:34:56.790|-00:00:00.1|12:34:56.790", "2|838:59:59.000|00:00:01.0|838:59:59.000"}
	check := func(db *sql.DB, when string) {
		t.Helper()
		r, err := query(t, db, sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(r.rows, "\n"); got != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %s\nwant %s", when, got, strings.Join(want, "\n"))
		}
		r, err = query(t, db, "SHOW CREATE TABLE p.t")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.rows[0], "`c` time(3)") || !strings.Contains(r.rows[0], "`d` time(1)") {
			t.Errorf("%s: %s", when, r.rows[0])
		}
	}
	db, stop := start(root)
	for _, q := range []string{
		"CREATE DATABASE p",
		"CREATE TABLE p.t (id INT PRIMARY KEY, c TIME(3), d TIME(1))",
		"INSERT INTO p.t VALUES (1, '12:34:56.7896', '-00:00:00.05'), (2, '838:59:59', '00:00:00.96')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	check(db, "before the restart")
	stop() // a checkpoint is written at shutdown
	db, stop = start(root)
	check(db, "after a restart from the checkpoint")
	// A row written after the checkpoint comes back from the journal: the
	// data folder is copied as it is once the commit is acknowledged (a
	// crash), and a server started on the copy.
	if _, err := db.Exec("UPDATE p.t SET c = '00:00:00.0004', d = '-00:00:01.25' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	want[0] = "1|00:00:00.000|-00:00:01.3|00:00:00.000"
	crashed := t.TempDir()
	if err := os.CopyFS(crashed, os.DirFS(root)); err != nil {
		t.Fatal(err)
	}
	stop()
	db, stop = start(crashed)
	defer stop()
	check(db, "after a restart from the journal")
}
