package sqlserver

import (
	"context"
	"fmt"
	"testing"
)

// FLUSH, LOCK TABLES, ANALYZE, OPTIMIZE, CHECK and REPAIR TABLE commit the
// open transaction before they run, as in MySQL and MariaDB: a ROLLBACK
// after them has nothing to undo. CHECKSUM TABLE does not.
func TestAdminStatementsCommitImplicitly(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"CREATE DATABASE ic", "CREATE TABLE ic.t (id INT PRIMARY KEY)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i, c := range []struct {
		stmts   []string
		commits bool
	}{
		{[]string{"FLUSH STATUS"}, true},
		{[]string{"FLUSH TABLES"}, true},
		{[]string{"FLUSH LOCAL PRIVILEGES"}, true},
		{[]string{"/* x */ LOCK TABLES ic.t READ", "UNLOCK TABLES"}, true},
		{[]string{"LOCK TABLES ic.t WRITE", "UNLOCK TABLES"}, true},
		{[]string{"FLUSH TABLES WITH READ LOCK", "UNLOCK TABLES"}, true},
		{[]string{"OPTIMIZE TABLE ic.t"}, true},
		{[]string{"CHECK TABLE ic.t"}, true},
		{[]string{"REPAIR TABLE ic.t"}, true},
		{[]string{"CHECKSUM TABLE ic.t"}, false},
		{[]string{"SELECT 1"}, false},
	} {
		for _, compiled := range []bool{false, true} {
			id := 2*i + 1
			if compiled {
				id++
			}
			exec("BEGIN")
			if compiled {
				exec("INSERT INTO ic.t VALUES (?)", id) // a prepared, compiled insert
			} else {
				exec(fmt.Sprintf("INSERT INTO ic.t VALUES (%d)", id))
			}
			for _, q := range c.stmts {
				exec(q)
			}
			exec("ROLLBACK")
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM ic.t WHERE id = ?", id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if got := n == 1; got != c.commits {
				t.Errorf("%v (compiled insert %v): row kept after ROLLBACK = %v, want %v", c.stmts, compiled, got, c.commits)
			}
		}
	}
}
