package storage

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/tidwall/btree"
)

// Secondary indexes.
//
// An index over one integer column of a table keyed by one integer column
// (or by row number) keeps, per row, two integers in its tree's nodes: the
// row's key in the index and its primary key. No pointer to the row:
//
//   - a write that changes neither (an UPDATE of other columns) leaves the
//     index alone, where an index of rows must put the new version in;
//   - the garbage collector finds nothing in the index to follow, where an
//     index of rows has it visit every row a second time;
//   - a search compares integers in the node, not rows spread through
//     memory.
//
// A reader of such an index finds each row by its primary key, in the same
// version of the table: a range read through it costs a primary key lookup
// per row, which an index of rows does not. A reader that needs no other
// column than the index's and the primary key's reads the entries alone
// (Table.AscendIndexOnly), as InnoDB reads a covering index, and a count
// of the rows in a range (Table.CountRange) reads no row at all.
//
// The index's key and primary key are each of one kind of integer (int32,
// int64, uint64 …, as the rows hold them), set by the first row it takes.
// A row whose key or primary key is not an integer of that kind (NULL,
// another kind, another type) turns the index into an index of rows, as
// every other index is: it is rebuilt from the primary tree in the
// writer's copy of the table, which already holds the row. Entries of
// kinds of 32 bits or fewer are packed into one 64-bit integer (entries.go).
//
// An index added to a table that holds rows (a reindex) is built at once
// (secondary.build): its entries sorted, loaded in order and copied into
// nodes of their own: about 70 % of the memory of inserting the rows one
// by one (which leaves nodes two-thirds full), and less garbage.

// intEntry is an index entry of a row: its key in the index and its primary
// key (or row number), as intAt gives integers.
type intEntry struct{ key, pk uint64 }

// secondary is one secondary index of one version of a table. Versions
// never share a secondary: copy gives each its own (the trees share their
// nodes, copy-on-write).
type secondary struct {
	cols []int // the index's columns
	// ints holds the entries of an index of integers; nil when the
	// index holds rows, or while an index of integers is still empty
	// and its kinds unknown.
	ints entryTree
	// rows holds the rows of an index of rows.
	rows *btree.BTreeG[*Row]
	// The kinds of an index of integers (their tags in the journal's
	// value encoding), known once ints is made: every row's key and
	// primary key are of them.
	keyTag, pkTag       byte
	keySigned, pkSigned bool
	// pkCol is the primary key's column, -1 for the row number.
	pkCol int
}

// indexesOfIntegers lets an index be one of integers (tests compare the two
// kinds).
var indexesOfIntegers = true

// newSecondary returns an empty index over cols of a table of shape s.
func newSecondary(s *shape, cols []int) *secondary {
	x := &secondary{cols: cols, pkCol: -1}
	switch pk := s.def.PK; {
	case indexesOfIntegers && len(cols) == 1 && len(pk) <= 1:
		if len(pk) == 1 {
			x.pkCol = pk[0]
		}
	default:
		x.rows = s.newRowsIndex(cols)
	}
	return x
}

// newRowsIndex returns an empty tree of rows ordered as index cols orders them.
func (s *shape) newRowsIndex(cols []int) *btree.BTreeG[*Row] {
	return btree.NewBTreeGOptions(func(a, b *Row) bool { return s.compareIndex(cols, a, b) < 0 }, btreeOpts)
}

// holdsRows reports whether x is an index of rows.
func (x *secondary) holdsRows() bool { return x.rows != nil }

// copy returns a copy of x for another version of the table. The caller
// holds the table's cloneMu (a tree's Copy writes to the tree).
func (x *secondary) copy() *secondary {
	c := *x
	if x.ints != nil {
		c.ints = x.ints.copy()
	}
	if x.rows != nil {
		c.rows = x.rows.Copy()
	}
	return &c
}

// len returns the number of entries.
func (x *secondary) len() int {
	switch {
	case x.rows != nil:
		return x.rows.Len()
	case x.ints != nil:
		return x.ints.Len()
	}
	return 0
}

