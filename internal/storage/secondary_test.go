package storage

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/tidwall/btree"
)

// numBind compares every column's values as numbers, whatever their Go
// type (integers of both signs, floats, numeric strings; other strings are
// 0), as the SQL layer's numeric types compare a column's values with
// constants of other types.
func numBind(def *TableDef) ([]Compare, error) {
	num := func(v any) float64 {
		switch x := v.(type) {
		case int64:
			return float64(x)
		case int32:
			return float64(x)
		case uint64:
			return float64(x)
		case float64:
			return x
		case string:
			f, _ := strconv.ParseFloat(x, 64)
			return f
		}
		panic(fmt.Sprintf("type %T", v))
	}
	out := make([]Compare, def.NumCols)
	for i := range out {
		out[i] = func(a, b any) int { return cmp.Compare(num(a), num(b)) }
	}
	return out, nil
}

// twinTables returns two empty tables of def: one whose one-column indexes
// may hold integers, and one whose indexes all hold rows.
func twinTables(t *testing.T, def *TableDef) (ints, rows *Table) {
	t.Helper()
	ints, err := newTable(def, numBind)
	if err != nil {
		t.Fatal(err)
	}
	indexesOfIntegers = false
	defer func() { indexesOfIntegers = true }()
	if rows, err = newTable(def, numBind); err != nil {
		t.Fatal(err)
	}
	return ints, rows
}

// far holds integers outside and at the ends of 32 bits, and of 64.
var far = []any{int64(math.MinInt64), int64(math.MinInt32) - 1, int64(math.MinInt32), int64(math.MaxInt32),
	int64(math.MaxInt32) + 1, int64(math.MaxInt64), uint64(math.MaxUint32), uint64(math.MaxUint32) + 1, uint64(math.MaxUint64)}

// randomPivot returns a pivot for walks of the index over column col of a
// table of n columns: a seek row over no column or over col, before or
// after its key, whose value is an integer of either sign (some outside
// 32 bits), a fraction, a numeric string or NULL; or a whole row.
func randomPivot(rng *rand.Rand, n, col, pk int) *Row {
	vals := make([]any, n)
	switch rng.IntN(8) {
	case 0:
		vals[col] = uint64(rng.IntN(30))
	case 7:
		vals[col] = far[rng.IntN(len(far))]
	case 1:
		vals[col] = float64(rng.IntN(60)-30) + 0.5
	case 2:
		vals[col] = strconv.Itoa(rng.IntN(60) - 30)
	case 3:
		vals[col] = nil
	default:
		vals[col] = int64(rng.IntN(60) - 30)
	}
	if rng.IntN(4) == 0 {
		// A whole row: the primary key orders rows with equal keys.
		if pk >= 0 {
			vals[pk] = int64(rng.IntN(100))
			if rng.IntN(4) == 0 {
				vals[pk] = far[rng.IntN(len(far))]
			}
		}
		return KeyRow(vals)
	}
	bound := int8(1)
	if rng.IntN(2) == 0 {
		bound = -1
	}
	return Seek(vals, rng.IntN(2), bound)
}

// walks returns what the walks of index ix from pivot find: ascending,
// descending and with a cursor, the first rows of each.
func walks(tb *Table, ix int, pivot *Row) string {
	const most = 12
	var up, down, cur []string
	tb.AscendIndex(ix, pivot, func(r *Row) bool {
		up = append(up, fmt.Sprint(r.ID, r.Values()))
		return len(up) < most
	})
	tb.DescendIndex(ix, pivot, func(r *Row) bool {
		down = append(down, fmt.Sprint(r.ID, r.Values()))
		return len(down) < most
	})
	c := tb.Cursor(ix, pivot)
	for len(cur) < most {
		r, ok := c.Next()
		if !ok {
			break
		}
		cur = append(cur, fmt.Sprint(r.ID, r.Values()))
	}
	c.Close()
	// Through the index alone: the index's and the primary key's
	// columns, with their Go types.
	def := tb.Def()
	var only []string
	tb.AscendIndexOnly(ix, pivot, func(r *Row) bool {
		v := []any{r.Value(def.Indexes[ix].Cols[0])}
		if len(def.PK) > 0 {
			v = append(v, r.Value(def.PK[0]))
		} else {
			v = append(v, r.ID)
		}
		only = append(only, fmt.Sprintf("%T %v", v[0], v))
		return len(only) < most
	})
	return fmt.Sprintf("up %v\ndown %v\ncursor %v\nonly %v", up, down, cur, only)
}

