package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"database/sql"

	"github.com/go-sql-driver/mysql"
)

// mysqlErr returns the code, SQLSTATE and message the client received.
func mysqlErr(err error) string {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return fmt.Sprintf("not a MySQL error: %v", err)
	}
	return fmt.Sprintf("%d %s %s", me.Number, string(me.SQLState[:]), me.Message)
}

// Every kind of refused privilege check reaches the client as MySQL's
// error: code, SQLSTATE and text (1044, 1045, 1142, 1143, 1227, 1370, 1095),
// never as 1105.
func TestPrivilegeErrorsAreMySQLs(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.t (x INT PRIMARY KEY, y INT)",
		"CREATE PROCEDURE shop.p() SELECT 1",
		"CREATE DATABASE other",
		"CREATE TABLE other.u (y INT)",
		"CREATE USER 'ro'@'%' IDENTIFIED BY 'pw'",
		"GRANT SELECT ON *.* TO 'ro'@'%'",
		"CREATE USER 'nob'@'%' IDENTIFIED BY 'pw'",
		"GRANT SELECT ON shop.t TO 'nob'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ro, nob := open("ro", "pw", ""), open("nob", "pw", "")
	const need = "Access denied; you need (at least one of) the %s privilege(s) for this operation"
	cases := []struct {
		db   *sql.DB
		q    string
		want string
	}{
		{ro, "SET GLOBAL max_connections = 5", "1227 42000 " + fmt.Sprintf(need, "SUPER or SYSTEM_VARIABLES_ADMIN")},
		{ro, "SET @@global.max_connections = 5", "1227 42000 " + fmt.Sprintf(need, "SUPER or SYSTEM_VARIABLES_ADMIN")},
		{ro, "SET PERSIST max_connections = 5", "1227 42000 " + fmt.Sprintf(need, "SUPER or SYSTEM_VARIABLES_ADMIN")},
		{ro, "SET GLOBAL cluster_role = 'primary'", "1227 42000 " + fmt.Sprintf(need, "SUPER or SYSTEM_VARIABLES_ADMIN")},
		{ro, "SET sql_mode = '', GLOBAL max_connections = 5", "1227 42000 " + fmt.Sprintf(need, "SUPER or SYSTEM_VARIABLES_ADMIN")},
		{ro, "SHOW CLUSTER STATUS", "1227 42000 " + fmt.Sprintf(need, "PROCESS, REPLICATION CLIENT")},
		{ro, "FLUSH PRIVILEGES", "1227 42000 " + fmt.Sprintf(need, "RELOAD")},
		{ro, "CREATE USER 'x'@'%'", "1227 42000 " + fmt.Sprintf(need, "CREATE USER")},
		{ro, "DROP USER 'nob'@'%'", "1227 42000 " + fmt.Sprintf(need, "CREATE USER")},
		{ro, "GRANT SELECT ON *.* TO 'nob'@'%'", "1045 28000 Access denied for user 'ro'@'%' (using password: YES)"},
		{ro, "GRANT SELECT ON shop.* TO 'nob'@'%'", "1044 42000 Access denied for user 'ro'@'%' to database 'shop'"},
		{ro, "GRANT SELECT ON shop.t TO 'nob'@'%'", "1142 42000 GRANT command denied to user 'ro'@'%' for table 't'"},
		{ro, "REVOKE SELECT ON shop.t FROM 'nob'@'%'", "1142 42000 GRANT command denied to user 'ro'@'%' for table 't'"},
		{ro, "GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'ro'@'%'", "1045 28000 Access denied for user 'ro'@'%' (using password: YES)"},
		{ro, "INSERT INTO shop.t VALUES (1, 1)", "1142 42000 INSERT command denied to user 'ro'@'%' for table 't'"},
		{ro, "REPLACE INTO shop.t VALUES (1, 1)", "1142 42000 INSERT command denied to user 'ro'@'%' for table 't'"},
		{ro, "UPDATE shop.t SET y = 2", "1142 42000 UPDATE command denied to user 'ro'@'%' for table 't'"},
		{ro, "DELETE FROM shop.t", "1142 42000 DELETE command denied to user 'ro'@'%' for table 't'"},
		{ro, "ALTER TABLE shop.t ADD COLUMN z INT", "1142 42000 ALTER command denied to user 'ro'@'%' for table 't'"},
		{ro, "DROP TABLE shop.t", "1142 42000 DROP command denied to user 'ro'@'%' for table 't'"},
		{ro, "RENAME TABLE shop.t TO shop.t2", "1142 42000 ALTER command denied to user 'ro'@'%' for table 't'"},
		{ro, "CREATE TABLE shop.n (x INT)", "1044 42000 Access denied for user 'ro'@'%' to database 'shop'"},
		{ro, "CALL shop.p()", "1370 42000 execute command denied to user 'ro'@'%' for routine 'shop.p'"},
		{ro, "LOAD DATA INFILE '/dev/null' INTO TABLE shop.t", "1045 28000 Access denied for user 'ro'@'%' (using password: YES)"},
		{ro, "KILL 99999", "1094 HY000 Unknown thread id: 99999"},
		{nob, "SELECT * FROM other.u", "1142 42000 SELECT command denied to user 'nob'@'%' for table 'u'"},
		{nob, "USE other", "1044 42000 Access denied for user 'nob'@'%' to database 'other'"},
		{nob, "UPDATE shop.t SET y = 3", "1142 42000 UPDATE command denied to user 'nob'@'%' for table 't'"},
		{nob, "CALL shop.p()", "1370 42000 execute command denied to user 'nob'@'%' for routine 'shop.p'"},
	}
	for _, c := range cases {
		_, err := c.db.Exec(c.q)
		if got := mysqlErr(err); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.q, got, c.want)
		}
	}
	if got := queryOne(t, root, "SELECT @@global.max_connections"); got != "151" {
		t.Errorf("max_connections = %s after refused SET GLOBALs", got)
	}

	// A refused login, and a default database the account may not use.
	for _, c := range []struct{ user, pass, db, want string }{
		{"nob", "bad", "", "1045 28000 Access denied for user 'nob'@'127.0.0.1' (using password: YES)"},
		{"nob", "", "", "1045 28000 Access denied for user 'nob'@'127.0.0.1' (using password: NO)"},
		{"nobody", "pw", "", "1045 28000 Access denied for user 'nobody'@'127.0.0.1' (using password: YES)"},
		{"nob", "pw", "other", "1044 42000 Access denied for user 'nob'@'%' to database 'other'"},
	} {
		if got := mysqlErr(open(c.user, c.pass, c.db).Ping()); got != c.want {
			t.Errorf("login %s/%s/%s:\n got %s\nwant %s", c.user, c.pass, c.db, got, c.want)
		}
	}
}

