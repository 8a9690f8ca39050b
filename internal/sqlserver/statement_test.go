package sqlserver

import (
	"fmt"
	"testing"
)

// A statement reads the tables it writes as they were when it began, except
// for the foreign key checks between its own rows.
func TestStatementReadsItsStartState(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE s",
		"CREATE TABLE s.a (id INT PRIMARY KEY, n INT)",
		"CREATE TABLE s.b (id INT PRIMARY KEY, a_id INT)",
		"INSERT INTO s.a VALUES (1, 0), (2, 0)",
		"INSERT INTO s.b VALUES (10, 1), (11, 1), (12, 1), (13, 2)",
		// Each row of a is updated once, however many rows of b join it.
		"UPDATE s.a JOIN s.b ON s.a.id = s.b.a_id SET s.a.n = s.a.n + 1",
		// INSERT … SELECT from the same table reads the rows as they were.
		"CREATE TABLE s.c (id INT PRIMARY KEY AUTO_INCREMENT, v INT)",
		"INSERT INTO s.c (v) VALUES (1), (2)",
		"INSERT INTO s.c (v) SELECT v FROM s.c",
		// A row may reference a row inserted earlier by the same statement.
		"CREATE TABLE s.tree (id INT PRIMARY KEY, parent INT, FOREIGN KEY (parent) REFERENCES s.tree (id))",
		"INSERT INTO s.tree VALUES (1, NULL), (2, 1), (3, 2)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	check := func(q, want string) {
		t.Helper()
		r, err := query(t, db, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(r.rows); got != want {
			t.Fatalf("%s = %s, want %s", q, got, want)
		}
	}
	check("SELECT id, n FROM s.a ORDER BY id", "[1|1 2|1]")
	check("SELECT COUNT(*), SUM(v) FROM s.c", "[4|6]")
	check("SELECT COUNT(*) FROM s.tree", "[3]")
	if _, err := db.Exec("INSERT INTO s.tree VALUES (5, 4), (4, NULL)"); err == nil {
		t.Fatal("a row referencing a later row of the same statement was accepted")
	}
}
