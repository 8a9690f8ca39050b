package sqlserver

import (
	"context"
	"database/sql"
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
	connExecAll(t, c, "CREATE DATABASE rng", "USE rng",
		"CREATE TABLE o (id INT PRIMARY KEY, n INT UNSIGNED, s TINYINT, d DECIMAL(5,2))",
		"INSERT INTO o VALUES (1, 1, 1, 1), (2, 2, 2, 2)")
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

// A prepared UPDATE of a YEAR, BIT, ENUM, SET or DATE column to a value it
// does not take is MySQL's error naming the column and the row, in a
// strict mode, and writes nothing (go-mysql-server's was 1105, or 1292
// without the column).
func TestUpdateValuesNotTaken(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	ctx := context.Background()
	connExecAll(t, c, "CREATE DATABASE ynt", "USE ynt",
		"CREATE TABLE w (id INT PRIMARY KEY, y YEAR, b BIT(3), e ENUM('a','b'), s SET('x','y'), d DATE)",
		"INSERT INTO w VALUES (1, 2001, 1, 'a', 'x', '2020-01-01')")
	for _, tc := range []struct {
		q    string
		arg  any
		want string
	}{
		{"UPDATE w SET y = ? WHERE id = 1", 1800, "Error 1264 (22003): Out of range value for column 'y' at row 1"},
		{"UPDATE w SET b = ? WHERE id = 1", 8, "Error 1406 (22001): Data too long for column 'b' at row 1"},
		{"UPDATE w SET e = ? WHERE id = 1", "z", "Error 1265 (01000): Data truncated for column 'e' at row 1"},
		{"UPDATE w SET s = ? WHERE id = 1", "x,q", "Error 1265 (01000): Data truncated for column 's' at row 1"},
		{"UPDATE w SET d = ? WHERE id = 1", "2020-02-30", "Error 1292 (22007): Incorrect date value: '2020-02-30' for column 'd' at row 1"},
		{"INSERT INTO w (id, y) VALUES (2, ?)", 1800, "Error 1264 (22003): Out of range value for column 'y' at row 1"},
		{"INSERT INTO w (id, b) VALUES (2, ?)", 8, "Error 1406 (22001): Data too long for column 'b' at row 1"},
	} {
		_, err := c.ExecContext(ctx, tc.q, tc.arg)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s (%v):\n got %v\nwant %s", tc.q, tc.arg, err, tc.want)
		}
	}
	var row string
	if err := c.QueryRowContext(ctx, "SELECT CONCAT_WS(',', (SELECT COUNT(*) FROM w), y, b + 0, e, s, d) FROM w").Scan(&row); err != nil {
		t.Fatal(err)
	}
	if want := "1,2001,1,a,x,2020-01-01"; row != want {
		t.Errorf("table after the refused writes: %s, want %s", row, want)
	}
}

