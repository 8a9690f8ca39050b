package sqlserver

import (
	"context"
	"strings"
	"testing"
)

// TestProcedureResults: the columns of a procedure's SELECT are named as
// written (a parameter or variable by its name, an expression by its
// text), whether called as text or prepared; one CALL's parameters do not
// outlive it (a later procedure with a parameter of the same name and
// another type takes its own); a definition with @n := … reads back as
// written.
func TestProcedureResults(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE pr", "CREATE TABLE pr.t (a INT, b VARCHAR(5))", "INSERT INTO pr.t VALUES (1, 'q')",
		"CREATE PROCEDURE pr.p(IN x INT) BEGIN DECLARE z INT DEFAULT 7; SELECT x, z, x+1, x AS xx, 'lit', a, t.b, CONCAT(b, x), (SELECT MAX(a) FROM pr.t) FROM pr.t; END",
		"CREATE PROCEDURE pr.q(x VARCHAR(5)) SELECT x, UPPER(x), @v := x",
		"CREATE PROCEDURE pr.r(IN x INT, OUT y INT) SET y = x * 3")
	c := dbConn(t, open("root", "", "pr"))
	const pCols = "x,z,x+1,xx,lit,a,b,CONCAT(b, x),(SELECT MAX(a) FROM pr.t)"
	for _, call := range []struct {
		text       string
		args       []any
		cols, rows string
	}{
		{"CALL p(4)", nil, pCols, "4|7|5|4|lit|1|q|q4|1"},
		{"CALL q('hey')", nil, "x,UPPER(x),@v := x", "hey|HEY|hey"},
		{"CALL p(?)", []any{9}, pCols, "9|7|10|9|lit|1|q|q9|1"},
		{"CALL q(?)", []any{"ab"}, "x,UPPER(x),@v := x", "ab|AB|ab"},
		{"CALL p(5)", nil, pCols, "5|7|6|5|lit|1|q|q5|1"},
	} {
		cols, out := rowsAsText(t, c, call.text, call.args...)
		if rows := strings.Join(out, ";"); cols != call.cols || rows != call.rows {
			t.Errorf("%s: columns %s rows %s, want %s and %s", call.text, cols, rows, call.cols, call.rows)
		}
	}
	if _, err := c.ExecContext(context.Background(), "CALL r(5, @out)"); err != nil {
		t.Fatal(err)
	}
	var out int
	if err := c.QueryRowContext(context.Background(), "SELECT @out").Scan(&out); err != nil || out != 15 {
		t.Errorf("OUT parameter: %d, %v; want 15", out, err)
	}
	var name, mode, def string
	var cs, cc, dc string
	if err := c.QueryRowContext(context.Background(), "SHOW CREATE PROCEDURE q").Scan(&name, &mode, &def, &cs, &cc, &dc); err != nil {
		t.Fatal(err)
	}
	if want := "CREATE PROCEDURE pr.q(x VARCHAR(5)) SELECT x, UPPER(x), @v := x"; def != want {
		t.Errorf("SHOW CREATE PROCEDURE q: %q, want %q", def, want)
	}
}

// TestTriggerSetsWithAssignment: a trigger's SET @n := … (the form of
// assignment SET takes besides =) is the trigger's, as written.
func TestTriggerSetsWithAssignment(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	for _, q := range []string{"CREATE DATABASE tg", "USE tg", "CREATE TABLE t (a INT)",
		"CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @last := NEW.a, @n := 2, @m = (SELECT @k := 5)",
		"INSERT INTO t VALUES (42)"} {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var last, n, m, k int
	if err := c.QueryRowContext(context.Background(), "SELECT @last, @n, @m, @k").Scan(&last, &n, &m, &k); err != nil {
		t.Fatal(err)
	}
	if last != 42 || n != 2 || m != 5 || k != 5 {
		t.Errorf("after the trigger @last, @n, @m, @k = %d, %d, %d, %d; want 42, 2, 5, 5", last, n, m, k)
	}
}
