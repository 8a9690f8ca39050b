package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// statementCount is how many random statements a comparison with the
// planner runs: the environment variable env, or 10,000 (1,000 in the
// fast tier, -short).
func statementCount(env string) int {
	if v, err := strconv.Atoi(os.Getenv(env)); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 1000
	}
	return 10000
}

// TestRangeReadsMatchThePlanner runs random prepared statements of the
// shapes compiled reads answer (rangeplan.go, pointget.go) twice each —
// compiled, and through the planner — and requires the same columns
// (names, types, lengths, decimals, nullability), the same rows in the
// same order, the same errors and the same warnings.
//
// MIRAJ_RANGE_STATEMENTS sets how many executions are compared (10,000 by
// default).
func TestRangeReadsMatchThePlanner(t *testing.T) {
	total := statementCount("MIRAJ_RANGE_STATEMENTS")
	s, open := startServer(t)
	db := open("root", "", "")
	rng := rand.New(rand.NewPCG(7, uint64(total)))
	words := []string{"apple", "Apple", "APPLE", "banana", "Banana", "cherry", "éclair", "Eclair", "a", "a b", "b", "zeta", "Zeta ", "", "-x", "_y", "9z"}
	for _, q := range []string{
		"CREATE DATABASE r",
		"CREATE TABLE r.t1 (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(20) NOT NULL, pad VARCHAR(10), d DECIMAL(10,2), n INT NULL, u BIGINT UNSIGNED, KEY kk (k), KEY kc (c), KEY kn (n))",
		"CREATE TABLE r.t2 (a INT, b VARCHAR(8), v INT, PRIMARY KEY (a, b), KEY kv (v, a))",
		"CREATE TABLE r.t3 (s VARCHAR(10) PRIMARY KEY, v INT, w SMALLINT, KEY kw (w))",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for id := 1; id <= 300; id++ {
		n := "NULL"
		if rng.IntN(5) > 0 {
			n = strconv.Itoa(rng.IntN(40) - 5)
		}
		q := fmt.Sprintf("INSERT INTO r.t1 VALUES (%d, %d, '%s', '%s', %d.%02d, %s, %d)", id*3, rng.IntN(60), words[rng.IntN(len(words))],
			words[rng.IntN(len(words))], rng.IntN(2000)-1000, rng.IntN(100), n, rng.Uint64N(1<<62))
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for a := 1; a <= 40; a++ {
		for _, b := range []string{"x", "Y", "z"} {
			if _, err := db.Exec(fmt.Sprintf("INSERT INTO r.t2 VALUES (%d, '%s', %d)", a, b, rng.IntN(20))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, w := range []string{"apple", "banana", "cherry", "éclair", "a", "a b", "zeta", "-x", "_y", "9z", "Mango", "kiwi"} {
		if _, err := db.Exec(fmt.Sprintf("INSERT INTO r.t3 VALUES ('%s', %d, %d)", w, i, rng.IntN(5))); err != nil {
			t.Fatal(err)
		}
	}

	type column struct {
		name   string
		str    bool
		lo, hi int // parameter range for numbers
	}
	type table struct {
		name    string
		cols    []column
		keyCols []string // columns that lead an index
	}
	tables := []table{
		{"t1", []column{{"id", false, -10, 920}, {"k", false, -5, 65}, {"c", true, 0, 0}, {"pad", true, 0, 0}, {"d", false, -1000, 1000}, {"n", false, -8, 40}, {"u", false, 0, 100}},
			[]string{"id", "k", "c", "n"}},
		{"t2", []column{{"a", false, -2, 45}, {"b", true, 0, 0}, {"v", false, -2, 22}}, []string{"a", "v"}},
		{"t3", []column{{"s", true, 0, 0}, {"v", false, -1, 13}, {"w", false, -1, 6}}, []string{"s", "w"}},
	}
	param := func(c column) any {
		if c.str {
			if rng.IntN(4) == 0 {
				w := words[rng.IntN(len(words))]
				return w[:min(len(w), rng.IntN(2))]
			}
			return words[rng.IntN(len(words))]
		}
		return c.lo + rng.IntN(c.hi-c.lo+1)
	}
	colOf := func(tb table, name string) column {
		for _, c := range tb.cols {
			if c.name == name {
				return c
			}
		}
		panic(name)
	}

	// gen returns a statement and a function drawing its parameters.
	gen := func() (string, func() []any) {
		tb := tables[rng.IntN(len(tables))]
		key := colOf(tb, tb.keyCols[rng.IntN(len(tb.keyCols))])
		var kinds []int // per parameter: 0 key column value, 1 limit
		var sel string
		agg := false
		switch rng.IntN(4) {
		case 0:
			sel = "*"
		case 1:
			agg = true
			var parts []string
			for n := 1 + rng.IntN(3); n > 0; n-- {
				c := tb.cols[rng.IntN(len(tb.cols))]
				switch f := rng.IntN(5); {
				case f == 0:
					parts = append(parts, "COUNT(*)")
				case f == 1:
					parts = append(parts, "count("+c.name+")")
				case f == 2 && !c.str:
					parts = append(parts, "SUM("+c.name+")")
				case f == 3:
					parts = append(parts, "MIN("+c.name+")")
				default:
					parts = append(parts, "max("+c.name+")")
				}
			}
			sel = strings.Join(parts, ", ")
		default:
			var parts []string
			for n := 1 + rng.IntN(3); n > 0; n-- {
				parts = append(parts, tb.cols[rng.IntN(len(tb.cols))].name)
			}
			sel = strings.Join(parts, ", ")
			if rng.IntN(3) == 0 {
				sel = "DISTINCT " + sel
			}
		}
		term := func() string {
			switch rng.IntN(7) {
			case 0:
				kinds = append(kinds, 0, 0)
				return key.name + " BETWEEN ? AND ?"
			case 1:
				kinds = append(kinds, 0)
				return key.name + " = ?"
			case 2:
				n := 1 + rng.IntN(4)
				for range n {
					kinds = append(kinds, 0)
				}
				return key.name + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
			case 3:
				kinds = append(kinds, 0, 0)
				return key.name + " >= ? AND " + key.name + " < ?"
			case 4:
				kinds = append(kinds, 0)
				return key.name + " > ?"
			case 5:
				kinds = append(kinds, 0)
				return "? >= " + key.name
			default:
				kinds = append(kinds, 0, 0)
				return "(" + key.name + " > ? AND " + key.name + " <= ?)"
			}
		}
		where := term()
		for n := rng.IntN(3); n > 0 && rng.IntN(2) == 0; n-- {
			where += " OR " + term()
		}
		q := "SELECT " + sel + " FROM r." + tb.name + " WHERE " + where
		if agg && rng.IntN(5) == 0 {
			// Aggregates of the whole table.
			q, kinds = "SELECT "+sel+" FROM r."+tb.name, nil
		}
		if !agg && rng.IntN(2) == 0 {
			var parts []string
			for n := 1 + rng.IntN(2); n > 0; n-- {
				dir := []string{"", " ASC", " DESC"}[rng.IntN(3)]
				parts = append(parts, tb.cols[rng.IntN(len(tb.cols))].name+dir)
			}
			q += " ORDER BY " + strings.Join(parts, ", ")
		}
		if rng.IntN(3) == 0 {
			if rng.IntN(2) == 0 {
				q += " LIMIT ?"
				kinds = append(kinds, 1)
			} else {
				q += " LIMIT " + strconv.Itoa(rng.IntN(10))
			}
		}
		return q, func() []any {
			args := make([]any, len(kinds))
			for i, k := range kinds {
				if k == 1 {
					args[i] = rng.IntN(12)
				} else {
					args[i] = param(key)
				}
			}
			return args
		}
	}

	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	warnings := func() string {
		r, err := query(t, conn, "SHOW WARNINGS")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(r.rows)
	}
	text, err := openText(s, "").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer text.Close()
	textWarnings := func() string {
		r, err := query(t, text, "SHOW WARNINGS")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(r.rows)
	}
	// Whole-table aggregates of every column, some answered from the ends
	// of an index (nullable, collated and composite keys among them).
	for _, tb := range tables {
		for _, c := range tb.cols {
			for _, q := range []string{
				fmt.Sprintf("SELECT MIN(%s), MAX(%s), COUNT(*) FROM r.%s", c.name, c.name, tb.name),
				fmt.Sprintf("SELECT COUNT(%s), MAX(%s) FROM r.%s", c.name, c.name, tb.name),
			} {
				prepared, err := conn.PrepareContext(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				st := stmtQuerier{prepared}
				want, wantErr := query(t, st, "") // through the planner: records the columns
				before := s.points.ranged.Load()
				got, gotErr := query(t, st, "")
				if s.points.ranged.Load() != before+1 {
					t.Fatalf("%s was not compiled", q)
				}
				if fmt.Sprint(got, gotErr) != fmt.Sprint(want, wantErr) {
					t.Fatalf("%s:\n compiled %v %v\n planner  %v %v", q, got, gotErr, want, wantErr)
				}
				prepared.Close()
			}
		}
	}

	compared, fast, textFast := 0, int64(0), int64(0)
	for compared < total {
		q, args := gen()
		prepared, err := conn.PrepareContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		st := stmtQuerier{prepared}
		// The first execution records the result columns.
		if _, err := query(t, st, "", args()...); err != nil && !strings.Contains(err.Error(), "Error") {
			t.Fatalf("%s: %v", q, err)
		}
		for range 5 {
			a := args()
			before := s.points.answered.Load() + s.points.ranged.Load()
			got, gotErr := query(t, st, "", a...)
			gotWarn := warnings()
			fast += s.points.answered.Load() + s.points.ranged.Load() - before
			s.points.off.Store(true)
			want, wantErr := query(t, st, "", a...)
			wantWarn := warnings()
			s.points.off.Store(false)
			if fmt.Sprint(got, gotErr, gotWarn) != fmt.Sprint(want, wantErr, wantWarn) {
				t.Fatalf("%s %v:\n compiled %v %v %v\n planner  %v %v %v", q, a, got, gotErr, gotWarn, want, wantErr, wantWarn)
			}
			compared++
			// The same as a text statement with the values written in.
			before = s.points.answered.Load() + s.points.ranged.Load()
			got, gotErr = query(t, text, q, a...)
			gotWarn = textWarnings()
			textFast += s.points.answered.Load() + s.points.ranged.Load() - before
			s.points.off.Store(true)
			want, wantErr = query(t, text, q, a...)
			wantWarn = textWarnings()
			s.points.off.Store(false)
			if fmt.Sprint(got, gotErr, gotWarn) != fmt.Sprint(want, wantErr, wantWarn) {
				t.Fatalf("text %s %v:\n compiled %v %v %v\n planner  %v %v %v", q, a, got, gotErr, gotWarn, want, wantErr, wantWarn)
			}
		}
		prepared.Close()
	}
	t.Logf("%d executions compared, %d answered without the planner; as text statements, %d", compared, fast, textFast)
	if fast < int64(compared)*8/10 || textFast < int64(compared)*7/10 {
		t.Fatalf("only %d (prepared) and %d (text) of %d executions were answered without the planner", fast, textFast, compared)
	}
}

// stmtQuerier runs a prepared statement where query expects a text.
type stmtQuerier struct{ st *sql.Stmt }

func (q stmtQuerier) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	return q.st.QueryContext(ctx, args...)
}

// openText opens a client that writes parameters into the statement's text
// (COM_QUERY) instead of preparing it.
func openText(s *Server, db string) *sql.DB {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName = "root", "tcp", s.Addr().String(), db
	c.AllowNativePasswords, c.InterpolateParams = true, true
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		panic(err)
	}
	return d
}

// TestRangeReadOfRowsLargerThanTheFirst: the result of a compiled range
// read is sized from its first row; rows far larger than it come back
// whole, each with its own values.
func TestRangeReadOfRowsLargerThanTheFirst(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"CREATE DATABASE r", "CREATE TABLE r.w (id INT PRIMARY KEY, v VARCHAR(3000), n INT)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	want := []string{"a"}
	for i := 2; i <= 60; i++ {
		want = append(want, strings.Repeat(string(rune('a'+i%26)), 1000+i))
	}
	for i, v := range want {
		if _, err := db.Exec("INSERT INTO r.w VALUES (?, ?, ?)", i+1, v, i*7); err != nil {
			t.Fatal(err)
		}
	}
	st, err := db.Prepare("SELECT v, n FROM r.w WHERE id BETWEEN ? AND ?")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for run := range 2 { // the first records the result columns
		before := s.points.ranged.Load()
		rows, err := st.Query(1, len(want))
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for rows.Next() {
			var v string
			var n int
			if err := rows.Scan(&v, &n); err != nil {
				t.Fatal(err)
			}
			if i >= len(want) || v != want[i] || n != i*7 {
				t.Fatalf("run %d, row %d: %d bytes, n %d", run, i, len(v), n)
			}
			i++
		}
		if err := rows.Err(); err != nil || i != len(want) {
			t.Fatalf("run %d: %d rows, %v", run, i, err)
		}
		if run == 1 && s.points.ranged.Load() != before+1 {
			t.Fatal("the range read was not compiled")
		}
	}
}
