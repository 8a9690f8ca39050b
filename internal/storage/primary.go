package storage

import (
	"math"

	"github.com/tidwall/btree"
)

// The primary tree.
//
// Comparing two rows reads both, and the rows of a table lie all over
// memory: a search through the primary tree of a table of ten thousand rows
// waited for the first bytes of a row at each of its fourteen or so
// comparisons, most of them in rows it would not read again. The tree's
// items carry, beside each row, its lead: the first primary key column's
// value when it is an integer from 0 to 2⁶³−2 (the row number in a table
// without a primary key). Two items whose leads differ compare by them,
// without reading a row; only items of the same lead, or without one,
// compare their rows. The lead costs eight bytes a row.

// pkItem is an item of the primary tree.
type pkItem struct {
	// lead is 1 + the row's lead, 0 when it has none (see leadOf).
	lead uint64
	r    *Row
}

// rowTree is the primary tree of a table version.
type rowTree struct {
	t *btree.BTreeG[pkItem]
	s *shape
}

func newRowTree(s *shape) *rowTree {
	less := func(a, b pkItem) bool {
		if a.lead != b.lead && a.lead != 0 && b.lead != 0 {
			return a.lead < b.lead
		}
		return s.comparePrimary(a.r, b.r) < 0
	}
	return &rowTree{t: btree.NewBTreeGOptions(less, btreeOpts), s: s}
}

// leadOf returns r's lead plus one, or 0 when it has none: r is a seek
// row that sorts by its bound before the first column, or the column's
// value is not an integer from 0 to 2⁶³−2. Leads order as the rows do:
// the first key column decides between rows whose values in it differ,
// and two non-negative integers that fit in an int64 compare by value
// whatever their kinds (compareRowCol); others, and an int64's largest,
// are left to the rows' comparison, as they were.
func (s *shape) leadOf(r *Row) uint64 {
	if len(s.def.PK) == 0 {
		if isSeek(r) || r.ID >= math.MaxInt64 {
			return 0
		}
		return r.ID + 1
	}
	if keyLen(r, 1) == 0 {
		return 0
	}
	x, signed, ok := r.intAt(s.def.PK[0])
	if !ok || signed && int64(x) < 0 || x >= math.MaxInt64 {
		return 0
	}
	return x + 1
}

func (t *rowTree) item(r *Row) pkItem { return pkItem{lead: t.s.leadOf(r), r: r} }

// each adapts fn, of rows, to the tree's items.
func each(fn func(*Row) bool) func(pkItem) bool {
	return func(it pkItem) bool { return fn(it.r) }
}

func (t *rowTree) Len() int { return t.t.Len() }

// Copy returns a copy sharing the nodes until either writes (see
// btree.BTreeG.Copy, which writes to t).
func (t *rowTree) Copy() *rowTree { return &rowTree{t: t.t.Copy(), s: t.s} }

func (t *rowTree) Get(key *Row) (*Row, bool) {
	it, ok := t.t.Get(t.item(key))
	return it.r, ok
}

func (t *rowTree) GetHint(key *Row, hint *btree.PathHint) (*Row, bool) {
	it, ok := t.t.GetHint(t.item(key), hint)
	return it.r, ok
}

// Set adds r or replaces the row of its key, which it returns.
func (t *rowTree) Set(r *Row) (*Row, bool) { return t.SetHint(r, nil) }

func (t *rowTree) SetHint(r *Row, hint *btree.PathHint) (*Row, bool) {
	it, ok := t.t.SetHint(t.item(r), hint)
	return it.r, ok
}

func (t *rowTree) Delete(key *Row) (*Row, bool) { return t.DeleteHint(key, nil) }

func (t *rowTree) DeleteHint(key *Row, hint *btree.PathHint) (*Row, bool) {
	it, ok := t.t.DeleteHint(t.item(key), hint)
	return it.r, ok
}

func (t *rowTree) Min() (*Row, bool) {
	it, ok := t.t.Min()
	return it.r, ok
}

func (t *rowTree) Max() (*Row, bool) {
	it, ok := t.t.Max()
	return it.r, ok
}

func (t *rowTree) Scan(fn func(*Row) bool) { t.t.Scan(each(fn)) }

// walk calls fn for the rows from the first not below pivot on, or down
// from the last not above it (pivot nil: from the first, or the last),
// until fn returns false.
func (t *rowTree) walk(pivot *Row, down bool, fn func(*Row) bool) {
	var from pkItem
	if pivot != nil {
		from = t.item(pivot)
	}
	walkTree(t.t, from, pivot == nil, down, each(fn))
}

// unshareFrom makes the nodes from the one holding from to the last copies
// of their own (see unshared).
func (t *rowTree) unshareFrom(from *Row) {
	t.t.AscendMut(t.item(from), func(pkItem) bool { return true })
}

// rowsIter steps through a tree of rows: a rowTree, or an index's tree of
// rows (btree.IterG[*Row]).
type rowsIter interface {
	Seek(key *Row) bool
	First() bool
	Next() bool
	Item() *Row
	Release()
}

// pkIter steps through a rowTree.
type pkIter struct {
	it btree.IterG[pkItem]
	s  *shape
}

func (t *rowTree) Iter() *pkIter { return &pkIter{it: t.t.Iter(), s: t.s} }

func (i *pkIter) Seek(key *Row) bool { return i.it.Seek(pkItem{lead: i.s.leadOf(key), r: key}) }
func (i *pkIter) First() bool        { return i.it.First() }
func (i *pkIter) Next() bool         { return i.it.Next() }
func (i *pkIter) Item() *Row         { return i.it.Item().r }
func (i *pkIter) Release()           { i.it.Release() }
