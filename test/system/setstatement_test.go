package system

import (
	"context"
	"os/exec"
	"testing"
)

// TestSetStatementFirst: SET STATEMENT … FOR … as the first statement of
// a connection, the one a client sends before any other (the command-line
// client's -e sends nothing before it): the statement runs with the
// variable set, and the variable is back afterwards. It answered 1064
// there, and worked after any other statement.
func TestSetStatementFirst(t *testing.T) {
	s := newServer(t, t.TempDir())
	const (
		first = "SET STATEMENT sql_mode = '' FOR SELECT @@sql_mode = '' AS cleared, 41 + 1 AS answer"
		after = "SELECT @@sql_mode <> '' AS restored"
	)

	t.Run("go-sql-driver", func(t *testing.T) {
		// A pool of its own: its one connection is new, and this is
		// its first statement (the DSN has no parameters the driver
		// would set with a statement of its own first).
		db := s.open("")
		db.SetMaxOpenConns(1)
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var cleared, answer int
		if err := conn.QueryRowContext(ctx, first).Scan(&cleared, &answer); err != nil {
			t.Fatalf("%s as the connection's first statement: %v", first, err)
		}
		if cleared != 1 || answer != 42 {
			t.Fatalf("%s: %d, %d; want 1, 42", first, cleared, answer)
		}
		var restored int
		if err := conn.QueryRowContext(ctx, after).Scan(&restored); err != nil || restored != 1 {
			t.Fatalf("%s after it: %d, %v; want 1", after, restored, err)
		}
	})

	t.Run("mariadb", func(t *testing.T) {
		client, err := exec.LookPath("mariadb")
		requireClient(t, "mariadb", "apt-get install -y mariadb-client", err == nil)
		out, ok := runAdmin(t, client, s, "root", "--batch", "--skip-column-names", "-e", first+"; "+after)
		if want := "1\t42\n1\n"; !ok || out != want {
			t.Fatalf("mariadb -e %q: %q, want %q", first+"; "+after, out, want)
		}
		// The variable set by a SET STATEMENT alone, as in MariaDB's
		// documentation.
		q := "SET STATEMENT sql_mode = 'ANSI_QUOTES' FOR SELECT @@sql_mode"
		out, ok = runAdmin(t, client, s, "root", "--batch", "--skip-column-names", "-e", q)
		if want := "ANSI_QUOTES\n"; !ok || out != want {
			t.Fatalf("mariadb -e %q: %q, want %q", q, out, want)
		}
	})
}
