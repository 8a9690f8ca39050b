package sqlserver

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Text statements of a compiled shape are answered without the planner
// once their normalized form has been seen, with the result columns named
// as each statement writes them, also from a client that allows several
// statements per query (COM_QUERY then goes through ComMultiQuery).
func TestTextStatementsCompiled(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE tx",
		"CREATE TABLE tx.t (id INT PRIMARY KEY, k INT, c VARCHAR(10), KEY kk (k))",
		"INSERT INTO tx.t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName, c.AllowNativePasswords, c.MultiStatements = "root", "tcp", s.Addr().String(), "tx", true, true
	multi, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer multi.Close()
	multi.SetMaxOpenConns(1)
	for round, d := range []*sql.DB{db, multi} {
		before := s.points.ranged.Load()
		for _, q := range []string{
			"SELECT count(k) FROM tx.t WHERE id BETWEEN 1 AND 2",
			"SELECT count(k) FROM tx.t WHERE id BETWEEN 1 AND 3",
			"SELECT COUNT( k ) FROM tx.t WHERE id BETWEEN 2 AND 3",
		} {
			r, err := query(t, d, q)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"SELECT count(k) FROM tx.t WHERE id BETWEEN 1 AND 2":   "[count(k) BIGINT null=false len=0 dec=0,0 int64] [2]",
				"SELECT count(k) FROM tx.t WHERE id BETWEEN 1 AND 3":   "[count(k) BIGINT null=false len=0 dec=0,0 int64] [3]",
				"SELECT COUNT( k ) FROM tx.t WHERE id BETWEEN 2 AND 3": "[COUNT( k ) BIGINT null=false len=0 dec=0,0 int64] [2]",
			}[q]
			if got := fmt.Sprint(r.cols, " ", r.rows); got != want {
				t.Fatalf("%s: %s, want %s", q, got, want)
			}
		}
		// The second statement of the same shape is the compiled one
		// (the first of each shape and the third, written otherwise,
		// go through the planner and describe the columns).
		if got := s.points.ranged.Load() - before; got != 1 {
			t.Fatalf("%d text reads answered without the planner, want 1", got)
		}
		w := s.points.written.Load()
		x, y := fmt.Sprint("x", round), fmt.Sprint("y", round)
		for _, q := range []string{"UPDATE tx.t SET c = '" + x + "' WHERE id = 1", "UPDATE tx.t SET c = '" + y + "' WHERE id = 2"} {
			res, err := d.Exec(q)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("%s: %d rows affected", q, n)
			}
		}
		if got := s.points.written.Load() - w; got != 2 {
			t.Fatalf("%d text writes answered without the planner, want 2", got)
		}
		var c1, c2 string
		if err := d.QueryRow("SELECT (SELECT c FROM tx.t WHERE id = 1), (SELECT c FROM tx.t WHERE id = 2)").Scan(&c1, &c2); err != nil || c1 != x || c2 != y {
			t.Fatalf("after the updates: %q %q %v", c1, c2, err)
		}
	}
}

// Compiled statements count in Questions, Com_select, Com_insert,
// Com_update and Com_delete as the planner's do: once per execution.
func TestCompiledStatementsCounted(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"CREATE DATABASE cs", "CREATE TABLE cs.t (id INT PRIMARY KEY, v INT)", "INSERT INTO cs.t VALUES (1, 1), (2, 2)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	c, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	status := func(name string) int {
		var n string
		var v int
		if err := c.QueryRowContext(t.Context(), "SHOW SESSION STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	deltas := func(planner bool) string {
		s.points.off.Store(planner)
		defer s.points.off.Store(false)
		names := []string{"Questions", "Com_select", "Com_insert", "Com_update", "Com_delete"}
		before := make([]int, len(names))
		for i, n := range names {
			before[i] = status(n)
		}
		statements := []struct {
			text string
			args []any
		}{
			{"SELECT v FROM cs.t WHERE id = ?", []any{1}},
			{"SELECT v FROM cs.t WHERE id BETWEEN ? AND ?", []any{1, 2}},
			{"UPDATE cs.t SET v = v + 1 WHERE id = ?", []any{1}},
			{"SELECT v FROM cs.t WHERE id = 2", nil},
			{"INSERT INTO cs.t VALUES (?, 0)", []any{10}},
			{"DELETE FROM cs.t WHERE id = ?", []any{10}},
			{"BEGIN", nil},
			{"UPDATE cs.t SET v = v + 1 WHERE id = ?", []any{2}},
			{"COMMIT", nil},
		}
		for range 3 {
			for _, q := range statements {
				rows, err := c.QueryContext(t.Context(), q.text, q.args...)
				if err != nil {
					t.Fatal(err)
				}
				rows.Close()
			}
		}
		var out []string
		for i, n := range names {
			out = append(out, fmt.Sprintf("%s +%d", n, status(n)-before[i]))
		}
		return strings.Join(out, ", ")
	}
	before := s.points.answered.Load() + s.points.ranged.Load() + s.points.written.Load()
	compiled := deltas(false)
	if s.points.answered.Load()+s.points.ranged.Load()+s.points.written.Load() == before {
		t.Fatal("no statement was compiled")
	}
	// Each statement counted once per execution, as in MySQL: the
	// prepare that the driver sends before each is not an execution.
	// Questions: the 27 statements and the 5 status reads before them.
	const want = "Questions +32, Com_select +9, Com_insert +3, Com_update +6, Com_delete +3"
	if compiled != want {
		t.Errorf("compiled: %s; want %s", compiled, want)
	}
	if planned := deltas(true); planned != want {
		t.Errorf("planner: %s; want %s", planned, want)
	}
}

// TestSelectListNonASCII: selectList, which finds FROM with
// sqltext.IndexFold, cuts a text holding non-ASCII letters at the right
// byte (from sqltext's TestIndexFold when the scanner moved there).
func TestSelectListNonASCII(t *testing.T) {
	if got := selectList("SELECT 'İ', b FROM t"); got != "SELECT 'İ', b " {
		t.Errorf("selectList = %q", got)
	}
}
