package sqlserver

import (
	"testing"
)

// @@warning_count and @@error_count are the previous statement's
// conditions, as SHOW COUNT(*) WARNINGS and SHOW COUNT(*) ERRORS give them.
func TestDiagnosticsCounts(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxOpenConns(1) // one session
	exec := func(q string) error {
		_, err := db.Exec(q)
		return err
	}
	count := func(q string) string {
		t.Helper()
		var v string
		if err := db.QueryRow(q).Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v
	}
	if err := exec("CREATE DATABASE d"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		before string // run first; "" for none
		fails  bool
		read   string
		want   string
	}{
		{"CREATE DATABASE IF NOT EXISTS d", false, "SELECT @@warning_count", "1"},
		{"", false, "SELECT @@warning_count", "0"}, // the SELECT before had none
		{"CREATE DATABASE IF NOT EXISTS d", false, "SHOW COUNT(*) WARNINGS", "1"},
		{"CREATE DATABASE IF NOT EXISTS d", false, "SELECT @@session.error_count", "0"},
		{"SELECT * FROM d.nosuch", true, "SELECT @@error_count", "1"},
		{"SELECT * FROM d.nosuch", true, "SELECT @@warning_count", "1"},
		{"SELECT * FROM d.nosuch", true, "show count(*) errors", "1"},
		{"SELECT 1", false, "SHOW COUNT(*) ERRORS", "0"},
		// The planner's warnings while it binds (here, folding 1/0)
		// are kept once the statement before left none.
		{"SELECT 1/0", false, "SELECT @@warning_count", "1"},
	} {
		if c.before != "" {
			if err := exec(c.before); (err != nil) != c.fails {
				t.Fatalf("%s: %v", c.before, err)
			}
		}
		if got := count(c.read); got != c.want {
			t.Errorf("%s after %q: %s, want %s", c.read, c.before, got, c.want)
		}
	}
	if got := mysqlErr(exec("SET @@warning_count = 3")); got != "1238 HY000 Variable 'warning_count' is a read only variable" {
		t.Errorf("SET @@warning_count: %s", got)
	}
	// SHOW WARNINGS lists a failed statement's error, twice if asked
	// twice, until the next statement.
	failed := mysqlErr(exec("SELECT * FROM d.nosuch"))
	for i := 0; i < 2; i++ {
		var level, code, msg string
		if err := db.QueryRow("SHOW WARNINGS").Scan(&level, &code, &msg); err != nil {
			t.Fatal(err)
		}
		if got := level + " " + code + " 42S02 " + msg; got != "Error "+failed {
			t.Errorf("SHOW WARNINGS after a failed SELECT: %s, want the error the client got (%s)", got, failed)
		}
	}
	if got := count("SHOW COUNT(*) ERRORS"); got != "1" {
		t.Errorf("SHOW COUNT(*) ERRORS after SHOW WARNINGS: %s, want the failed statement's 1", got)
	}
	rows, err := db.Query("SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Error("SHOW WARNINGS after SHOW COUNT(*) ERRORS still lists the error")
	}
	rows.Close()
}
