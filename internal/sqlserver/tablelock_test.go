package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockTest is a server with database tl and helpers to run statements on
// connections of their own.
type lockTest struct {
	t     *testing.T
	db    *sql.DB
	ctx   context.Context
	conns []*sql.Conn // closed after every other cleanup (the locks' release first)
}

func newLockTest(t *testing.T) *lockTest {
	_, open := startServer(t)
	lt := &lockTest{t: t, db: open("root", "", ""), ctx: context.Background()}
	t.Cleanup(func() {
		for _, c := range lt.conns {
			c.Close()
		}
	})
	for _, q := range []string{
		"CREATE DATABASE tl",
		"CREATE TABLE tl.t (id INT PRIMARY KEY, v INT)", "INSERT INTO tl.t VALUES (1, 0), (2, 0)",
		"CREATE TABLE tl.u (id INT PRIMARY KEY, v INT)", "INSERT INTO tl.u VALUES (1, 10)",
		"CREATE DATABASE other", "CREATE TABLE other.w (id INT PRIMARY KEY, v INT)", "INSERT INTO other.w VALUES (1, 0)",
	} {
		if _, err := lt.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return lt
}

func (lt *lockTest) conn() *sql.Conn {
	c, err := lt.db.Conn(lt.ctx)
	if err != nil {
		lt.t.Fatal(err)
	}
	lt.conns = append(lt.conns, c)
	return c
}

func (lt *lockTest) exec(c *sql.Conn, q string, args ...any) error {
	_, err := c.ExecContext(lt.ctx, q, args...)
	return err
}

func (lt *lockTest) must(c *sql.Conn, qs ...string) {
	lt.t.Helper()
	for _, q := range qs {
		if err := lt.exec(c, q); err != nil {
			lt.t.Fatalf("%s: %v", q, err)
		}
	}
}

func (lt *lockTest) int(c *sql.Conn, q string, args ...any) int {
	lt.t.Helper()
	var n int
	if err := c.QueryRowContext(lt.ctx, q, args...).Scan(&n); err != nil {
		lt.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// blocked runs fn on a goroutine and checks it has not returned after
// 300 ms; the channel gets its result once it does.
func (lt *lockTest) blocked(what string, fn func() error) chan error {
	lt.t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		lt.t.Fatalf("%s completed while it should wait for a table lock (%v)", what, err)
	case <-time.After(300 * time.Millisecond):
	}
	return done
}

// waitFor waits up to 10 s for a statement of information_schema.PROCESSLIST
// that meets cond.
func (lt *lockTest) waitFor(what, cond string) {
	lt.t.Helper()
	c := lt.conn()
	for deadline := time.Now().Add(10 * time.Second); lt.int(c, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE "+cond) == 0; {
		if time.Now().After(deadline) {
			lt.t.Fatalf("%s did not show in the process list within 10 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// goesOn runs fn and checks it returns within 10 s without an error.
func (lt *lockTest) goesOn(what string, fn func() error) {
	lt.t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			lt.t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		lt.t.Fatalf("%s waited for a table lock it does not conflict with", what)
	}
}

// LOCK TABLES … WRITE keeps every other session from a table, reads
// included, until UNLOCK TABLES; READ keeps their writes out; the holder
// uses only what it locked (1100) and writes only what it locked WRITE
// (1099). A read that waited sees the holder's writes.
func TestTableLocks(t *testing.T) {
	lt := newLockTest(t)
	holder := lt.conn()
	lt.must(holder, "USE tl", "LOCK TABLES t WRITE, u READ")
	t.Cleanup(func() { lt.exec(holder, "UNLOCK TABLES") })
	rows, err := holder.QueryContext(lt.ctx, "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Fatal("LOCK TABLES left warnings")
	}
	rows.Close()

	// Others: t is out of reach, text or prepared (compiled point
	// lookups), read or written; u can be read, not written; other
	// tables are free.
	other := lt.conn()
	var readT int
	waits := map[string]chan error{
		"SELECT of t": lt.blocked("SELECT of t", func() error {
			return lt.conn().QueryRowContext(lt.ctx, "SELECT v FROM tl.t WHERE id = 1").Scan(&readT)
		}),
		"prepared SELECT of t": lt.blocked("prepared SELECT of t", func() error {
			var v int
			return lt.conn().QueryRowContext(lt.ctx, "SELECT v FROM tl.t WHERE id = ?", 2).Scan(&v)
		}),
		"UPDATE of t": lt.blocked("UPDATE of t", func() error {
			return lt.exec(lt.conn(), "UPDATE tl.t SET v = v + 100 WHERE id = 2")
		}),
		"INSERT into u": lt.blocked("INSERT into u", func() error {
			return lt.exec(lt.conn(), "INSERT INTO tl.u VALUES (?, 0)", 2)
		}),
		"SELECT joining u and t": lt.blocked("SELECT joining u and t", func() error {
			var n int
			return lt.conn().QueryRowContext(lt.ctx, "SELECT COUNT(*) FROM tl.u JOIN tl.t ON u.id = t.id").Scan(&n)
		}),
	}
	// SHOW PROCESSLIST shows the waiting statements and what they wait
	// for.
	var waiting int
	if err := lt.db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'Waiting for table metadata lock' AND INFO LIKE '%tl.t%'").Scan(&waiting); err != nil || waiting != 4 {
		t.Fatalf("%d statements shown waiting for a table lock in information_schema.PROCESSLIST (%v), want 4", waiting, err)
	}
	if got := processStates(t, lt.db); got["SELECT v FROM tl.t WHERE id = 1"] != "Waiting for table metadata lock" {
		t.Fatalf("SHOW PROCESSLIST: %v", got)
	}
	// SHOW OPEN TABLES counts the locks on each table.
	rows, err = other.QueryContext(lt.ctx, "SHOW OPEN TABLES FROM tl WHERE In_use > 0")
	if err != nil {
		t.Fatal(err)
	}
	var inUse []string
	for rows.Next() {
		var db, table string
		var use, nameLocked int
		if err := rows.Scan(&db, &table, &use, &nameLocked); err != nil {
			t.Fatal(err)
		}
		inUse = append(inUse, fmt.Sprintf("%s.%s %d", db, table, use))
	}
	rows.Close()
	if got := strings.Join(inUse, ", "); got != "tl.t 1, tl.u 1" {
		t.Fatalf("SHOW OPEN TABLES … In_use > 0: %s", got)
	}
	lt.goesOn("SELECT of u", func() error {
		var v int
		return other.QueryRowContext(lt.ctx, "SELECT v FROM tl.u WHERE id = 1").Scan(&v)
	})
	lt.goesOn("write to another table", func() error { return lt.exec(other, "UPDATE other.w SET v = 1 WHERE id = 1") })
	lt.goesOn("SHOW TABLES", func() error { return lt.exec(other, "SHOW TABLES FROM tl") })

	// The holder.
	for _, c := range []struct{ q, want string }{
		{"SELECT * FROM other.w", "1100 HY000 Table 'w' was not locked with LOCK TABLES"},
		{"INSERT INTO u VALUES (3, 0)", "1099 HY000 Table 'u' was locked with a READ lock and can't be updated"},
		{"UPDATE tl.u SET v = 0", "1099 HY000 Table 'u' was locked with a READ lock and can't be updated"},
		{"FLUSH TABLES WITH READ LOCK", "1192 HY000 Can't execute the given command because you have active locked tables or an active transaction"},
	} {
		if got := mysqlErr(lt.exec(holder, c.q)); got != c.want {
			t.Errorf("holder's %s:\n got %s\nwant %s", c.q, got, c.want)
		}
	}
	if _, err := holder.PrepareContext(lt.ctx, "LOCK TABLES t READ"); mysqlErr(err) != "1295 HY000 This command is not supported in the prepared statement protocol yet" {
		t.Errorf("prepared LOCK TABLES: %v, want 1295", err)
	}
	n := lt.int(holder, "SELECT v FROM t WHERE id = ?", 1)
	lt.must(holder, fmt.Sprintf("UPDATE t SET v = %d WHERE id = 1", n+5), "INSERT INTO t SELECT id + 10, v FROM u")
	lt.int(holder, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'tl'")

	lt.must(holder, "UNLOCK TABLES")
	for what, ch := range waits {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatalf("%s after UNLOCK TABLES: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still waits after UNLOCK TABLES", what)
		}
	}
	if readT != 5 {
		t.Fatalf("the SELECT that waited read %d, want the holder's 5", readT)
	}
	if n := lt.int(other, "SELECT COUNT(*) FROM tl.t"); n != 3 {
		t.Fatalf("%d rows in t, want 3", n)
	}
}

// processStates maps the statements of SHOW PROCESSLIST to their State.
func processStates(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SHOW PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id int64
		var user, host, command, time string
		var dbName, state, info sql.NullString
		if err := rows.Scan(&id, &user, &host, &dbName, &command, &time, &state, &info); err != nil {
			t.Fatal(err)
		}
		out[info.String] = state.String
	}
	return out
}

// A LOCK TABLES waits for the statements in progress that use its tables
// and for other sessions' conflicting locks; a statement's wait ends with
// lock_wait_timeout (1205) or KILL QUERY (1317); the locks go with UNLOCK
// TABLES, START TRANSACTION, another LOCK TABLES and the session's end.
func TestTableLockWaits(t *testing.T) {
	lt := newLockTest(t)

	// A statement in progress on t: the lock comes after it, so the lock
	// holder reads what the UPDATE wrote.
	updater := lt.conn()
	go lt.exec(updater, "UPDATE tl.t SET v = SLEEP(1) + 7 WHERE id = 1")
	// The lock is asked for once the UPDATE runs (it sleeps a second).
	lt.waitFor("the UPDATE", "INFO LIKE 'UPDATE tl.t SET v = SLEEP%'")
	holder := lt.conn()
	lt.must(holder, "LOCK TABLES tl.t WRITE")
	if v := lt.int(holder, "SELECT v FROM tl.t WHERE id = 1"); v != 7 {
		t.Fatalf("under LOCK TABLES … WRITE, v = %d: the lock was granted while an UPDATE of the table ran", v)
	}

	// Two READ locks share; a WRITE lock waits for both, and a
	// statement waits for it.
	r1, r2, wr := lt.conn(), lt.conn(), lt.conn()
	lt.must(r1, "LOCK TABLES tl.u READ")
	lt.must(r2, "LOCK TABLES tl.u READ")
	w := lt.blocked("LOCK TABLES u WRITE", func() error { return lt.exec(wr, "LOCK TABLES tl.u WRITE") })
	lt.must(r1, "UNLOCK TABLES")
	lt.must(r2, "START TRANSACTION") // gives the lock back
	if err := <-w; err != nil {
		t.Fatal(err)
	}
	lt.must(r2, "COMMIT")
	sel := lt.blocked("SELECT of u", func() error { return lt.exec(lt.conn(), "SELECT * FROM tl.u") })
	lt.must(wr, "UNLOCK TABLES")
	if err := <-sel; err != nil {
		t.Fatal(err)
	}

	// lock_wait_timeout.
	c := lt.conn()
	lt.must(c, "SET lock_wait_timeout = 1")
	start := time.Now()
	if got := mysqlErr(lt.exec(c, "DELETE FROM tl.t WHERE id = 2")); got != "1205 HY000 Lock wait timeout exceeded; try restarting transaction" {
		t.Fatalf("a wait past lock_wait_timeout: %s", got)
	}
	if d := time.Since(start); d < time.Second {
		t.Fatalf("lock_wait_timeout = 1 ended the wait after %v", d)
	}

	// KILL QUERY.
	victim := lt.conn()
	id := lt.int(victim, "SELECT CONNECTION_ID()")
	killed := make(chan error, 1)
	go func() { killed <- lt.exec(victim, "SELECT * FROM tl.t") }()
	lt.waitFor("the SELECT", fmt.Sprintf("ID = %d AND STATE = 'Waiting for table metadata lock'", id))
	if _, err := lt.db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	if got := mysqlErr(<-killed); got != "1317 70100 Query execution was interrupted" {
		t.Fatalf("KILL QUERY of a statement waiting for a table lock: %s", got)
	}

	// Another LOCK TABLES replaces the list (WRITE by READ: reads go
	// on); the holder's end gives it back.
	lt.must(holder, "LOCK TABLES tl.t READ")
	lt.goesOn("SELECT of t under READ", func() error { return lt.exec(c, "SELECT * FROM tl.t") })
	upd := lt.blocked("UPDATE of t under READ", func() error { return lt.exec(lt.conn(), "UPDATE tl.t SET v = 3 WHERE id = 2") })
	holderID := lt.int(holder, "SELECT CONNECTION_ID()")
	if _, err := lt.db.Exec(fmt.Sprintf("KILL %d", holderID)); err != nil {
		t.Fatal(err)
	}
	if err := <-upd; err != nil {
		t.Fatalf("UPDATE after the holder's end: %v", err)
	}
}

// An open transaction that wrote a database commits only once no other
// session holds a table lock there; its own statements on a locked table
// wait too.
func TestTableLockHoldsCommits(t *testing.T) {
	lt := newLockTest(t)
	writer := lt.conn()
	lt.must(writer, "BEGIN", "INSERT INTO tl.u VALUES (5, 5)")
	holder := lt.conn()
	lt.must(holder, "LOCK TABLES tl.t READ, tl.u READ")
	commit := lt.blocked("COMMIT", func() error { return lt.exec(writer, "COMMIT") })
	if n := lt.int(holder, "SELECT COUNT(*) FROM tl.u"); n != 1 {
		t.Fatalf("the holder sees %d rows in u, want 1", n)
	}
	lt.must(holder, "UNLOCK TABLES")
	if err := <-commit; err != nil {
		t.Fatal(err)
	}
	if n := lt.int(holder, "SELECT COUNT(*) FROM tl.u"); n != 2 {
		t.Fatalf("%d rows in u after the COMMIT, want 2", n)
	}

	// A transaction begun under the locks commits at UNLOCK TABLES.
	lt.must(holder, "SET autocommit = 0", "LOCK TABLES tl.t WRITE", "UPDATE tl.t SET v = 42 WHERE id = 2", "UNLOCK TABLES")
	if v := lt.int(lt.conn(), "SELECT v FROM tl.t WHERE id = 2"); v != 42 {
		t.Fatalf("v = %d after UNLOCK TABLES, want the holder's 42 committed", v)
	}
}

// LOCK TABLES … WRITE makes a read-modify-write by statements in autocommit
// mode safe: clients that each read a counter, then write it plus one,
// under the lock, lose no increment.
func TestTableLockCounter(t *testing.T) {
	lt := newLockTest(t)
	const clients, rounds = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		c := lt.conn()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				if err := lt.exec(c, "LOCK TABLES tl.u WRITE"); err != nil {
					errs <- err
					return
				}
				var v int
				if err := c.QueryRowContext(lt.ctx, "SELECT v FROM tl.u WHERE id = 1").Scan(&v); err != nil {
					errs <- err
					return
				}
				time.Sleep(time.Millisecond) // room for another client to read
				if err := lt.exec(c, "UPDATE tl.u SET v = ? WHERE id = 1", v+1); err != nil {
					errs <- err
					return
				}
				if err := lt.exec(c, "UNLOCK TABLES"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v := lt.int(lt.conn(), "SELECT v FROM tl.u WHERE id = 1"); v != 10+clients*rounds {
		t.Fatalf("counter at %d, want %d: increments were lost", v, 10+clients*rounds)
	}
}

// Locking a view locks the tables it reads; a statement through a view
// waits for its tables' locks.
func TestTableLockViews(t *testing.T) {
	lt := newLockTest(t)
	admin := lt.conn()
	lt.must(admin, "CREATE VIEW tl.vt AS SELECT id, v FROM tl.t")
	holder := lt.conn()
	lt.must(holder, "LOCK TABLES tl.vt READ")
	upd := lt.blocked("UPDATE of a table under a locked view", func() error {
		return lt.exec(lt.conn(), "UPDATE tl.t SET v = 9 WHERE id = 1")
	})
	if n := lt.int(holder, "SELECT COUNT(*) FROM tl.vt"); n != 2 {
		t.Fatalf("the holder reads %d rows through the view, want 2", n)
	}
	lt.must(holder, "UNLOCK TABLES")
	if err := <-upd; err != nil {
		t.Fatal(err)
	}
	lt.must(holder, "LOCK TABLES tl.t WRITE")
	sel := lt.blocked("SELECT through a view", func() error { return lt.exec(lt.conn(), "SELECT * FROM tl.vt") })
	lt.must(holder, "UNLOCK TABLES")
	if err := <-sel; err != nil {
		t.Fatal(err)
	}
}
