package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// In a transaction, compiled writes by key stay pending beside the
// transaction's view (storage's pointwrite.go) until something else reads
// it: every other statement of the transaction sees them as written, a
// savepoint keeps them, a duplicate key is still 1062, and COMMIT makes
// them visible to others at once, ROLLBACK drops them.
func TestPendingKeyWritesInTransactions(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE pw",
		"CREATE TABLE pw.t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(10), KEY kk (k))",
		"INSERT INTO pw.t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	a, _ := db.Conn(ctx)
	defer a.Close()
	prep := func(q string) func(args ...any) error {
		st, err := a.PrepareContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return func(args ...any) error { _, err := st.ExecContext(ctx, args...); return err }
	}
	update := prep("UPDATE pw.t SET k = k + ? WHERE id = ?")
	del := prep("DELETE FROM pw.t WHERE id = ?")
	ins := prep("INSERT INTO pw.t (id, k, c) VALUES (?, ?, ?)")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	read := func(q string, onA bool) string {
		t.Helper()
		var r result
		var err error
		if onA {
			r, err = query(t, a, q)
		} else {
			r, err = query(t, db, q)
		}
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return fmt.Sprint(r.rows)
	}
	errNum := func(err error) uint16 { n, _ := mysqlErrorNumber(err); return n }
	const all = "SELECT id, k, c FROM pw.t ORDER BY id"
	const byK = "SELECT id FROM pw.t WHERE k > 15 ORDER BY k"

	if _, err := a.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	before := s.points.written.Load()
	must(update(5, 1))    // 1 15 a
	must(del(2))          // gone
	must(ins(2, 21, "B")) // back, new values
	must(ins(4, 40, "d")) // new
	must(update(100, 4))  // 4 140 d: an update of its own insert
	if got := s.points.written.Load() - before; got != 5 {
		t.Fatalf("%d of 5 writes compiled", got)
	}
	// Another connection sees none of it; this one sees all of it, by
	// the primary key and through the k index.
	if got := read(all, false); got != "[1|10|a 2|20|b 3|30|c]" {
		t.Fatalf("another connection before COMMIT: %s", got)
	}
	if got := read(all, true); got != "[1|15|a 2|21|B 3|30|c 4|140|d]" {
		t.Fatalf("the transaction's own view: %s", got)
	}
	if got := read(byK, true); got != "[2 3 4]" {
		t.Fatalf("through the k index: %s", got)
	}
	// More pending writes, then a savepoint and writes rolled back to it.
	must(update(1, 3)) // 3 31 c
	if _, err := a.ExecContext(ctx, "SAVEPOINT s"); err != nil {
		t.Fatal(err)
	}
	must(del(3))
	must(ins(5, 50, "e"))
	if err := ins(5, 51, "x"); errNum(err) != 1062 {
		t.Fatalf("a second insert of id 5: %v, want 1062", err)
	}
	if _, err := a.ExecContext(ctx, "ROLLBACK TO SAVEPOINT s"); err != nil {
		t.Fatal(err)
	}
	if got := read("SELECT id, k FROM pw.t WHERE id IN (3, 5) ORDER BY id", true); got != "[3|31]" {
		t.Fatalf("after ROLLBACK TO SAVEPOINT: %s", got)
	}
	// The modified rows count what is pending too.
	if got := read("SELECT trx_rows_modified FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()", true); got != "[6]" {
		t.Fatalf("INNODB_TRX.trx_rows_modified: %s, want 6", got)
	}
	if _, err := a.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if got := read(all, false); got != "[1|15|a 2|21|B 3|31|c 4|140|d]" {
		t.Fatalf("another connection after COMMIT: %s", got)
	}

	// ROLLBACK drops pending writes; a conflict with another commit is
	// found at COMMIT as for any write (1213).
	if _, err := a.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	must(update(1, 1))
	must(del(4))
	if _, err := a.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if got := read(all, false); got != "[1|15|a 2|21|B 3|31|c 4|140|d]" {
		t.Fatalf("after ROLLBACK: %s", got)
	}
	if _, err := a.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	must(update(1, 1))
	if _, err := db.Exec("UPDATE pw.t SET c = 'z' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx, "COMMIT"); errNum(err) != 1213 {
		t.Fatalf("COMMIT after another commit wrote the row: %v, want 1213", err)
	}
	if got := read("SELECT k, c FROM pw.t WHERE id = 1", false); got != "[15|z]" {
		t.Fatalf("after the conflict: %s", got)
	}
}

