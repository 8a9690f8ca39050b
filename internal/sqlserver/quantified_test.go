package sqlserver

import (
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
)

func TestRewriteQuantified(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT 1", ""},
		{"SELECT a FROM t WHERE a > ALL (SELECT b FROM u)", "SELECT a FROM t WHERE a = miraj_quantified('> ALL ', (SELECT b FROM u))"},
		{"select a from t where a<>any(select b from u where (b) in (1,2)) and c = 1",
			"select a from t where a= miraj_quantified('<>any', (select b from u where (b) in (1,2))) and c = 1"},
		{"SELECT x >= SOME (SELECT 1), y != all\n(SELECT 2)", "SELECT x = miraj_quantified('>= SOME ', (SELECT 1)), y = miraj_quantified('!= all\n', (SELECT 2))"},
		// Not quantified comparisons: UNION ALL, SELECT ALL, a column called
		// any, quoted text, comments, <=>.
		{"SELECT 1 UNION ALL (SELECT 2)", ""},
		{"SELECT ALL a FROM t WHERE `all` = any_value(b)", ""},
		{"SELECT '= ANY (SELECT 1)', \"> all (x)\" -- = ANY (y)\n", ""},
		{"SELECT a FROM t /* > ALL (SELECT 1) */ WHERE a <=> ALL", ""},
		{"SELECT a = ANY (SELECT b FROM u", ""}, // unbalanced: left to the parser
	} {
		got, ok := rules.RewriteQuantified(c.in)
		if c.want == "" {
			if ok || got != c.in {
				t.Errorf("%q rewritten as %q", c.in, got)
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
			continue
		}
		if back := rules.RestoreQuantified(got); back != c.in {
			t.Errorf("%q restored as %q", got, back)
		}
	}
}

// Quantified comparisons over the text protocol, with NULLs and a
// correlated subquery.
func TestQuantifiedComparisons(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE qa",
		"CREATE TABLE qa.dept (id INT PRIMARY KEY, name VARCHAR(20))",
		"CREATE TABLE qa.emp (id INT PRIMARY KEY, name VARCHAR(20), dept INT)",
		"INSERT INTO qa.dept VALUES (1, 'Dev'), (2, 'Ops'), (3, 'HR')",
		"INSERT INTO qa.emp VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', NULL), (4, 'd', 3)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, c := range []struct {
		q    string
		args []any
		want string
	}{
		{"SELECT name FROM qa.emp WHERE dept > ALL (SELECT id FROM qa.dept WHERE id < 2) ORDER BY name", nil, "b;d"},
		{"SELECT name FROM qa.emp WHERE dept = ANY (SELECT id FROM qa.dept) ORDER BY name", nil, "a;b;d"},
		{"SELECT 5 > ALL (SELECT dept FROM qa.emp), 5 > ANY (SELECT dept FROM qa.emp), 5 > ALL (SELECT id FROM qa.dept WHERE id > 9)", nil, "NULL|1|1"},
		{"SELECT NULL > ALL (SELECT id FROM qa.dept WHERE id > 9), NULL = ANY (SELECT id FROM qa.dept WHERE id > 9), NULL = SOME (SELECT id FROM qa.dept)", nil, "1|0|NULL"},
		{"SELECT name, dept <> ALL (SELECT id FROM qa.dept WHERE id > 1) FROM qa.emp ORDER BY id", nil, "a|1;b|0;c|NULL;d|0"},
		{"SELECT name FROM qa.emp e WHERE id >= ALL (SELECT id FROM qa.emp e2 WHERE e2.dept = e.dept) ORDER BY name", nil, "a;b;c;d"},
		{"SELECT name FROM qa.emp WHERE dept < ALL (SELECT id FROM qa.dept WHERE id > 1) ORDER BY name", nil, "a"},
		{"SELECT 3 = ANY (SELECT id FROM qa.dept), 3 <> ALL (SELECT id FROM qa.dept), 'ops' = SOME (SELECT name FROM qa.dept)", nil, "1|0|1"},
	} {
		r, err := query(t, db, c.q, c.args...)
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if got := strings.Join(r.rows, ";"); got != c.want {
			t.Errorf("%s: %s, want %s", c.q, got, c.want)
		}
	}
	r, err := query(t, db, "SELECT 5 > ALL (SELECT dept FROM qa.emp)")
	if err != nil || !strings.HasPrefix(r.cols[0], "5 > ALL (SELECT dept FROM qa.emp) ") {
		t.Errorf("column of a quantified comparison: %v %v", r.cols, err)
	}
	if _, err := query(t, db, "SELECT 1 = ANY (SELECT id, name FROM qa.dept)"); err == nil || !strings.Contains(err.Error(), "Error 1241 (21000): Operand should contain 1 column(s)") {
		t.Errorf("two columns: %v", err)
	}
}
