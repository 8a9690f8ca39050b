package sqlserver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCompiledResultsOfEveryColumnType: the values of a compiled SELECT
// (point lookups, ranges, ORDER BY, SUM) are written from the stored rows
// without the types' SQL methods for integers and UTF-8 strings; every
// column type, at its extremes and NULL, answers as the planner does, for
// the character sets a client may ask its results in.
func TestCompiledResultsOfEveryColumnType(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE e",
		`CREATE TABLE e.t (id INT PRIMARY KEY,
			i8 TINYINT, u8 TINYINT UNSIGNED, i16 SMALLINT, u16 SMALLINT UNSIGNED,
			i24 MEDIUMINT, u24 MEDIUMINT UNSIGNED, i32 INT, u32 INT UNSIGNED,
			i64 BIGINT, u64 BIGINT UNSIGNED, b BOOL, y YEAR, bt BIT(8),
			c CHAR(8), v VARCHAR(20), l VARCHAR(20) CHARACTER SET latin1, tx TEXT,
			vb VARBINARY(8), bn BINARY(4), d DECIMAL(30,4), f FLOAT, g DOUBLE,
			dt DATE, ts DATETIME(3), tm TIME, en ENUM('x','yy','zzz'), st SET('p','q'), j JSON,
			KEY ki64 (i64), KEY kv (v))`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ints := [][2]string{ // per integer column: its least and greatest values
		{"-128", "127"}, {"0", "255"}, {"-32768", "32767"}, {"0", "65535"},
		{"-8388608", "8388607"}, {"0", "16777215"}, {"-2147483648", "2147483647"}, {"0", "4294967295"},
		{"-9223372036854775808", "9223372036854775807"}, {"0", "18446744073709551615"},
	}
	words := []string{"", "a", "Zeta", "éclair", "x y", "日本", "😀", "tab\there"}
	latin := []string{"", "a", "café", "Zeta", "naïve"}
	rng := rand.New(rand.NewPCG(11, 3))
	for id := 1; id <= 120; id++ {
		vals := []string{fmt.Sprint(id)}
		for _, r := range ints {
			switch rng.IntN(5) {
			case 0:
				vals = append(vals, "NULL")
			case 1:
				vals = append(vals, r[0])
			case 2:
				vals = append(vals, r[1])
			default:
				vals = append(vals, fmt.Sprint(rng.IntN(100)))
			}
		}
		pick := func(xs []string) string {
			if rng.IntN(6) == 0 {
				return "NULL"
			}
			return "'" + xs[rng.IntN(len(xs))] + "'"
		}
		vals = append(vals,
			[]string{"NULL", "0", "1"}[rng.IntN(3)],
			[]string{"NULL", "1901", "2155", "2024"}[rng.IntN(4)],
			[]string{"NULL", "b'0'", "b'11111111'", "b'101'"}[rng.IntN(4)],
			pick(words), pick(words), pick(latin), pick(words),
			[]string{"NULL", "x''", "x'00ff'", "x'4142'"}[rng.IntN(4)],
			[]string{"NULL", "x'01'", "'ab'"}[rng.IntN(3)],
			[]string{"NULL", "0", "-12345678901234567890.1234", "99999999999999999999999999.9999", "0.5"}[rng.IntN(5)],
			[]string{"NULL", "0", "-1.5", "3.4e38", "1e-30"}[rng.IntN(5)],
			[]string{"NULL", "0", "-2.25", "1.7976931348623157e308", "5e-324"}[rng.IntN(5)],
			[]string{"NULL", "'1000-01-01'", "'9999-12-31'", "'2024-02-29'"}[rng.IntN(4)],
			[]string{"NULL", "'2024-02-29 23:59:59.999'", "'1970-01-01 00:00:00'"}[rng.IntN(3)],
			[]string{"NULL", "'-838:59:59'", "'838:59:59'", "'12:00:01'"}[rng.IntN(4)],
			[]string{"NULL", "'x'", "'zzz'"}[rng.IntN(3)],
			[]string{"NULL", "''", "'p,q'", "'q'"}[rng.IntN(4)],
			[]string{"NULL", `'{"a": [1, "b"]}'`, "'3'"}[rng.IntN(3)],
		)
		q := "INSERT INTO e.t VALUES (" + strings.Join(vals, ", ") + ")"
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cols := []string{"i8", "u8", "i16", "u16", "i24", "u24", "i32", "u32", "i64", "u64"}
	stmts := []struct {
		q    string
		args func() []any
	}{
		{"SELECT * FROM e.t WHERE id = ?", func() []any { return []any{1 + rng.IntN(125)} }},
		{"SELECT * FROM e.t WHERE id BETWEEN ? AND ?", func() []any { a := rng.IntN(120); return []any{a, a + rng.IntN(40)} }},
		{"SELECT * FROM e.t WHERE id BETWEEN ? AND ? ORDER BY v", func() []any { a := rng.IntN(120); return []any{a, a + 30} }},
		{"SELECT id, v, l FROM e.t WHERE v BETWEEN ? AND ?", func() []any { return []any{"", "zzzz"} }},
		{"SELECT id, i64, u64 FROM e.t WHERE i64 >= ?", func() []any { return []any{math.MinInt64} }},
		{"SELECT DISTINCT c FROM e.t WHERE id BETWEEN ? AND ? ORDER BY c", func() []any { return []any{1, 120} }},
	}
	for _, c := range cols {
		stmts = append(stmts, struct {
			q    string
			args func() []any
		}{"SELECT SUM(" + c + ") FROM e.t WHERE id BETWEEN ? AND ?", func() []any { a := rng.IntN(120); return []any{a, a + rng.IntN(120)} }})
	}

	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, cs := range []string{"utf8mb4", "latin1", "NULL", "'binary'"} {
		if _, err := conn.ExecContext(ctx, "SET character_set_results = "+cs); err != nil {
			t.Fatal(err)
		}
		for _, sq := range stmts {
			prepared, err := conn.PrepareContext(ctx, sq.q)
			if err != nil {
				t.Fatalf("%s: %v", sq.q, err)
			}
			st := stmtQuerier{prepared}
			// The first execution records the result columns (its rows may
			// not all be written in the results' character set).
			if _, err := query(t, st, "", sq.args()...); err != nil && !strings.Contains(err.Error(), "Error") {
				t.Fatalf("%s: %v", sq.q, err)
			}
			for range 20 {
				a := sq.args()
				before := s.points.answered.Load() + s.points.ranged.Load()
				got, gotErr := query(t, st, "", a...)
				// A value the results' character set cannot hold is an
				// error the planner reports: the compiled path hands it over.
				if gotErr == nil && s.points.answered.Load()+s.points.ranged.Load() != before+1 {
					t.Fatalf("%s (results %s) was not compiled", sq.q, cs)
				}
				s.points.off.Store(true)
				want, wantErr := query(t, st, "", a...)
				s.points.off.Store(false)
				if fmt.Sprint(got, gotErr) != fmt.Sprint(want, wantErr) {
					t.Fatalf("%s %v (results %s):\n compiled %v %v\n planner  %v %v", sq.q, a, cs, got, gotErr, want, wantErr)
				}
			}
			prepared.Close()
		}
	}
}
