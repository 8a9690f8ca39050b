package sqlserver

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// rowsAsText runs q on db (with args) and returns its column names joined
// by commas and its rows, each value as text (NULL for NULL) joined by |.
func rowsAsText(t *testing.T, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string, args ...any) (string, []string) {
	t.Helper()
	r, err := query(t, db, q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(r.names, ","), r.rows
}

// SHOW FULL COLUMNS gives each column's own collation (the table's
// default where none was named; NULL for binary and non-string columns)
// and the privileges the user has on it, its Type without the character
// set; SHOW TABLE STATUS names its last column Comment and fills it. ORMs
// read these (Rails takes a column whose collation does not end in _ci
// for case sensitive).
func TestShowFullColumnsAndTableStatus(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	execAll(t, root, "CREATE DATABASE sc",
		"CREATE TABLE sc.t (id INT PRIMARY KEY, name VARCHAR(20), e ENUM('x','y'), b VARBINARY(4), c CHAR(3) COLLATE utf8mb4_bin, l VARCHAR(5) CHARACTER SET latin1) DEFAULT CHARSET=utf8mb4 COMMENT='people'",
		"CREATE USER reader@'%'", "GRANT SELECT, INSERT ON sc.t TO reader@'%'")
	want := []string{
		"id|int|NULL|NO|PRI|NULL||%s|",
		"name|varchar(20)|utf8mb4_0900_ai_ci|YES||NULL||%s|",
		"e|enum('x','y')|utf8mb4_0900_ai_ci|YES||NULL||%s|",
		"b|varbinary(4)|NULL|YES||NULL||%s|",
		"c|char(3)|utf8mb4_bin|YES||NULL||%s|",
		"l|varchar(5)|latin1_swedish_ci|YES||NULL||%s|",
	}
	for _, c := range []struct {
		db    *sql.DB
		privs string
	}{{root, "select,insert,update,references"}, {open("reader", "", ""), "select,insert"}} {
		_, rows := rowsAsText(t, c.db, "SHOW FULL COLUMNS FROM sc.t")
		if len(rows) != len(want) {
			t.Fatalf("SHOW FULL COLUMNS: %q", rows)
		}
		for i, w := range want {
			if w = strings.Replace(w, "%s", c.privs, 1); rows[i] != w {
				t.Errorf("SHOW FULL COLUMNS row %d: %s, want %s", i, rows[i], w)
			}
		}
	}
	cols, rows := rowsAsText(t, root, "SHOW TABLE STATUS FROM sc")
	if !strings.HasSuffix(cols, ",Create_options,Comment") || len(rows) != 1 {
		t.Fatalf("SHOW TABLE STATUS: %s %q", cols, rows)
	}
	f := strings.Split(rows[0], "|")
	if f[3] != "Dynamic" || f[16] != "" || f[17] != "people" {
		t.Errorf("SHOW TABLE STATUS: Row_format %s, Create_options %q, Comment %q; want Dynamic, empty, people", f[3], f[16], f[17])
	}
}
