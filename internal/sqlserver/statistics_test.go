package sqlserver

import "testing"

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
