package system

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The privileges of the statements that change a server or a cluster: each
// administrative statement is run by an account without the privilege it
// needs (MySQL's error, and nothing changes) and by an account with it
// (it succeeds, or on a secondary meets the refusal any write meets there),
// on a standalone server and on a cluster secondary.

// Accounts of the matrix, created on the standalone server or the primary.
// ro is the account of the issue: GRANT SELECT ON *.* and nothing else.
var privilegeAccounts = []string{
	"CREATE USER 'ro'@'%' IDENTIFIED BY 'pw'",
	"GRANT SELECT ON *.* TO 'ro'@'%'",
	"CREATE USER 'sysvar'@'%' IDENTIFIED BY 'pw'",
	"GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'sysvar'@'%'",
	"CREATE USER 'super'@'%' IDENTIFIED BY 'pw'",
	"GRANT SUPER ON *.* TO 'super'@'%'",
	"CREATE USER 'monitor'@'%' IDENTIFIED BY 'pw'",
	"GRANT REPLICATION CLIENT ON *.* TO 'monitor'@'%'",
	"CREATE USER 'process'@'%' IDENTIFIED BY 'pw'",
	"GRANT PROCESS ON *.* TO 'process'@'%'",
	"CREATE USER 'killer'@'%' IDENTIFIED BY 'pw'",
	"GRANT CONNECTION_ADMIN ON *.* TO 'killer'@'%'",
	"CREATE USER 'reload'@'%' IDENTIFIED BY 'pw'",
	"GRANT RELOAD ON *.* TO 'reload'@'%'",
	"CREATE USER 'useradmin'@'%' IDENTIFIED BY 'pw'",
	"GRANT CREATE USER ON *.* TO 'useradmin'@'%'",
	"CREATE USER 'granter'@'%' IDENTIFIED BY 'pw'",
	"GRANT SELECT, INSERT ON *.* TO 'granter'@'%' WITH GRANT OPTION",
	"CREATE USER 'app'@'%' IDENTIFIED BY 'pw'",
	"CREATE USER 'dropme'@'%' IDENTIFIED BY 'pw'",
	"CREATE USER 'victim'@'%' IDENTIFIED BY 'pw'",
	"CREATE DATABASE shop",
	"CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20))",
	"INSERT INTO shop.items VALUES (1, 'apple')",
}

// need is MySQL's 1227 text.
func need(privs string) string {
	return "1227 42000 Access denied; you need (at least one of) the " + privs + " privilege(s) for this operation"
}

// Outcomes of the allowed account.
const (
	succeeds   = ""
	readOnly   = "1290 HY000 The MySQL server is running with the --read-only option so it cannot execute this statement"
	notRefused = "not a privilege error" // fails for another reason (the statement is not supported here)
)

// adminCase is one row of the matrix.
type adminCase struct {
	name string
	// stmt is run by denied, then by allowed; %d, when there, is the id of
	// a connection of 'victim'.
	stmt, denied, want string
	// allowedStmt, when set, is what allowed runs instead of stmt (a
	// statement of the same kind that does not break the test cluster).
	allowed, allowedStmt string
	// standalone and secondary are allowed's outcome on each.
	standalone, secondary string
	// state reads what the refused statement would have changed, as root.
	state string
}

