package sqlserver

import (
	"strings"
	"testing"
)

// Integer arithmetic that leaves BIGINT fails with 1690 and changes nothing,
// in every kind of statement; arithmetic that stays in range is unchanged.
func TestIntegerOverflowFails(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE ov",
		"CREATE TABLE ov.p (id INT PRIMARY KEY, n INT UNSIGNED, k BIGINT)",
		"INSERT INTO ov.p VALUES (1, 1, 9223372036854775807), (2, 10, 0)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, c := range []struct{ q, want string }{
		{"SELECT 9223372036854775807 + 1", "BIGINT value is out of range in '(9223372036854775807 + 1)'"},
		{"SELECT -9223372036854775807 - 2", "BIGINT value is out of range in '(-9223372036854775807 - 2)'"},
		{"SELECT 4611686018427387904 * 2", "BIGINT value is out of range in '(4611686018427387904 * 2)'"},
		{"SELECT CAST(1 AS UNSIGNED) - 2", "BIGINT UNSIGNED value is out of range"},
		{"SELECT n - 2 FROM ov.p WHERE id = 1", "BIGINT UNSIGNED value is out of range in '(`ov`.`p`.`n` - 2)'"},
		{"UPDATE ov.p SET n = n - 2", "BIGINT UNSIGNED value is out of range in '(`ov`.`p`.`n` - 2)'"},
		{"UPDATE ov.p SET k = k + 1 WHERE id = 1", "BIGINT value is out of range in '(`ov`.`p`.`k` + 1)'"},
		{"DELETE FROM ov.p WHERE n - 5 > 0", "BIGINT UNSIGNED value is out of range"},
		{"INSERT INTO ov.p SELECT 3, n - 10, 0 FROM ov.p WHERE id = 1", "BIGINT UNSIGNED value is out of range"},
		{"INSERT INTO ov.p VALUES (1, 0, 0) ON DUPLICATE KEY UPDATE n = n - 9", "BIGINT UNSIGNED value is out of range"},
		{"INSERT INTO ov.p VALUES (4, 1, 9223372036854775807 + 1)", "BIGINT value is out of range"},
	} {
		_, err := db.Exec(c.q)
		if err == nil || !strings.Contains(err.Error(), "Error 1690 (22003): "+c.want) {
			t.Errorf("%s: %v, want 1690 %s", c.q, err, c.want)
		}
	}
	// A sum beyond the column (not beyond BIGINT) is the column's error.
	if _, err := db.Exec("INSERT INTO ov.p VALUES (5, 4294967295 + 1, 0)"); err == nil || !strings.Contains(err.Error(), "Error 1264 (22003): Out of range value for column 'n' at row 1") {
		t.Errorf("INSERT of 4294967295 + 1 into an INT UNSIGNED: %v", err)
	}
	r, err := query(t, db, "SELECT id, n, k FROM ov.p ORDER BY id")
	if err != nil || strings.Join(r.rows, ";") != "1|1|9223372036854775807;2|10|0" {
		t.Fatalf("rows after the failed statements: %v %v", r.rows, err)
	}
	// Literals are signed up to BIGINT's maximum, whatever the smallest
	// type go-mysql-server gives them (157 is a TINYINT UNSIGNED to it).
	r, err = query(t, db, "SELECT 18446744073709551615 + -1, CAST(10 AS UNSIGNED) + -5, 3 * -4, 2 - 5, -9223372036854775807 - 1, n + 4294967295, 21 - 157, 200 - 300, k - ? FROM ov.p WHERE id = 2", 157)
	if err != nil || strings.Join(r.rows, ";") != "18446744073709551614|5|-12|-3|-9223372036854775808|4294967305|-136|-100|-157" {
		t.Fatalf("in-range arithmetic: %v %v", r.rows, err)
	}
}