// A prepared INSERT or UPDATE of a TIME beyond ±838:59:59 is 1292 in a
// strict mode and writes nothing (it was clamped in silence, by the
// compiled path and the planner alike); with IGNORE the end of the range
// is written with Warning 1264.
func TestTimeBeyondRange(t *testing.T) {
	c := timeTable(t, "(1, '12:00:00')")
	ctx := context.Background()
	for _, tc := range []struct {
		q    string
		args []any
		want string
	}{
		{"INSERT INTO t VALUES (?, ?)", []any{2, "839:00:00"}, "Error 1292 (22007): Incorrect time value: '839:00:00' for column 'tm' at row 1"},
		{"INSERT INTO t VALUES (?, ?)", []any{2, 8390000}, "Error 1292 (22007): Incorrect time value: '8390000' for column 'tm' at row 1"},
		{"UPDATE t SET tm = ? WHERE id = ?", []any{"-839:00:00", 1}, "Error 1292 (22007): Incorrect time value: '-839:00:00' for column 'tm' at row 1"},
	} {
		_, err := c.ExecContext(ctx, tc.q, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %v:\n got %v\nwant %s", tc.q, tc.args, err, tc.want)
		}
	}
	if _, err := c.ExecContext(ctx, "INSERT IGNORE INTO t VALUES (?, ?)", 3, "-900:00:00"); err != nil {
		t.Fatal(err)
	}
	if got, want := idTimes(t, c), "1=12:00:00,3=-838:59:59"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}

	// Days, as MySQL reads them: prepared and text, INSERT, UPDATE and ON
	// DUPLICATE KEY UPDATE; beyond the range still 1292, named as given.
	connExecAll(t, c, "INSERT INTO t VALUES (4, '1 10:00:00'), (5, '-2 03')")
	execWithArgs(t, c, []argStatement{
		{"INSERT INTO t VALUES (?, ?)", []any{6, "0 1:2:3"}},
		{"UPDATE t SET tm = ? WHERE id = ?", []any{"3 00:00:01", 1}},
		{"INSERT INTO t VALUES (?, ?) ON DUPLICATE KEY UPDATE tm = ?", []any{3, "1:00:00", "2 03:04"}},
	})
	_, err := c.ExecContext(ctx, "INSERT INTO t VALUES (?, ?)", 7, "35 00:00:00")
	if want := "Error 1292 (22007): Incorrect time value: '35 00:00:00' for column 'tm' at row 1"; err == nil || err.Error() != want {
		t.Errorf("35 days:\n got %v\nwant %s", err, want)
	}
	if got, want := idTimes(t, c), "1=72:00:01,3=51:04:00,4=34:00:00,5=-51:00:00,6=01:02:03"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
	// Compared with a TIME, text and prepared.
	var got string
	for _, q := range []argStatement{
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE tm = '1 10:00:00' OR tm BETWEEN '2 00:00:00' AND '2 12:00:00'", nil},
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE tm = ? OR tm BETWEEN ? AND ?", []any{"1 10:00:00", "2 00:00:00", "2 12:00:00"}},
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE tm IN ('1 10:00:00', '2 03:04', '9:00:00')", nil},
		{"SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE tm IN (?, ?, '0 01')", []any{"2 03:04", "1 10:00:00"}},
	} {
		if err := c.QueryRowContext(ctx, q.q, q.args...).Scan(&got); err != nil || got != "3,4" {
			t.Errorf("%s %v: %q %v, want 3,4", q.q, q.args, got, err)
		}
	}
}

// A TIME column keeps whole seconds: a value with a fraction is rounded,
// half away from zero, as MySQL 8 stores it (it was kept and shown as
// 12:34:56.789000), by prepared and text INSERT, UPDATE and ON DUPLICATE
// KEY UPDATE alike (a compiled statement leaves it to the planner), and
// never past the range.
func TestTimeColumnRoundsFraction(t *testing.T) {
	c := timeTable(t, "(1, '12:34:56.789'), (2, '12:34:56.2'), (3, '-01:00:00.5'), (4, '838:59:59.9')")
	ctx := context.Background()
	execWithArgs(t, c, []argStatement{
		{"INSERT INTO t VALUES (?, ?)", []any{5, "00:00:01.5"}},
		{"UPDATE t SET tm = ? WHERE id = ?", []any{"10:00:00.4", 2}},
		{"INSERT INTO t VALUES (?, ?) ON DUPLICATE KEY UPDATE tm = ?", []any{1, "1:00:00", "23:59:59.5"}},
	})
	if got, want := idTimes(t, c), "1=24:00:00,2=10:00:00,3=-01:00:01,4=838:59:59,5=00:00:02"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM t WHERE tm = ?", "00:00:02").Scan(&n); err != nil || n != 1 {
		t.Errorf("rows at 00:00:02: %d (%v), want 1", n, err)
	}
}

// timeTable starts a server and returns a connection to it, in a database
// with table t (id INT PRIMARY KEY, tm TIME) holding rows (an INSERT's
// VALUES list).
func timeTable(t *testing.T, rows string) *sql.Conn {
	t.Helper()
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	connExecAll(t, c, "CREATE DATABASE tt", "USE tt", "CREATE TABLE t (id INT PRIMARY KEY, tm TIME)",
		"INSERT INTO t VALUES "+rows)
	return c
}

// argStatement is a statement and its arguments.
type argStatement struct {
	q    string
	args []any
}

// execWithArgs runs each statement on c, prepared with its arguments; an
// error ends the test.
func execWithArgs(t *testing.T, c *sql.Conn, sts []argStatement) {
	t.Helper()
	for _, st := range sts {
		if _, err := c.ExecContext(context.Background(), st.q, st.args...); err != nil {
			t.Fatalf("%s %v: %v", st.q, st.args, err)
		}
	}
}

// idTimes is table t's rows as id=tm, in id order.
func idTimes(t *testing.T, c *sql.Conn) string {
	t.Helper()
	var got string
	if err := c.QueryRowContext(context.Background(), "SELECT GROUP_CONCAT(CONCAT(id, '=', tm) ORDER BY id) FROM t").Scan(&got); err != nil {
		t.Fatal(err)
	}
	return got
}
