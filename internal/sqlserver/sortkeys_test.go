package sqlserver

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/iters"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// sortTestColumn is a column of the rows sortTestRows makes.
type sortTestColumn struct {
	typ   sql.Type
	value func(rng *rand.Rand) any
}

// sortTestColumns: column 0 is the row's id, the others are sorted on.
// Values come from small sets, so that many rows tie.
func sortTestColumns() []sortTestColumn {
	words := []string{"a", "A", "á", "B", "b", "c", "apple", "Apple", "APPLE", "apple ", "Äpple", "ß", "ss", "", " ", "é", "E", "😀", "中", "\xff"}
	str := func(rng *rand.Rand) any {
		if rng.Intn(8) == 0 {
			return nil
		}
		return words[rng.Intn(len(words))]
	}
	collated := func(c sql.CollationID) sortTestColumn {
		return sortTestColumn{typ: types.MustCreateString(sqltypes.VarChar, 100, c), value: str}
	}
	return []sortTestColumn{
		{typ: types.Int64},
		collated(sql.Collation_utf8mb4_0900_ai_ci),
		collated(sql.Collation_utf8mb4_general_ci),
		collated(sql.Collation_latin1_swedish_ci),
		collated(sql.Collation_utf8mb4_0900_bin),
		collated(sql.Collation_utf8mb4_0900_as_cs),
		{typ: types.Int64, value: func(rng *rand.Rand) any {
			if rng.Intn(6) == 0 {
				return nil
			}
			return int64(rng.Intn(5) - 2)
		}},
		// Strings that come as []byte now and then: compared by the
		// type's Compare, with the keys of the other strings.
		{typ: types.MustCreateString(sqltypes.VarChar, 100, sql.Collation_utf8mb4_0900_ai_ci), value: func(rng *rand.Rand) any {
			v := str(rng)
			if s, ok := v.(string); ok && rng.Intn(3) == 0 {
				return []byte(s)
			}
			return v
		}},
		{typ: types.MustCreateString(sqltypes.VarBinary, 100, sql.Collation_binary), value: func(rng *rand.Rand) any {
			v := str(rng)
			if s, ok := v.(string); ok && rng.Intn(2) == 0 {
				return []byte(s)
			}
			return v
		}},
		{typ: types.Float64, value: func(rng *rand.Rand) any { return float64(rng.Intn(3)) / 2 }},
	}
}

func sortTestRows(rng *rand.Rand, cols []sortTestColumn, n int) []sql.Row {
	rows := make([]sql.Row, n)
	for i := range rows {
		r := sql.Row{int64(i)}
		for _, c := range cols[1:] {
			r = append(r, c.value(rng))
		}
		rows[i] = r
	}
	return rows
}

func sortTestFields(rng *rand.Rand, cols []sortTestColumn) sql.SortFields {
	var fields sql.SortFields
	for range 1 + rng.Intn(4) {
		i := 1 + rng.Intn(len(cols)-1)
		sf := sql.SortField{Column: expression.NewGetField(i, cols[i].typ, fmt.Sprintf("c%d", i), true)}
		if rng.Intn(2) == 0 {
			sf.Order = sql.Descending
		} else {
			sf.Order = sql.Ascending
		}
		if rng.Intn(2) == 0 {
			sf.NullOrdering = sql.NullsFirst
		} else {
			sf.NullOrdering = sql.NullsLast
		}
		fields = append(fields, sf)
	}
	return fields
}

// gmsSort is go-mysql-server's Sort of rows.
func gmsSort(ctx *sql.Context, fields sql.SortFields, rows []sql.Row) error {
	s := &expression.Sorter{SortFields: fields, Rows: rows, Ctx: ctx}
	sort.Stable(s)
	return s.LastError
}

func rowIDs(rows []sql.Row) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r[0].(int64)
	}
	return ids
}

