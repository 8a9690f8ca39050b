package sqlserver

import (
	"context"
	"testing"
)

// A prepared UPDATE or upsert whose value does not fit its numeric column
// is refused with 1264 in a strict mode and writes nothing (a compiled
// statement hands such a value to the planner, which checked no range:
// -1 became 4294967295 in an INT UNSIGNED, 300 became 127 in a TINYINT);
// with IGNORE the nearest value is written with the warning. test/diff's
// corpus compares the text statements with MariaDB.
func TestUpdateValuesOutOfRange(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE rng", "USE rng",
		"CREATE TABLE o (id INT PRIMARY KEY, n INT UNSIGNED, s TINYINT, d DECIMAL(5,2))",
		"INSERT INTO o VALUES (1, 1, 1, 1), (2, 2, 2, 2)"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows := func() string {
		t.Helper()
		var s string
		if err := c.QueryRowContext(ctx, "SELECT GROUP_CONCAT(CONCAT_WS(',', id, n, s, d) ORDER BY id SEPARATOR ' ') FROM o").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	const before = "1,1,1,1.00 2,2,2,2.00"
	for _, tc := range []struct {
		q    string
		args []any
		want string
	}{
		{"UPDATE o SET n = ? WHERE id = ?", []any{-1, 1}, "Error 1264 (22003): Out of range value for column 'n' at row 1"},
		{"UPDATE o SET s = ? WHERE id = ?", []any{300, 1}, "Error 1264 (22003): Out of range value for column 's' at row 1"},
		{"UPDATE o SET d = ? WHERE id = ?", []any{"12345.6", 2}, "Error 1264 (22003): Out of range value for column 'd' at row 1"},
		{"UPDATE o SET n = ? WHERE s > 0", []any{-1.5}, "Error 1264 (22003): Out of range value for column 'n' at row 1"},
		{"UPDATE o SET s = s + ?", []any{200}, "Error 1264 (22003): Out of range value for column 's' at row 1"},
		{"INSERT INTO o VALUES (?, 5, 5, 5) ON DUPLICATE KEY UPDATE n = ?", []any{1, -1}, "Error 1264 (22003): Out of range value for column 'n' at row 1"},
		{"INSERT INTO o VALUES (3, 5, 5, 5), (?, 5, 5, 5) ON DUPLICATE KEY UPDATE s = s + ?", []any{2, 200}, "Error 1264 (22003): Out of range value for column 's' at row 2"},
	} {
		_, err := c.ExecContext(ctx, tc.q, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %v:\n got %v\nwant %s", tc.q, tc.args, err, tc.want)
		}
		if got := rows(); got != before {
			t.Fatalf("%s %v: rows %s, want %s", tc.q, tc.args, got, before)
		}
	}
	if _, err := c.ExecContext(ctx, "UPDATE IGNORE o SET n = ?, s = ? WHERE id = ?", -7, 1000, 2); err != nil {
		t.Fatal(err)
	}
	var warnings int
	if err := c.QueryRowContext(ctx, "SELECT @@warning_count").Scan(&warnings); err != nil || warnings != 2 {
		t.Errorf("UPDATE IGNORE: %d warnings, want 2 (%v)", warnings, err)
	}
	if got, want := rows(), "1,1,1,1.00 2,0,127,2.00"; got != want {
		t.Errorf("after UPDATE IGNORE: %s, want %s", got, want)
	}
	// Values at the ends of the ranges are written.
	if _, err := c.ExecContext(ctx, "UPDATE o SET n = ?, s = ?, d = ? WHERE id = ?", uint64(4294967295), -128, "-999.99", 1); err != nil {
		t.Fatal(err)
	}
	if got, want := rows(), "1,4294967295,-128,-999.99 2,0,127,2.00"; got != want {
		t.Errorf("after the values at the ends: %s, want %s", got, want)
	}
}
