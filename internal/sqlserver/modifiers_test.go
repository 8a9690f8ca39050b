package sqlserver

import (
	"context"
	"testing"
)

// The modifiers MySQL takes and an InnoDB server ignores are read (they
// were syntax errors, 1064); DISTINCTROW is DISTINCT; INSERT DELAYED runs
// as an INSERT with MySQL's warning; SHOW STORAGE ENGINES is SHOW ENGINES;
// text that only looks like them is left alone.
func TestStatementModifiers(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE md", "CREATE TABLE md.t (id INT PRIMARY KEY, cat VARCHAR(5))",
		"INSERT LOW_PRIORITY INTO md.t VALUES (1, 'a')",
		"INSERT HIGH_PRIORITY IGNORE INTO md.t VALUES (2, 'a'), (1, 'x')",
		"REPLACE LOW_PRIORITY INTO md.t VALUES (3, 'b')",
		"UPDATE LOW_PRIORITY IGNORE md.t SET cat = 'c' WHERE id = 3",
		"DELETE LOW_PRIORITY FROM md.t WHERE id = 99")
	for _, c := range []struct{ q, want string }{
		{"SELECT HIGH_PRIORITY SQL_SMALL_RESULT COUNT(*) FROM md.t", "3"},
		{"SELECT SQL_BIG_RESULT cat, COUNT(*) FROM md.t GROUP BY cat ORDER BY cat", "a|2;c|1"},
		{"SELECT DISTINCTROW cat FROM md.t ORDER BY cat", "a;c"},
		{"SELECT id FROM md.t FORCE INDEX (PRIMARY) WHERE id > 1 ORDER BY id", "2;3"},
		{"SELECT id FROM md.t USE INDEX () ORDER BY id LIMIT 1", "1"},
		{"SELECT id FROM md.t IGNORE KEY FOR ORDER BY (`PRIMARY`) ORDER BY id DESC LIMIT 1", "3"},
		{"SELECT 'SELECT HIGH_PRIORITY', 'low_priority'", "SELECT HIGH_PRIORITY|low_priority"},
	} {
		got, err := query(t, db, c.q)
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if s := joinRows(got.rows); s != c.want {
			t.Errorf("%s: %s, want %s", c.q, s, c.want)
		}
	}
	var engine, support, comment string
	var tx, xa, sp any
	if err := db.QueryRow("SHOW STORAGE ENGINES").Scan(&engine, &support, &comment, &tx, &xa, &sp); err != nil || engine == "" {
		t.Errorf("SHOW STORAGE ENGINES: %q %v", engine, err)
	}
	conn := dbConn(t, db)
	if _, err := conn.ExecContext(context.Background(), "INSERT DELAYED INTO md.t VALUES (4, 'd')"); err != nil {
		t.Fatal(err)
	}
	var level, code, msg string
	if err := conn.QueryRowContext(context.Background(), "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil ||
		code != "3005" || msg != "INSERT DELAYED is no longer supported. The statement was converted to INSERT." {
		t.Errorf("INSERT DELAYED: warning %s %s %q (%v)", level, code, msg, err)
	}
}

func joinRows(rows []string) string {
	out := ""
	for i, r := range rows {
		if i > 0 {
			out += ";"
		}
		out += r
	}
	return out
}
