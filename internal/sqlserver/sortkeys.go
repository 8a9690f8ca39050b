package sqlserver

import (
	"bytes"
	"container/heap"
	"io"
	"sort"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/iters"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/weights"
)

// ORDER BY with each sort field evaluated at most once per row.
// go-mysql-server's Sort and TopN (expression.Sorter under sort.Stable, or
// under container/heap) evaluate both rows' fields on every comparison,
// and compare two strings rune by rune through their collation's sorter
// (for the 0900 collations a map lookup per rune). rowSorter gives the
// same order at a lower cost:
//
//   - a field of a row is evaluated when a comparison first needs it, and
//     kept: the evaluations are a subset of go-mysql-server's, met in the
//     same order, so an evaluation that fails fails at the same comparison
//     and ends the sort with the same error;
//   - a string of a string-typed field is kept with its sort key
//     (weights.AppendSortKey), and two keys compare with bytes.Compare; any other
//     value, or a key against a value, compares with the field type's
//     Compare, as go-mysql-server does;
//   - rows are ordered by the same algorithms (sort.SliceStable is
//     sort.Stable's; the heap is container/heap): with the same answers
//     from less, the same comparisons in the same order and the same
//     result.

// sortNode runs a Sort of a client session with keyedSort; go-mysql-server
// runs it otherwise (its engine suites' sessions).
func (x adminExec) sortNode(ctx *sql.Context, n *plan.Sort, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) {
		return nil, nil
	}
	iter, err := x.exec.Build(ctx, n.Child, row)
	if err != nil {
		return nil, err
	}
	return &keyedSortIter{child: iter, fields: n.SortFields, idx: -1}, nil
}

// keyedSortIter returns the rows of its child in the order of its sort
// fields, read and sorted on the first call of Next.
type keyedSortIter struct {
	child  sql.RowIter
	fields sql.SortFields
	rows   []sql.Row
	idx    int // -1 until the rows are sorted
}

func (it *keyedSortIter) Next(ctx *sql.Context) (sql.Row, error) {
	if it.idx == -1 {
		if err := it.readAndSort(ctx); err != nil {
			return nil, err
		}
		it.idx = 0
	}
	if it.idx >= len(it.rows) {
		return nil, io.EOF
	}
	r := it.rows[it.idx]
	it.idx++
	return r, nil
}

// readAndSort reads every row of the child into a rows cache of the
// session's memory manager, as go-mysql-server's sort does, and sorts them.
func (it *keyedSortIter) readAndSort(ctx *sql.Context) error {
	cache, dispose := ctx.Memory.NewRowsCache()
	defer dispose()
	for {
		r, err := it.child.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := cache.Add(r); err != nil {
			return err
		}
	}
	rows := cache.Get()
	if err := keyedSort(ctx, it.fields, rows); err != nil {
		return err
	}
	it.rows = rows
	return nil
}

func (it *keyedSortIter) Close(ctx *sql.Context) error {
	it.rows = nil
	return it.child.Close(ctx)
}

// keyedSort orders rows in place as sort.Stable(&expression.Sorter{…})
// orders them, and returns the error the Sorter would end with.
func keyedSort(ctx *sql.Context, fields sql.SortFields, rows []sql.Row) error {
	s := newRowSorter(ctx, fields)
	items := make([]sortRow, len(rows))
	cells := make([]sortCell, len(rows)*len(fields))
	for i, r := range rows {
		items[i] = sortRow{row: r, cells: cells[i*len(fields) : (i+1)*len(fields) : (i+1)*len(fields)]}
	}
	sort.SliceStable(items, func(i, j int) bool { return s.less(&items[i], &items[j]) })
	if s.err != nil {
		return s.err
	}
	for i := range items {
		rows[i] = items[i].row
	}
	return nil
}

