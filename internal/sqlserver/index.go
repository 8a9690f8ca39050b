package sqlserver

import (
	"io"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/storage"
)

// Index is a B-tree index of a table (the primary key, or a secondary index):
// a lookup seeks to the start of each range and stops past its end, so it
// costs O(log n + rows returned).
type Index struct {
	t      *Table
	name   string
	pos    int // storage index position, -1 for the primary key
	cols   []int
	unique bool
	cmt    string
}

var _ sql.Index = (*Index)(nil)
var _ sql.OrderedIndex = (*Index)(nil)
var _ sql.ExtendedIndex = (*Index)(nil)

// extended returns the index's columns followed by the primary key columns
// it does not have: what entries are ordered by (a secondary index entry
// ends with its row's primary key).
func (i *Index) extended() []int {
	cols := append([]int(nil), i.cols...)
	for _, pk := range i.t.info.Def.PK {
		if !containsInt(cols, pk) {
			cols = append(cols, pk)
		}
	}
	return cols
}

func (i *Index) exprs(cols []int) []string {
	out := make([]string, len(cols))
	for k, c := range cols {
		col := i.t.info.Schema.Schema[c]
		out[k] = col.Source + "." + col.Name
	}
	return out
}

func (i *Index) ExtendedExpressions() []string { return i.exprs(i.extended()) }

func (i *Index) ExtendedColumnExpressionTypes() []sql.ColumnExpressionType {
	cols := i.extended()
	exprs := i.exprs(cols)
	out := make([]sql.ColumnExpressionType, len(cols))
	for k, c := range cols {
		out[k] = sql.ColumnExpressionType{Expression: exprs[k], Type: i.t.info.Schema.Schema[c].Type}
	}
	return out
}

func (t *Table) newIndex(name string, pos int, cols []int, unique bool, comment string) *Index {
	return &Index{t: t, name: name, pos: pos, cols: cols, unique: unique, cmt: comment}
}

func (i *Index) ID() string       { return i.name }
func (i *Index) Database() string { return i.t.db.Name() }
func (i *Index) Table() string    { return i.t.Name() }
func (i *Index) Expressions() []string {
	// go-mysql-server finds a column from its expression by an exact,
	// case-sensitive match on Source + "." + Name (plan.GetColumnFromIndexExpr).
	out := make([]string, len(i.cols))
	for k, c := range i.cols {
		col := i.t.info.Schema.Schema[c]
		out[k] = col.Source + "." + col.Name
	}
	return out
}
func (i *Index) IsUnique() bool    { return i.unique }
func (i *Index) IsSpatial() bool   { return false }
func (i *Index) IsFullText() bool  { return false }
func (i *Index) IsVector() bool    { return false }
func (i *Index) Comment() string   { return i.cmt }
func (i *Index) IndexType() string { return "BTREE" }
func (i *Index) IsGenerated() bool { return false }
func (i *Index) ColumnExpressionTypes() []sql.ColumnExpressionType {
	out := make([]sql.ColumnExpressionType, len(i.cols))
	exprs := i.Expressions()
	for k, c := range i.cols {
		out[k] = sql.ColumnExpressionType{Expression: exprs[k], Type: i.t.info.Schema.Schema[c].Type}
	}
	return out
}
func (i *Index) CanSupport(*sql.Context, ...sql.Range) bool { return true }
func (i *Index) CanSupportOrderBy(sql.Expression) bool      { return false }
func (i *Index) PrefixLengths() []uint16 {
	if i.pos < 0 {
		return nil
	}
	p := i.t.info.Meta.Indexes[i.pos].Prefixes
	for _, n := range p {
		if n != 0 {
			return p
		}
	}
	return nil
}
func (i *Index) Order() sql.IndexOrder { return sql.IndexOrderAsc }
func (i *Index) Reversible() bool      { return false }

// rangeIter returns the rows of each range in turn.
type rangeIter struct {
	st     *storage.Table
	idx    *Index
	cols   []int // the index's columns extended by the primary key's
	ranges sql.MySQLRangeCollection
	cur    *storage.Cursor
	rng    sql.MySQLRange
	// points is how many leading columns of rng are single values; past
	// them, a row beyond the next column's upper bound ends the range.
	points int
}