// A transaction whose first statements on a database are compiled writes
// by key takes its snapshot at its first read (storage's deferred.go), as
// InnoDB makes its read view at the first consistent read: until then it
// holds none, so other commits change the committed rows in place, and a
// write of it worked out on a row another commit replaced since fails with
// 1213 at COMMIT (first committer wins), the rows as that one left them.
func TestKeyWritesTakeTheSnapshotAtTheFirstRead(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE dw",
		"CREATE TABLE dw.t (id INT PRIMARY KEY, k INT NOT NULL, v INT NOT NULL, KEY kk (k))",
		"INSERT INTO dw.t VALUES (1, 0, 0), (2, 0, 0), (3, 0, 0), (4, 0, 0)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	a, _ := db.Conn(ctx)
	defer a.Close()
	b, _ := db.Conn(ctx)
	defer b.Close()
	// Prepared before the transactions, as an application's statement
	// cache does (TestStatementsPreparedInATransactionTakeNoSnapshot
	// prepares them inside).
	add := func(c interface {
		PrepareContext(context.Context, string) (*sql.Stmt, error)
	}) func(d, id int) error {
		st, err := c.PrepareContext(ctx, "UPDATE dw.t SET v = v + ? WHERE id = ?")
		if err != nil {
			t.Fatal(err)
		}
		return func(d, id int) error { _, err := st.ExecContext(ctx, d, id); return err }
	}
	addA, addB := add(a), add(b)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	v := func(c interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}, id int) int {
		t.Helper()
		var n int
		must(c.QueryRowContext(ctx, "SELECT v FROM dw.t WHERE id = ?", id).Scan(&n))
		return n
	}
	inPlace := func() int {
		t.Helper()
		var name string
		var n int
		must(db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Miraj_commits_in_place'").Scan(&name, &n))
		return n
	}
	errNum := func(err error) uint16 { n, _ := mysqlErrorNumber(err); return n }
	for i := 0; i < 3; i++ { // compiled from the second execution on
		must(addA(0, 4))
		must(addB(0, 4))
	}

	must(addB(5, 4))
	before := inPlace()
	must(exec(ctx, a, "BEGIN"))
	must(addA(1, 1))
	must(addB(10, 2))
	if got := inPlace() - before; got != 1 {
		t.Fatalf("a commit beside a transaction of writes by key changed the rows in place %d times, want 1", got)
	}
	if got := v(a, 2); got != 10 {
		t.Fatalf("first read after another's commit: v = %d, want 10 (the snapshot is taken at the first read)", got)
	}
	must(addB(10, 2))
	if got, own := v(a, 2), v(a, 1); got != 10 || own != 1 {
		t.Fatalf("after the first read: v(2) = %d, want 10 (the snapshot stays); own v(1) = %d, want 1", got, own)
	}
	must(exec(ctx, a, "COMMIT"))

	// Worked out on a row another commit replaced before COMMIT.
	must(exec(ctx, a, "BEGIN"))
	must(addA(1, 3))
	must(addB(100, 3))
	if err := exec(ctx, a, "COMMIT"); errNum(err) != 1213 {
		t.Fatalf("COMMIT over a replaced row: %v, want 1213", err)
	}
	// Replaced before the first read: that read shows the transaction's
	// own write over the newest rows, and COMMIT fails as well.
	must(exec(ctx, a, "BEGIN"))
	must(addA(1, 4))
	must(addB(100, 4))
	if got := v(a, 4); got != 6 {
		t.Fatalf("own write read after another's commit of the row: v = %d, want 6", got)
	}
	if err := exec(ctx, a, "COMMIT"); errNum(err) != 1213 {
		t.Fatalf("COMMIT over a row replaced before the snapshot: %v, want 1213", err)
	}
	var got []int
	for id := 1; id <= 4; id++ {
		got = append(got, v(db, id))
	}
	if fmt.Sprint(got) != "[1 20 100 105]" {
		t.Fatalf("committed v: %v, want [1 20 100 105]", got)
	}
}

func exec(ctx context.Context, c *sql.Conn, q string) error {
	_, err := c.ExecContext(ctx, q)
	return err
}

// A client that prepares each statement it runs inside the transaction
// (go-sql-driver without interpolateParams: prepare, execute, close) gets
// the same: preparing a write by key resolves its table without taking the
// snapshot, so commits beside the transaction go in place and its first
// read sees them, and the prepared read after it sees its own write.
func TestStatementsPreparedInATransactionTakeNoSnapshot(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db,
		"CREATE DATABASE dp",
		"CREATE TABLE dp.t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO dp.t VALUES (1, 0), (2, 0), (3, 0)",
	)
	ctx := context.Background()
	a, _ := db.Conn(ctx)
	defer a.Close()
	b, _ := db.Conn(ctx)
	defer b.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Each call prepares, executes and closes its statement.
	add := func(c *sql.Conn, d, id int) error {
		_, err := c.ExecContext(ctx, "UPDATE dp.t SET v = v + ? WHERE id = ?", d, id)
		return err
	}
	v := func(c *sql.Conn, id int) int {
		t.Helper()
		var n int
		must(c.QueryRowContext(ctx, "SELECT v FROM dp.t WHERE id = ?", id).Scan(&n))
		return n
	}
	inPlace := func() int { return globalStatus(t, db, "Miraj_commits_in_place") }
	for i := 0; i < 2; i++ {
		must(add(a, 0, 3))
		must(add(b, 0, 3))
	}
	must(add(b, 1, 3)) // copies what it writes after the reads above
	before := inPlace()
	must(exec(ctx, a, "BEGIN"))
	must(add(a, 1, 1))
	must(add(a, 1, 1))
	must(add(b, 10, 2))
	if got := inPlace() - before; got != 1 {
		t.Fatalf("a commit beside a transaction of prepared writes by key changed the rows in place %d times, want 1", got)
	}
	if got, own := v(a, 2), v(a, 1); got != 10 || own != 2 {
		t.Fatalf("first reads: v(2) = %d, want 10 (the snapshot is taken at the first read); own v(1) = %d, want 2", got, own)
	}
	must(add(b, 10, 2))
	if got := v(a, 2); got != 10 {
		t.Fatalf("after the first read: v(2) = %d, want 10 (the snapshot stays)", got)
	}
	must(exec(ctx, a, "COMMIT"))
	if got := v(a, 1); got != 2 {
		t.Fatalf("committed v(1) = %d, want 2", got)
	}
}