// keyedSort orders random rows exactly as go-mysql-server's Sorter does.
func TestKeyedSortMatchesSorter(t *testing.T) {
	ctx := sql.NewEmptyContext()
	rng := rand.New(rand.NewSource(3))
	cols := sortTestColumns()
	failed := 0
	for iter := 0; iter < 400; iter++ {
		rows := sortTestRows(rng, cols, rng.Intn(120))
		fields := sortTestFields(rng, cols)
		want := slices.Clone(rows)
		wantErr := gmsSort(ctx, fields, want)
		got := slices.Clone(rows)
		err := keyedSort(ctx, fields, got)
		// Compare fails on a []byte that is not UTF-8.
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("fields %v: error %v, Sorter's %v", fields, err, wantErr)
		}
		if err != nil {
			failed++
			continue
		}
		if w, g := rowIDs(want), rowIDs(got); !slices.Equal(w, g) {
			t.Fatalf("fields %v: order %v, Sorter's %v", fields, g, w)
		}
	}
	if failed > 100 {
		t.Errorf("%d sorts of 400 failed", failed)
	}
}

// failingField is a column whose evaluation fails on one row.
type failingField struct {
	*expression.GetField
	failOn int64
}

func (f failingField) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if row[0].(int64) == f.failOn {
		return nil, fmt.Errorf("no value for row %d", f.failOn)
	}
	return f.GetField.Eval(ctx, row)
}

// A field that fails to evaluate ends the sort with the Sorter's error,
// and only when the Sorter meets it (a second field is evaluated only
// for rows that tie on the first).
func TestKeyedSortErrorsAsSorter(t *testing.T) {
	ctx := sql.NewEmptyContext()
	rng := rand.New(rand.NewSource(4))
	cols := sortTestColumns()
	failed := 0
	for iter := 0; iter < 300; iter++ {
		rows := sortTestRows(rng, cols, rng.Intn(40))
		fields := sortTestFields(rng, cols)
		i := 1 + rng.Intn(len(cols)-1)
		fields = append(fields, sql.SortField{
			Column: failingField{GetField: expression.NewGetField(i, cols[i].typ, "f", true), failOn: int64(rng.Intn(40))},
		})
		want := slices.Clone(rows)
		wantErr := gmsSort(ctx, fields, want)
		got := slices.Clone(rows)
		err := keyedSort(ctx, fields, got)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("error %v, Sorter's %v", err, wantErr)
		}
		if sql.ErrUnableSort.Is(err) {
			failed++
		}
		if err != nil {
			continue
		}
		if w, g := rowIDs(want), rowIDs(got); !slices.Equal(w, g) {
			t.Fatalf("order %v, Sorter's %v", g, w)
		}
	}
	if failed == 0 {
		t.Error("no sort met the failing row")
	}
}

// gmsTopN is go-mysql-server's TopN of rows, with the FOUND_ROWS it sets.
func gmsTopN(ctx *sql.Context, fields sql.SortFields, limit int64, rows []sql.Row, schemaLen int) ([]sql.Row, int64, error) {
	it := iters.NewTopRowsIter(fields, limit, true, sql.RowsToRowIter(rows...), schemaLen)
	return drainTopN(ctx, it)
}

func drainTopN(ctx *sql.Context, it sql.RowIter) ([]sql.Row, int64, error) {
	ctx.SetLastQueryInfoInt(sql.FoundRows, -1)
	var out []sql.Row
	for {
		r, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			it.Close(ctx)
			return nil, 0, err
		}
		out = append(out, r)
	}
	if err := it.Close(ctx); err != nil {
		return nil, 0, err
	}
	return out, ctx.GetLastQueryInfoInt(sql.FoundRows), nil
}

// clipRows copies rows with no room to spare: TopN appends to each row.
func clipRows(rows []sql.Row) []sql.Row {
	out := make([]sql.Row, len(rows))
	for i, r := range rows {
		out[i] = slices.Clone(r)[:len(r):len(r)]
	}
	return out
}

