package sqlserver

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
)

func TestSyntaxText(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT d + INTERVAL '1:30' HOUR_MINUTE":               "SELECT d + INTERVAL '1:30' " + rules.UnitPrefix + "HOUR_MINUTE",
		"SELECT DATE_ADD(d, INTERVAL f(x, 1) year_month)":      "SELECT DATE_ADD(d, INTERVAL f(x, 1) " + rules.UnitPrefix + "year_month)",
		"SELECT EXTRACT(YEAR_MONTH FROM d), INTERVAL 1 DAY":    "SELECT EXTRACT(YEAR_MONTH FROM d), INTERVAL 1 DAY",
		"CREATE EVENT e ON SCHEDULE EVERY '1:2' HOUR_MINUTE":   "CREATE EVENT e ON SCHEDULE EVERY '1:2' HOUR_MINUTE",
		"SELECT SUBSTRING(s FROM 2)":                           "SELECT SUBSTRING(s ,/*__miraj_from*/ 2)",
		"SELECT substr(f(a, b) FROM 2 FOR 3) FROM t":           "SELECT substr(f(a, b) ,/*__miraj_from*/ 2 ,/*__miraj_for*/ 3) FROM t",
		"SELECT SUBSTRING((SELECT s FROM t) FROM 2)":           "SELECT SUBSTRING((SELECT s FROM t) ,/*__miraj_from*/ 2)",
		"SELECT SUBSTRING(s, 2), 'SUBSTRING(s FROM 2)' FROM t": "SELECT SUBSTRING(s, 2), 'SUBSTRING(s FROM 2)' FROM t",
	} {
		if got, _ := rules.AssignmentText(q); got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
}

// The columns keep the text written; the interval its unit.
func TestSyntaxTextParsed(t *testing.T) {
	p := lockParser{sql.NewMysqlParser()}
	stmt, err := p.ParseSimple("SELECT SUBSTRING('hello' FROM 2 FOR 3), DATE_ADD(d, INTERVAL '1:30' HOUR_MINUTE) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	sel := stmt.(*ast.Select)
	for i, want := range []string{"SUBSTRING('hello' FROM 2 FOR 3)", "DATE_ADD(d, INTERVAL '1:30' HOUR_MINUTE)"} {
		if got := sel.SelectExprs[i].(*ast.AliasedExpr).InputExpression; got != want {
			t.Errorf("column %d: got %q, want %q", i, got, want)
		}
	}
	iv := sel.SelectExprs[1].(*ast.AliasedExpr).Expr.(*ast.FuncExpr).Exprs[1].(*ast.AliasedExpr).Expr.(*ast.IntervalExpr)
	if iv.Unit != "HOUR_MINUTE" {
		t.Errorf("unit %q", iv.Unit)
	}
}

func TestIntervalValue(t *testing.T) {
	for _, c := range []struct {
		text, unit string
		want       int64
		ok         bool
	}{
		{"1:30", "HOUR_MINUTE", 90, true},
		{" -1:30", "HOUR_MINUTE", -90, true},
		{"90", "HOUR_MINUTE", 90, true},
		{"1:2:3", "HOUR_MINUTE", 0, false},
		{"1-2", "YEAR_MONTH", 14, true},
		{"1/2", "YEAR_MONTH", 14, true},
		{"1 2", "DAY_HOUR", 26, true},
		{"1 10:20:30", "DAY_SECOND", 123630, true},
		{"1.5", "SECOND_MICROSECOND", 1_500_000, true},
		{"1:2:3.000004", "HOUR_MICROSECOND", 3_723_000_004, true},
	} {
		got, ok := rules.IntervalValue(c.text, c.unit)
		if got != c.want || ok != c.ok {
			t.Errorf("%q %s: got %d %v, want %d %v", c.text, c.unit, got, ok, c.want, c.ok)
		}
	}
}

// A procedure's body gets its units back too (it is planned from this
// statement when the procedure is created).
func TestSyntaxTextRoutineBody(t *testing.T) {
	p := lockParser{sql.NewMysqlParser()}
	stmt, err := p.ParseSimple("CREATE PROCEDURE p() SELECT DATE_ADD(d, INTERVAL '1:30' HOUR_MINUTE), NTH_VALUE(a, 2) OVER () FROM t")
	if err != nil {
		t.Fatal(err)
	}
	var units, funcs []string
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.IntervalExpr:
			units = append(units, n.Unit)
		case *ast.FuncExpr:
			funcs = append(funcs, n.Name.Lowered())
		}
		return true, nil
	}, stmt.(*ast.DDL).ProcedureSpec.Body)
	if len(units) != 1 || units[0] != "HOUR_MINUTE" {
		t.Errorf("units %v", units)
	}
	for _, f := range funcs {
		if f == "nth_value" {
			t.Errorf("functions %v: NTH_VALUE not rewritten", funcs)
		}
	}
}