// An index of integers answers every walk as an index of rows does, through
// inserts, updates that move a row in the index or leave it, deletes, and
// pivots of every kind; a NULL key or one of the other sign turns it into
// an index of rows in the version written, not in the ones before.
func TestIndexOfIntegersAnswersAsAnIndexOfRows(t *testing.T) {
	pkDef := &TableDef{Name: "t", NumCols: 3, AutoCol: -1, PK: []int{0},
		Indexes: []IndexDef{{Name: "k", Cols: []int{1}}, {Name: "u", Cols: []int{2}, Unique: true}, {Name: "pk", Cols: []int{0}}}}
	for _, tc := range []struct {
		name string
		def  *TableDef
		// num makes the primary key's and the unique column's values:
		// BIGINT (entries of two integers) or INT (packed into one).
		num func(int64) any
	}{
		{"BIGINT primary key", pkDef, func(v int64) any { return v }},
		{"INT primary key", pkDef, func(v int64) any { return int32(v) }},
		{"row number", &TableDef{Name: "t", NumCols: 3, AutoCol: -1,
			Indexes: []IndexDef{{Name: "k", Cols: []int{1}}, {Name: "u", Cols: []int{2}, Unique: true}}}, func(v int64) any { return v }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			a, b := twinTables(t, tc.def)
			pk := -1
			if len(tc.def.PK) > 0 {
				pk = tc.def.PK[0]
			}
			stored := map[uint64][2]*Row{} // row number: a's row, b's row
			nextID := uint64(1)
			pick := func() uint64 {
				ids := make([]uint64, 0, len(stored))
				for id := range stored {
					ids = append(ids, id)
				}
				slices.Sort(ids)
				return ids[rng.IntN(len(ids))]
			}
			used := map[any]bool{} // the unique column's values
			unique := func() any {
				for {
					if v := tc.num(int64(rng.IntN(1000) - 500)); !used[v] {
						used[v] = true
						return v
					}
				}
			}
			compare := func(when string) {
				t.Helper()
				for ix := range tc.def.Indexes {
					col := tc.def.Indexes[ix].Cols[0]
					for range 20 {
						pivot := randomPivot(rng, tc.def.NumCols, col, pk)
						if got, want := walks(a, ix, pivot), walks(b, ix, pivot); got != want {
							t.Fatalf("%s: index %s from %v (bound %d):\n%s\nwant\n%s", when, tc.def.Indexes[ix].Name, pivot.Values(), pivot.ext().bound, got, want)
						}
					}
					// Counts between two seek rows (or no bound).
					for range 20 {
						var bounds [2]*Row
						for j := range bounds {
							for bounds[j] = randomPivot(rng, tc.def.NumCols, col, pk); !isSeek(bounds[j]); {
								bounds[j] = randomPivot(rng, tc.def.NumCols, col, pk)
							}
							if rng.IntN(8) == 0 {
								bounds[j] = nil
							}
						}
						if got, want := a.CountRange(ix, bounds[0], bounds[1]), b.CountRange(ix, bounds[0], bounds[1]); got != want {
							t.Fatalf("%s: index %s counts %d rows between %v and %v, want %d", when, tc.def.Indexes[ix].Name, got, bounds[0], bounds[1], want)
						}
					}
					if got, want := walks(a, ix, nil), walks(b, ix, nil); got != want {
						t.Fatalf("%s: index %s whole:\n%s\nwant\n%s", when, tc.def.Indexes[ix].Name, got, want)
					}
				}
			}
			for round := range 400 {
				switch op := rng.IntN(10); {
				case op < 4 || len(stored) == 0:
					id := nextID
					nextID++
					vals := []any{tc.num(int64(id)), int32(rng.IntN(40) - 20), unique()}
					ra, rb := newRow(id, vals), newRow(id, vals)
					a.insertRow(ra)
					b.insertRow(rb)
					stored[id] = [2]*Row{ra, rb}
				case op < 8:
					id := pick()
					old := stored[id]
					vals := old[0].Values()
					if rng.IntN(2) == 0 {
						vals[1] = int32(rng.IntN(40) - 20) // moves in k, maybe to where it was
					} else {
						delete(used, vals[2])
						vals[2] = unique()
					}
					ra, rb := newRow(id, vals), newRow(id, vals)
					a.updateRow(old[0], ra, nil)
					b.updateRow(old[1], rb, nil)
					stored[id] = [2]*Row{ra, rb}
				default:
					id := pick()
					old := stored[id]
					delete(used, old[0].Value(2))
					a.removeRow(old[0], nil)
					b.removeRow(old[1], nil)
					delete(stored, id)
				}
				if round%20 == 0 {
					compare(fmt.Sprint("round ", round))
				}
			}
			for ix := range tc.def.Indexes {
				if a.indexes[ix].ints == nil {
					t.Fatalf("index %s does not hold integers", tc.def.Indexes[ix].Name)
				}
			}
			if _, packed := a.indexes[0].ints.(*narrowTree); packed != (tc.name == "INT primary key") {
				t.Fatalf("index k packs its entries: %v", packed)
			}
			if dup := a.indexDup(1, newRow(0, []any{tc.num(0), int32(0), stored[pick()][0].Value(2)}), 0); dup == nil {
				t.Fatal("a unique index of integers found no row with a stored key")
			}

			// A NULL key in a copy: that copy's index of k holds rows
			// from then on; the version it was copied from still holds
			// integers and answers as before.
			before := walks(a, 0, nil)
			a2, b2 := a.clone(), b.clone()
			id := nextID
			vals := []any{tc.num(int64(id)), nil, unique()}
			a2.insertRow(newRow(id, vals))
			b2.insertRow(newRow(id, vals))
			if !a2.indexes[0].holdsRows() || a2.indexes[1].holdsRows() {
				t.Fatal("a NULL key did not turn that index, and that index only, into one of rows")
			}
			if a.indexes[0].holdsRows() || walks(a, 0, nil) != before {
				t.Fatal("the version copied from changed")
			}
			a, b = a2, b2
			compare("after a NULL key")

			// An unsigned key in an index of signed ones.
			old := stored[pick()]
			vals = old[0].Values()
			vals[2] = uint64(777)
			a.updateRow(old[0], newRow(old[0].ID, vals), nil)
			b.updateRow(old[1], newRow(old[1].ID, vals), nil)
			if !a.indexes[1].holdsRows() {
				t.Fatal("an unsigned key left the index of signed integers holding integers")
			}
			compare("after an unsigned key")
		})
	}
}

