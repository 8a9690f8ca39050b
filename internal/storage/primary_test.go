package storage

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// exactBind compares every column's values as numbers, exactly: integers
// of both signs and every width, floats, numeric strings (as an integer
// column of the SQL layer compares its values with constants of other
// types).
func exactBind(def *TableDef) ([]Compare, error) {
	num := func(v any) *big.Float {
		f := new(big.Float).SetPrec(256)
		switch x := v.(type) {
		case int64:
			return f.SetInt64(x)
		case int32:
			return f.SetInt64(int64(x))
		case int8:
			return f.SetInt64(int64(x))
		case uint64:
			return f.SetUint64(x)
		case uint16:
			return f.SetUint64(uint64(x))
		case float64:
			return f.SetFloat64(x)
		case string:
			g, _ := strconv.ParseFloat(x, 64)
			return f.SetFloat64(g)
		}
		panic(fmt.Sprintf("type %T", v))
	}
	out := make([]Compare, def.NumCols)
	for i := range out {
		out[i] = func(a, b any) int { return num(a).Cmp(num(b)) }
	}
	return out, nil
}

// keyValues are primary key values of every kind around the edges of the
// leads (0 and 2⁶³−1) and of the integers' ranges.
var keyValues = []any{
	int64(math.MinInt64), int64(-5), int64(-1), int64(0), int64(1), int64(2), int64(7),
	int64(math.MaxInt64 - 1), int64(math.MaxInt64),
	uint64(0), uint64(3), uint64(math.MaxInt64 - 1), uint64(math.MaxInt64), uint64(math.MaxInt64 + 1), uint64(math.MaxUint64),
	int32(-7), int32(2), int8(-1), int8(7), uint16(3),
	float64(2.5), float64(-0.5), float64(1e30), float64(7), "7", "2.5", "-3",
}

// TestPrimaryTreeOrdersAsRows checks that the primary tree's items, whose
// leads spare the comparisons of rows, order exactly as their rows do: for
// stored rows, key rows and seek rows of every kind of value, in tables
// keyed by one column, by two, and by row number.
func TestPrimaryTreeOrdersAsRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, def := range []*TableDef{
		{Name: "one", NumCols: 2, AutoCol: -1, PK: []int{0}},
		{Name: "two", NumCols: 2, AutoCol: -1, PK: []int{0, 1}},
		{Name: "none", NumCols: 2, AutoCol: -1},
	} {
		cmp, _ := exactBind(def)
		s := newShape(def, cmp)
		tree := newRowTree(s)
		var rows []*Row
		for i, v := range keyValues {
			second := keyValues[rng.IntN(len(keyValues))]
			id := uint64(i)
			if i%5 == 0 {
				id = math.MaxInt64 - 2 + uint64(i%4) // row numbers around the leads' end
			}
			vals := []any{v, second}
			rows = append(rows, newRow(id, vals), KeyRow(vals))
			for n := 0; n <= len(def.PK); n++ {
				rows = append(rows, Seek(vals, n, -1), Seek(vals, n, 1))
			}
			if len(def.PK) == 0 {
				rows = append(rows, Seek(vals, 0, -1), &Row{ID: id})
			}
		}
		for _, a := range rows {
			for _, b := range rows {
				want := s.comparePrimary(a, b) < 0
				if got := tree.t.Less(tree.item(a), tree.item(b)); got != want {
					t.Fatalf("%s: %v (lead %d) before %v (lead %d): %v, rows say %v", def.Name,
						a.Values(), s.leadOf(a), b.Values(), s.leadOf(b), got, want)
				}
			}
		}
	}
}

// TestPrimaryTreeFindsRowsByKeyOfAnyKind stores rows with integer keys and
// finds each by keys of other kinds, and walks from seeks as a sorted list
// of the rows would.
func TestPrimaryTreeFindsRowsByKeyOfAnyKind(t *testing.T) {
	def := &TableDef{Name: "t", NumCols: 2, AutoCol: -1, PK: []int{0}}
	cmp, _ := exactBind(def)
	s := newShape(def, cmp)
	tree := newRowTree(s)
	keys := []int64{math.MinInt64, -9, -1, 0, 1, 2, 3, 7, 100, math.MaxInt64 - 1, math.MaxInt64}
	for i, k := range keys {
		tree.Set(newRow(uint64(i), []any{k, "x"}))
	}
	for _, probe := range []any{int64(7), uint64(7), int32(7), int8(7), uint16(3), float64(2), "100", float64(-9),
		uint64(math.MaxInt64), int64(math.MaxInt64 - 1), int64(math.MinInt64)} {
		r, ok := tree.Get(KeyRow([]any{probe, nil}))
		if !ok || cmp[0](r.Value(0), probe) != 0 {
			t.Errorf("key %T %v: found %v, %v", probe, probe, ok, r)
		}
	}
	for _, probe := range []any{float64(2.5), uint64(math.MaxInt64 + 1), "4", int64(8)} {
		if r, ok := tree.Get(KeyRow([]any{probe, nil})); ok {
			t.Errorf("key %T %v: found %v", probe, probe, r.Values())
		}
	}
	for _, v := range keyValues {
		for _, bound := range []int8{-1, 1} {
			var got, want []any
			tree.walk(Seek([]any{v, nil}, 1, bound), false, func(r *Row) bool {
				got = append(got, r.Value(0))
				return true
			})
			for _, k := range keys {
				if c := cmp[0](k, v); c > 0 || c == 0 && bound < 0 {
					want = append(want, k)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("from %T %v (bound %d): %v, want %v", v, v, bound, got, want)
			}
		}
	}
}
