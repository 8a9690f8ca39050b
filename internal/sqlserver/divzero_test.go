package sqlserver

import (
	"context"
	"database/sql"
	"testing"
)

// Under ERROR_FOR_DIVISION_BY_ZERO in a strict mode, an INSERT or UPDATE
// whose values divide by zero is refused with 1365 and writes nothing
// (go-mysql-server stored NULL in every mode); with IGNORE, without the
// mode, and in a SELECT, the division is NULL with Warning 1365.
func TestDivisionByZeroInWrites(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	ctx := context.Background()
	connExecAll(t, c, "CREATE DATABASE dz", "USE dz", "CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(10))",
		"INSERT INTO t VALUES (1, 10, 'a')",
		"SET sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO'")
	const refused = "Error 1365 (22012): Division by 0"
	for _, st := range []argStatement{
		{"INSERT INTO t VALUES (2, 1/0, 'b')", nil},
		{"INSERT INTO t VALUES (?, ? / ?, 'b')", []any{2, 1, 0}},
		{"INSERT INTO t VALUES (2, 3, 'b'), (3, 5 DIV 0, 'c')", nil},
		{"INSERT INTO t SELECT 2, v MOD 0, s FROM t WHERE id = 1", nil},
		{"UPDATE t SET v = v / 0 WHERE id = 1", nil},
		{"UPDATE t SET s = CONCAT(1 / 0) WHERE id = ?", []any{1}},
		{"INSERT INTO t VALUES (1, 0, 'x') ON DUPLICATE KEY UPDATE v = 1 % 0", nil},
	} {
		_, err := c.ExecContext(ctx, st.q, st.args...)
		if err == nil || err.Error() != refused {
			t.Errorf("%s %v: %v, want %s", st.q, st.args, err, refused)
		}
	}
	if got, want := idValues(t, c), "1=10,a"; got != want {
		t.Errorf("after the refused writes: %s, want %s", got, want)
	}
	// IGNORE, and a SELECT: NULL and the warning.
	execWithArgs(t, c, []argStatement{{"INSERT IGNORE INTO t VALUES (2, 1/0, 'b')", nil}, {"UPDATE IGNORE t SET v = 7 DIV 0 WHERE id = 1", nil}})
	var v any
	if err := c.QueryRowContext(ctx, "SELECT 1/0").Scan(&v); err != nil || v != nil {
		t.Errorf("SELECT 1/0: %v (%v), want NULL", v, err)
	}
	var level, msg string
	var code int
	if err := c.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 1365 {
		t.Errorf("SHOW WARNINGS after SELECT 1/0: %s %d %s (%v), want Warning 1365", level, code, msg, err)
	}
	// The warning of an earlier statement does not refuse the next one.
	execWithArgs(t, c, []argStatement{{"UPDATE t SET v = 5 WHERE id = 2", nil}})
	if err := c.QueryRowContext(ctx, "SELECT 1/0").Scan(&v); err != nil {
		t.Fatal(err)
	}
	execWithArgs(t, c, []argStatement{{"INSERT INTO t VALUES (9, 9, 'z')", nil}, {"DELETE FROM t WHERE id = 9", nil}})
	// Strict without the mode: NULL, as before.
	connExecAll(t, c, "SET sql_mode = 'STRICT_TRANS_TABLES'", "INSERT INTO t VALUES (3, 1/0, 'c')")
	if got, want := idValues(t, c), "1=NULL,a 2=5,b 3=NULL,c"; got != want {
		t.Errorf("rows: %s, want %s", got, want)
	}
}

// idValues is table t's rows as id=v,s, in id order, space-separated.
func idValues(t *testing.T, c *sql.Conn) string {
	t.Helper()
	var got string
	if err := c.QueryRowContext(context.Background(),
		"SELECT GROUP_CONCAT(CONCAT(id, '=', COALESCE(v, 'NULL'), ',', s) ORDER BY id SEPARATOR ' ') FROM t").Scan(&got); err != nil {
		t.Fatal(err)
	}
	return got
}
