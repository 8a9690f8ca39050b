package sqlserver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Statements MySQL knows and Miraj does not answer are refused as not
// supported (1235), not as syntax errors (1064); their neighbours work.
func TestNotBuiltStatements(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"SHOW ENGINE INNODB STATUS", "show engine innodb mutex", "SHOW PROFILES", "SHOW PROFILE CPU FOR QUERY 1", "HELP 'select'"} {
		_, err := db.Exec(q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 || !strings.Contains(me.Message, "doesn't yet support") {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	var engine, support, comment string
	var tx, xa, sp any
	if err := db.QueryRow("SHOW ENGINES").Scan(&engine, &support, &comment, &tx, &xa, &sp); err != nil {
		t.Errorf("SHOW ENGINES: %v", err)
	}
}

// SHOW OPEN TABLES lists every table (all are held in memory), none in use.
func TestShowOpenTables(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE o1", "CREATE DATABASE o2", "CREATE TABLE o1.a (id INT PRIMARY KEY)", "CREATE TABLE o1.b (id INT PRIMARY KEY)",
		"CREATE TABLE o2.a (id INT PRIMARY KEY)", "CREATE VIEW o1.v AS SELECT id FROM o1.a")
	for q, want := range map[string]string{
		"SHOW OPEN TABLES FROM o1":           "o1 a 0 0;o1 b 0 0;",
		"show open tables in `o2` like 'a%'": "o2 a 0 0;",
		"SHOW OPEN TABLES LIKE 'a'":          "o1 a 0 0;o2 a 0 0;",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		got := ""
		for rows.Next() {
			var d, tb string
			var inUse, locked int
			if err := rows.Scan(&d, &tb, &inUse, &locked); err != nil {
				t.Fatal(err)
			}
			got += fmt.Sprintf("%s %s %d %d;", d, tb, inUse, locked)
		}
		rows.Close()
		if got != want || strings.Join(cols, ",") != "Database,Table,In_use,Name_locked" {
			t.Errorf("%s: %v %q, want %q", q, cols, got, want)
		}
	}
}