// An update that changes neither a row's key in an index of integers nor
// its primary key leaves the index's entries as they were, and the index
// reads the new version of the row.
func TestUpdateOfOtherColumnsLeavesIndexOfIntegers(t *testing.T) {
	def := &TableDef{Name: "t", NumCols: 3, AutoCol: -1, PK: []int{0}, Indexes: []IndexDef{{Name: "k", Cols: []int{1}}}}
	tb, err := newTable(def, numBind)
	if err != nil {
		t.Fatal(err)
	}
	var rows []*Row
	for i := range 1000 {
		r := newRow(uint64(i+1), []any{int64(i), int64(i % 7), "x"})
		tb.insertRow(r)
		rows = append(rows, r)
	}
	c := tb.clone()
	c.updateRow(rows[500], newRow(rows[500].ID, []any{int64(500), int64(500 % 7), "y"}), nil)
	var before, after []intEntry
	tb.indexes[0].ints.walk(nil, false, func(e intEntry) bool { before = append(before, e); return true })
	c.indexes[0].ints.walk(nil, false, func(e intEntry) bool { after = append(after, e); return true })
	if !slices.Equal(before, after) {
		t.Fatal("the index's entries changed")
	}
	if got, _ := c.Get(KeyRow([]any{int64(500), nil, nil})); got.Value(2) != "y" {
		t.Fatalf("the new version reads %v", got.Values())
	}
	var seen string
	c.AscendIndex(0, Seek([]any{nil, int64(500 % 7), nil}, 1, -1), func(r *Row) bool {
		if r.Value(0) == int64(500) {
			seen = r.Value(2).(string)
			return false
		}
		return true
	})
	if seen != "y" {
		t.Fatalf("the index finds row 500 with %q", seen)
	}
}

