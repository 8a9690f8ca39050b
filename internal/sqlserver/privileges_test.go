package sqlserver

import (
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
// error: code, SQLSTATE and text (1044, 1045, 1142, 1227, 1370),
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
		{ro, "CREATE USER 'x'@'%'", "1227 42000 " + fmt.Sprintf(need, "CREATE USER")},
		{ro, "DROP USER 'nob'@'%'", "1227 42000 " + fmt.Sprintf(need, "CREATE USER")},
		{ro, "GRANT SELECT ON *.* TO 'nob'@'%'", "1045 28000 Access denied for user 'ro'@'%' (using password: YES)"},
		{ro, "GRANT SELECT ON shop.* TO 'nob'@'%'", "1044 42000 Access denied for user 'ro'@'%' to database 'shop'"},
		{ro, "GRANT SELECT ON shop.t TO 'nob'@'%'", "1142 42000 GRANT command denied to user 'ro'@'%' for table 't'"},
		{ro, "REVOKE SELECT ON shop.t FROM 'nob'@'%'", "1142 42000 GRANT command denied to user 'ro'@'%' for table 't'"},
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
