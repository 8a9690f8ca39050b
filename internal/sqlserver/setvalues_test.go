package sqlserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// A time zone or locale MySQL does not know is refused when it is set
// (1298, 1649), and the variable keeps its value; one it knows is taken.
// Before, an unknown time zone was stored and every later NOW() failed
// with 1105. The codes that MariaDB shares are in test/diff's corpus
// (errors.sql); these are MySQL 8's alone or Miraj's.
func TestSetTimeZoneAndLocale(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	ctx := context.Background()
	code := func(q string) int {
		t.Helper()
		_, err := c.ExecContext(ctx, q)
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return int(me.Number)
		}
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return 0
	}
	value := func(q string) string {
		t.Helper()
		var s string
		if err := c.QueryRowContext(ctx, q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s
	}
	for q, want := range map[string]int{
		"SET time_zone = '+05:30'":       0,
		"SET time_zone = 'Mars/Olympus'": 1298,
		"SET time_zone = '+14:01'":       1298,
		"SET time_zone = '-14:00'":       1298,
		"SET time_zone = '+03:60'":       1298,
		"SET time_zone = ''":             1298,
		"SET lc_time_names = 'xx_YY'":    1649,
	} {
		if got := code(q); got != want {
			t.Errorf("%s: error %d, want %d", q, got, want)
		}
	}
	if tz := value("SELECT @@time_zone"); tz != "+05:30" {
		t.Errorf("after the refused SETs @@time_zone = %q, want +05:30", tz)
	}
	for _, tz := range []string{"+14:00", "-13:59", "Europe/Paris", "UTC", "SYSTEM"} {
		if got := code("SET time_zone = '" + tz + "'"); got != 0 {
			t.Errorf("SET time_zone = '%s': error %d", tz, got)
		}
		if now := value("SELECT NOW()"); now == "" {
			t.Errorf("time_zone %s: NOW() empty", tz)
		}
	}
	if l := value("SELECT @@lc_time_names"); l != "en_US" {
		t.Errorf("default @@lc_time_names = %q, want en_US (MySQL's)", l)
	}
	// A locale MySQL knows is set, and warns that it is not used.
	if got := code("SET lc_time_names = 'de_DE'"); got != 0 {
		t.Fatalf("SET lc_time_names = 'de_DE': error %d", got)
	}
	var lvl, msg string
	var n int
	if err := c.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&lvl, &n, &msg); err != nil || n != 1235 || !strings.Contains(msg, "de_DE") {
		t.Errorf("warning after SET lc_time_names = 'de_DE': %d %q %v", n, msg, err)
	}
	if got := code("SET lc_time_names = 'en_US'"); got != 0 {
		t.Fatalf("SET lc_time_names = 'en_US': error %d", got)
	}
	var warnings int
	if err := c.QueryRowContext(ctx, "SELECT @@warning_count").Scan(&warnings); err != nil || warnings != 0 {
		t.Errorf("SET lc_time_names = 'en_US': %d warnings, %v", warnings, err)
	}
}

// MySQL 8's codes where MariaDB has others (so not in the differential
// corpus): 1824 for a foreign key to a missing table, 1231 for a number
// beyond sql_mode's modes, 1232, 1410 for a GRANT to a missing account,
// 3141's SQLSTATE.
func TestSetAndForeignKeyErrorsAreMySQLs(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	ctx := context.Background()
	connExecAll(t, c, "CREATE DATABASE fkm", "USE fkm")
	for q, want := range map[string]string{
		"CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES nosuch (id))":    "Error 1824 (HY000): Failed to open the referenced table 'nosuch'",
		"CREATE TABLE c2 (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES `NoSuch` (id))": "Error 1824 (HY000): Failed to open the referenced table 'NoSuch'",
		"INSERT INTO nosuch VALUES (1)":                 "Error 1146 (42S02): Table 'fkm.nosuch' doesn't exist",
		"SET sql_mode = 7777777777":                     "Error 1231 (42000): Variable 'sql_mode' can't be set to the value of '7777777777'",
		"SET max_execution_time = 'abc'":                "Error 1232 (42000): Incorrect argument type to variable 'max_execution_time'",
		"SET max_execution_time = 'NULL'":               "Error 1232 (42000): Incorrect argument type to variable 'max_execution_time'",
		"SET sql_select_limit = NULL":                   "Error 1232 (42000): Incorrect argument type to variable 'sql_select_limit'",
		"SET sql_select_limit = 1.5":                    "Error 1232 (42000): Incorrect argument type to variable 'sql_select_limit'",
		"SET autocommit = NULL":                         "Error 1231 (42000): Variable 'autocommit' can't be set to the value of 'NULL'",
		"GRANT SELECT ON fkm.* TO nosuchuser@localhost": "Error 1410 (42000): You are not allowed to create a user with GRANT",
		"SELECT JSON_EXTRACT('{bad', '$.a')":            "Error 3141 (22032): Invalid JSON text in argument 1 to function json_extract: \"{bad\"",
	} {
		_, err := c.ExecContext(ctx, q)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", q, err, want)
		}
	}
}

// A value an ENUM or SET column does not list is MySQL's strict 1265,
// naming the column and the row, prepared or not (test/diff's corpus
// compares the text statements with MariaDB).
func TestEnumAndSetValuesNotListed(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	ctx := context.Background()
	connExecAll(t, c, "CREATE DATABASE esd", "USE esd", "CREATE TABLE es (id INT PRIMARY KEY, a ENUM('x','y'), s SET('x','y'))")
	for _, tc := range []struct {
		q    string
		args []any
		want string
	}{
		{"INSERT INTO es VALUES (?, ?, ?)", []any{1, "z", "x"}, "Error 1265 (01000): Data truncated for column 'a' at row 1"},
		{"INSERT INTO es VALUES (?, ?, ?)", []any{1, "x", "x,q"}, "Error 1265 (01000): Data truncated for column 's' at row 1"},
		{"INSERT INTO es VALUES (?, 'x', 'x'), (?, 'y', ?)", []any{1, 2, "w"}, "Error 1265 (01000): Data truncated for column 's' at row 2"},
		{"INSERT INTO es (id, a) VALUES (1, 'q')", nil, "Error 1265 (01000): Data truncated for column 'a' at row 1"},
	} {
		_, err := c.ExecContext(ctx, tc.q, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %v:\n got %v\nwant %s", tc.q, tc.args, err, tc.want)
		}
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM es").Scan(&n); err != nil || n != 0 {
		t.Errorf("rows after the refused inserts: %d, %v", n, err)
	}
}