// An index built from a table's rows at once (sorted, then loaded) answers
// every walk and count as one that took the rows one by one: of integers
// (packed or not), of rows, and one whose keys are of several kinds, which
// becomes an index of rows.
func TestBuiltIndexAnswersAsIndexTakingRowsOneByOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		pk   func(int64) any
		key  func(rng *rand.Rand) any
	}{
		{"INT", func(v int64) any { return int32(v) }, func(rng *rand.Rand) any { return int32(rng.IntN(50) - 25) }},
		{"BIGINT", func(v int64) any { return v }, func(rng *rand.Rand) any { return int64(rng.IntN(50) - 25) }},
		{"mixed", func(v int64) any { return int32(v) }, func(rng *rand.Rand) any {
			if rng.IntN(50) == 0 {
				return nil
			}
			return int32(rng.IntN(50) - 25)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := &TableDef{Name: "t", NumCols: 3, AutoCol: -1, PK: []int{0}, Indexes: []IndexDef{{Name: "k", Cols: []int{1}}}}
			defer func() { indexesOfIntegers = true }()
			for _, ints := range []bool{true, false} {
				indexesOfIntegers = ints
				one, err := newTable(def, numBind)
				if err != nil {
					t.Fatal(err)
				}
				built, _ := newTable(def, numBind)
				rng := rand.New(rand.NewPCG(3, 4))
				for i := range 3000 {
					vals := []any{tc.pk(int64(rng.IntN(1 << 20))), tc.key(rng), "x"}
					if _, dup := one.Get(KeyRow(vals)); dup {
						continue
					}
					one.insertRow(newRow(uint64(i+1), vals))
					built.insertRow(newRow(uint64(i+1), vals))
				}
				built.indexes[0] = newSecondary(built.shape, def.Indexes[0].Cols)
				built.indexes[0].build(built)
				indexesOfIntegers = true
				if got, want := built.indexes[0].holdsRows(), one.indexes[0].holdsRows(); got != want {
					t.Fatalf("integers %v: the built index holds rows: %v, the other %v", ints, got, want)
				}
				if got, want := built.indexes[0].len(), one.indexes[0].len(); got != want {
					t.Fatalf("integers %v: the built index holds %d entries, the other %d", ints, got, want)
				}
				for range 200 {
					pivot := randomPivot(rng, 3, 1, 0)
					if got, want := walks(built, 0, pivot), walks(one, 0, pivot); got != want {
						t.Fatalf("integers %v: from %v:\n%s\nwant\n%s", ints, pivot.Values(), got, want)
					}
					if !isSeek(pivot) {
						continue
					}
					if got, want := built.CountRange(0, pivot, nil), one.CountRange(0, pivot, nil); got != want {
						t.Fatalf("integers %v: %d rows from %v, want %d", ints, got, pivot.Values(), want)
					}
				}
			}
		})
	}
}

// A tree of packed entries walks and seeks from any entry, its integers
// inside the index's kinds or outside (past either end of 32 bits, or of
// 64), as a tree of entries of two integers does.
func TestPackedEntriesWalkAsEntriesOfTwo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, kinds := range [][2]byte{{tagInt32, tagInt32}, {tagUint32, tagInt16}, {tagInt8, tagUint32}} {
		packed := newEntryTree(kinds[0], kinds[1])
		if _, ok := packed.(*narrowTree); !ok {
			t.Fatalf("kinds %v: entries not packed", kinds)
		}
		two := &wideTree{t: btree.NewBTreeGOptions(intLess(signedTag(kinds[0]), signedTag(kinds[1])), btreeOpts)}
		// The ends of each kind and a few between.
		ends := func(tag byte) []uint64 {
			if signedTag(tag) {
				lo, hi := map[byte]int64{tagInt8: math.MinInt8, tagInt16: math.MinInt16, tagInt32: math.MinInt32}[tag], map[byte]int64{tagInt8: math.MaxInt8, tagInt16: math.MaxInt16, tagInt32: math.MaxInt32}[tag]
				return []uint64{uint64(lo), uint64(lo + 1), math.MaxUint64, 0, 1, uint64(hi - 1), uint64(hi)}
			}
			hi := map[byte]uint64{tagUint8: math.MaxUint8, tagUint16: math.MaxUint16, tagUint32: math.MaxUint32}[tag]
			return []uint64{0, 1, 2, hi / 2, hi - 1, hi}
		}
		for _, k := range ends(kinds[0]) {
			for _, p := range ends(kinds[1]) {
				packed.set(intEntry{k, p}, nil)
				two.set(intEntry{k, p}, nil)
			}
		}
		// Pivots: the entries' integers, their neighbours, and the ends
		// of 32 and 64 bits of either sign.
		var ints []uint64
		for _, v := range far {
			x, _, _ := intOf(v)
			ints = append(ints, x)
		}
		for _, tag := range kinds {
			for _, v := range ends(tag) {
				ints = append(ints, v-1, v, v+1)
			}
		}
		list := func(tr entryTree, from *intEntry, down bool) []intEntry {
			var out []intEntry
			tr.walk(from, down, func(e intEntry) bool { out = append(out, e); return len(out) < 5 })
			return out
		}
		for range 3000 {
			from := intEntry{ints[rng.IntN(len(ints))], ints[rng.IntN(len(ints))]}
			for _, down := range []bool{false, true} {
				if got, want := list(packed, &from, down), list(two, &from, down); !slices.Equal(got, want) {
					t.Fatalf("kinds %v: from %v (down %v): %v, want %v", kinds, from, down, got, want)
				}
			}
			pi, ti := packed.iter(), two.iter()
			if got, want := pi.seek(from), ti.seek(from); got != want || got && pi.item() != ti.item() {
				t.Fatalf("kinds %v: seek %v: %v, want %v", kinds, from, pi.item(), ti.item())
			}
			pi.release()
			ti.release()
		}
	}
}