var adminCases = []adminCase{
	{name: "promote", stmt: "SET GLOBAL cluster_role = 'primary'", denied: "ro", want: need("SUPER or SYSTEM_VARIABLES_ADMIN"),
		// Promoting the secondary would make a second primary; setting
		// the role it has passes the same checks and changes nothing.
		allowed: "sysvar", allowedStmt: "SET GLOBAL cluster_role = 'secondary'", standalone: notRefused, secondary: succeeds,
		state: "SELECT CONCAT(@@cluster_role, ' ', @@cluster_epoch, ' ', @@read_only)"},
	{name: "set global", stmt: "SET GLOBAL max_connections = 5", denied: "ro", want: need("SUPER or SYSTEM_VARIABLES_ADMIN"),
		allowed: "sysvar", allowedStmt: "SET GLOBAL max_connections = 151", standalone: succeeds, secondary: succeeds,
		state: "SELECT @@global.max_connections"},
	{name: "set global by SUPER", stmt: "SET @@global.max_connections = 6", denied: "process", want: need("SUPER or SYSTEM_VARIABLES_ADMIN"),
		allowed: "super", allowedStmt: "SET @@global.max_connections = 151", standalone: succeeds, secondary: succeeds,
		state: "SELECT @@global.max_connections"},
	{name: "set persist", stmt: "SET PERSIST max_connections = 7", denied: "ro", want: need("SUPER or SYSTEM_VARIABLES_ADMIN"),
		allowed: "sysvar", standalone: notRefused, secondary: notRefused, state: "SELECT @@global.max_connections"},
	{name: "read_only", stmt: "SET GLOBAL read_only = 1", denied: "ro", want: need("SUPER or SYSTEM_VARIABLES_ADMIN"),
		// Standalone, read_only is a setting (it refuses client writes:
		// docs/binlog-replica.md); setting the value it has passes the
		// same checks and leaves the server writable for the next cases.
		// On a cluster node it is the node's role and cannot be set.
		allowed: "sysvar", allowedStmt: "SET GLOBAL read_only = 0", standalone: succeeds, secondary: notRefused, state: "SELECT @@global.read_only"},
	{name: "cluster status", stmt: "SHOW CLUSTER STATUS", denied: "ro", want: need("PROCESS, REPLICATION CLIENT"),
		allowed: "monitor", standalone: succeeds, secondary: succeeds},
	{name: "cluster status by PROCESS", stmt: "SHOW CLUSTER STATUS", denied: "granter", want: need("PROCESS, REPLICATION CLIENT"),
		allowed: "process", standalone: succeeds, secondary: succeeds},
	{name: "flush privileges", stmt: "FLUSH PRIVILEGES", denied: "ro", want: need("RELOAD"),
		allowed: "reload", standalone: succeeds, secondary: succeeds},
	{name: "flush tables", stmt: "FLUSH TABLES", denied: "ro", want: need("RELOAD"),
		allowed: "reload", standalone: succeeds, secondary: succeeds},
	{name: "create user", stmt: "CREATE USER 'newbie'@'%'", denied: "ro", want: need("CREATE USER"),
		allowed: "useradmin", standalone: succeeds, secondary: readOnly,
		state: "SELECT COUNT(*) FROM mysql.user WHERE user = 'newbie'"},
	{name: "drop user", stmt: "DROP USER 'dropme'@'%'", denied: "ro", want: need("CREATE USER"),
		allowed: "useradmin", standalone: succeeds, secondary: readOnly,
		state: "SELECT COUNT(*) FROM mysql.user WHERE user = 'dropme'"},
	{name: "grant global", stmt: "GRANT SELECT ON *.* TO 'app'@'%'", denied: "ro", want: "1045 28000 Access denied for user 'ro'@'%' (using password: YES)",
		allowed: "granter", standalone: succeeds, secondary: readOnly, state: "SHOW GRANTS FOR 'app'@'%'"},
	{name: "grant database", stmt: "GRANT INSERT ON shop.* TO 'app'@'%'", denied: "ro", want: "1044 42000 Access denied for user 'ro'@'%' to database 'shop'",
		allowed: "granter", standalone: succeeds, secondary: readOnly, state: "SHOW GRANTS FOR 'app'@'%'"},
	{name: "grant table", stmt: "GRANT INSERT ON shop.items TO 'app'@'%'", denied: "ro", want: "1142 42000 GRANT command denied to user 'ro'@'%' for table 'items'",
		allowed: "granter", standalone: succeeds, secondary: readOnly, state: "SHOW GRANTS FOR 'app'@'%'"},
	{name: "revoke", stmt: "REVOKE SELECT ON *.* FROM 'ro'@'%'", denied: "ro", want: "1045 28000 Access denied for user 'ro'@'%' (using password: YES)",
		allowed: "granter", allowedStmt: "REVOKE INSERT ON shop.* FROM 'app'@'%'", standalone: succeeds, secondary: readOnly,
		state: "SHOW GRANTS FOR 'ro'@'%'"},
	{name: "grant dynamic", stmt: "GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'ro'@'%'", denied: "granter",
		want: need("GRANT OPTION"), allowed: "root", allowedStmt: "GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'app'@'%'",
		standalone: succeeds, secondary: readOnly, state: "SHOW GRANTS FOR 'ro'@'%'"},
	{name: "kill", stmt: "KILL %d", denied: "ro", want: "1095 HY000 You are not owner of thread %d",
		allowed: "killer", standalone: succeeds, secondary: succeeds},
	{name: "kill by PROCESS", stmt: "KILL QUERY %d", denied: "monitor", want: "1095 HY000 You are not owner of thread %d",
		allowed: "process", standalone: succeeds, secondary: succeeds},
	{name: "write a table", stmt: "INSERT INTO shop.items VALUES (2, 'pear')", denied: "ro",
		want:    "1142 42000 INSERT command denied to user 'ro'@'%' for table 'items'",
		allowed: "granter", standalone: succeeds, secondary: readOnly, state: "SELECT COUNT(*) FROM shop.items"},
}

// errText is the code, SQLSTATE and message of a MySQL error, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("%d %s %s", me.Number, string(me.SQLState[:]), me.Message)
	}
	return err.Error()
}

