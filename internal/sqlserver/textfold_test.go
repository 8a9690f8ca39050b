package sqlserver

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// INSERTs of rows alike fold to their first row; anything else does not.
func TestFoldRows(t *testing.T) {
	for _, c := range []struct {
		q, want string // want: the folded statement rendered with the first row's literals; "" for none
		rows    int
	}{
		{"INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')", "INSERT INTO t VALUES (1, 'a')", 3},
		{"INSERT INTO sbtest1(k, c, pad) VALUES(5014, '68-12', '22-1'),(4911, '1-2', '3-4')", "INSERT INTO sbtest1(k, c, pad) VALUES(5014, '68-12', '22-1')", 2},
		{"insert into `values` (`a(`, b) value (1,'x') ,\n (2,'y');", "insert into `values` (`a(`, b) value (1,'x');", 2},
		{"INSERT INTO t (id, c) VALUES (1, 'a'), (2, 'b') ON DUPLICATE KEY UPDATE c = VALUES(c)", "INSERT INTO t (id, c) VALUES (1, 'a') ON DUPLICATE KEY UPDATE c = VALUES(c)", 2},
		{"INSERT INTO t VALUES (1, 'a'),(2, 'b'),(3, 'c'),(4, 'd')", "INSERT INTO t VALUES (1, 'a')", 4},
		{"INSERT INTO t VALUES (1, 'a')", "", 0},                                             // one row: compiled as written
		{"INSERT INTO t VALUES (1, 'a'), (2, NULL)", "", 0},                                  // rows not alike
		{"INSERT INTO t VALUES (1, 'a'), ('2', 'b')", "", 0},                                 // a string where a number was
		{"INSERT INTO t VALUES (1, 'a'), (2,'b')", "", 0},                                    // written otherwise
		{"INSERT INTO t (id, n) VALUES (1, 2), (3, 4) ON DUPLICATE KEY UPDATE n = 5", "", 0}, // a literal after the rows
		{"INSERT INTO t VALUES (NULL), (NULL)", "", 0},                                       // no literal
		{"INSERT INTO t VALUES ROW(1), ROW(2)", "", 0},
		{"INSERT INTO t SELECT id FROM u WHERE id IN (1, 2)", "", 0},
		{"INSERT INTO t SET id = 1", "", 0},
		{"UPDATE t SET c = 'a' WHERE id IN (1, 2)", "", 0},
		{"INSERT INTO value VALUES (1), (2)", "", 0}, // a table called value: not folded, not misread
	} {
		shape, lits, ok := shapeOf(c.q)
		if !ok {
			t.Fatalf("%q: no shape", c.q)
		}
		f, ok := foldRows(shape, len(lits))
		switch {
		case c.want == "" && ok:
			t.Errorf("%q folded to %q", c.q, render(f.shape, lits[:f.lits]))
		case c.want != "" && !ok:
			t.Errorf("%q not folded", c.q)
		case ok && (render(f.shape, lits[:f.lits]) != c.want || f.rows != c.rows):
			t.Errorf("%q folded to %q, %d rows; want %q, %d", c.q, render(f.shape, lits[:f.lits]), f.rows, c.want, c.rows)
		}
	}
}

// The tables a long INSERT of rows alike reads and writes, which the
// LOCK TABLES gate finds from its first row alone, are those of the whole
// statement.
func TestFoldedInsertFootprint(t *testing.T) {
	for _, row := range []string{"(%d, 'x%d')", "(%d, (SELECT MAX(v) FROM other.u WHERE v > %d))"} {
		var b strings.Builder
		b.WriteString("INSERT INTO d.t VALUES ")
		for i := range 400 {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, row, i, i)
		}
		q := b.String()
		if len(q) <= maxTextLen || firstRowOf(q) == q {
			t.Fatalf("%.40s…: %d bytes, not folded", q, len(q))
		}
		stmt, err := ast.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		var whole footprint
		footprintReader{}.add(&whole, stmt, false, 0)
		got := (footprintReader{}).statement(q)
		if !reflect.DeepEqual(distinctUses(got), distinctUses(whole)) || len(whole.uses) == 0 || got.all != whole.all || got.allWrite != whole.allWrite {
			t.Fatalf("%.40s…: footprint %+v, parsed whole %+v", q, distinctUses(got), distinctUses(whole))
		}
	}
}

func distinctUses(f footprint) map[tableUse]bool {
	m := map[tableUse]bool{}
	for _, u := range f.uses {
		m[u] = true
	}
	return m
}

// Random INSERTs of rows alike: the folded statement parses to the INSERT
// of the first row, and the literals of row r, bound as tryText binds them
// (v(r·k+1) …), are the values the parser reads in the whole statement's
// row r.
func TestFoldedRowsAreTheStatementsRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	forms := []string{"(%d, '%s')", "(0%d, '%s')", "(%d,'%s', %d)", "( '%s' , %d , 7 , NULL )", "(%d, CONCAT('%s', 'x'))"}
	for range 300 {
		form := forms[rng.IntN(len(forms))]
		n := 2 + rng.IntN(40)
		var b strings.Builder
		b.WriteString("INSERT INTO t VALUES ")
		for r := range n {
			if r > 0 {
				b.WriteString([]string{",", ", ", " ,\n"}[rng.IntN(3)])
			}
			var args []any
			for _, verb := range strings.Split(form, "%")[1:] {
				if verb[0] == 'd' {
					args = append(args, rng.IntN(1_000_000))
				} else {
					args = append(args, []string{"", "x", "a b", "(1),(2)", "values", "éclair"}[rng.IntN(6)])
				}
			}
			fmt.Fprintf(&b, form, args...)
		}
		q := b.String()
		shape, lits, ok := shapeOf(q)
		if !ok {
			t.Fatalf("%q: no shape", q)
		}
		f, ok := foldRows(shape, len(lits))
		if !ok || f.rows != n {
			t.Fatalf("%q: folded %v, %d rows; want %d", q, ok, f.rows, n)
		}
		whole, err := ast.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		first, err := ast.Parse(render(f.shape, lits[:f.lits]))
		if err != nil {
			t.Fatal(err)
		}
		rows := insertValues(whole)
		if got, want := ast.String(insertValues(first)[0]), ast.String(rows[0]); got != want || len(insertValues(first)) != 1 {
			t.Fatalf("%q: first row %s, want %s", q, got, want)
		}
		vars := parameterize(whole) // v1 … in the order of the rows
		if len(vars) != len(lits) {
			t.Fatalf("%q: %d parameters parsed, %d literals", q, len(vars), len(lits))
		}
		fr := newFoldedRows(lits, f.lits)
		for r := range n {
			for i, name := range fr.names {
				got, want := fr.row(r)[name], vars["v"+strconv.Itoa(r*f.lits+i+1)]
				gv, err1 := sqltypes.BindVariableToValue(got)
				wv, err2 := sqltypes.BindVariableToValue(want)
				if err1 != nil || err2 != nil || got.Type != want.Type || gv.ToString() != wv.ToString() && !sameInt(gv, wv) {
					t.Fatalf("%q: row %d's %s bound %v, parsed %v", q, r, name, got, want)
				}
			}
		}
	}
}

func sameInt(a, b sqltypes.Value) bool {
	x, err1 := sqltypes.ToInt64(a)
	y, err2 := sqltypes.ToInt64(b)
	return err1 == nil && err2 == nil && x == y
}

func insertValues(stmt ast.Statement) ast.Values {
	switch r := stmt.(*ast.Insert).Rows.(type) {
	case ast.Values:
		return r
	case *ast.AliasedValues:
		return r.Values
	}
	return nil
}