func newRangeIter(st *storage.Table, idx *Index, ranges sql.MySQLRangeCollection) *rangeIter {
	return &rangeIter{st: st, idx: idx, cols: idx.extended(), ranges: ranges}
}

func isPoint(ce sql.MySQLRangeColumnExpr, st *storage.Table, col int) bool {
	switch lb := ce.LowerBound.(type) {
	case sql.Below:
		ub, ok := ce.UpperBound.(sql.Above)
		return ok && st.CompareCol(col, lb.Key, ub.Key) == 0
	case sql.BelowNull:
		_, ok := ce.UpperBound.(sql.AboveNull)
		return ok
	}
	return false
}

// start positions the cursor at the first row that can be in rng.
func (it *rangeIter) start(rng sql.MySQLRange) {
	vals := make([]any, len(it.idx.t.info.Schema.Schema))
	n, bound := 0, int8(-1)
	it.points = 0
	for k, ce := range rng {
		col := it.cols[k]
		point := isPoint(ce, it.st, col)
		switch lb := ce.LowerBound.(type) {
		case sql.Below:
			vals[col], n, bound = lb.Key, k+1, -1
		case sql.Above:
			vals[col], n, bound = lb.Key, k+1, 1
		case sql.BelowNull:
			vals[col], n, bound = nil, k+1, -1
		case sql.AboveNull:
			vals[col], n, bound = nil, k+1, 1
		default: // BelowAll
			point = false
		}
		if !point {
			break
		}
		it.points = k + 1
	}
	if n > len(it.idx.cols) {
		// Seeks order by the index's own columns only: start at the
		// beginning of that prefix; check skips the rows before the range.
		n, bound = len(it.idx.cols), -1
	}
	var pivot *storage.Row
	if n > 0 {
		pivot = storage.Seek(vals, n, bound)
	}
	it.rng = rng
	it.cur = it.st.Cursor(it.idx.pos, pivot)
}

func (it *rangeIter) aboveLower(col int, v any, c sql.MySQLRangeCut) bool {
	switch lb := c.(type) {
	case sql.Below:
		return v != nil && it.st.CompareCol(col, v, lb.Key) >= 0
	case sql.Above:
		return v != nil && it.st.CompareCol(col, v, lb.Key) > 0
	case sql.AboveNull:
		return v != nil
	}
	return true // BelowAll, BelowNull
}

func (it *rangeIter) belowUpper(col int, v any, c sql.MySQLRangeCut) bool {
	switch ub := c.(type) {
	case sql.Above:
		return v == nil || it.st.CompareCol(col, v, ub.Key) <= 0
	case sql.Below:
		return v == nil || it.st.CompareCol(col, v, ub.Key) < 0
	case sql.AboveNull:
		return v == nil
	case sql.BelowNull:
		return false
	}
	return true // AboveAll
}

// check says whether r is in the range, and whether the range is over.
func (it *rangeIter) check(r *storage.Row) (in, done bool) {
	for k, ce := range it.rng {
		col := it.cols[k]
		v := r.Value(col)
		if !it.belowUpper(col, v, ce.UpperBound) {
			// Rows are ordered by the point columns then this one: past
			// the upper bound here, nothing further can match.
			return false, k <= it.points
		}
		if !it.aboveLower(col, v, ce.LowerBound) {
			// Not there yet: the seek places the cursor by the index's
			// own columns only, so rows before the range's start in the
			// primary key columns that extend it come first.
			return false, false
		}
	}
	return true, false
}

func (it *rangeIter) Next(*sql.Context) (sql.Row, error) {
	r, err := it.next()
	if err != nil {
		return nil, err
	}
	return sql.Row(r.Values()), nil
}

func (it *rangeIter) next() (*storage.Row, error) {
	for {
		if it.cur == nil {
			if len(it.ranges) == 0 {
				return nil, io.EOF
			}
			it.start(it.ranges[0])
			it.ranges = it.ranges[1:]
		}
		r, ok := it.cur.Next()
		if !ok {
			it.cur.Close()
			it.cur = nil
			continue
		}
		in, done := it.check(r)
		if in {
			return r, nil
		}
		if done {
			it.cur.Close()
			it.cur = nil
		}
	}
}

func (it *rangeIter) Close(*sql.Context) error {
	if it.cur != nil {
		it.cur.Close()
		it.cur = nil
	}
	return nil
}
