package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// A level Miraj does not give is not taken silently: SERIALIZABLE is
// refused, READ UNCOMMITTED warns that it gives READ COMMITTED; READ
// COMMITTED and REPEATABLE READ are given as they are.
func TestIsolationLevels(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	ctx := context.Background()
	c := dbConn(t, db)
	level := func() string {
		t.Helper()
		var s string
		if err := c.QueryRowContext(ctx, "SELECT @@transaction_isolation").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	warnings := func() []string {
		t.Helper()
		rows, err := c.QueryContext(ctx, "SHOW WARNINGS")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var lvl, msg string
			var code int
			if err := rows.Scan(&lvl, &code, &msg); err != nil {
				t.Fatal(err)
			}
			out = append(out, lvl+" "+msg)
		}
		return out
	}
	for _, q := range []string{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SET SESSION transaction_isolation = 'SERIALIZABLE'", "SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE"} {
		_, err := c.ExecContext(ctx, q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	if l := level(); l != "REPEATABLE-READ" {
		t.Errorf("after refused SETs: @@transaction_isolation = %s", l)
	}
	for q, want := range map[string]string{
		"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED": "",
		"SET @@transaction_isolation = 'READ-UNCOMMITTED'":       "Warning Isolation level READ-UNCOMMITTED gives READ-COMMITTED: Miraj never reads rows another transaction has not committed",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		w := warnings()
		if want == "" && len(w) != 0 || want != "" && (len(w) != 1 || w[0] != want) {
			t.Errorf("%s: warnings %q, want %q", q, w, want)
		}
	}
	if _, err := c.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
		t.Fatal(err)
	}
	if w := warnings(); len(w) != 0 {
		t.Errorf("REPEATABLE READ: warnings %q", w)
	}
}

// Under READ COMMITTED each statement of a transaction reads what others
// committed before it, with the transaction's own writes on top; under
// REPEATABLE READ the transaction keeps the snapshot of its first read.
// Two connections: b commits while a's transaction is open.
func TestReadCommittedSeesNewCommitsPerStatement(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	ctx := context.Background()
	if _, err := db.Exec("CREATE DATABASE rc"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE rc.t (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	a, b := dbConn(t, db), dbConn(t, db)
	exec := func(c interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	rows := func() string {
		t.Helper()
		r, err := a.QueryContext(ctx, "SELECT id, v FROM rc.t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []string
		for r.Next() {
			var id, v int
			if err := r.Scan(&id, &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%d:%d", id, v))
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		level string
		// what a's second and third reads see
		second, third string
	}{
		{"REPEATABLE READ", "1:10 100:1", "1:10 100:1"},
		{"READ COMMITTED", "1:10 2:20 100:1", "1:11 2:20 3:30 100:1"},
	} {
		exec(db, "DELETE FROM rc.t", "INSERT INTO rc.t VALUES (1, 10)")
		exec(a, "SET SESSION TRANSACTION ISOLATION LEVEL "+tc.level, "START TRANSACTION")
		exec(a, "INSERT INTO rc.t VALUES (100, 1)") // a's own write
		if got := rows(); got != "1:10 100:1" {
			t.Fatalf("%s: first read %q", tc.level, got)
		}
		exec(b, "INSERT INTO rc.t VALUES (2, 20)")
		if got := rows(); got != tc.second {
			t.Errorf("%s: second read %q, want %q", tc.level, got, tc.second)
		}
		exec(b, "START TRANSACTION", "INSERT INTO rc.t VALUES (3, 30)", "UPDATE rc.t SET v = 11 WHERE id = 1")
		if got := rows(); got != tc.second {
			t.Errorf("%s: read during b's transaction %q, want %q (nothing uncommitted)", tc.level, got, tc.second)
		}
		exec(b, "COMMIT")
		if got := rows(); got != tc.third {
			t.Errorf("%s: third read %q, want %q", tc.level, got, tc.third)
		}
		exec(a, "COMMIT")
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM rc.t").Scan(&n); err != nil || n != 4 {
			t.Errorf("%s: %d rows after both commits (%v), want 4", tc.level, n, err)
		}
	}
	// SET TRANSACTION without a scope: the next transaction alone.
	exec(a, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", "SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "START TRANSACTION")
	before := rows()
	exec(b, "INSERT INTO rc.t VALUES (4, 40)")
	if got := rows(); got == before {
		t.Errorf("SET TRANSACTION … READ COMMITTED: the transaction kept its snapshot (%q)", got)
	}
	exec(a, "COMMIT", "START TRANSACTION")
	before = rows()
	exec(b, "INSERT INTO rc.t VALUES (5, 50)")
	if got := rows(); got != before {
		t.Errorf("the transaction after: %q then %q, want REPEATABLE READ's snapshot", before, got)
	}
	exec(a, "COMMIT")
}

// A SET of a variable Miraj has no use for warns, once it would turn
// something on.
func TestUnusedVariablesWarn(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxOpenConns(1) // one session: SHOW WARNINGS reads the SET's
	t.Cleanup(func() { db.Exec("SET GLOBAL general_log = OFF, slow_query_log = OFF") })
	for q, want := range map[string]string{
		"SET GLOBAL general_log = 1":                      "general_log is set and not used: Miraj keeps no general query log",
		"SET GLOBAL slow_query_log = 'ON'":                "slow_query_log is set and not used: Miraj keeps no slow query log",
		"SET GLOBAL innodb_buffer_pool_size = 1073741824": "innodb_buffer_pool_size is set and not used: Miraj has no buffer pool: every table is held in memory",
		"SET GLOBAL general_log = OFF":                    "",
		"SET SESSION sql_mode = 'STRICT_TRANS_TABLES'":    "",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var lvl, msg string
		var code int
		err := db.QueryRow("SHOW WARNINGS").Scan(&lvl, &code, &msg)
		switch {
		case want == "" && err == nil:
			t.Errorf("%s: warning %q, want none", q, msg)
		case want != "" && (err != nil || code != 1235 || msg != want):
			t.Errorf("%s: warning %d %q (%v), want 1235 %q", q, code, msg, err, want)
		}
	}
}

// SET [SESSION] TRANSACTION READ ONLY makes every transaction of the
// session read-only (1792, SQLSTATE 25006, for a write), autocommit
// statements included, compiled or planned, unless START TRANSACTION READ
// WRITE; SET TRANSACTION without a scope applies to the next transaction
// alone, and not inside one (1568). Temporary tables stay writable (not
// creatable, as in MySQL).
func TestReadOnlyTransactions(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	ctx := context.Background()
	c := dbConn(t, db)
	exec := func(q string, args ...any) error {
		_, err := c.ExecContext(ctx, q, args...)
		return err
	}
	must := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if err := exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	refused := func(q string, args ...any) {
		t.Helper()
		if got := mysqlErr(exec(q, args...)); got != "1792 25006 Cannot execute statement in a READ ONLY transaction." {
			t.Fatalf("%s: %s, want 1792", q, got)
		}
	}
	readOnly := func() int {
		t.Helper()
		var v int
		if err := c.QueryRowContext(ctx, "SELECT @@transaction_read_only").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	must("CREATE DATABASE ro", "USE ro", "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 0)",
		"CREATE TEMPORARY TABLE tmp (id INT)")

	must("SET SESSION TRANSACTION READ ONLY")
	refused("INSERT INTO t VALUES (2, 0)")
	refused("UPDATE t SET v = ? WHERE id = ?", 1, 1) // a compiled shape
	refused("DELETE FROM t WHERE id = ?", 1)
	must("START TRANSACTION")
	refused("INSERT INTO t VALUES (3, 0)")
	must("SELECT * FROM t", "COMMIT")
	must("INSERT INTO tmp VALUES (1)")
	must("START TRANSACTION READ WRITE", "INSERT INTO t VALUES (4, 0)", "COMMIT")
	must("SET SESSION TRANSACTION READ WRITE", "INSERT INTO t VALUES (5, 0)")

	// For the next transaction only.
	must("SET TRANSACTION READ ONLY", "START TRANSACTION")
	refused("UPDATE t SET v = 2 WHERE id = 1")
	must("ROLLBACK")
	if v := readOnly(); v != 0 {
		t.Fatalf("@@transaction_read_only = %d after the transaction SET TRANSACTION READ ONLY was for", v)
	}
	must("START TRANSACTION", "UPDATE t SET v = 3 WHERE id = 1", "COMMIT")
	must("SET TRANSACTION READ ONLY")
	refused("INSERT INTO t VALUES (6, 0)") // an autocommit statement is the next transaction
	must("INSERT INTO t VALUES (6, 0)")
	must("SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "BEGIN", "COMMIT")
	var level string
	if err := c.QueryRowContext(ctx, "SELECT @@transaction_isolation").Scan(&level); err != nil || level != "REPEATABLE-READ" {
		t.Fatalf("@@transaction_isolation = %s (%v) after the transaction it was set for", level, err)
	}
	must("START TRANSACTION")
	if got := mysqlErr(exec("SET TRANSACTION READ ONLY")); got != "1568 25001 Transaction characteristics can't be changed while a transaction is in progress" {
		t.Fatalf("SET TRANSACTION in a transaction: %s", got)
	}
	must("COMMIT")
	var n int
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 4 {
		t.Fatalf("%d rows (%v), want 4", n, err)
	}
}

// SET TRANSACTION as a connection's first statement sets its next
// transaction only.
func TestSetTransactionFirstStatement(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxOpenConns(1)
	for _, q := range []string{"CREATE DATABASE f1", "CREATE TABLE f1.t (id INT PRIMARY KEY)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db2 := open("root", "", "")
	db2.SetMaxOpenConns(1)
	for _, q := range []string{"SET TRANSACTION READ ONLY", "START TRANSACTION", "INSERT INTO f1.t VALUES (1)"} {
		_, err := db2.Exec(q)
		if q == "INSERT INTO f1.t VALUES (1)" {
			if mysqlErr(err) != "1792 25006 Cannot execute statement in a READ ONLY transaction." {
				t.Fatalf("%v", err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"ROLLBACK", "START TRANSACTION", "INSERT INTO f1.t VALUES (1)", "COMMIT"} {
		if _, err := db2.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// READ COMMITTED with the statements that take other paths: compiled
// writes by key (deferred snapshots), a locking read, a savepoint, and a
// write conflict, which still fails at commit (1213).
func TestReadCommittedWithKeyWritesLocksAndConflicts(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	ctx := context.Background()
	execAll(t, db, "CREATE DATABASE rc2", "CREATE TABLE rc2.t (id INT PRIMARY KEY, v INT)", "INSERT INTO rc2.t VALUES (1, 10), (2, 20), (3, 30)")
	a, b := dbConn(t, db), dbConn(t, db)
	exec := func(c *sql.Conn, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	sum := func(c *sql.Conn, q string) int {
		t.Helper()
		var n int
		if err := c.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	exec(a, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", "START TRANSACTION",
		"UPDATE rc2.t SET v = v + 1 WHERE id = 1", // a write by key
		"SAVEPOINT s1")
	exec(b, "UPDATE rc2.t SET v = 200 WHERE id = 2")
	if got := sum(a, "SELECT SUM(v) FROM rc2.t"); got != 11+200+30 {
		t.Errorf("after b's commit: sum %d, want %d", got, 11+200+30)
	}
	exec(a, "UPDATE rc2.t SET v = v + 1 WHERE id = 3", "ROLLBACK TO SAVEPOINT s1")
	exec(b, "INSERT INTO rc2.t VALUES (4, 40)")
	if got := sum(a, "SELECT SUM(v) FROM rc2.t"); got != 11+200+30+40 {
		t.Errorf("after the rollback to the savepoint and b's insert: sum %d, want %d", got, 11+200+30+40)
	}
	if got := sum(a, "SELECT v FROM rc2.t WHERE id = 2 FOR UPDATE"); got != 200 {
		t.Errorf("locking read: %d", got)
	}
	exec(a, "COMMIT")
	if got := sum(b, "SELECT SUM(v) FROM rc2.t"); got != 11+200+30+40 {
		t.Errorf("after a's commit: sum %d", got)
	}
	// A row a wrote that b changes afterwards: a's commit fails (1213), as
	// under REPEATABLE READ.
	exec(a, "START TRANSACTION", "UPDATE rc2.t SET v = 1 WHERE id = 1")
	exec(b, "UPDATE rc2.t SET v = 2 WHERE id = 1")
	if got := sum(a, "SELECT v FROM rc2.t WHERE id = 1"); got != 1 {
		t.Errorf("a's own write after b's commit: %d, want 1", got)
	}
	_, err := a.ExecContext(ctx, "COMMIT")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1213 {
		t.Errorf("commit over a conflicting write: %v, want 1213", err)
	}
	if got := sum(b, "SELECT v FROM rc2.t WHERE id = 1"); got != 2 {
		t.Errorf("after the conflict: %d, want b's 2", got)
	}
}
