package system

import (
	"os/exec"
	"strings"
	"testing"
)

// TestClientStatements runs, through the mariadb client, statements whose
// answers the client reads beyond rows: the info line of an OK packet
// (PREPARE's "Statement prepared" was a malformed packet to it, error
// 2027), and a report with WITH ROLLUP.
func TestClientStatements(t *testing.T) {
	client, err := exec.LookPath("mariadb")
	requireClient(t, "mariadb", "apt-get install -y mariadb-client", err == nil)
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE shop")
	mustExec(t, db, "CREATE TABLE shop.sales (region VARCHAR(10), item VARCHAR(10), qty INT)")
	mustExec(t, db, "CREATE TABLE shop.items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(10))")

	out, ok := runAdmin(t, client, s, "root", "-vvv", "shop", "-e",
		"INSERT INTO sales VALUES ('north', 'pen', 3), ('north', 'ink', 2), ('south', 'pen', 5), ('south', 'pad', 1);"+
			"UPDATE sales SET qty = qty + 1 WHERE item = 'pad';"+
			"INSERT INTO items (name) VALUES ('pen'), ('ink'), ('pad');"+
			"PREPARE top FROM 'SELECT region, item, SUM(qty) FROM sales WHERE qty >= ? GROUP BY region, item WITH ROLLUP';"+
			"SET @min = 2;"+
			"EXECUTE top USING @min;"+
			"DEALLOCATE PREPARE top")
	if !ok {
		t.Fatalf("mariadb client: %s", out)
	}
	for _, want := range []string{
		"Records: 4  Duplicates: 0  Warnings: 0\n",
		"Records: 3  Duplicates: 0  Warnings: 0\n", // a compiled INSERT's
		"Rows matched: 1  Changed: 1  Warnings: 0\n",
		"Statement prepared\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the client shows no %q:\n%s", want, out)
		}
	}
	// Each group, then its region's total, then the grand total.
	table := `| region | item | SUM(qty) |
+--------+------+----------+
| north  | ink  |        2 |
| north  | pen  |        3 |
| north  | NULL |        5 |
| south  | pad  |        2 |
| south  | pen  |        5 |
| south  | NULL |        7 |
| NULL   | NULL |       12 |
+--------+------+----------+
7 rows in set`
	if !strings.Contains(out, table) {
		t.Errorf("EXECUTE of the prepared WITH ROLLUP report, want\n%s\nin:\n%s", table, out)
	}
}
