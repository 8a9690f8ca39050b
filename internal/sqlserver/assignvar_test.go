package sqlserver

import (
	"context"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
)

func TestAssignmentText(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT (@r := @r + 1) AS rn FROM t":          "SELECT (" + rules.AssignFunction + "('r', @r + 1)) AS rn FROM t",
		"SELECT @t := @t + f(a, b), x FROM t":         "SELECT " + rules.AssignFunction + "('t', @t + f(a, b)), x FROM t",
		"SELECT @a := 1 FROM t WHERE @b := 2":         "SELECT " + rules.AssignFunction + "('a', 1) FROM t WHERE " + rules.AssignFunction + "('b', 2)",
		"SET @a := 1":                                 "SET @a := 1",
		"SELECT '@a := 1', @@x FROM t /* @b := 2 */":  "SELECT '@a := 1', @@x FROM t /* @b := 2 */",
		"UPDATE t SET a = (@i := @i + 1) ORDER BY id": "UPDATE t SET a = (" + rules.AssignFunction + "('i', @i + 1)) ORDER BY id",
		// INTERVAL(N, N1, …), the function; not a date interval's INTERVAL.
		"SELECT INTERVAL(5, 1, 10), interval (f(a, b), 2) FROM t":      "SELECT __miraj_INTERVAL(5, 1, 10), __miraj_interval (f(a, b), 2) FROM t",
		"SELECT DATE_ADD(d, INTERVAL (1 + 1) DAY), d + INTERVAL 1 DAY": "SELECT DATE_ADD(d, INTERVAL (1 + 1) DAY), d + INTERVAL 1 DAY",
		"SET @v = INTERVAL(3, 1, 2)":                                   "SET @v = __miraj_INTERVAL(3, 1, 2)",
		"SELECT `interval`(1, 2), 'INTERVAL(1, 2)' FROM t":             "SELECT `interval`(1, 2), 'INTERVAL(1, 2)' FROM t",
	} {
		if got, _ := rules.AssignmentText(q); got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
}

// A multi-statement query with an assignment: the rest is the client's
// text after the first statement, its locking clause included.
func TestAssignmentKeepsTheRest(t *testing.T) {
	p := lockParser{sql.NewMysqlParser()}
	q := "SELECT @n := @n + 1 AS n FROM t; SELECT b FROM u FOR UPDATE NOWAIT;"
	stmt, _, rest, err := p.ParseWithOptions(context.Background(), q, ';', true, ast.ParserOptions{})
	if err != nil || stmt == nil {
		t.Fatalf("parse: %v", err)
	}
	if r := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), ";")); r != "SELECT b FROM u FOR UPDATE NOWAIT" {
		t.Errorf("rest %q", rest)
	}
	_, n, err := p.ParseOneWithOptions(context.Background(), q, ast.ParserOptions{})
	if err != nil || !strings.HasPrefix(strings.TrimLeft(q[n:], "; "), "SELECT b") {
		t.Errorf("ParseOneWithOptions ends the first statement at %d (%q): %v", n, q[n:], err)
	}
	// The column keeps the name the client wrote.
	stmt, err = p.ParseSimple("SELECT @n := @n + 1, (@m := 2) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	sel := stmt.(*ast.Select)
	for i, want := range []string{"@n := @n + 1", "(@m := 2)"} {
		if got := sel.SelectExprs[i].(*ast.AliasedExpr).InputExpression; got != want {
			t.Errorf("column %d named %q, want %q", i+1, got, want)
		}
	}
}
