package sqlserver

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// connWithID returns a connection of db, closed at the test's end, and
// its CONNECTION_ID().
func connWithID(t *testing.T, db *sql.DB) (*sql.Conn, int64) {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var id int64
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return c, id
}

// information_schema.INNODB_TRX lists the open transactions: who runs,
// who waits for a row lock (and since when), their connection, statement,
// rows changed and locked; PROCESS is needed to read it.
func TestInnodbTrx(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE it", "CREATE TABLE it.t (id INT PRIMARY KEY, v INT)", "INSERT INTO it.t VALUES (1, 0), (2, 0)",
		"CREATE USER 'app'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON *.* TO 'app'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ctx := context.Background()
	conn := func() (*sql.Conn, int64) { return connWithID(t, root) }
	a, aid := conn()
	b, bid := conn()
	for _, q := range []string{"BEGIN", "INSERT INTO it.t VALUES (3, 0)", "UPDATE it.t SET v = 5 WHERE id = 2", "SELECT * FROM it.t WHERE id = 1 FOR UPDATE"} {
		if _, err := a.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := b.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { _, err := b.ExecContext(ctx, "SELECT * FROM it.t WHERE id = 1 FOR UPDATE"); waited <- err }()
	time.Sleep(300 * time.Millisecond)

	type trx struct {
		thread                   int64
		state                    string
		waitStarted, query       sql.NullString
		rowsLocked, rowsModified int64
	}
	list := func() map[int64]trx {
		t.Helper()
		rows, err := root.Query("SELECT trx_mysql_thread_id, trx_state, trx_wait_started, trx_query, trx_rows_locked, trx_rows_modified FROM information_schema.INNODB_TRX")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]trx{}
		for rows.Next() {
			var r trx
			if err := rows.Scan(&r.thread, &r.state, &r.waitStarted, &r.query, &r.rowsLocked, &r.rowsModified); err != nil {
				t.Fatal(err)
			}
			out[r.thread] = r
		}
		return out
	}
	got := list()
	if r, ok := got[aid]; !ok || r.state != "RUNNING" || r.waitStarted.Valid || r.rowsLocked != 2 || r.rowsModified != 2 {
		t.Fatalf("the lock holder's row: %+v (%v)", r, ok)
	}
	if r, ok := got[bid]; !ok || r.state != "LOCK WAIT" || !r.waitStarted.Valid || r.query.String != "SELECT * FROM it.t WHERE id = 1 FOR UPDATE" {
		t.Fatalf("the waiter's row: %+v (%v)", r, ok)
	}
	if _, err := open("app", "pw", "").Query("SELECT * FROM information_schema.INNODB_TRX"); mysqlErr(err) != "1227 42000 Access denied; you need (at least one of) the PROCESS privilege(s) for this operation" {
		t.Fatalf("INNODB_TRX without PROCESS: %v", err)
	}

	if _, err := a.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if r := list()[bid]; r.state != "RUNNING" || r.rowsLocked != 1 {
		t.Fatalf("the waiter once granted: %+v", r)
	}
	if _, err := b.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if got := list(); len(got) != 0 {
		t.Fatalf("transactions listed after every COMMIT: %+v", got)
	}
}

// An autocommit UPDATE that runs compiled (writeplan.go), without the
// session's transaction, is listed while it waits for a row lock, as the
// planner's is: by key and by a range of keys.
func TestInnodbTrxListsCompiledAutocommitWrites(t *testing.T) {
	s, open := startServer(t)
	root := open("root", "", "")
	execAll(t, root, "CREATE DATABASE ia", "CREATE TABLE ia.t (id INT PRIMARY KEY, v INT)", "INSERT INTO ia.t VALUES (1, 0), (2, 0)")
	ctx := context.Background()
	conn := func() (*sql.Conn, int64) { return connWithID(t, root) }
	holder, _ := conn()
	for _, q := range []string{"BEGIN", "SELECT * FROM ia.t WHERE id = 1 FOR UPDATE"} {
		if _, err := holder.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	byKey, keyID := conn()
	byRange, rangeID := conn()
	before := s.points.written.Load()
	done := make(chan error, 2)
	// Arguments: go-sql-driver prepares the statements, which are compiled.
	go func() { _, err := byKey.ExecContext(ctx, "UPDATE ia.t SET v = ? WHERE id = ?", 7, 1); done <- err }()
	go func() {
		_, err := byRange.ExecContext(ctx, "UPDATE ia.t SET v = v + 1 WHERE id BETWEEN ? AND ?", 1, 2)
		done <- err
	}()
	waiting := func() map[int64]string {
		rows, err := root.Query("SELECT trx_mysql_thread_id, trx_state FROM information_schema.INNODB_TRX")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]string{}
		for rows.Next() {
			var id int64
			var state string
			if err := rows.Scan(&id, &state); err != nil {
				t.Fatal(err)
			}
			out[id] = state
		}
		return out
	}
	var got map[int64]string
	for range 100 {
		if got = waiting(); got[keyID] == "LOCK WAIT" && got[rangeID] == "LOCK WAIT" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got[keyID] != "LOCK WAIT" || got[rangeID] != "LOCK WAIT" {
		t.Fatalf("INNODB_TRX while the autocommit UPDATEs wait: %v, want connections %d and %d in LOCK WAIT", got, keyID, rangeID)
	}
	if _, err := holder.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// The two UPDATEs and the holder's COMMIT.
	if n := s.points.written.Load() - before; n != 3 {
		t.Fatalf("%d statements ran compiled, want the 2 UPDATEs and the COMMIT", n)
	}
	if got := waiting(); len(got) != 0 {
		t.Fatalf("transactions listed after the statements: %v", got)
	}
}
