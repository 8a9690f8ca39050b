package sqlserver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// TestTextShapesGiveWhatParsingGives: random statements of many forms, with
// random literals (some that the parser reads otherwise than a plain
// integer or string); each statement whose shape was kept from an earlier
// one must get from the shape exactly the normalized text and parameters
// that parsing it gives.
func TestTextShapesGiveWhatParsingGives(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	ints := func() string {
		switch rng.IntN(8) {
		case 0:
			return "0"
		case 1:
			return "007"
		case 2:
			return fmt.Sprint(int64(math.MaxInt64))
		case 3:
			return "9223372036854775808" // beyond BIGINT
		default:
			return fmt.Sprint(rng.IntN(100000))
		}
	}
	strs := func() string {
		return []string{"", "x", "abc", "it''s", `a\'b`, `back\\slash`, "éclair", "a b", "12", "%", "NULL", "a;b", "`q`", "x'y"}[rng.IntN(14)]
	}
	forms := []string{
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES (%d, %d, '%s', '%s')",
		"insert into t values(%d,'%s')",
		"INSERT INTO t SET c = '%s', id = %d",
		"UPDATE t SET c = '%s' WHERE id = %d",
		"UPDATE t SET k = k + %d WHERE id = %d",
		"UPDATE t SET k=k-%d WHERE id=%d",
		"DELETE FROM t WHERE id = %d",
		"SELECT c FROM t WHERE id = %d",
		"SELECT %d FROM t WHERE id = %d",
		"SELECT c FROM t WHERE id BETWEEN %d AND %d",
		"SELECT c FROM t WHERE id IN (%d, %d, %d)",
		"SELECT c FROM t WHERE id = -%d",
		"SELECT c FROM t WHERE id = %d ORDER BY %d LIMIT %d",
		"SELECT c FROM t WHERE d = DATE '%s'",
		"SELECT CAST(c AS CHAR(%d)) FROM t WHERE id = %d",
		"SELECT c FROM t WHERE c LIKE '%s'",
		"SELECT c FROM t WHERE c = '%s' '%s'",
		"SELECT c FROM t WHERE id = %d.5",
		"SELECT c FROM t WHERE id = 0x%d",
		"SELECT c FROM t WHERE id = %de3",
		"SELECT `weird``name` FROM t WHERE id = %d",
		"SELECT c FROM t WHERE c = _utf8mb4'%s'",
		"SELECT c FROM t WHERE c = N'%s'",
		"SELECT c FROM t WHERE id = %d -- note",
		"SELECT c FROM t WHERE id = %d /* note */",
		"SELECT c FROM t WHERE c = \"%s\"",
		"SELECT c FROM t WHERE c <> '%s' AND id >= %d",
		"SELECT c FROM t WHERE (c, id) IN (('%s', %d))",
		"SELECT c FROM t1 JOIN t2 ON t1.id = t2.id + %d WHERE t2.c = '%s'",
		"SELECT DATE_ADD(d, INTERVAL %d DAY) FROM t WHERE id = %d",
		"SELECT c FROM t WHERE id = @v%d",
		"SELECT c FROM t WHERE c = CONCAT('%s', '%s')",
	}
	type seen struct {
		ts   *textShape
		from string
	}
	kept := map[string]*seen{}
	compared, shaped, keptForms := 0, 0, map[int]bool{}
	for i := 0; i < 20000; i++ {
		fi := rng.IntN(len(forms))
		form := forms[fi]
		var args []any
		for j := 0; j+1 < len(form); j++ {
			if form[j] == '%' {
				switch form[j+1] {
				case 'd':
					args = append(args, ints())
				case 's':
					args = append(args, strs())
				}
			}
		}
		q := fmt.Sprintf(strings.ReplaceAll(form, "%d", "%s"), args...)
		stmt, err := ast.Parse(q)
		if err != nil {
			continue
		}
		vars := parameterize(stmt)
		norm := ast.String(stmt)
		_, isSelect := stmt.(*ast.Select)
		shape, lits, ok := shapeOf(q)
		if !ok {
			continue
		}
		shaped++
		key := string(shape)
		if s, ok := kept[key]; ok {
			compared++
			if s.ts.norm != norm {
				t.Fatalf("%q (shape kept from %q): normalized\n%s\nparsed\n%s", q, s.from, s.ts.norm, norm)
			}
			if got := s.ts.bind(lits); !sameVars(got, vars) {
				t.Fatalf("%q (shape kept from %q): parameters %v, parsed %v", q, s.from, got, vars)
			}
			continue
		}
		if ts := newTextShape(norm, isSelect, vars, lits); ts != nil {
			kept[key] = &seen{ts: ts, from: q}
			keptForms[fi] = true
		}
	}
	t.Logf("%d statements read as shapes, %d compared with a kept shape, %d shapes kept, %d of %d forms", shaped, compared, len(kept), len(keptForms), len(forms))
	if compared < 5000 || len(keptForms) < 10 {
		t.Fatalf("only %d statements compared, %d forms kept", compared, len(keptForms))
	}
}

func sameVars(a, b map[string]*querypb.BindVariable) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || x.Type != y.Type || string(x.Value) != string(y.Value) {
			return false
		}
	}
	return true
}

// Statements whose literals the parser might read otherwise are not shaped.
func TestShapeOfRefuses(t *testing.T) {
	for _, q := range []string{
		"SELECT c FROM t WHERE d = DATE '2020-01-01'",
		"SELECT c FROM t WHERE c = 'a' 'b'",
		"SELECT c FROM t WHERE c = 'it''s'",
		`SELECT c FROM t WHERE c = 'a\nb'`,
		"SELECT c FROM t WHERE id = 1.5",
		"SELECT c FROM t WHERE id = -5",
		"UPDATE t SET k = k + 1 WHERE id = 2",
		"SELECT c FROM t WHERE id = 1e5",
		"SELECT c FROM t WHERE id = 0x1F",
		"SELECT c FROM t WHERE id = 99999999999999999999",
		"SELECT c FROM t WHERE c = _utf8mb4'x'",
		"SELECT c FROM t WHERE c = \"x\"",
		"SELECT c FROM t WHERE id = ? ",
		"SELECT c FROM t WHERE id = :v1",
		"SELECT c FROM t WHERE id = 1 -- x",
		"SELECT c FROM t WHERE id = 1 # x",
		"SELECT /* x */ c FROM t",
		"SELECT c FROM t WHERE c = 'unterminated",
		"SELECT `unterminated FROM t",
	} {
		if shape, _, ok := shapeOf(q); ok {
			t.Errorf("%q shaped as %q", q, shape)
		}
	}
	shape, lits, ok := shapeOf("UPDATE t SET c = 'x y', k = 12 WHERE id = 5")
	if !ok || string(shape) != "UPDATE t SET c = \x02, k = \x01 WHERE id = \x01" || len(lits) != 3 || lits[0].text != "x y" || lits[2].text != "5" {
		t.Fatalf("shape %q, literals %v, %v", shape, lits, ok)
	}
}
