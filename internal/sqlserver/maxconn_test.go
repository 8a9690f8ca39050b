package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// max_connections is enforced as MySQL enforces it: 1040 past it, one
// more for an account with SUPER or CONNECTION_ADMIN, none past that.
func TestMaxConnections(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	ctx := context.Background()
	a, err := root.Conn(ctx) // connection 1
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, q := range []string{"CREATE USER app@'%'", "CREATE USER ops@'%'", "GRANT CONNECTION_ADMIN ON *.* TO ops@'%'", "SET GLOBAL max_connections = 2"} {
		if _, err := a.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { root.Exec("SET GLOBAL max_connections = 151") })

	conn := func(db *sql.DB) (*sql.Conn, error) {
		c, err := db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		if err := c.PingContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	tooMany := func(what string, err error) {
		t.Helper()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1040 || me.Message != "Too many connections" {
			t.Fatalf("%s: %v, want 1040 Too many connections", what, err)
		}
	}
	app, ops := open("app", "", ""), open("ops", "", "")
	app.SetMaxIdleConns(0) // a connection given back is closed
	ops.SetMaxIdleConns(0)
	b, err := conn(app) // 2 of 2
	if err != nil {
		t.Fatalf("app's connection within the limit: %v", err)
	}
	_, err = conn(app) // 3: app may not
	tooMany("app's connection past the limit", err)
	// 3: ops may, once the server has closed app's refused connection
	// (it counts until then).
	var d *sql.Conn
	for i := 0; ; i++ {
		if d, err = conn(ops); err == nil {
			break
		}
		if i == 50 {
			t.Fatalf("ops's connection past the limit (CONNECTION_ADMIN): %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err = conn(ops) // 4: no one
	tooMany("ops's second connection past the limit", err)
	_, err = conn(root)
	tooMany("root's connection past the limit and the spare one", err)

	// Connections closed make room again, once the server has seen them
	// end.
	b.Close()
	d.Close()
	var c *sql.Conn
	for i := 0; ; i++ {
		if c, err = conn(app); err == nil {
			break
		}
		if i == 50 {
			t.Fatalf("app's connection after two closed: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer c.Close()
	var name string
	var refused int
	if err := a.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Connection_errors_max_connections'").Scan(&name, &refused); err != nil || refused < 3 {
		t.Errorf("Connection_errors_max_connections = %d (%v), want 3 or more", refused, err)
	}
}
