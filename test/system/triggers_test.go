package system

import (
	"context"
	"testing"
)

// TestTriggerInsertOK: an INSERT into a table with an AFTER INSERT trigger
// answers an OK packet, as any INSERT does: go-sql-driver's Exec reads its
// rows affected and last insert id (the server sent the inserted rows as a
// result set, which Exec does not read as an OK). The trigger's own INSERT
// into a table with an AUTO_INCREMENT column changes neither the OK
// packet's insert id nor LAST_INSERT_ID() after the statement.
func TestTriggerInsertOK(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE trg")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "USE trg")
	mustExec(t, conn, "CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(20), qty INT)")
	mustExec(t, conn, "CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(60))")
	mustExec(t, conn, "INSERT INTO audit (what) VALUES ('start'), ('start'), ('start')")
	mustExec(t, conn, "CREATE TRIGGER orders_ai AFTER INSERT ON orders FOR EACH ROW INSERT INTO audit (what) VALUES (CONCAT('order ', NEW.id))")

	check := func(what string, rowsAffected, lastInsertID int64, query string, args ...any) {
		t.Helper()
		res, err := conn.ExecContext(ctx, query, args...)
		if err != nil {
			t.Fatalf("%s: %s: %v", what, query, err)
		}
		n, err := res.RowsAffected()
		if err != nil || n != rowsAffected {
			t.Errorf("%s: RowsAffected = %d, %v; want %d", what, n, err, rowsAffected)
		}
		id, err := res.LastInsertId()
		if err != nil || id != lastInsertID {
			t.Errorf("%s: LastInsertId = %d, %v; want %d", what, id, err, lastInsertID)
		}
		var got int64
		if err := conn.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != lastInsertID {
			t.Errorf("%s: LAST_INSERT_ID() = %d after the statement; want %d", what, got, lastInsertID)
		}
	}
	// The text protocol, then a prepared statement (binary protocol).
	check("one row", 1, 1, "INSERT INTO orders (item, qty) VALUES ('pen', 1)")
	check("two rows", 2, 2, "INSERT INTO orders (item, qty) VALUES ('ink', 2), ('pad', 3)")
	check("prepared", 1, 4, "INSERT INTO orders (item, qty) VALUES (?, ?)", "cap", 4)

	var audits, orders int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM audit WHERE what LIKE 'order %'").Scan(&audits); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM orders").Scan(&orders); err != nil {
		t.Fatal(err)
	}
	if audits != 4 || orders != 4 {
		t.Errorf("%d orders and %d audit rows, want 4 and 4", orders, audits)
	}
}
