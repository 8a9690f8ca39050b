package sqlserver

import (
	"fmt"
	"testing"
)

// A UNION removes the rows MySQL takes for the same under the columns'
// collation, and a union with a side that reads one row by its primary
// key returns all its rows (go-mysql-server's handler failed it: "result
// max1Row iterator returned more than one row").
func TestUnion(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE u", "CREATE TABLE u.w (id INT PRIMARY KEY, s VARCHAR(20))",
		"INSERT INTO u.w VALUES (1, 'apple'), (2, 'Apple'), (3, 'pear')",
		"CREATE TABLE u.b (s VARCHAR(20) COLLATE utf8mb4_bin)", "INSERT INTO u.b VALUES ('pear'), ('Pear')")
	for q, want := range map[string]string{
		"SELECT s FROM u.w WHERE id = 1 UNION ALL SELECT s FROM u.w WHERE id = 1":                                "[apple apple]",
		"SELECT s FROM u.w WHERE id = 3 UNION SELECT 'x'":                                                        "[pear x]",
		"SELECT s FROM u.w UNION SELECT s FROM u.w ORDER BY s":                                                   "[apple pear]",
		"SELECT s FROM u.w WHERE id < 3 UNION SELECT 'APPLE'":                                                    "[apple]",
		"SELECT s FROM u.w WHERE id = 3 UNION ALL SELECT 'x' UNION SELECT 'PEAR'":                                "[pear x]",
		"SELECT s FROM u.w UNION SELECT 'PEAR' UNION SELECT 'Zoo' ORDER BY s DESC LIMIT 2":                       "[Zoo pear]",
		"SELECT s FROM u.w UNION SELECT 'PEAR' UNION SELECT 'Zoo' ORDER BY s LIMIT 1 OFFSET 1":                   "[pear]",
		"SELECT s FROM u.b UNION SELECT s FROM u.b ORDER BY s":                                                   "[Pear pear]",
		"SELECT s FROM u.w INTERSECT SELECT 'APPLE'":                                                             "[apple]",
		"SELECT s FROM u.w EXCEPT SELECT 'APPLE'":                                                                "[pear]",
		"SELECT s FROM u.w WHERE id = 1 INTERSECT ALL (SELECT s FROM u.w WHERE id = 2 UNION ALL SELECT 'APPLE')": "[apple]",
		"SELECT s FROM u.w EXCEPT ALL SELECT 'APPLE'":                                                            "[apple pear]",
	} {
		r, err := query(t, db, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if got := fmt.Sprint(r.rows); got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}
}
