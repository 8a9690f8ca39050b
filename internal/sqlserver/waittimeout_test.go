package sqlserver

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// A connection waiting for its next command longer than its wait_timeout
// is closed; one that runs a statement, or sends commands, is not.
func TestWaitTimeout(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxIdleConns(0)
	ctx := context.Background()
	idle, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	chatty, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer chatty.Close()
	for _, c := range []*sql.Conn{idle, busy, chatty} {
		if _, err := c.ExecContext(ctx, "SET SESSION wait_timeout = 1"); err != nil {
			t.Fatal(err)
		}
	}
	// busy runs a statement longer than its wait_timeout; chatty sends a
	// command every 300 ms; idle sends nothing.
	done := make(chan error, 1)
	go func() {
		var n int
		done <- busy.QueryRowContext(ctx, "SELECT SLEEP(3)").Scan(&n)
	}()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if err := chatty.PingContext(ctx); err != nil {
			t.Fatalf("a connection sending a command every 300 ms was closed: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatalf("a statement running past wait_timeout: %v", err)
	}
	if err := busy.PingContext(ctx); err != nil {
		t.Fatalf("the connection after its long statement: %v", err)
	}
	if err := idle.PingContext(ctx); err == nil {
		t.Fatal("a connection idle for 3 s with wait_timeout = 1 is still open")
	}
}