// topNNode runs a TopN (ORDER BY … LIMIT) of a client session with
// keyedTopNIter; go-mysql-server runs it otherwise.
func (x adminExec) topNNode(ctx *sql.Context, n *plan.TopN, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) {
		return nil, nil
	}
	iter, err := x.exec.Build(ctx, n.Child, row)
	if err != nil {
		return nil, err
	}
	limit, err := iters.GetInt64Value(ctx, n.Limit)
	if err != nil {
		return nil, err
	}
	return newKeyedTopNIter(n.Fields, limit, n.CalcFoundRows, iter, len(n.Child.Schema())), nil
}

// keyedTopNIter is go-mysql-server's TopN iterator (iters.topRowsIter)
// over a rowSorter: it appends to each row its number in the input and
// sorts by it last, keeps the limit first rows in a heap, and returns
// them without the number.
type keyedTopNIter struct {
	fields        sql.SortFields
	calcFoundRows bool
	child         sql.RowIter
	limit         int64
	rows          []sql.Row
	numFoundRows  int64
	idx           int // -1 until the rows are chosen
}

func newKeyedTopNIter(fields sql.SortFields, limit int64, calcFoundRows bool, child sql.RowIter, childSchemaLen int) *keyedTopNIter {
	// A copy: go-mysql-server appends to the node's own slice.
	fields = append(fields[:len(fields):len(fields)], sql.SortField{Column: expression.NewGetField(childSchemaLen, types.Int64, "order", false)})
	return &keyedTopNIter{fields: fields, limit: limit, calcFoundRows: calcFoundRows, child: child, idx: -1}
}

func (it *keyedTopNIter) Next(ctx *sql.Context) (sql.Row, error) {
	if it.idx == -1 {
		if err := it.computeTopRows(ctx); err != nil {
			return nil, err
		}
		it.idx = 0
	}
	if it.idx >= len(it.rows) {
		return nil, io.EOF
	}
	r := it.rows[it.idx]
	it.idx++
	return r[:len(r)-1], nil
}

func (it *keyedTopNIter) computeTopRows(ctx *sql.Context) error {
	h := &topRowsHeap{s: newRowSorter(ctx, it.fields)}
	h.s.ownKeys = true
	for {
		r, err := it.child.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		it.numFoundRows++
		r = append(r, it.numFoundRows)
		heap.Push(h, &sortRow{row: r, cells: make([]sortCell, len(it.fields))})
		if int64(h.Len()) > it.limit {
			heap.Pop(h)
		}
		if h.s.err != nil {
			return h.s.err
		}
	}
	// Popped from the heap, the rows come last first.
	rows := make([]sql.Row, h.Len())
	for i := len(rows) - 1; i >= 0; i-- {
		rows[i] = heap.Pop(h).(*sortRow).row
	}
	it.rows = rows
	return h.s.err
}

func (it *keyedTopNIter) Close(ctx *sql.Context) error {
	it.rows = nil
	if it.calcFoundRows {
		ctx.SetLastQueryInfoInt(sql.FoundRows, it.numFoundRows)
	}
	return it.child.Close(ctx)
}

// topRowsHeap is expression.TopRowsHeap over a rowSorter: its root is the
// row that sorts last.
type topRowsHeap struct {
	s    *rowSorter
	rows []*sortRow
}

func (h *topRowsHeap) Len() int           { return len(h.rows) }
func (h *topRowsHeap) Less(i, j int) bool { return !h.s.less(h.rows[i], h.rows[j]) }
func (h *topRowsHeap) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *topRowsHeap) Push(x any)         { h.rows = append(h.rows, x.(*sortRow)) }

func (h *topRowsHeap) Pop() any {
	last := h.rows[len(h.rows)-1]
	h.rows[len(h.rows)-1] = nil
	h.rows = h.rows[:len(h.rows)-1]
	return last
}

// sortField is a sql.SortField with what comparing its values needs.
type sortField struct {
	expr       sql.Expression
	typ        sql.Type
	desc       bool
	nullsFirst bool
	// keyed: typ is a types.StringType whose collation has sort keys, and
	// collation is that collation.
	keyed     bool
	collation sql.CollationID
}

// sortRow is a row with the values of its sort fields evaluated so far.
type sortRow struct {
	row   sql.Row
	cells []sortCell // one per sort field
}

