package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// FLUSH TABLES WITH READ LOCK stops every other session's commits until
// UNLOCK TABLES or the holder's end, whatever path the write takes
// (compiled or planned, autocommit or COMMIT, DDL); reads go on; the
// holder's own writes get 1223; a waiting write can be killed (1317).
func TestGlobalReadLock(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"CREATE DATABASE rl", "CREATE TABLE rl.t (id INT PRIMARY KEY, v INT)", "INSERT INTO rl.t VALUES (1, 0), (4, 0)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	exec := func(c *sql.Conn, q string, args ...any) error {
		_, err := c.ExecContext(ctx, q, args...)
		return err
	}
	count := func() int {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM rl.t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// blocked runs q on a connection of its own and checks that it does
	// not complete while the lock is held; the returned channel gets its
	// result once it does.
	blocked := func(qs ...string) chan error {
		t.Helper()
		c := conn()
		done := make(chan error, 1)
		go func() {
			for _, q := range qs {
				if err := exec(c, q); err != nil {
					done <- fmt.Errorf("%s: %w", q, err)
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			t.Fatalf("%v completed under the global read lock (%v)", qs, err)
		case <-time.After(300 * time.Millisecond):
		}
		return done
	}

	holder := conn()
	if err := exec(holder, "/* backup */ FLUSH TABLES WITH READ LOCK"); err != nil {
		t.Fatal(err)
	}
	// Should the test fail, the waiting writes go before the connections
	// close.
	t.Cleanup(func() { exec(holder, "UNLOCK TABLES") })
	writes := []chan error{
		blocked("INSERT INTO rl.t VALUES (2, 0)"),
		blocked("UPDATE rl.t SET v = v + 1 WHERE id = 1"),
		blocked("BEGIN", "INSERT INTO rl.t VALUES (3, 0)", "COMMIT"),
		blocked("CREATE TABLE rl.u (id INT PRIMARY KEY)"),
	}
	// A prepared write (compiled) waits too.
	pc := conn()
	st, err := pc.PrepareContext(ctx, "UPDATE rl.t SET v = v + ? WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	prepared := make(chan error, 1)
	go func() { _, err := st.ExecContext(ctx, 10, 4); prepared <- err }()
	select {
	case err := <-prepared:
		t.Fatalf("a prepared UPDATE completed under the global read lock (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if got := processStates(t, db); got["INSERT INTO rl.t VALUES (2, 0)"] != "Waiting for global read lock" {
		t.Fatalf("SHOW PROCESSLIST under the global read lock: %v", got)
	}
	// Reads go on, the holder's and others'.
	if n := count(); n != 2 {
		t.Fatalf("%d rows under the lock, want 2", n)
	}
	var v int
	if err := holder.QueryRowContext(ctx, "SELECT v FROM rl.t WHERE id = ?", 1).Scan(&v); err != nil || v != 0 {
		t.Fatalf("holder's read: %d, %v", v, err)
	}
	// The holder's own writes fail with 1223, in autocommit mode or in a
	// transaction, text or prepared.
	for _, q := range []string{"INSERT INTO rl.t VALUES (9, 0)", "UPDATE rl.t SET v = 5 WHERE id = 1", "BEGIN", "DELETE FROM rl.t WHERE id = 1"} {
		err := exec(holder, q)
		if q == "BEGIN" {
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		if num, _ := mysqlErrorNumber(err); num != 1223 {
			t.Fatalf("holder's %s: %v, want 1223", q, err)
		}
	}
	if num, _ := mysqlErrorNumber(exec(holder, "UPDATE rl.t SET v = ? WHERE id = ?", 5, 1)); num != 1223 {
		t.Fatal("holder's prepared UPDATE: want 1223")
	}
	if err := exec(holder, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	// A prepared FLUSH TABLES WITH READ LOCK is refused, not ignored.
	if _, err := holder.PrepareContext(ctx, "FLUSH TABLES WITH READ LOCK"); err == nil {
		t.Fatal("FLUSH TABLES WITH READ LOCK prepared")
	} else if num, _ := mysqlErrorNumber(err); num != 1295 {
		t.Fatalf("prepared FLUSH TABLES WITH READ LOCK: %v, want 1295", err)
	}

	if err := exec(holder, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	for i, ch := range writes {
		if err := <-ch; err != nil {
			t.Fatalf("write %d after UNLOCK TABLES: %v", i, err)
		}
	}
	if err := <-prepared; err != nil {
		t.Fatalf("prepared UPDATE after UNLOCK TABLES: %v", err)
	}
	if n := count(); n != 4 {
		t.Fatalf("%d rows after UNLOCK TABLES, want 4 (none of the holder's)", n)
	}
	var v4 int
	if err := db.QueryRow("SELECT (SELECT v FROM rl.t WHERE id = 1), (SELECT v FROM rl.t WHERE id = 4)").Scan(&v, &v4); err != nil || v != 1 || v4 != 10 {
		t.Fatalf("v = %d and %d (%v) after the UPDATEs, want 1 and 10", v, v4, err)
	}

	// The holder's end gives the lock back; a waiting write can be killed.
	h2 := conn()
	if err := exec(h2, "FLUSH TABLES t WITH READ LOCK"); err != nil {
		t.Fatal(err)
	}
	var h2id int64
	if err := h2.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&h2id); err != nil {
		t.Fatal(err)
	}
	victim := conn()
	var id int64
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	killed := make(chan error, 1)
	go func() { killed <- exec(victim, "DELETE FROM rl.t WHERE id = 2") }()
	time.Sleep(300 * time.Millisecond)
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	if num, _ := mysqlErrorNumber(<-killed); num != 1317 {
		t.Fatal("KILL QUERY of a write waiting for the global read lock: want 1317")
	}
	late := blocked("DELETE FROM rl.t WHERE id = 2")
	if _, err := db.Exec(fmt.Sprintf("KILL %d", h2id)); err != nil {
		t.Fatal(err)
	}
	if err := <-late; err != nil {
		t.Fatalf("write after the holder's end: %v", err)
	}
	if n := count(); n != 3 {
		t.Fatalf("%d rows at the end, want 3", n)
	}
}

// Taking the global read lock needs what MySQL asks: RELOAD for FLUSH
// TABLES WITH READ LOCK, LOCK TABLES and SELECT for LOCK TABLES … READ,
// whose tables must exist. A refused statement takes no lock: the others'
// writes go on.
func TestReadLockNeedsPrivileges(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE rl", "CREATE TABLE rl.t (id INT PRIMARY KEY)",
		"CREATE USER 'sel'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON rl.* TO 'sel'@'%'",
		"CREATE USER 'locker'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT, LOCK TABLES ON rl.* TO 'locker'@'%'",
		"CREATE USER 'reloader'@'%' IDENTIFIED BY 'pw'", "GRANT RELOAD ON *.* TO 'reloader'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const need = "Access denied; you need (at least one of) the %s privilege(s) for this operation"
	id := 0
	writeGoesOn := func(after string) {
		t.Helper()
		id++
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := root.ExecContext(ctx, "INSERT INTO rl.t VALUES (?)", id); err != nil {
			t.Fatalf("a write after %s: %v", after, err)
		}
	}
	sel, locker, reloader := open("sel", "pw", ""), open("locker", "pw", ""), open("reloader", "pw", "")
	for _, c := range []struct {
		db   *sql.DB
		q    string
		want string
	}{
		{sel, "FLUSH TABLES WITH READ LOCK", "1227 42000 " + fmt.Sprintf(need, "RELOAD")},
		{sel, "LOCK TABLES rl.t READ", "1044 42000 Access denied for user 'sel'@'%' to database 'rl'"},
		{locker, "FLUSH TABLES WITH READ LOCK", "1227 42000 " + fmt.Sprintf(need, "RELOAD")},
		{locker, "LOCK TABLES rl.nosuch READ", "1146 42S02 Table 'rl.nosuch' doesn't exist"},
	} {
		_, err := c.db.Exec(c.q)
		if got := mysqlErr(err); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.q, got, c.want)
		}
		writeGoesOn(c.q + " was refused")
	}
	ctx := context.Background()
	for _, c := range []struct {
		db *sql.DB
		q  string
	}{{locker, "LOCK TABLES rl.t READ"}, {reloader, "FLUSH TABLES WITH READ LOCK"}} {
		conn, err := c.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, c.q); err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		rows, err := conn.QueryContext(ctx, "SHOW WARNINGS")
		if err != nil {
			t.Fatal(err)
		}
		if rows.Next() {
			t.Fatalf("%s left warnings", c.q)
		}
		rows.Close()
		done := make(chan error, 1)
		go func() { _, err := root.Exec("INSERT INTO rl.t VALUES (100)"); done <- err }()
		select {
		case err := <-done:
			t.Fatalf("a write completed under %s (%v)", c.q, err)
		case <-time.After(300 * time.Millisecond):
		}
		if _, err := conn.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("the write after UNLOCK TABLES: %v", err)
		}
		if _, err := root.Exec("DELETE FROM rl.t WHERE id = 100"); err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
}

func TestReadLockCommand(t *testing.T) {
	for _, c := range []struct {
		q             string
		flush, unlock bool
		rest          string
	}{
		{"FLUSH TABLES WITH READ LOCK", true, false, ""},
		{"flush table with read lock;", true, false, ""},
		{"/* x */ FLUSH LOCAL TABLES a, b WITH READ LOCK; SELECT 1", true, false, " SELECT 1"},
		{"FLUSH TABLES", false, false, ""},
		{"FLUSH TABLES t FOR EXPORT", false, false, ""},
		{"UNLOCK TABLES", false, true, ""},
		{"unlock table; select 2", false, true, " select 2"},
		{"SELECT 'FLUSH TABLES WITH READ LOCK'", false, false, ""},
		{"LOCK TABLES `a` READ /*!32311 LOCAL */,`b` READ /*!32311 LOCAL */", false, false, ""},
		{"lock table a read", false, false, ""},
		{"LOCK TABLES a READ, b WRITE", false, false, ""},
		{"LOCK TABLES a LOW_PRIORITY WRITE", false, false, ""},
	} {
		flush, unlock, end := readLockCommand(c.q)
		rest := ""
		if flush || unlock {
			rest = c.q[end:]
		}
		if flush != c.flush || unlock != c.unlock || rest != c.rest {
			t.Errorf("%q: %v %v %q, want %v %v %q", c.q, flush, unlock, rest, c.flush, c.unlock, c.rest)
		}
	}
}