// keyedTopNIter returns the rows, FOUND_ROWS and errors of
// go-mysql-server's TopN iterator.
func TestKeyedTopNMatchesTopRowsIter(t *testing.T) {
	ctx := sql.NewEmptyContext()
	rng := rand.New(rand.NewSource(5))
	cols := sortTestColumns()
	failed, compared := 0, 0
	for iter := 0; iter < 400; iter++ {
		n := rng.Intn(80)
		rows := sortTestRows(rng, cols, n)
		fields := sortTestFields(rng, cols)
		if rng.Intn(4) == 0 {
			i := 1 + rng.Intn(len(cols)-1)
			fields = append(fields, sql.SortField{
				Column: failingField{GetField: expression.NewGetField(i, cols[i].typ, "f", true), failOn: int64(rng.Intn(80))},
			})
		}
		limit := int64(rng.Intn(n + 5))
		if rng.Intn(5) == 0 {
			limit = int64(rng.Intn(3))
		}
		want, wantFound, wantErr := gmsTopN(ctx, fields, limit, clipRows(rows), len(cols))
		got, found, err := drainTopN(ctx, newKeyedTopNIter(fields, limit, true, sql.RowsToRowIter(clipRows(rows)...), len(cols)))
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("fields %v limit %d: error %v, TopN's %v", fields, limit, err, wantErr)
		}
		if err != nil {
			failed++
			continue
		}
		compared++
		if w, g := rowIDs(want), rowIDs(got); !slices.Equal(w, g) {
			t.Fatalf("fields %v limit %d: rows %v, TopN's %v", fields, limit, g, w)
		}
		for i := range got {
			if len(got[i]) != len(cols) {
				t.Fatalf("row %v has %d columns, want %d", got[i], len(got[i]), len(cols))
			}
		}
		if found != wantFound {
			t.Fatalf("FOUND_ROWS %d, TopN's %d", found, wantFound)
		}
	}
	if failed == 0 || compared < 200 {
		t.Errorf("%d runs failed, %d compared", failed, compared)
	}
}

// ORDER BY through a client session: utf8mb4_0900_ai_ci ignores case and
// accents, and rows that compare equal keep the order they are read in.
func TestSortOrderByCollation(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE o",
		"CREATE TABLE o.t (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, n INT)",
		"INSERT INTO o.t VALUES (1, 'c', 1), (2, 'B', 2), (3, 'apple', 1), (4, 'a', 2), (5, 'Apple', 1), (6, 'b', 1), (7, NULL, 1), (8, 'Á', 1), (9, 'APPLE', 2)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, k := range []struct{ q, want string }{
		{"SELECT s FROM o.t ORDER BY s", "[NULL a Á apple Apple APPLE B b c]"},
		{"SELECT id FROM o.t ORDER BY s", "[7 4 8 3 5 9 2 6 1]"},
		{"SELECT id FROM o.t ORDER BY s DESC", "[1 2 6 3 5 9 4 8 7]"},
		{"SELECT id FROM o.t ORDER BY s, id DESC", "[7 8 4 9 5 3 6 2 1]"},
		{"SELECT id FROM o.t ORDER BY n DESC, s", "[4 9 2 7 8 3 5 6 1]"},
		{"SELECT id FROM o.t WHERE s < 'b' ORDER BY UPPER(s), id", "[4 8 3 5 9]"},
		{"SELECT DISTINCT s FROM o.t ORDER BY s", "[NULL a apple B c]"},
		{"SELECT id FROM o.t ORDER BY s LIMIT 4", "[7 4 8 3]"},
		{"SELECT id FROM o.t ORDER BY s DESC LIMIT 2 OFFSET 3", "[3 5]"},
		{"SELECT id FROM o.t ORDER BY s LIMIT 0", "[]"},
		{"SELECT * FROM o.t ORDER BY s DESC, n LIMIT 3", "[1|c|1 6|b|1 2|B|2]"},
		{"SELECT * FROM o.t ORDER BY s LIMIT 1, 3", "[4|a|2 8|Á|1 3|apple|1]"},
	} {
		r, err := query(t, db, k.q)
		if err != nil {
			t.Fatalf("%s: %v", k.q, err)
		}
		if got := fmt.Sprint(r.rows); got != k.want {
			t.Errorf("%s = %s, want %s", k.q, got, k.want)
		}
	}
	// FOUND_ROWS after ORDER BY … LIMIT on one connection.
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r, err := query(t, c, "SELECT SQL_CALC_FOUND_ROWS id FROM o.t WHERE n = 1 ORDER BY s LIMIT 2"); err != nil || fmt.Sprint(r.rows) != "[7 8]" {
		t.Errorf("SQL_CALC_FOUND_ROWS … LIMIT 2: %v %v", r.rows, err)
	}
	if r, err := query(t, c, "SELECT FOUND_ROWS()"); err != nil || fmt.Sprint(r.rows) != "[6]" {
		t.Errorf("FOUND_ROWS() = %v %v, want [6]", r.rows, err)
	}
}
