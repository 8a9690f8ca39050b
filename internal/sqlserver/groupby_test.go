package sqlserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// ONLY_FULL_GROUP_BY as MySQL 8 checks it: a grouped query selects (and
// orders by) only what its grouping determines, keys and WHERE equalities
// included; without the mode every query runs.
func TestOnlyFullGroupBy(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE gb",
		"CREATE TABLE gb.e (id INT PRIMARY KEY, dept INT, name VARCHAR(9), badge VARCHAR(9) NOT NULL, UNIQUE KEY (badge))",
		"CREATE TABLE gb.d (id INT PRIMARY KEY, title VARCHAR(9))",
		"INSERT INTO gb.e VALUES (1, 1, 'ann', 'b1'), (2, 1, 'bob', 'b2'), (3, 2, 'cy', 'b3')",
		"INSERT INTO gb.d VALUES (1, 'dev'), (2, 'ops')")
	c := dbConn(t, db)
	for _, tc := range []struct{ q, err string }{
		{"SELECT dept, COUNT(*) FROM gb.e GROUP BY dept", ""},
		{"SELECT id, name, COUNT(*) FROM gb.e GROUP BY id", ""},                           // the primary key
		{"SELECT badge, name FROM gb.e GROUP BY badge", ""},                               // a unique key of NOT NULL columns
		{"SELECT * FROM gb.e GROUP BY id", ""},                                            //
		{"SELECT e.name, d.title FROM gb.e JOIN gb.d ON d.id = e.dept GROUP BY e.id", ""}, // e.id → e.dept = d.id → d.title
		{"SELECT name, COUNT(*) FROM gb.e WHERE name = 'ann' GROUP BY dept", ""},          // a constant
		{"SELECT UPPER(name), COUNT(*) FROM gb.e GROUP BY UPPER(name)", ""},
		{"SELECT name AS n, COUNT(*) FROM gb.e GROUP BY n", ""},
		{"SELECT dept, ANY_VALUE(name) FROM gb.e GROUP BY dept", ""},
		{"SELECT dept, (SELECT MAX(title) FROM gb.d) FROM gb.e GROUP BY dept", ""},
		{"SELECT name, COUNT(*) FROM gb.e GROUP BY dept",
			"Error 1055 (42000): Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'gb.e.name' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"},
		{"SELECT * FROM gb.e GROUP BY dept",
			"Error 1055 (42000): Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'gb.e.id' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"},
		{"SELECT dept, COUNT(*) FROM gb.e GROUP BY dept ORDER BY name",
			"Error 1055 (42000): Expression #1 of ORDER BY clause is not in GROUP BY clause and contains nonaggregated column 'gb.e.name' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"},
		{"SELECT COUNT(*), x.name FROM gb.e AS x",
			"Error 1140 (42000): In aggregated query without GROUP BY, expression #2 of SELECT list contains nonaggregated column 'gb.x.name'; this is incompatible with sql_mode=only_full_group_by"},
		{"SELECT d.title, COUNT(*) FROM gb.e JOIN gb.d ON d.id = e.dept GROUP BY e.dept", ""}, // e.dept = d.id → d.title
		{"SELECT d.title, COUNT(*) FROM gb.e JOIN gb.d USING (id) GROUP BY e.id", ""},
		{"SELECT d.title, COUNT(*) FROM gb.e NATURAL JOIN gb.d GROUP BY e.id", ""},
		{"SELECT d.title, COUNT(*) FROM gb.e JOIN gb.d ON d.id >= e.dept GROUP BY e.dept",
			"Error 1055 (42000): Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'gb.d.title' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"},
		{"SELECT id FROM gb.d WHERE id IN (SELECT name FROM gb.e GROUP BY dept)",
			"Error 1055 (42000): Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'gb.e.name' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"},
	} {
		_, err := query(t, c, tc.q)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.err {
			t.Errorf("%s:\n got %s\nwant %s", tc.q, got, tc.err)
		}
	}
	if _, err := c.ExecContext(context.Background(), "SET sql_mode = 'STRICT_TRANS_TABLES'"); err != nil {
		t.Fatal(err)
	}
	r, err := query(t, c, "SELECT name, COUNT(*) FROM gb.e WHERE dept = 2 GROUP BY dept")
	if err != nil || strings.Join(r.rows, " ") != "cy|1" {
		t.Errorf("without ONLY_FULL_GROUP_BY: %v %v, want cy|1", r.rows, err)
	}
}

// GROUP BY a column no table of the query has is the planner's 1054, not
// the ONLY_FULL_GROUP_BY check's 1055 about the select list; qualified
// with its table too.
func TestGroupByUnknownColumn(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	connExecAll(t, c, "CREATE DATABASE gbu", "USE gbu", "CREATE TABLE p (id INT PRIMARY KEY, v INT)")
	for _, q := range []string{"SELECT id FROM p GROUP BY nosuch", "SELECT * FROM p GROUP BY nosuch", "SELECT id FROM p AS a GROUP BY a.nosuch"} {
		_, err := c.ExecContext(context.Background(), q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1054 {
			t.Errorf("%s: %v, want 1054", q, err)
		}
	}
	_, err := c.ExecContext(context.Background(), "SELECT id FROM p GROUP BY v")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1055 {
		t.Errorf("SELECT id FROM p GROUP BY v: %v, want 1055", err)
	}
}