// SET GLOBAL needs SUPER or SYSTEM_VARIABLES_ADMIN, and the dynamic
// privileges Miraj checks can be granted and revoked (at the global level
// only, by an account that may grant them).
func TestDynamicPrivileges(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	for _, q := range []string{
		"CREATE USER 'sv'@'%' IDENTIFIED BY 'pw'",
		"CREATE USER 'g'@'%' IDENTIFIED BY 'pw'",
		"GRANT SELECT ON *.* TO 'g'@'%' WITH GRANT OPTION",
		"GRANT SYSTEM_VARIABLES_ADMIN, SELECT ON *.* TO 'sv'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := queryOne(t, root, "SHOW GRANTS FOR 'sv'@'%'"); got != "GRANT SELECT ON *.* TO `sv`@`%`" {
		t.Errorf("SHOW GRANTS: first row %s", got)
	}
	sv := open("sv", "pw", "")
	if _, err := sv.Exec("SET GLOBAL max_connections = 77"); err != nil {
		t.Fatalf("SET GLOBAL with SYSTEM_VARIABLES_ADMIN: %v", err)
	}
	defer root.Exec("SET GLOBAL max_connections = 151")
	for _, c := range []struct {
		db      *sql.DB
		q, want string
	}{
		{root, "GRANT CONNECTION_ADMIN ON mysql.* TO 'sv'@'%'", "3619 HY000 Illegal privilege level specified for CONNECTION_ADMIN"},
		// g holds GRANT OPTION, but not SYSTEM_VARIABLES_ADMIN.
		{open("g", "pw", ""), "GRANT SYSTEM_VARIABLES_ADMIN ON *.* TO 'g'@'%'", "1227 42000 Access denied; you need (at least one of) the GRANT OPTION privilege(s) for this operation"},
	} {
		_, err := c.db.Exec(c.q)
		if got := mysqlErr(err); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.q, got, c.want)
		}
	}
	if _, err := root.Exec("REVOKE SYSTEM_VARIABLES_ADMIN ON *.* FROM 'sv'@'%'"); err != nil {
		t.Fatal(err)
	}
	if _, err := sv.Exec("SET GLOBAL max_connections = 78"); mysqlErr(err)[:4] != "1227" {
		t.Errorf("SET GLOBAL after REVOKE: %v", err)
	}
}

