package system

import (
	"strings"
	"testing"
	"time"
)

// TestTimeDigitsReplicate: a TIME(n) column's digits (kept in the table's
// definition) and its values' fractions reach a secondary.
func TestTimeDigitsReplicate(t *testing.T) {
	c := newTestCluster(t, "n1", "n2")
	n1, n2 := c.start("n1"), c.start("n2")
	p := n1.open("")
	mustExec(t, p, "SET GLOBAL cluster_role = 'primary'")
	waitFor(t, "n1 to become PRIMARY", 30*time.Second, func() bool { return one(t, p, "SELECT @@cluster_role") == "PRIMARY" })
	for _, q := range []string{
		"CREATE DATABASE td",
		"CREATE TABLE td.t (id INT PRIMARY KEY, c TIME(3), d TIME(1))",
		"INSERT INTO td.t VALUES (1, '12:34:56.7896', '-00:00:00.05'), (2, '838:59:59', '00:00:00.96')",
		"ALTER TABLE td.t ADD COLUMN e TIME(2) DEFAULT '10:00:00.125'",
	} {
		mustExec(t, p, q)
	}
	const sel = "SELECT id, c, d, e FROM td.t ORDER BY id"
	want := queryString(t, p, sel)
	if want != "1 12:34:56.790 -00:00:00.1 10:00:00.13;2 838:59:59.000 00:00:01.0 10:00:00.13;" {
		t.Fatalf("primary: %s", want)
	}
	s := n2.open("")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("secondary's log:\n%s", n2.output())
		}
	})
	waitFor(t, "the rows on the secondary", 30*time.Second, func() bool {
		rows, err := s.Query(sel)
		if err != nil {
			return false
		}
		rows.Close()
		return queryString(t, s, sel) == want
	})
	var name, create string
	if err := s.QueryRow("SHOW CREATE TABLE td.t").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"`c` time(3)", "`d` time(1)", "`e` time(2) DEFAULT '10:00:00.13'"} {
		if !strings.Contains(create, w) {
			t.Errorf("secondary's SHOW CREATE TABLE lacks %q:\n%s", w, create)
		}
	}
}
