package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/go-sql-driver/mysql"
)

// startServer runs a Server on a free port of 127.0.0.1 in this process.
func startServer(t *testing.T) (*Server, func(user, pass, db string) *sql.DB) {
	t.Helper()
	return startServerWith(t, Config{})
}

// dbConn is a connection of its own from db, closed at the test's end.
func dbConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startServerWith is startServer with cfg (its Root is a temporary folder).
func startServerWith(t *testing.T, cfg Config) (*Server, func(user, pass, db string) *sql.DB) {
	t.Helper()
	keepServerDefaults(t)
	cfg.Root = t.TempDir()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	open := func(user, pass, db string) *sql.DB {
		c := mysql.NewConfig()
		c.User, c.Passwd, c.Net, c.Addr, c.DBName = user, pass, "tcp", s.Addr().String(), db
		c.AllowNativePasswords = true
		d, err := sql.Open("mysql", c.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	return s, open
}

// keepServerDefaults puts back, at the test's end, the collation defaults
// New sets in go-mysql-server's process-wide variables, for the other
// tests.
func keepServerDefaults(t *testing.T) {
	saved := map[string]any{}
	for _, name := range []string{"collation_server", "collation_database", "collation_connection", "character_set_server"} {
		_, v, _ := gsql.SystemVariables.GetGlobal(name)
		saved[name] = v
	}
	t.Cleanup(func() {
		for name, v := range saved {
			gsql.SystemVariables.SetGlobal(gsql.NewEmptyContext(), name, v)
		}
	})
}

type result struct {
	names []string // the columns' names
	cols  []string // and their descriptions
	rows  []string
}

func query(t *testing.T, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, text string, args ...any) (result, error) {
	rows, err := q.QueryContext(context.Background(), text, args...)
	if err != nil {
		return result{}, err
	}
	defer rows.Close()
	cts, _ := rows.ColumnTypes()
	var r result
	for _, ct := range cts {
		n, _ := ct.Nullable()
		l, _ := ct.Length()
		p, s, _ := ct.DecimalSize()
		r.names = append(r.names, ct.Name())
		r.cols = append(r.cols, fmt.Sprintf("%s %s null=%v len=%d dec=%d,%d %v", ct.Name(), ct.DatabaseTypeName(), n, l, p, s, ct.ScanType()))
	}
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cts))
		ptrs := make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, v := range vals {
			if v == nil {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, string(v))
			}
		}
		r.rows = append(r.rows, strings.Join(parts, "|"))
	}
	return r, rows.Err()
}