// isPrivilegeError reports whether text is one of MySQL's privilege errors.
func isPrivilegeError(text string) bool {
	for _, code := range []string{"1044 ", "1045 ", "1095 ", "1142 ", "1143 ", "1227 ", "1370 "} {
		if strings.HasPrefix(text, code) {
			return true
		}
	}
	return false
}

// accountsOn opens one pool per account of the matrix on s.
func accountsOn(t *testing.T, s *server) func(user string) *sql.DB {
	pools := map[string]*sql.DB{}
	t.Cleanup(func() {
		for _, p := range pools {
			p.Close()
		}
	})
	return func(user string) *sql.DB {
		if p, ok := pools[user]; ok {
			return p
		}
		pass := "pw"
		if user == "root" {
			pass = ""
		}
		p, err := sql.Open("mysql", s.dsn(user, pass, ""))
		if err != nil {
			t.Fatal(err)
		}
		pools[user] = p
		return p
	}
}

// runAdminMatrix runs every case of adminCases on s; secondary selects the
// allowed account's expected outcome.
func runAdminMatrix(t *testing.T, s *server, secondary bool) {
	ctx := context.Background()
	as := accountsOn(t, s)
	root := as("root")
	for _, c := range adminCases {
		t.Run(c.name, func(t *testing.T) {
			stmt, want, allowedStmt := c.stmt, c.want, c.allowedStmt
			if allowedStmt == "" {
				allowedStmt = stmt
			}
			// KILL's target: a connection of another user, alive.
			var victim *sql.Conn
			if strings.Contains(stmt, "%d") {
				v, err := sql.Open("mysql", s.dsn("victim", "pw", ""))
				if err != nil {
					t.Fatal(err)
				}
				defer v.Close()
				if victim, err = v.Conn(ctx); err != nil {
					t.Fatal(err)
				}
				defer victim.Close()
				var id int
				if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
					t.Fatal(err)
				}
				stmt, want, allowedStmt = fmt.Sprintf(stmt, id), fmt.Sprintf(want, id), fmt.Sprintf(allowedStmt, id)
			}
			var before string
			if c.state != "" {
				before = queryString(t, root, c.state)
			}
			_, err := as(c.denied).Exec(stmt)
			if got := errText(err); got != want {
				t.Fatalf("%s by %s:\n got %q\nwant %q", stmt, c.denied, got, want)
			}
			if c.state != "" {
				if after := queryString(t, root, c.state); after != before {
					t.Fatalf("refused %s changed %s: %s, then %s", stmt, c.state, before, after)
				}
			}
			if victim != nil {
				if err := victim.PingContext(ctx); err != nil {
					t.Fatalf("the connection survives a refused KILL: %v", err)
				}
			}

			expect := c.standalone
			if secondary {
				expect = c.secondary
			}
			_, err = as(c.allowed).Exec(allowedStmt)
			got := errText(err)
			switch expect {
			case notRefused:
				if err == nil || isPrivilegeError(got) {
					t.Fatalf("%s by %s: %q, want an error other than a privilege error", allowedStmt, c.allowed, got)
				}
			default:
				if got != expect {
					t.Fatalf("%s by %s:\n got %q\nwant %q", allowedStmt, c.allowed, got, expect)
				}
			}
		})
	}
}

// What an account may see without the privilege: no rows in the cluster's
// tables, its own connections in the process list.
func checkVisibility(t *testing.T, s *server, wantNodes string) {
	as := accountsOn(t, s)
	for _, c := range []struct{ user, q, want string }{
		{"ro", "SELECT COUNT(*) FROM information_schema.MIRAJ_NODES", "0;"},
		{"ro", "SELECT COUNT(*) FROM information_schema.MIRAJ_REPLICATION", "0;"},
		{"monitor", "SELECT COUNT(*) FROM information_schema.MIRAJ_NODES", wantNodes},
		{"process", "SELECT COUNT(*) FROM information_schema.MIRAJ_NODES", wantNodes},
		{"ro", "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER <> 'ro'", "0;"},
		{"process", "SELECT COUNT(DISTINCT USER) > 1 FROM information_schema.PROCESSLIST", "1;"},
	} {
		if got := queryString(t, as(c.user), c.q); got != c.want {
			t.Errorf("%s: %s = %s, want %s", c.user, c.q, got, c.want)
		}
	}
	// SHOW PROCESSLIST: ro sees its own connections only.
	rows, err := as("ro").Query("SHOW PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, user, host, db, command, time, state, info sql.NullString
		if err := rows.Scan(&id, &user, &host, &db, &command, &time, &state, &info); err != nil {
			t.Fatal(err)
		}
		if user.String != "ro" {
			t.Errorf("ro's SHOW PROCESSLIST lists a connection of %s", user.String)
		}
		n++
	}
	if n == 0 {
		t.Error("ro's SHOW PROCESSLIST lists no connection, not even its own")
	}
}

