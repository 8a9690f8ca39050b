package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Errors applications test for, with MySQL's codes (they were 1105).
func TestApplicationErrorCodes(t *testing.T) {
	_, open := startServer(t)
	execAll(t, open("root", "", ""), "CREATE DATABASE ec")
	c := dbConn(t, open("root", "", "ec"))
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE p (id INT PRIMARY KEY)", "CREATE TABLE ch (id INT PRIMARY KEY, pid INT, CONSTRAINT fk_p FOREIGN KEY (pid) REFERENCES p (id))",
		"INSERT INTO p VALUES (1), (2)", "CREATE TRIGGER tr BEFORE INSERT ON ch FOR EACH ROW SET NEW.id = NEW.id"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, tc := range []struct {
		q    string
		want string
	}{
		{"TRUNCATE TABLE p", "1701 42000 Cannot truncate a table referenced in a foreign key constraint (`ec`.`ch`, CONSTRAINT `fk_p` FOREIGN KEY (`pid`) REFERENCES `ec`.`p` (`id`))"},
		{"CREATE TRIGGER tr BEFORE INSERT ON ch FOR EACH ROW SET NEW.id = NEW.id", "1359 HY000 Trigger already exists"},
		{"EXECUTE nosuch", "1243 HY000 Unknown prepared statement handler (nosuch) given to EXECUTE"},
		{"DEALLOCATE PREPARE nosuch", "1243 HY000 Unknown prepared statement handler (nosuch) given to DEALLOCATE PREPARE"},
		{"SELECT id INTO @x FROM p", "1172 42000 Result consisted of more than one row"},
		{"SELECT DATE '2026-02-30'", "1525 HY000 Incorrect DATE value: '2026-02-30'"},
	} {
		_, err := c.ExecContext(ctx, tc.q)
		if got := mysqlErr(err); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.q, got, tc.want)
		}
	}
}

// SHOW SCHEMAS is SHOW DATABASES, LIKE and WHERE included (1064 before).
func TestShowSchemasLike(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE schemas_a", "CREATE DATABASE schemas_b")
	for q, want := range map[string]string{
		"SHOW SCHEMAS LIKE 'schemas%'":                "Database (schemas%)|schemas_a;schemas_b",
		"show schemas where `Database` = 'schemas_b'": "Database|schemas_b",
	} {
		cols, out := rowsAsText(t, db, q)
		if got := cols + "|" + strings.Join(out, ";"); got != want {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
}

// DATE '…', TIME '…' and TIMESTAMP '…' are typed as MySQL types them (they
// were TEXT), keep their text as the column's name, and compute as dates.
func TestTypedDateLiterals(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	rows, err := db.Query("SELECT DATE '2026-03-01', TIME '10:11:12', TIMESTAMP '2026-03-01 10:11:12.5', DATE '2026-03-24' + INTERVAL 1 DAY, DATEDIFF(DATE '2026-03-01', DATE '2026-02-01')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var names, types []string
	for _, ct := range cts {
		names = append(names, ct.Name())
		types = append(types, ct.DatabaseTypeName())
	}
	if got := strings.Join(names, ","); got != "DATE '2026-03-01',TIME '10:11:12',TIMESTAMP '2026-03-01 10:11:12.5',DATE '2026-03-24' + INTERVAL 1 DAY,DATEDIFF(DATE '2026-03-01', DATE '2026-02-01')" {
		t.Errorf("names: %s", got)
	}
	if got := strings.Join(types, ","); got != "DATE,TIME,DATETIME,DATE,BIGINT" {
		t.Errorf("types: %s", got)
	}
	rows.Next()
	var d, tm, ts, plus string
	var diff int
	if err := rows.Scan(&d, &tm, &ts, &plus, &diff); err != nil {
		t.Fatal(err)
	}
	if d != "2026-03-01" || tm != "10:11:12" || ts != "2026-03-01 10:11:12.5" || plus != "2026-03-25" || diff != 28 {
		t.Errorf("values: %s %s %s %s %d", d, tm, ts, plus, diff)
	}
	var me *mysql.MySQLError
	if _, err := db.Exec("SELECT TIMESTAMP '2026-13-01 00:00:00'"); !errors.As(err, &me) || me.Number != 1525 {
		t.Errorf("an invalid TIMESTAMP literal: %v, want 1525", err)
	}
}

// NO_ZERO_DATE: a zero date is refused in a strict mode (1292), written
// with warning 1264 otherwise or with IGNORE; without the mode it is
// written silently.
func TestNoZeroDate(t *testing.T) {
	_, open := startServer(t)
	execAll(t, open("root", "", ""), "CREATE DATABASE nzd")
	c := dbConn(t, open("root", "", "nzd"))
	ctx := context.Background()
	run := func(q string) (string, string) {
		t.Helper()
		_, err := c.ExecContext(ctx, q)
		var warns []string
		if rows, qerr := c.QueryContext(ctx, "SHOW WARNINGS"); qerr == nil {
			for rows.Next() {
				var lvl, msg string
				var code int
				rows.Scan(&lvl, &code, &msg)
				if lvl == "Warning" {
					warns = append(warns, fmt.Sprintf("%d %s", code, msg))
				}
			}
			rows.Close()
		}
		if err == nil {
			return "", strings.Join(warns, ";")
		}
		return mysqlErr(err), strings.Join(warns, ";")
	}
	if e, _ := run("CREATE TABLE zd (id INT PRIMARY KEY, d DATE, dt DATETIME)"); e != "" {
		t.Fatal(e)
	}
	for _, tc := range []struct{ q, err, warn string }{
		{"SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ZERO_DATE'", "", ""},
		{"INSERT INTO zd VALUES (1, '0000-00-00', NULL)", "1292 22007 Incorrect date value: '0000-00-00' for column 'd' at row 1", ""},
		{"INSERT INTO zd VALUES (1, NULL, '0000-00-00 00:00:00')", "1292 22007 Incorrect datetime value: '0000-00-00 00:00:00' for column 'dt' at row 1", ""},
		{"INSERT IGNORE INTO zd VALUES (2, '0000-00-00', NULL)", "", "1264 Out of range value for column 'd' at row 1"},
		{"INSERT INTO zd VALUES (3, '2026-01-01', NULL)", "", ""},
		{"UPDATE zd SET d = '0000-00-00' WHERE id = 3", "1292 22007 Incorrect date value: '0000-00-00' for column 'd' at row 1", ""},
		{"SET SESSION sql_mode = 'NO_ZERO_DATE'", "", ""},
		{"UPDATE zd SET dt = '0000-00-00' WHERE id = 3", "", "1264 Out of range value for column 'dt' at row 1"},
		{"SET SESSION sql_mode = 'STRICT_TRANS_TABLES'", "", ""},
		{"INSERT INTO zd VALUES (4, '0000-00-00', NULL)", "", ""},
	} {
		e, w := run(tc.q)
		if e != tc.err || w != tc.warn {
			t.Errorf("%s: error %q warnings %q, want %q and %q", tc.q, e, w, tc.err, tc.warn)
		}
	}
}
