package sqlserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// numericPrefix reads a number from text as MySQL does: the number's
// text, and whether nothing but white space follows it.
func TestNumericPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"":        "|false",
		"  ":      "|false",
		"12":      "12|true",
		" 12 ":    "12|true",
		"+3":      "+3|true",
		"-1.5e3":  "-1.5e3|true",
		".5":      ".5|true",
		"5.":      "5.|true",
		"12abc":   "12|false",
		"1e":      "1|false",
		"1e+":     "1|false",
		"0x10":    "0|false",
		"-":       "|false",
		".":       "|false",
		"abc":     "|false",
		"1.5.5":   "1.5|false",
		"3-4":     "3|false",
		"\t7\n":   "7|true",
		"inf":     "|false",
		"1_000":   "1|false",
		"9 lives": "9|false",
	} {
		num, whole := numericPrefix(in)
		got := num + "|" + map[bool]string{true: "true", false: "false"}[whole]
		if got != want {
			t.Errorf("numericPrefix(%q) = %s, want %s", in, got, want)
		}
	}
}

// Text into a numeric column: refused in a strict sql_mode (” is 1366,
// '12abc' 1265), a warning and 0 or the leading number otherwise; an
// INSERT of several rows says how many it read.
func TestTextIntoNumericColumn(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	for _, q := range []string{"CREATE DATABASE n", "CREATE TABLE n.t (id INT PRIMARY KEY, i INT)"} {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	for q, want := range map[string]string{
		"INSERT INTO n.t VALUES (1, '')":          "Error 1366 (HY000): Incorrect integer value: '' for column 'i' at row 1",
		"INSERT INTO n.t VALUES (1, '12abc')":     "Error 1265 (01000): Data truncated for column 'i' at row 1",
		"INSERT INTO n.t VALUES (1, 1), (2, ' ')": "Error 1366 (HY000): Incorrect integer value: ' ' for column 'i' at row 2",
	} {
		if _, err := c.ExecContext(context.Background(), q); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", q, err, want)
		}
	}
	for _, q := range []string{"SET sql_mode = ''", "INSERT INTO n.t VALUES (1, ''), (2, '12abc'), (3, 'x')", "UPDATE n.t SET i = '7 days' WHERE id = 3"} {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r, err := query(t, c, "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(r.rows, "; "), "Warning|1265|Data truncated for column 'i' at row 1"; got != want {
		t.Errorf("warnings of the UPDATE: %s, want %s", got, want)
	}
	r, err = query(t, c, "SELECT id, i FROM n.t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(r.rows, " "), "1|0 2|12 3|7"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// INSERT(), ADDTIME() and SUBTIME() answer as MySQL's; a function that
// does not exist is 1305.
func TestStringAndTimeFunctions(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE f")
	c := dbConn(t, db)
	if _, err := c.ExecContext(context.Background(), "USE f"); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"SELECT INSERT('abcdef', 2, 3, 'XY'), INSERT('abc', 0, 1, 'X'), INSERT('héllo', 2, 1, 'E')":        "[aXYef|abc|hEllo]",
		"SELECT ADDTIME('01:00:00', '02:30:00'), SUBTIME('01:00:00', '02:00:00')":                          "[03:30:00|-01:00:00]",
		"SELECT ADDTIME('2024-01-01 23:00:00', '02:00:00'), ADDTIME(CAST('10:00:00' AS TIME), '01:00:01')": "[2024-01-02 01:00:00|11:00:01]",
	} {
		r, err := query(t, c, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if got := fmt.Sprint(r.rows); got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}
	if _, err := query(t, c, "SELECT nosuchfn(1)"); err == nil || err.Error() != "Error 1305 (42000): FUNCTION f.nosuchfn does not exist" {
		t.Errorf("SELECT nosuchfn(1): %v, want 1305 FUNCTION f.nosuchfn does not exist", err)
	}
}
