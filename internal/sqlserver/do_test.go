package sqlserver

import (
	"context"
	"testing"
)

// DO evaluates its expressions for their effects and answers OK.
func TestDoStatement(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	ctx := context.Background()
	a := dbConn(t, db)
	b := dbConn(t, db)

	// Its effects: a named lock taken, seen from another connection.
	if _, err := a.ExecContext(ctx, "DO GET_LOCK('job', 1), 2 + 2"); err != nil {
		t.Fatalf("DO GET_LOCK: %v", err)
	}
	var held bool
	if err := b.QueryRowContext(ctx, "SELECT IS_USED_LOCK('job') IS NOT NULL").Scan(&held); err != nil || !held {
		t.Fatalf("lock taken by DO, seen from another connection: %v %v", held, err)
	}
	if _, err := a.ExecContext(ctx, "DO RELEASE_LOCK('job')"); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRowContext(ctx, "SELECT IS_USED_LOCK('job') IS NOT NULL").Scan(&held); err != nil || held {
		t.Fatalf("lock released by DO: %v %v", held, err)
	}
	// No result set, the expression's warnings, its errors.
	rows, err := a.QueryContext(ctx, "DO 1 / 0")
	if err != nil {
		t.Fatal(err)
	}
	if cols, _ := rows.Columns(); len(cols) != 0 {
		t.Errorf("DO answered columns %v", cols)
	}
	rows.Close()
	var level, msg string
	var code int
	if err := a.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 1365 {
		t.Errorf("DO 1 / 0: warning %d %q (%v), want 1365", code, msg, err)
	}
	if _, err := a.ExecContext(ctx, "DO (SELECT 1 FROM nosuchdb.t)"); err == nil {
		t.Error("DO of a subquery on a missing database succeeded")
	}
}
