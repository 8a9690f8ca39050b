package sqlserver

import (
	"fmt"
	"strings"
	"testing"
)

// ANALYZE TABLE of an empty table answers OK (go-mysql-server's
// statistics divided by its zero rows), before and after it held rows.
func TestAnalyzeEmptyTable(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	if _, err := db.Exec("CREATE DATABASE an"); err != nil {
		t.Fatal(err)
	}
	db = open("root", "", "an")
	analyze := func() {
		t.Helper()
		var table, op, typ, text string
		if err := db.QueryRow("ANALYZE TABLE t").Scan(&table, &op, &typ, &text); err != nil || text != "OK" {
			t.Fatalf("ANALYZE TABLE t: %v %s", err, text)
		}
	}
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY (v))", "", "INSERT INTO t VALUES (1, 1), (2, 2)", "", "DELETE FROM t", ""} {
		if q == "" {
			analyze()
			continue
		}
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// ANALYZE TABLE of a qualified table runs without a current database, files
// the statistics under the table's own database, and names it db.table.
func TestAnalyzeQualifiedTable(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"CREATE DATABASE a1", "CREATE DATABASE a2", "CREATE TABLE a1.t (id INT PRIMARY KEY, v INT)", "INSERT INTO a1.t VALUES (1, 1), (2, 2)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, current := range []string{"", "a2"} {
		var table, op, typ, text string
		if err := open("root", "", current).QueryRow("ANALYZE TABLE a1.t").Scan(&table, &op, &typ, &text); err != nil || table != "a1.t" || text != "OK" {
			t.Fatalf("ANALYZE TABLE a1.t in database %q: %v %s %s", current, err, table, text)
		}
	}
	var schema string
	if err := db.QueryRow("SELECT DISTINCT schema_name FROM information_schema.column_statistics WHERE table_name = 't'").Scan(&schema); err != nil || schema != "a1" {
		t.Errorf("statistics of a1.t filed under %q (%v)", schema, err)
	}
}

// SHOW INDEX and information_schema.STATISTICS count the distinct values
// of each index prefix (go-mysql-server said 0), and count again once a
// tenth of the table has changed, or after ANALYZE TABLE.
func TestIndexCardinality(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	exec := func(qs ...string) { t.Helper(); execAll(t, db, qs...) }
	exec("CREATE DATABASE ca",
		"CREATE TABLE ca.t (id INT PRIMARY KEY, v INT, w VARCHAR(10), KEY k (v), KEY kc (v, w), UNIQUE KEY u (w))",
		"INSERT INTO ca.t VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, 2, NULL), (5, 3, NULL)",
		"CREATE TABLE ca.c (a INT, b INT, c INT, PRIMARY KEY (a, b))",
		"INSERT INTO ca.c VALUES (1, 1, 0), (1, 2, 0), (2, 1, 0)")
	show := func(table string) string {
		t.Helper()
		rows, err := db.Query("SHOW INDEX FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var tbl, key, col, collation, null, typ, comment, icomment, visible string
			var nonUnique, seq, card int
			var sub, packed, expr any
			if err := rows.Scan(&tbl, &nonUnique, &key, &seq, &col, &collation, &card, &sub, &packed, &null, &typ, &comment, &icomment, &visible, &expr); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s.%d %s %s %d", key, seq, col, collation, card))
		}
		return strings.Join(out, ", ")
	}
	stats := func(table string) string {
		t.Helper()
		rows, err := db.Query("SELECT index_name, seq_in_index, cardinality FROM information_schema.statistics WHERE table_schema = 'ca' AND table_name = ? ORDER BY index_name, seq_in_index", table)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var key string
			var seq, card int
			if err := rows.Scan(&key, &seq, &card); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s.%d %d", key, seq, card))
		}
		return strings.Join(out, ", ")
	}
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", what, got, want)
		}
	}
	// NULLs count as one value (u: a, b, c, NULL).
	check("SHOW INDEX FROM ca.t", show("ca.t"), "PRIMARY.1 id A 5, u.1 w A 4, k.1 v A 3, kc.1 v A 3, kc.2 w A 5")
	check("SHOW INDEX FROM ca.c", show("ca.c"), "PRIMARY.1 a A 2, PRIMARY.2 b A 3")
	check("STATISTICS of ca.t", stats("t"), "k.1 3, kc.1 3, kc.2 5, PRIMARY.1 5, u.1 4")

	// One row more than five is a fifth: counted again.
	exec("INSERT INTO ca.t VALUES (6, 4, 'd')")
	check("after an insert", show("ca.t"), "PRIMARY.1 id A 6, u.1 w A 5, k.1 v A 4, kc.1 v A 4, kc.2 w A 6")
	// Past ten rows, one update is less than a tenth: kept until ANALYZE.
	exec("INSERT INTO ca.t VALUES (7, 5, 'e'), (8, 6, 'f'), (9, 7, 'g'), (10, 8, 'h'), (11, 9, 'i')")
	check("after five inserts", show("ca.t"), "PRIMARY.1 id A 11, u.1 w A 10, k.1 v A 9, kc.1 v A 9, kc.2 w A 11")
	exec("UPDATE ca.t SET v = 1 WHERE id = 11")
	check("after an update", show("ca.t"), "PRIMARY.1 id A 11, u.1 w A 10, k.1 v A 9, kc.1 v A 9, kc.2 w A 11")
	exec("ANALYZE TABLE ca.t")
	check("after ANALYZE TABLE", show("ca.t"), "PRIMARY.1 id A 11, u.1 w A 10, k.1 v A 8, kc.1 v A 8, kc.2 w A 11")
	// An index re-created under its name over another column.
	exec("ALTER TABLE ca.t DROP INDEX k", "ALTER TABLE ca.t ADD INDEX k (w)")
	check("after re-creating k", show("ca.t"), "PRIMARY.1 id A 11, u.1 w A 10, kc.1 v A 8, kc.2 w A 11, k.1 w A 10")
	// A table dropped and created again with as many rows is counted anew.
	exec("DROP TABLE ca.c", "CREATE TABLE ca.c (a INT, b INT, c INT, PRIMARY KEY (a, b))", "INSERT INTO ca.c VALUES (1, 1, 0), (2, 2, 0), (3, 1, 0)")
	check("SHOW INDEX FROM ca.c created again", show("ca.c"), "PRIMARY.1 a A 3, PRIMARY.2 b A 3")
}
