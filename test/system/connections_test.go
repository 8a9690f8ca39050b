package system

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// KILL ends a connection that waits for its next statement, whatever way
// the server waits for it: a lone connection reads its socket in blocking
// mode (docs/performance.md), others through Go's poller.
func TestKillEndsIdleConnection(t *testing.T) {
	s := newServer(t, t.TempDir())
	ctx := context.Background()
	v, err := sql.Open("mysql", s.dsn("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	victim, err := v.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var id int
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	// The victim is the only connection, and now waits for a statement.
	killer := s.open("")
	mustExec(t, killer, fmt.Sprintf("KILL %d", id))
	waitFor(t, "the killed connection to leave the process list", 10*time.Second, func() bool {
		return queryString(t, killer, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id) == "0;"
	})
	if err := victim.PingContext(ctx); err == nil {
		t.Fatal("the killed connection still answers")
	}
	// The server goes on serving.
	if got := queryString(t, killer, "SELECT 1"); got != "1;" {
		t.Fatalf("SELECT 1 after KILL: %q", got)
	}
}