// sortCell is the value of one sort field of one row, once evaluated.
type sortCell struct {
	evaluated bool
	v         any
	// hasKey: v is a string and key its sort key.
	hasKey bool
	key    []byte
}

// rowSorter compares rows by their sort fields as expression.Sorter.Less
// does, evaluating each field of each row at most once.
type rowSorter struct {
	ctx    *sql.Context
	fields []sortField
	// keys is the end of the buffer the sort keys are cut from, when
	// the rows are kept to the end of the sort; with ownKeys (a TopN,
	// which drops rows as it goes) each key has its own allocation
	// instead, so that a key kept does not keep the keys of dropped rows.
	keys    []byte
	ownKeys bool
	// err is the first error met; after it every comparison answers
	// false, as expression.Sorter's do.
	err error
}

// Sort keys are cut from buffers of minSortKeyChunk bytes at first, each
// twice its predecessor up to maxSortKeyChunk: one allocation for many
// short keys, and little to spare in a small sort.
const (
	minSortKeyChunk = 1 << 10
	maxSortKeyChunk = 64 << 10
)

func newRowSorter(ctx *sql.Context, fields sql.SortFields) *rowSorter {
	s := &rowSorter{ctx: ctx, fields: make([]sortField, len(fields))}
	for i, sf := range fields {
		f := sortField{
			expr:       sf.Column,
			typ:        sf.Column.Type(),
			desc:       sf.Order == sql.Descending,
			nullsFirst: sf.NullOrdering == sql.NullsFirst,
		}
		if st, ok := f.typ.(types.StringType); ok && weights.HasSortKey(st.Collation()) {
			f.keyed, f.collation = true, st.Collation()
		}
		s.fields[i] = f
	}
	return s
}

// cell returns the field f of r, evaluating it the first time.
func (s *rowSorter) cell(r *sortRow, f int) (*sortCell, error) {
	c := &r.cells[f]
	if c.evaluated {
		return c, nil
	}
	fl := &s.fields[f]
	v, err := fl.expr.Eval(s.ctx, r.row)
	if err != nil {
		return nil, err
	}
	c.evaluated, c.v = true, v
	if str, ok := v.(string); ok && fl.keyed {
		// A key has at most 4 bytes per byte of the string.
		if s.ownKeys {
			s.keys = make([]byte, 0, 4*len(str))
		} else if cap(s.keys)-len(s.keys) < 4*len(str) {
			chunk := min(max(2*cap(s.keys), minSortKeyChunk), maxSortKeyChunk)
			s.keys = make([]byte, 0, max(chunk, 4*len(str)))
		}
		from := len(s.keys)
		if s.keys, err = weights.AppendSortKey(s.keys, fl.collation, str); err != nil {
			return nil, err // not met: fl.keyed says the collation has keys
		}
		c.hasKey, c.key = true, s.keys[from:len(s.keys):len(s.keys)]
	}
	return c, nil
}

// less is expression.Sorter.Less of rows a and b.
func (s *rowSorter) less(ra, rb *sortRow) bool {
	if s.err != nil {
		return false
	}
	for f := range s.fields {
		fl := &s.fields[f]
		a, err := s.cell(ra, f)
		if err != nil {
			s.err = sql.ErrUnableSort.Wrap(err)
			return false
		}
		b, err := s.cell(rb, f)
		if err != nil {
			s.err = sql.ErrUnableSort.Wrap(err)
			return false
		}
		if fl.desc {
			a, b = b, a
		}
		if a.v == nil && b.v == nil {
			continue
		} else if a.v == nil {
			return fl.nullsFirst
		} else if b.v == nil {
			return !fl.nullsFirst
		}
		var cmp int
		if a.hasKey && b.hasKey {
			cmp = bytes.Compare(a.key, b.key)
		} else if cmp, err = fl.typ.Compare(s.ctx, a.v, b.v); err != nil {
			s.err = err
			return false
		}
		switch cmp {
		case -1:
			return true
		case 1:
			return false
		}
	}
	return false
}