// TestPointLookupsCountInThreadsRunning: point lookups, answered outside
// the process list, still count in Threads_running while they run and
// leave it as it was when they are done, from several connections at once.
func TestPointLookupsCountInThreadsRunning(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"CREATE DATABASE p", "CREATE TABLE p.t (id INT PRIMARY KEY, v INT)", "INSERT INTO p.t VALUES (1, 10), (2, 20)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	running := func() string {
		t.Helper()
		var name, v string
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Threads_running'").Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	idle := running() // the SHOW statement itself
	before := s.points.answered.Load()
	const clients, each = 4, 200
	errs := make(chan error, clients)
	for range clients {
		go func() {
			var err error
			for i := range each {
				var v int
				if err = db.QueryRow("SELECT v FROM p.t WHERE id = ?", 1+i%2).Scan(&v); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := s.points.answered.Load() - before; got != clients*each {
		t.Fatalf("%d of %d lookups answered as point lookups", got, clients*each)
	}
	if got := running(); got != idle {
		t.Fatalf("Threads_running %s after the lookups, %s before", got, idle)
	}
}

// TestPointLookupsMatchThePlanner runs each point lookup twice: as is
// (answered without the planner) and with a condition that sends it through
// the planner, and compares columns, types and values.
func TestPointLookupsMatchThePlanner(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE p",
		"CREATE TABLE p.t (id INT PRIMARY KEY, u BIGINT UNSIGNED, name VARCHAR(20), price DECIMAL(10,2), at DATETIME(3), doc JSON, e ENUM('a','b'), b BLOB, f DOUBLE, n INT NULL)",
		"INSERT INTO p.t VALUES (1, 18446744073709551615, 'Ann', 12.50, '2026-01-02 03:04:05.678', '{\"k\": [1, 2]}', 'b', x'00ff', 1.5, NULL), (2, 0, 'bob', -1.00, NULL, NULL, NULL, NULL, NULL, 7)",
		"CREATE TABLE p.s (k VARCHAR(10) PRIMARY KEY, v INT)",
		"INSERT INTO p.s VALUES ('Key', 1)",
		"CREATE TABLE p.c (a INT, b VARCHAR(5), v INT, PRIMARY KEY (b, a))",
		"INSERT INTO p.c VALUES (1, 'x', 10), (2, 'x', 20)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cases := []struct {
		q    string
		args []any
	}{
		{"SELECT * FROM p.t WHERE id = ?", []any{1}},
		{"SELECT * FROM p.t WHERE id = ?", []any{2}},
		{"SELECT * FROM p.t WHERE id = ?", []any{3}},
		{"SELECT name, price, at FROM p.t WHERE id = ?", []any{int64(1)}},
		{"SELECT NAME, u FROM p.t WHERE ? = id", []any{1}},
		{"SELECT v FROM p.s WHERE k = ?", []any{"KEY"}}, // case-insensitive key
		{"SELECT v, a FROM p.c WHERE a = ? AND b = ?", []any{2, "x"}},
	}
	for _, c := range cases {
		before := s.points.answered.Load()
		fast, err := query(t, db, c.q, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if s.points.answered.Load() != before+1 {
			t.Fatalf("%s was not answered as a point lookup", c.q)
		}
		planned, err := query(t, db, c.q+" AND 1 = 1", c.args...)
		if err != nil {
			t.Fatalf("%s (planned): %v", c.q, err)
		}
		if s.points.answered.Load() != before+1 {
			t.Fatalf("%s AND 1 = 1 was answered as a point lookup", c.q)
		}
		if fmt.Sprint(fast) != fmt.Sprint(planned) {
			t.Errorf("%s %v:\n point lookup %v\n planner      %v", c.q, c.args, fast, planned)
		}
	}

	// What must go through the planner.
	if _, err := db.Exec("CREATE USER 'nosel'@'%' IDENTIFIED BY 'pw'"); err != nil {
		t.Fatal(err)
	}
	before := s.points.answered.Load()
	if _, err := query(t, open("nosel", "pw", ""), "SELECT * FROM p.t WHERE id = ?", 1); err == nil {
		t.Fatal("a user without SELECT read a row")
	}
	if _, err := query(t, db, "SELECT * FROM p.t WHERE id = ?", "1"); err != nil { // a string for an INT key
		t.Fatal(err)
	}
	if _, err := query(t, db, "SELECT * FROM p.c WHERE a = ?", 1); err != nil { // part of the key
		t.Fatal(err)
	}
	if got := s.points.answered.Load(); got != before {
		t.Fatalf("%d statements answered as point lookups, want none", got-before)
	}

	// Inside a transaction: the transaction's snapshot and its own writes.
	ctx := context.Background()
	c1, _ := db.Conn(ctx)
	defer c1.Close()
	if _, err := c1.ExecContext(ctx, "START TRANSACTION"); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.ExecContext(ctx, "UPDATE p.t SET n = 100 WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE p.t SET name = 'changed' WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	r, err := query(t, c1, "SELECT name, n FROM p.t WHERE id = ?", 2)
	if err != nil || fmt.Sprint(r.rows) != "[bob|100]" {
		t.Fatalf("in a transaction: %v %v (want its snapshot and its own write)", r.rows, err)
	}
	c1.ExecContext(ctx, "ROLLBACK")
	r, _ = query(t, db, "SELECT name, n FROM p.t WHERE id = ?", 2)
	if fmt.Sprint(r.rows) != "[changed|7]" {
		t.Fatalf("after rollback: %v", r.rows)
	}
}

// connExecAll runs each statement on c, failing the test at the first
// error.
func connExecAll(t *testing.T, c *sql.Conn, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// execAll runs each statement on db, failing the test at the first error.
func execAll(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
