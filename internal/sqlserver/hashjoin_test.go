package sqlserver

import (
	"fmt"
	"strings"
	"testing"
)

// A join on strings equal under the collation finds its rows when the
// planner hashes them (larger tables; IN and EXISTS subqueries).
func TestHashJoinUnderCollation(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE h",
		"CREATE TABLE h.a (id INT PRIMARY KEY, s VARCHAR(20))",
		"CREATE TABLE h.b (id INT PRIMARY KEY, s VARCHAR(20), bin VARCHAR(20) COLLATE utf8mb4_bin)",
		"INSERT INTO h.a WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 500) SELECT n, CONCAT('Key', n) FROM r",
		"INSERT INTO h.b WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 500) SELECT n, CONCAT('KEY', n), CONCAT('KEY', n) FROM r")
	r, err := query(t, db, "EXPLAIN FORMAT=TREE SELECT COUNT(*) FROM h.a JOIN h.b ON a.s = b.s")
	if err != nil {
		t.Fatal(err)
	}
	if plan := fmt.Sprint(r.rows); !strings.Contains(plan, "HashJoin") {
		t.Fatalf("the join is not a hash join, the test proves nothing: %s", plan)
	}
	for q, want := range map[string]string{
		"SELECT COUNT(*) FROM h.a JOIN h.b ON a.s = b.s":                                "500",
		"SELECT COUNT(*) FROM h.a WHERE s IN (SELECT s FROM h.b)":                       "500",
		"SELECT COUNT(*) FROM h.a LEFT JOIN h.b ON a.s = b.s WHERE b.id IS NULL":        "0",
		"SELECT COUNT(*) FROM h.a WHERE NOT EXISTS (SELECT 1 FROM h.b WHERE b.s = a.s)": "0",
		"SELECT COUNT(*) FROM h.a JOIN h.b ON a.s = b.bin":                              "0", // utf8mb4_bin wins
		"SELECT COUNT(*) FROM h.a JOIN h.b ON a.s = b.s AND a.id + 1 = b.id + 1":        "500",
	} {
		if got := queryOne(t, db, q); got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}
}
