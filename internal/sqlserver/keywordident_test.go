package sqlserver

import (
	"errors"
	"fmt"
	"testing"
)

// Names MySQL does not reserve but go-mysql-server's parser takes for
// keywords name tables and columns unquoted, as in MySQL; a statement
// wrong for another reason keeps its first error.
func TestKeywordNames(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE kw")
	for _, w := range []string{"copy", "plan", "next", "event", "position", "yes", "now", "variance", "shared", "off"} {
		execAll(t, db,
			fmt.Sprintf("CREATE TABLE kw.%s (id INT PRIMARY KEY, %s INT)", w, w),
			fmt.Sprintf("INSERT INTO kw.%s (id, %s) VALUES (1, 10), (2, 20)", w, w),
			fmt.Sprintf("UPDATE kw.%s SET %s = %s + 1 WHERE %s = 10", w, w, w, w),
			fmt.Sprintf("ALTER TABLE kw.%s ADD COLUMN x INT AFTER %s", w, w),
			fmt.Sprintf("CREATE INDEX %s ON kw.%s (%s)", w, w, w),
			fmt.Sprintf("CREATE VIEW kw.v_%s AS SELECT %s FROM kw.%s WHERE %s > 5", w, w, w, w),
		)
		r, err := query(t, db, fmt.Sprintf("SELECT t.%s, %s FROM kw.%s t WHERE %s > 0 GROUP BY t.%s ORDER BY %s", w, w, w, w, w, w))
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if got := fmt.Sprint(r.rows); got != "[11|11 20|20]" {
			t.Errorf("%s: rows %s, want [11|11 20|20]", w, got)
		}
		if got := queryOne(t, db, fmt.Sprintf("SELECT COUNT(*) FROM kw.v_%s", w)); got != "2" {
			t.Errorf("view over %s: %s rows, want 2", w, got)
		}
	}
	// A misspelled keyword stays a syntax error, with its first text.
	_, err := db.Exec("SELECT id FORM kw.plan")
	if err == nil {
		t.Fatal("SELECT id FORM kw.plan succeeded")
	}
	want := "Error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'kw.plan' at line 1"
	if err.Error() != want {
		t.Errorf("SELECT id FORM kw.plan: %v, want %s", err, want)
	}
}

// The repairs of a statement the parser refused: quoteStoppedWord quotes
// the word the parser stopped at, or the one before it, when MySQL does
// not reserve it; hintKeyAsIndex writes INDEX for the KEY of USE, FORCE
// and IGNORE KEY where the parser stopped at it, and nothing else.
func TestStatementRepairs(t *testing.T) {
	checkRepairs(t, "quoteStoppedWord", quoteStoppedWord, []repairCase{
		{"create table copy (a int)", "syntax error at position 18 near 'copy'", "create table `copy` (a int)"},
		{"select * from t where now = 1", "syntax error at position 28 near 'now'", "select * from t where `now` = 1"},
		{"select stddev from t", "syntax error at position 19 near 'from'", "select `stddev` from t"},
		{"select * frm t", "syntax error at position 14 near 't'", "select * frm `t`"},
		{"select * from t where", "syntax error at position 22 near ''", ""}, // where is reserved
		{"select a from t order by", "syntax error at position 25 near 'by'", ""},
		{"select _utf8 from t", "syntax error at position 18 near 'from'", ""},
		{"select `next` from t", "syntax error at position 19 near 'from'", ""},
	})
	checkRepairs(t, "hintKeyAsIndex", hintKeyAsIndex, []repairCase{
		{"select * from t use key (k)", "syntax error at position 23 near 'key'", "select * from t use INDEX (k)"},
		{"SELECT * FROM t a USE\n  KEY(k) JOIN u", "syntax error at position 27 near 'KEY'", "SELECT * FROM t a USE\n  INDEX(k) JOIN u"},
		{"select * from t force key for join (k)", "syntax error at position 25 near 'key'", "select * from t force INDEX for join (k)"},
		{"select key from t", "syntax error at position 11 near 'key'", ""},
		{"select * from t use kex (k)", "syntax error at position 24 near 'kex'", ""},
		{"select * from t use key (k)", "syntax error at position 27 near ')'", ""},
	})
}

// repairCase is a statement, the parser's error, and the statement a
// repair makes of them ("": none).
type repairCase struct{ q, err, want string }

func checkRepairs(t *testing.T, name string, repair func(string, error) (string, bool), cases []repairCase) {
	t.Helper()
	for _, c := range cases {
		got, ok := repair(c.q, errors.New(c.err))
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("%s(%q, %s) = %q, want %q", name, c.q, c.err, got, c.want)
		}
	}
}