// entryOf returns r's entry and the kinds of its integers; false when r's
// key or primary key is not an integer of the index's kinds (any integer
// while they are unknown).
func (x *secondary) entryOf(r *Row) (e intEntry, keyTag, pkTag byte, ok bool) {
	k, kt, ok := r.intTagAt(x.cols[0])
	if !ok {
		return e, 0, 0, false
	}
	pk, pt := r.ID, tagUint64
	if x.pkCol >= 0 {
		if pk, pt, ok = r.intTagAt(x.pkCol); !ok {
			return e, 0, 0, false
		}
	}
	if x.ints != nil && (kt != x.keyTag || pt != x.pkTag) {
		return e, 0, 0, false
	}
	return intEntry{key: k, pk: pk}, kt, pt, true
}

// mustEntry returns the entry of r, a row the index of integers holds.
func (x *secondary) mustEntry(t *Table, r *Row) intEntry {
	e, _, _, ok := x.entryOf(r)
	if !ok {
		panic(fmt.Sprintf("storage: table %s: row %d has no entry in an index of integers", t.shape.def.Name, r.ID))
	}
	return e
}

// intLess orders entries by key, then primary key, each signed or not.
func intLess(keySigned, pkSigned bool) func(a, b intEntry) bool {
	return func(a, b intEntry) bool {
		if a.key != b.key {
			return compareBits(a.key, b.key, keySigned) < 0
		}
		return compareBits(a.pk, b.pk, pkSigned) < 0
	}
}

// toRows turns x into an index of rows: the rows of t's primary tree, which
// already holds the row being written.
func (x *secondary) toRows(t *Table) {
	x.ints, x.rows = nil, t.shape.newRowsIndex(x.cols)
	x.build(t)
}

// build fills x, an empty index of t, with the rows of t's primary tree:
// their entries (or, in an index of rows, the rows) are sorted, then loaded
// in order, then copied into nodes of their own (see unshared). Inserting
// the rows one by one would leave nodes about two-thirds full and make
// garbage of every node outgrown on the way.
func (x *secondary) build(t *Table) {
	if x.rows == nil && x.buildInts(t) {
		return
	}
	if x.rows == nil {
		x.ints, x.rows = nil, t.shape.newRowsIndex(x.cols)
	}
	rows := make([]*Row, 0, t.primary.Len())
	t.primary.Scan(func(r *Row) bool {
		rows = append(rows, r)
		return true
	})
	slices.SortFunc(rows, func(a, b *Row) int { return t.shape.compareIndex(x.cols, a, b) })
	x.rows = loadInOrder(x.rows, rows)
}

// buildInts is build for an index of integers; false when a row has no
// entry of the first row's kinds (x is unchanged then, to become an index
// of rows).
func (x *secondary) buildInts(t *Table) bool {
	first, ok := t.primary.Min()
	if !ok {
		return true
	}
	_, keyTag, pkTag, ok := x.entryOf(first)
	if !ok {
		return false
	}
	tree := newEntryTree(keyTag, pkTag)
	entries := func(fn func(intEntry)) bool {
		ok := true
		t.primary.Scan(func(r *Row) bool {
			e, kt, pt, good := x.entryOf(r)
			if ok = good && kt == keyTag && pt == pkTag; ok {
				fn(e)
			}
			return ok
		})
		return ok
	}
	if !tree.fill(t.primary.Len(), entries) {
		return false
	}
	x.ints = tree
	x.keyTag, x.pkTag = keyTag, pkTag
	x.keySigned, x.pkSigned = signedTag(keyTag), signedTag(pkTag)
	return true
}

// loadInOrder loads items, sorted in tree's order, into tree, empty, and
// returns the tree copied into nodes of their own (see unshared).
func loadInOrder[T any](tree *btree.BTreeG[T], items []T) *btree.BTreeG[T] {
	for _, it := range items {
		tree.Load(it)
	}
	return unshared(tree)
}

// unshared returns a copy of tree made of copies of its nodes, each in
// memory of its own. A node split in two keeps sharing its memory with the
// other half, and goes on pinning all of it once the other half has moved
// (outgrown it, or been copied for a new version): a tree filled in key
// order holds about half of its leaves' memory unused until they are
// copied.
func unshared[T any](tree *btree.BTreeG[T]) *btree.BTreeG[T] {
	c := tree.Copy()
	c.ScanMut(func(T) bool { return true })
	return c
}

