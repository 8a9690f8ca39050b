package sqlserver

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A compiled statement over many rows stops at KILL QUERY with 1317, as the
// planner's does: a range read; a range UPDATE in autocommit mode, killed
// while it reads its rows or while it writes them, which leaves the table
// as it was; one in a transaction, which undoes the statement alone.
func TestKillQueryStopsCompiledRangeStatements(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE ks", "CREATE TABLE ks.t (id INT PRIMARY KEY, v INT)")
	const rows = 5000
	for i := 0; i < rows; i += 500 {
		var vals []string
		for j := i + 1; j <= i+500; j++ {
			vals = append(vals, fmt.Sprintf("(%d, 0)", j))
		}
		if _, err := db.Exec("INSERT INTO ks.t VALUES " + strings.Join(vals, ",")); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	conn, id := connWithID(t, db)
	sel, err := conn.PrepareContext(ctx, "SELECT id, v FROM ks.t WHERE id BETWEEN ? AND ?")
	if err != nil {
		t.Fatal(err)
	}
	upd, err := conn.PrepareContext(ctx, "UPDATE ks.t SET v = v + ? WHERE id BETWEEN ? AND ?")
	if err != nil {
		t.Fatal(err)
	}

	// A prepared read is compiled at its second execution (the first
	// records its columns).
	var n int
	if err := sel.QueryRowContext(ctx, 1, 1).Scan(&id, &n); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}

	// The statement pauses at its first check of its context (while it
	// writes, with writes), until it has been killed.
	var armed atomic.Bool
	var pauseWrites atomic.Bool
	paused, resume := make(chan struct{}), make(chan struct{})
	pause := func(writes bool) {
		if writes == pauseWrites.Load() && armed.CompareAndSwap(true, false) {
			paused <- struct{}{}
			<-resume
		}
	}
	scanPause.Store(&pause)
	defer scanPause.Store(nil)
	kill := func(writes bool, run func() error) {
		t.Helper()
		pauseWrites.Store(writes)
		armed.Store(true)
		done := make(chan error, 1)
		go func() { done <- run() }()
		select {
		case <-paused:
		case err := <-done:
			t.Fatalf("the statement ended without reaching a check (%v)", err)
		case <-time.After(10 * time.Second):
			t.Fatal("the statement did not reach a check")
		}
		if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
			t.Fatal(err)
		}
		resume <- struct{}{}
		if num, _ := mysqlErrorNumber(<-done); num != 1317 {
			t.Fatalf("killed statement: want 1317")
		}
	}
	sum := func() int {
		t.Helper()
		var n int
		if err := db.QueryRow("SELECT SUM(v) FROM ks.t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	kill(false, func() error {
		r, err := sel.QueryContext(ctx, 1, rows)
		if err == nil {
			for r.Next() {
			}
			err = r.Err()
			r.Close()
		}
		return err
	})
	for _, writes := range []bool{false, true} {
		kill(writes, func() error { _, err := upd.ExecContext(ctx, 1, 1, rows); return err })
		if n := sum(); n != 0 {
			t.Fatalf("autocommit UPDATE killed (while writing: %v): SUM(v) = %d, want 0", writes, n)
		}
	}

	// In a transaction: the killed statement is undone, the one before it
	// stays and the transaction commits.
	for _, writes := range []bool{false, true} {
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := upd.ExecContext(ctx, 1, 1, 10); err != nil {
			t.Fatal(err)
		}
		kill(writes, func() error { _, err := upd.ExecContext(ctx, 100, 1, rows); return err })
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
	}
	if n := sum(); n != 20 {
		t.Fatalf("after two transactions of a 10-row UPDATE and a killed one: SUM(v) = %d, want 20", n)
	}
	// Not killed, the same statements run through.
	if _, err := upd.ExecContext(ctx, 1, 1, rows); err != nil {
		t.Fatal(err)
	}
	if n := sum(); n != 20+rows {
		t.Fatalf("SUM(v) = %d, want %d", n, 20+rows)
	}
	if s.points.written.Load() == 0 || s.points.ranged.Load() == 0 {
		t.Fatal("no statement was compiled")
	}
}
