package difftest

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseScript(t *testing.T) {
	s, err := ParseScript("a.sql", "-- comment\nCREATE TABLE t (\n  id INT\n);\n\nSELECT 1;\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Statements) != 2 || s.Statements[0].Line != 2 || s.Statements[0].SQL != "CREATE TABLE t (\n  id INT\n)" || s.Statements[1].SQL != "SELECT 1" {
		t.Fatalf("statements %+v", s.Statements)
	}
	if _, err := ParseScript("b.sql", "SELECT 1\n"); err == nil {
		t.Fatal("a statement without ';' was accepted")
	}
}

func TestParseIntendedRefusesUnreviewedEntries(t *testing.T) {
	for _, text := range []string{
		"file: a.sql\nstatement: SELECT 1\naspects: rows\nkind: known\nreason: TODO\n",
		"file: a.sql\nstatement: SELECT 1\naspects: rows\nkind: known\n",
		"file: a.sql\nstatement: SELECT 1\naspects: colour\nkind: known\nreason: r\n",
		"file: a.sql\nstatement: SELECT 1\naspects: rows\nkind: maybe\nreason: r\n",
	} {
		if _, err := ParseIntended(strings.NewReader(text)); err == nil {
			t.Errorf("accepted:\n%s", text)
		}
	}
}

// Compare finds each kind of difference, sorts them against the list, and
// reports the entries that match nothing.
func TestCompare(t *testing.T) {
	list, err := ParseIntended(strings.NewReader(`# a comment
file: a.sql
statement: SELECT VERSION()
aspects: rows
kind: intended
reason: the version string

file: a.sql
statement: SELECT
  2
aspects: rows
kind: known
reason: stale on purpose
`))
	if err != nil {
		t.Fatal(err)
	}
	ok := Outcome{Columns: []string{"x INT64"}, Rows: []string{"1"}}
	res := []Result{
		{Script: "a.sql", Statement: Statement{SQL: "SELECT 1"}, Miraj: ok, MariaDB: ok},
		{Script: "a.sql", Statement: Statement{SQL: "SELECT  VERSION()"}, Miraj: Outcome{Rows: []string{"8.0.31"}}, MariaDB: Outcome{Rows: []string{"10.11"}}},
		{Script: "a.sql", Statement: Statement{SQL: "SELECT x FROM t"},
			Miraj:   Outcome{Rows: []string{"b", "a"}, Warnings: []Warning{{"Note", "1062", "dup"}}},
			MariaDB: Outcome{Rows: []string{"a", "b"}, Warnings: []Warning{{"Warning", "1062", "dup"}}}},
		{Script: "a.sql", Statement: Statement{SQL: "SELECT x FROM t ORDER BY x"}, Miraj: Outcome{Rows: []string{"b", "a"}}, MariaDB: Outcome{Rows: []string{"a", "b"}}},
		{Script: "a.sql", Statement: Statement{SQL: "DROP TABLE nope"},
			Miraj:   Outcome{Err: &SQLError{1146, "42S02", "Table 'd.nope' doesn't exist"}},
			MariaDB: Outcome{Err: &SQLError{1051, "42S02", "Unknown table 'd.nope'"}}},
		{Script: "a.sql", Statement: Statement{SQL: "SELEC 1"},
			Miraj:   Outcome{Err: &SQLError{1064, "42000", "MySQL"}},
			MariaDB: Outcome{Err: &SQLError{1064, "42000", "MariaDB"}}},
		{Script: "a.sql", Statement: Statement{SQL: "DELETE FROM t"}, Miraj: Outcome{Affected: 0}, MariaDB: Outcome{Affected: 3}},
	}
	rep := Compare(res, list)
	var got []string
	for _, d := range rep.Differences {
		k := "unexpected"
		if d.Intended != nil {
			k = string(d.Intended.Kind)
		}
		got = append(got, d.Statement.SQL+" "+string(d.Aspect)+" "+k)
	}
	want := []string{
		"SELECT  VERSION() rows intended",
		"SELECT x FROM t warnings unexpected", // rows are a multiset without ORDER BY
		"SELECT x FROM t ORDER BY x rows unexpected",
		"DROP TABLE nope error-code unexpected",
		"SELEC 1 error-message unexpected",
		"DELETE FROM t affected unexpected",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rep.Statements != 7 || rep.Differing != 6 || len(rep.Unexpected()) != 5 {
		t.Errorf("counts: %d statements, %d differing, %d unexpected", rep.Statements, rep.Differing, len(rep.Unexpected()))
	}
	if len(rep.Stale) != 1 || rep.Stale[0].Statement != "SELECT 2" {
		t.Errorf("stale entries %v", rep.Stale)
	}
	var out bytes.Buffer
	rep.Write(&out)
	if !strings.Contains(out.String(), "7 statements compared, 1 identical, 6 with differences") || !strings.Contains(out.String(), "intended (list line 2): the version string") {
		t.Errorf("report:\n%s", out.String())
	}
	var prop bytes.Buffer
	rep.Propose(&prop)
	if n := strings.Count(prop.String(), "reason: TODO"); n != 5 {
		t.Errorf("proposed %d entries, want 5:\n%s", n, prop.String())
	}
}