// insert adds r, whose row the primary tree of t already holds; hint, if
// not nil, speeds the search up.
func (x *secondary) insert(t *Table, r *Row, hint *btree.PathHint) {
	if x.rows != nil {
		x.rows.SetHint(r, hint)
		return
	}
	e, kt, pt, ok := x.entryOf(r)
	if !ok {
		x.toRows(t)
		return
	}
	if x.ints == nil {
		x.keyTag, x.pkTag = kt, pt
		x.keySigned, x.pkSigned = signedTag(kt), signedTag(pt)
		x.ints = newEntryTree(kt, pt)
	}
	if x.ints.set(e, hint) {
		panic(fmt.Sprintf("storage: table %s: index entry of row %d added twice", t.shape.def.Name, r.ID))
	}
}

// remove takes out the entry of r, a row the index holds.
func (x *secondary) remove(t *Table, r *Row, name string) {
	ok := false
	if x.rows != nil {
		_, ok = x.rows.Delete(r)
	} else if x.ints != nil {
		ok = x.ints.remove(x.mustEntry(t, r))
	}
	if !ok {
		panic(fmt.Sprintf("storage: table %s: row %d missing from index %s", t.shape.def.Name, r.ID, name))
	}
}

// update replaces the entry of old, a row the index holds, by that of r,
// its new version, which the primary tree of t already holds.
func (x *secondary) update(t *Table, old, r *Row, name string) {
	if x.rows == nil {
		eo := x.mustEntry(t, old)
		en, _, _, ok := x.entryOf(r)
		switch {
		case !ok:
			x.toRows(t)
		case en != eo:
			if !x.ints.remove(eo) {
				panic(fmt.Sprintf("storage: table %s: row %d missing from index %s", t.shape.def.Name, old.ID, name))
			}
			x.ints.set(en, nil)
		}
		return
	}
	if t.shape.compareIndex(x.cols, old, r) == 0 {
		if prev, ok := x.rows.Set(r); !ok || prev != old {
			panic(fmt.Sprintf("storage: table %s: row %d not where index %q has it", t.shape.def.Name, r.ID, name))
		}
		return
	}
	if _, ok := x.rows.Delete(old); !ok {
		panic(fmt.Sprintf("storage: table %s: row %d missing from index %s", t.shape.def.Name, old.ID, name))
	}
	x.rows.Set(r)
}

// A reader of an index of integers finds rows by primary key.

// pkLookup finds rows of one primary tree by the primary keys of entries,
// with one key row it rewrites for each.
type pkLookup struct {
	primary *rowTree
	table   string
	key     *rowExt
	pkCol   int
	signed  bool
}

func (x *secondary) lookup(t *Table, primary *rowTree) *pkLookup {
	l := &pkLookup{primary: primary, table: t.shape.def.Name, key: &rowExt{Row: Row{vf: flagExt}}, pkCol: x.pkCol, signed: x.pkSigned}
	if x.pkCol >= 0 {
		l.key.vals = make([]any, t.shape.def.NumCols)
	}
	return l
}

func (l *pkLookup) row(pk uint64) *Row {
	switch {
	case l.pkCol < 0:
		l.key.ID = pk
	case l.signed:
		l.key.vals[l.pkCol] = int64(pk)
	default:
		l.key.vals[l.pkCol] = pk
	}
	r, ok := l.primary.Get(&l.key.Row)
	if !ok {
		panic(fmt.Sprintf("storage: table %s: an index holds primary key %d, which the table does not", l.table, pk))
	}
	return r
}

// count returns how many entries of the index lie from lo on (nil: from
// the first) and not past hi (nil: to the last); lo and hi are seek rows
// or nil. An index of integers counts its entries without reading a row.
func (x *secondary) count(t *Table, lo, hi *Row) int {
	if x.rows != nil {
		return countRows(func(pivot *Row, down bool, fn func(*Row) bool) { walkRows(x.rows, pivot, down, fn) }, lo, hi, func(a, b *Row) int { return t.shape.compareIndex(x.cols, a, b) })
	}
	if x.ints == nil {
		return 0
	}
	n := 0
	from, to := x.startAt(t.shape, lo, false), x.startAt(t.shape, hi, true)
	if from.none || to.none {
		return 0
	}
	less := intLess(x.keySigned, x.pkSigned)
	each := func(e intEntry) bool {
		if !to.all && less(to.from, e) {
			return false
		}
		n++
		return true
	}
	x.ints.walk(from.at(), false, each)
	return n
}