// KILL of another user's connection needs PROCESS, CONNECTION_ADMIN or
// SUPER (1095 otherwise); SHOW PROCESSLIST and information_schema.PROCESSLIST
// show an account without PROCESS its own connections only.
func TestKillAndProcessList(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	for _, q := range []string{
		"CREATE USER 'a'@'%' IDENTIFIED BY 'pw'",
		"CREATE USER 'b'@'%' IDENTIFIED BY 'pw'",
		"CREATE USER 'ca'@'%' IDENTIFIED BY 'pw'",
		"GRANT CONNECTION_ADMIN ON *.* TO 'ca'@'%'",
		"CREATE USER 'pr'@'%' IDENTIFIED BY 'pw'",
		"GRANT PROCESS ON *.* TO 'pr'@'%'",
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ctx := context.Background()
	conn := func(user string) (*sql.Conn, string) {
		c, err := open(user, "pw", "").Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		var id string
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		return c, id
	}
	a, aID := conn("a")
	a2, a2ID := conn("a")
	b, bID := conn("b")

	users := func(c *sql.Conn, q string) string {
		r, err := query(t, c, q)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(r.rows)
	}
	if got := users(b, "SELECT USER FROM information_schema.PROCESSLIST"); got != "[b]" {
		t.Errorf("b sees %s in information_schema.PROCESSLIST", got)
	}
	if got := users(a, "SELECT USER FROM information_schema.PROCESSLIST ORDER BY ID"); got != "[a a]" {
		t.Errorf("a sees %s in information_schema.PROCESSLIST", got)
	}
	pr, _ := conn("pr")
	if got := users(pr, "SELECT COUNT(DISTINCT USER) FROM information_schema.PROCESSLIST WHERE USER IN ('a', 'b', 'pr')"); got != "[3]" {
		t.Errorf("PROCESS sees %s users", got)
	}
	r, err := query(t, b, "SHOW PROCESSLIST")
	if err != nil || len(r.rows) != 1 {
		t.Errorf("b's SHOW PROCESSLIST: %v %v", r.rows, err)
	}

	if _, err := b.ExecContext(ctx, "KILL "+aID); mysqlErr(err) != "1095 HY000 You are not owner of thread "+aID {
		t.Errorf("b kills a's connection: %s", mysqlErr(err))
	}
	if _, err := a.ExecContext(ctx, "KILL QUERY "+a2ID); err != nil {
		t.Errorf("a kills a query of its other connection: %v", err)
	}
	ca, _ := conn("ca")
	if _, err := ca.ExecContext(ctx, "KILL "+aID); err != nil {
		t.Errorf("CONNECTION_ADMIN kills a's connection: %v", err)
	}
	if _, err := pr.ExecContext(ctx, "KILL "+bID); err != nil {
		t.Errorf("PROCESS kills b's connection: %v", err)
	}
	if _, err := a2.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Errorf("a's other connection after KILL QUERY: %v", err)
	}
}

// globalStatus is the value of a counting global status variable.
func globalStatus(t *testing.T, db *sql.DB, name string) int {
	t.Helper()
	var n string
	var v int
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func queryOne(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	r, err := query(t, db, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(r.rows) == 0 {
		return ""
	}
	return r.rows[0]
}