func TestAdminPrivilegesStandalone(t *testing.T) {
	s := newServer(t, t.TempDir())
	root := s.open("")
	for _, q := range privilegeAccounts {
		mustExec(t, root, q)
	}
	runAdminMatrix(t, s, false)
	checkVisibility(t, s, "0;")
	// The refused statements of the matrix changed nothing a restart
	// would bring back: the accounts file holds what was granted.
	s.stop()
	s.restart()
	if got := queryString(t, s.open(""), "SHOW GRANTS FOR 'ro'@'%'"); got != "GRANT SELECT ON *.* TO `ro`@`%`;" {
		t.Fatalf("ro's grants after restart: %s", got)
	}
}

// TestAdminPrivilegesClusterSecondary: the steps of the issue on a
// secondary, then the matrix; grants made on the primary are in force on
// the secondary.
func TestAdminPrivilegesClusterSecondary(t *testing.T) {
	c := newTestCluster(t, "n1", "n2")
	n1, n2 := c.start("n1"), c.start("n2")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("n1 log:\n%s\nn2 log:\n%s", n1.output(), n2.output())
		}
	})
	p := n1.open("")
	mustExec(t, p, "SET GLOBAL cluster_role = 'primary'")
	waitFor(t, "n1 to become PRIMARY", 30*time.Second, func() bool { return one(t, p, "SELECT @@cluster_role") == "PRIMARY" })
	for _, q := range privilegeAccounts {
		mustExec(t, p, q)
	}
	sec := n2.open("")
	waitFor(t, "the accounts and rows on n2", 30*time.Second, func() bool {
		var n int
		return sec.QueryRow("SELECT COUNT(*) FROM shop.items").Scan(&n) == nil && n == 1 &&
			one(t, sec, "SELECT COUNT(*) FROM mysql.user WHERE user = 'victim'") == "1"
	})

	// The issue: ro, on the secondary, tries to promote it.
	ro, err := sql.Open("mysql", n2.dsn("ro", "pw", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.Exec("SET GLOBAL cluster_role = 'primary'")
	if got, want := errText(err), need("SUPER or SYSTEM_VARIABLES_ADMIN"); got != want {
		t.Fatalf("ro promotes the secondary: %q, want %q", got, want)
	}
	_, err = ro.Exec("SET GLOBAL max_connections = 5")
	if got, want := errText(err), need("SUPER or SYSTEM_VARIABLES_ADMIN"); got != want {
		t.Fatalf("ro sets max_connections: %q, want %q", got, want)
	}
	// Nothing changed: no promotion began (the node's own row would say
	// PROMOTING), the epoch is the same, n1 is still the primary.
	if got := one(t, sec, "SELECT STATE FROM information_schema.MIRAJ_NODES WHERE NODE_ID = 'n2'"); got != "SELF" {
		t.Fatalf("n2's own state after ro's attempt: %s", got)
	}
	if got := one(t, sec, "SELECT CONCAT(@@cluster_role, ' ', @@cluster_epoch, ' ', @@cluster_primary)"); got != "SECONDARY 1 n1" {
		t.Fatalf("n2 after ro's attempt: %s", got)
	}
	if got := one(t, p, "SELECT CONCAT(@@cluster_role, ' ', @@cluster_epoch)"); got != "PRIMARY 1" {
		t.Fatalf("n1 after ro's attempt: %s", got)
	}
	if got := one(t, sec, "SELECT @@global.max_connections"); got != "151" {
		t.Fatalf("n2's max_connections: %s", got)
	}

	runAdminMatrix(t, n2, true)
	checkVisibility(t, n2, "2;")

	// Grants follow the accounts channel: granted on the primary, in force
	// on the secondary; revoked, refused again.
	app, err := sql.Open("mysql", n2.dsn("app", "pw", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	mustExec(t, p, "GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'app'@'%'")
	waitFor(t, "the grant on n2", 30*time.Second, func() bool {
		_, err := app.Exec("SET GLOBAL max_connections = 151")
		return err == nil
	})
	mustExec(t, p, "REVOKE SYSTEM_VARIABLES_ADMIN ON *.* FROM 'app'@'%'")
	waitFor(t, "the revoke on n2", 30*time.Second, func() bool {
		_, err := app.Exec("SET GLOBAL max_connections = 151")
		return errText(err) == need("SUPER or SYSTEM_VARIABLES_ADMIN")
	})
	if a, b := queryString(t, p, "SHOW GRANTS FOR 'app'@'%'"), queryString(t, sec, "SHOW GRANTS FOR 'app'@'%'"); a != b {
		t.Fatalf("app's grants differ: primary %s, secondary %s", a, b)
	}
}