// reader returns how a walk of the index of integers x gets the row of an
// entry: from primary by its primary key, or, for a caller that reads no
// other column (only), made of the entry.
func (x *secondary) reader(t *Table, primary *rowTree, only bool) func(e intEntry) *Row {
	n := t.shape.def.NumCols
	if only && n <= maxCompactValues {
		var chunk []byte
		return func(e intEntry) *Row { return x.coverRow(n, e, &chunk) }
	}
	var l *pkLookup // made at the first entry: many walks find none
	return func(e intEntry) *Row {
		if l == nil {
			l = x.lookup(t, primary)
		}
		return l.row(e.pk)
	}
}

// coverRow returns a compact row of n columns made of e: the index's column
// and the primary key's hold the entry's integers, of the kinds the rows
// hold, and every other column NULL. The row number is the entry's for a
// table keyed by row number, 0 otherwise. The rows of one walk are cut
// from shared blocks of memory (chunk): one allocation for many rows.
func (x *secondary) coverRow(n int, e intEntry, chunk *[]byte) *Row {
	put := func(b []byte, tag byte, v uint64) []byte {
		if signedTag(tag) {
			return binary.AppendVarint(append(b, tag), int64(v))
		}
		return binary.AppendUvarint(append(b, tag), v)
	}
	var kb, pb [2 * binary.MaxVarintLen64]byte
	key := put(kb[:0], x.keyTag, e.key)
	var pk []byte
	id, held := e.pk, 1
	if x.pkCol >= 0 {
		id = 0
		if x.pkCol != x.cols[0] {
			pk, held = put(pb[:0], x.pkTag, e.pk), 2
		}
	}
	size := n - held + len(key) + len(pk)
	r, enc := placeCompact(carve(chunk, compactBytes(size)), id, n, size, held == n)
	b := enc[:0]
	for i := range n {
		switch {
		case i == x.cols[0]:
			b = append(b, key...)
		case i == x.pkCol && pk != nil:
			b = append(b, pk...)
		default:
			b = append(b, tagNull)
		}
	}
	return r
}

// The kinds' ends, in the order of intEntry's fields.
func minOf(signed bool) uint64 {
	if signed {
		return 1 << 63 // math.MinInt64
	}
	return 0
}

func maxOf(signed bool) uint64 {
	if signed {
		return math.MaxInt64
	}
	return math.MaxUint64
}

// threshold returns the least key k (in the index's order) whose comparison
// with v, the value of the index's column in a pivot, is positive (strict)
// or not negative; false when there is none. The keys that compare so are
// the index's keys from k on: a column's comparison orders integers as
// integers, so the comparison with v does not fall as the key rises.
func (x *secondary) threshold(s *shape, v any, strict bool) (uint64, bool) {
	if y, ys, ok := intOf(v); ok && ys == x.keySigned {
		if !strict {
			return y, true
		}
		if y == maxOf(ys) {
			return 0, false
		}
		return y + 1, true
	}
	// Search the keys in their order, mapped onto the unsigned integers.
	flip := minOf(x.keySigned)
	holds := func(u uint64) bool {
		var k any = u ^ flip
		if x.keySigned {
			k = int64(u ^ flip)
		}
		c := s.compareCol(x.cols[0], k, v)
		return c > 0 || !strict && c == 0
	}
	if !holds(math.MaxUint64) {
		return 0, false
	}
	lo, hi := uint64(0), uint64(math.MaxUint64)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if holds(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo ^ flip, true
}

// start says where a walk of an index of integers begins.
type start struct {
	all, none bool
	from      intEntry
	// skip, when not nil, is a pivot that is not a seek row and whose
	// entry could not be made: rows before it (after it, walking down)
	// are skipped by comparing them with it.
	skip *Row
}

// at returns the entry a walk begins at; nil for all of them.
func (s *start) at() *intEntry {
	if s.all {
		return nil
	}
	return &s.from
}

// startAt returns where a walk of the index of integers x from pivot
// begins: at the first entry not below it or, walking down, at the last
// entry not above it.
func (x *secondary) startAt(s *shape, pivot *Row, down bool) start {
	if pivot == nil {
		return start{all: true}
	}
	bound, prefix := pivot.seekBound()
	if bound != 0 && prefix == 0 {
		// Before or after every row.
		return start{all: (bound < 0) != down, none: (bound > 0) != down}
	}
	var skip *Row
	if bound == 0 {
		if e, _, _, ok := x.entryOf(pivot); ok {
			return start{from: e}
		}
		skip = pivot
	}
	if !down {
		// From the first key not below the pivot's, or past it for a
		// seek row after every row with its key.
		k, ok := x.threshold(s, pivot.Value(x.cols[0]), bound > 0)
		if !ok {
			return start{none: true}
		}
		return start{from: intEntry{key: k, pk: minOf(x.pkSigned)}, skip: skip}
	}
	// Below the first key above the pivot's (or, for a seek row before
	// every row with its key, the first key not below it).
	k, ok := x.threshold(s, pivot.Value(x.cols[0]), bound >= 0)
	switch {
	case !ok:
		return start{all: true, skip: skip}
	case k == minOf(x.keySigned):
		return start{none: true}
	}
	return start{from: intEntry{key: k - 1, pk: maxOf(x.pkSigned)}, skip: skip}
}

// walk calls fn for the rows of the index from pivot on (nil: from the
// first), or from pivot down (nil: from the last), until fn returns false,
// reading rows from primary.
//
// only: the caller reads no other column than the index's and the primary
// key's, and an index of integers gives rows made of its entries (see
// coverRow) instead of reading the rows.
func (x *secondary) walk(t *Table, primary *rowTree, pivot *Row, down, only bool, fn func(r *Row) bool) {
	if x.rows != nil {
		walkRows(x.rows, pivot, down, fn)
		return
	}
	if x.ints == nil {
		return
	}
	st := x.startAt(t.shape, pivot, down)
	if st.none {
		return
	}
	row := x.reader(t, primary, only)
	skipping := st.skip != nil
	each := func(e intEntry) bool {
		r := row(e)
		if skipping {
			// Past the rows on the near side of a pivot whose entry
			// could not be made.
			if c := t.shape.compareIndex(x.cols, r, st.skip); c < 0 && !down || c > 0 && down {
				return true
			}
			skipping = false
		}
		return fn(r)
	}
	x.ints.walk(st.at(), down, each)
}

// walkRows walks tree, of rows, as secondary.walk walks an index.
func walkRows(tree *btree.BTreeG[*Row], pivot *Row, down bool, fn func(r *Row) bool) {
	walkTree(tree, pivot, pivot == nil, down, fn)
}

// walkTree calls fn for the items of tree from the first not below from
// on, or (down) from the last not above it down, or from the first (the
// last) with all, until fn returns false.
func walkTree[T any](tree *btree.BTreeG[T], from T, all, down bool, fn func(T) bool) {
	switch {
	case all && down:
		tree.Reverse(fn)
	case all:
		tree.Scan(fn)
	case down:
		tree.Descend(from, fn)
	default:
		tree.Ascend(from, fn)
	}
}

// countRows returns how many rows of tree lie from lo on (nil: from the
// first) and not past hi (nil: to the last), as order places them.
func countRows(walk func(pivot *Row, down bool, fn func(*Row) bool), lo, hi *Row, order func(a, b *Row) int) int {
	n := 0
	walk(lo, false, func(r *Row) bool {
		if hi != nil && order(r, hi) > 0 {
			return false
		}
		n++
		return true
	})
	return n
}

// carve returns the first n bytes of *chunk, 8-byte aligned, and moves the
// chunk past them; a chunk too short is replaced by a new one.
func carve(chunk *[]byte, n int) []byte {
	const chunkBytes = 4096
	n8 := (n + 7) &^ 7
	if len(*chunk) < n8 {
		*chunk = make([]byte, max(chunkBytes, n8))
	}
	b := (*chunk)[:n:n]
	*chunk = (*chunk)[n8:]
	return b
}
