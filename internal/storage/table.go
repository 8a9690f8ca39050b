package storage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tidwall/btree"
)

// TableDef is what storage knows of a table's shape. Meta is the SQL layer's
// own encoding of the full schema (types, defaults, constraints), stored and
// replicated as is.
type TableDef struct {
	Name    string
	Meta    []byte
	NumCols int
	AutoCol int   // position of the AUTO_INCREMENT column, -1 if none
	PK      []int // primary key columns; empty: rows are keyed by row number
	Indexes []IndexDef
}

// IndexDef is a secondary index over columns of the table.
type IndexDef struct {
	Name   string
	Cols   []int
	Unique bool
}

// Compare orders two non-NULL values of one column (negative, zero, positive).
type Compare func(a, b any) int

// Binder gives the comparison function of each column of a table definition.
// It is provided by the SQL layer, which knows the types and collations.
type Binder func(def *TableDef) ([]Compare, error)

// Row is one row. Rows are never modified once committed: an update stores a
// new Row with the same ID. (A commit that adopts a transaction's own tables
// stamps that transaction's rows with its sequence before publishing them.)
type Row struct {
	// ID is the row number, unique in the table and the same on every node
	// (it travels in the journal). It is the key of a table without a
	// primary key.
	ID uint64
	// vf holds the commit sequence of the transaction that wrote the row
	// (version; pendingVer inside a transaction) and what the row is: a
	// compact row (its values follow the header in its allocation, see
	// row.go) with their count and whether one is NULL, or, with flagExt,
	// the head of a rowExt (boxed values, a key or a seek row). Read the
	// values with Values, Value and the other accessors. A row's header is
	// 16 bytes.
	vf uint64
}

// The bits of Row.vf.
const (
	flagExt     = 1 << 63 // the row is a rowExt
	flagNoNulls = 1 << 62 // a compact row without a NULL: IsNull need not read it
	countBits   = 13      // the count of a compact row's values
	countShift  = 62 - countBits
	verMask     = 1<<countShift - 1 // the version: 49 bits, 5.6e14 commits (17 years at a million a second)
)

// pendingVer marks rows written by a transaction that has not committed.
const pendingVer = verMask

// version returns the commit sequence of the transaction that wrote r.
func (r *Row) version() uint64 { return r.vf & verMask }

// setVersion stamps r with the commit sequence v.
func (r *Row) setVersion(v uint64) {
	if v > verMask {
		panic(fmt.Sprintf("storage: commit sequence %d past %d", v, uint64(verMask)))
	}
	r.vf = r.vf&^verMask | v
}

// seekBound returns a seek row's bound and prefix (0, 0 for other rows):
// only the first prefix key columns count, and bound (-1 or +1) places the
// row before or after every stored row that shares them.
func (r *Row) seekBound() (bound int8, prefix uint8) {
	if r.vf&flagExt == 0 {
		return 0, 0
	}
	e := r.ext()
	return e.bound, e.prefix
}

// shape holds what orders a table's rows; shared by all versions of a table
// with the same definition.
type shape struct {
	def *TableDef
	cmp []Compare
}

func newShape(def *TableDef, cmp []Compare) *shape {
	return &shape{def: def, cmp: cmp}
}

func (s *shape) compareCol(col int, a, b any) int {
	// Two int64s compare by value under every column type that stores
	// them (compareRowCol): no call through the column's comparison.
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
	}
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return s.cmp[col](a, b)
}

// compareRowCol compares column col of two rows: two integers of the same
// kind by value, without boxing them; else by the column. Two integers of
// the same kind compare by value under every column type that stores
// integers (the integer types, BIT, YEAR, ENUM and SET as numbers).
func (s *shape) compareRowCol(col int, a, b *Row) int {
	if x, xs, ok := a.intAt(col); ok {
		if y, ys, ok := b.intAt(col); ok && xs == ys {
			return compareBits(x, y, xs)
		}
	}
	return s.compareCol(col, a.Value(col), b.Value(col))
}

// compareBits orders two integers of one kind given as intAt gives them.
func compareBits(x, y uint64, signed bool) int {
	if signed {
		return cmp.Compare(int64(x), int64(y))
	}
	return cmp.Compare(x, y)
}

func boundOrder(a, b *Row) int {
	if ab, _ := a.seekBound(); ab != 0 {
		return int(ab)
	}
	bb, _ := b.seekBound()
	return -int(bb)
}

// isSeek reports whether r is a seek row.
func isSeek(r *Row) bool {
	b, _ := r.seekBound()
	return b != 0
}

func keyLen(r *Row, n int) int {
	if r.vf&flagExt != 0 {
		if e := r.ext(); e.bound != 0 && int(e.prefix) < n {
			return int(e.prefix)
		}
	}
	return n
}

// comparePrimary orders rows by primary key, or by row number without one.
func (s *shape) comparePrimary(a, b *Row) int {
	if len(s.def.PK) == 0 {
		if isSeek(a) || isSeek(b) {
			return boundOrder(a, b)
		}
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	}
	return s.compareCols(s.def.PK, a, b)
}

func (s *shape) compareCols(cols []int, a, b *Row) int {
	na, nb := keyLen(a, len(cols)), keyLen(b, len(cols))
	for i, col := range cols {
		if i >= na || i >= nb {
			return boundOrder(a, b)
		}
		if c := s.compareRowCol(col, a, b); c != 0 {
			return c
		}
	}
	if isSeek(a) || isSeek(b) {
		return boundOrder(a, b)
	}
	return 0
}

// compareIndex orders index entries by the index columns, then by primary key.
func (s *shape) compareIndex(cols []int, a, b *Row) int {
	if c := s.compareCols(cols, a, b); c != 0 {
		return c
	}
	return s.comparePrimary(a, b)
}

// Table is one version of a table. A published Table (in a committed Catalog
// or a snapshot) is never modified; writers modify a clone, or, taking
// over a committed catalog no one froze, a version sharing its trees
// (shareTrees).
type Table struct {
	shape   *shape
	primary *rowTree
	indexes []*secondary
	ctr     *counters
	// schemaVer changes with every DDL on the table; lastWrite is the
	// commit sequence of the last transaction that wrote it. Both let a
	// commit detect that its snapshot of the table went stale.
	schemaVer uint64
	lastWrite uint64
	// cloneMu serialises Copy of the trees: btree.Copy writes to the source.
	cloneMu *sync.Mutex
	// made is the id of the catalog this version was made for by an
	// applier (Catalog.id; 0: none): a commit that takes that catalog over
	// may change the table's trees in place (applier.writable).
	made uint64
}

// counters are not transactional (like MySQL's): a number handed out is
// never handed out again, even if its transaction rolls back.
type counters struct {
	nextID   atomic.Uint64
	nextAuto atomic.Uint64
}

func bumpTo(c *atomic.Uint64, v uint64) {
	for {
		cur := c.Load()
		if cur >= v || c.CompareAndSwap(cur, v) {
			return
		}
	}
}

var btreeOpts = btree.Options{NoLocks: true, Degree: 32}

func newTable(def *TableDef, bind Binder) (*Table, error) {
	cmp, err := bind(def)
	if err != nil {
		return nil, fmt.Errorf("storage: table %s: %w", def.Name, err)
	}
	if len(cmp) != def.NumCols {
		panic(fmt.Sprintf("storage: table %s: %d comparators for %d columns", def.Name, len(cmp), def.NumCols))
	}
	s := newShape(def, cmp)
	t := &Table{shape: s, ctr: &counters{}, cloneMu: &sync.Mutex{}}
	t.primary = newRowTree(s)
	for i := range def.Indexes {
		t.indexes = append(t.indexes, newSecondary(s, def.Indexes[i].Cols))
	}
	t.ctr.nextID.Store(1)
	t.ctr.nextAuto.Store(1)
	return t, nil
}

// clone returns a writable copy sharing unchanged nodes (copy-on-write).
func (t *Table) clone() *Table {
	t.cloneMu.Lock()
	defer t.cloneMu.Unlock()
	c := *t
	c.made = 0
	c.primary = t.primary.Copy()
	c.indexes = make([]*secondary, len(t.indexes))
	for i, ix := range t.indexes {
		c.indexes[i] = ix.copy()
	}
	return &c
}

// shareTrees returns a writable version of t that shares its trees, for an
// applier that took over the committed catalog (applier.inPlace): its
// writes change the trees in place, but for the nodes that a copy made
// earlier (a frozen version's) still shares, which the trees copy on
// write as ever. t itself must not be read after.
func (t *Table) shareTrees() *Table {
	c := *t
	c.made = 0
	c.indexes = make([]*secondary, len(t.indexes))
	for i, ix := range t.indexes {
		x := *ix
		c.indexes[i] = &x
	}
	return &c
}

// Def returns the table's definition.
func (t *Table) Def() *TableDef { return t.shape.def }

// Name returns the table's name.
func (t *Table) Name() string { return t.shape.def.Name }

// Len returns the number of rows.
func (t *Table) Len() int { return t.primary.Len() }

// NextAuto returns the next AUTO_INCREMENT value.
func (t *Table) NextAuto() uint64 { return t.ctr.nextAuto.Load() }

// TakeAuto hands out the next AUTO_INCREMENT value.
func (t *Table) TakeAuto() uint64 { return t.ctr.nextAuto.Add(1) - 1 }

// TakeAutos hands out n consecutive AUTO_INCREMENT values and returns the
// first: the rows of one INSERT take consecutive values, whatever other
// inserts run beside it.
func (t *Table) TakeAutos(n uint64) uint64 { return t.ctr.nextAuto.Add(n) - n }

// BumpAuto makes sure the next AUTO_INCREMENT value is at least v.
func (t *Table) BumpAuto(v uint64) { bumpTo(&t.ctr.nextAuto, v) }

// snapshotTrees returns read-only copies of the trees, safe to iterate while
// the table is being written by its owner.
func (t *Table) snapshotTrees() (*rowTree, []*secondary) {
	t.cloneMu.Lock()
	defer t.cloneMu.Unlock()
	ix := make([]*secondary, len(t.indexes))
	for i, x := range t.indexes {
		ix[i] = x.copy()
	}
	return t.primary.Copy(), ix
}

// Snapshot returns a version of the table frozen as it is now: reading it
// is safe while the original is written.
func (t *Table) Snapshot() *Table {
	c := *t
	c.primary, c.indexes = t.snapshotTrees()
	c.cloneMu = &sync.Mutex{}
	return &c
}

// Scan calls fn for each row in primary key order until fn returns false.
func (t *Table) Scan(fn func(r *Row) bool) { t.primary.Scan(fn) }

// Get returns the row with the primary key (or row number) of key.
func (t *Table) Get(key *Row) (*Row, bool) {
	return t.primary.Get(key)
}

// IndexCount returns the number of secondary indexes.
func (t *Table) IndexCount() int { return len(t.indexes) }

// Seek makes a seek row over the first n key columns whose values are in
// vals (a full-width row). bound -1: before every row with that prefix; +1:
// after.
func Seek(vals []any, n int, bound int8) *Row {
	r := KeyRow(vals)
	r.ext().bound, r.ext().prefix = bound, uint8(n)
	return r
}

// AscendIndex calls fn for rows of index ix (-1: primary) from pivot on (nil:
// from the start) until fn returns false.
func (t *Table) AscendIndex(ix int, pivot *Row, fn func(r *Row) bool) {
	if ix >= 0 {
		t.indexes[ix].walk(t, t.primary, pivot, false, false, fn)
		return
	}
	t.primary.walk(pivot, false, fn)
}

// AscendIndexOnly is AscendIndex for a caller that reads no other column of
// the rows than the index's and the primary key's (IndexCovers): the other
// columns of the rows it gives may read as NULL and their row numbers as 0,
// where the index answers without reading the rows, as an index of integers
// does.
func (t *Table) AscendIndexOnly(ix int, pivot *Row, fn func(r *Row) bool) {
	if ix >= 0 {
		t.indexes[ix].walk(t, t.primary, pivot, false, true, fn)
		return
	}
	t.AscendIndex(ix, pivot, fn)
}

// CountRange returns how many rows of index ix (-1: the primary key) lie
// from lo on (nil: from the first) and not past hi (nil: to the last),
// where lo and hi are seek rows (Seek) or nil.
func (t *Table) CountRange(ix int, lo, hi *Row) int {
	if ix >= 0 {
		return t.indexes[ix].count(t, lo, hi)
	}
	return countRows(t.primary.walk, lo, hi, t.shape.comparePrimary)
}

// IndexCovers reports whether every column of cols (-1 stands for none) is
// one of index ix's or of the primary key's: what AscendIndexOnly gives.
func (t *Table) IndexCovers(ix int, cols []int) bool {
	if ix < 0 {
		return true // the primary tree holds the rows
	}
	def := t.shape.def
	for _, c := range cols {
		if c >= 0 && !slices.Contains(def.Indexes[ix].Cols, c) && !slices.Contains(def.PK, c) {
			return false
		}
	}
	return true
}

// DescendIndex is AscendIndex in reverse order, from pivot down (nil: from the end).
func (t *Table) DescendIndex(ix int, pivot *Row, fn func(r *Row) bool) {
	if ix >= 0 {
		t.indexes[ix].walk(t, t.primary, pivot, true, false, fn)
		return
	}
	t.primary.walk(pivot, true, fn)
}

// CompareCol compares two values of column col as the table's indexes do.
func (t *Table) CompareCol(col int, a, b any) int { return t.shape.compareCol(col, a, b) }

// CompareAt compares column col of r, not NULL, with v, not NULL, as the
// table's indexes do.
func (t *Table) CompareAt(r *Row, col int, v any) int {
	if x, xs, ok := r.intAt(col); ok {
		if y, ys, ok := intOf(v); ok && xs == ys {
			return compareBits(x, y, xs)
		}
	}
	return t.shape.compareCol(col, r.Value(col), v)
}

// FindRow finds a stored row equal in every column to vals: the way to
// identify a row of a table without a primary key. It uses the first index
// when there is one, and a scan otherwise.
func (t *Table) FindRow(vals []any) (*Row, bool) {
	if len(t.shape.def.PK) > 0 {
		return t.primary.Get(KeyRow(vals))
	}
	var found *Row
	match := func(r *Row) bool {
		for i, v := range vals {
			if t.shape.compareCol(i, r.Value(i), v) != 0 {
				return true
			}
		}
		found = r
		return false
	}
	if len(t.indexes) > 0 {
		cols := t.shape.def.Indexes[0].Cols
		pivot := Seek(vals, len(cols), -1)
		t.indexes[0].walk(t, t.primary, pivot, false, false, func(r *Row) bool {
			if t.shape.compareCols(cols, r, KeyRow(vals)) != 0 {
				return false
			}
			return match(r)
		})
	} else {
		t.primary.Scan(match)
	}
	return found, found != nil
}

// DuplicateError is a unique key violation. Existing is the row that holds
// the key already (ON DUPLICATE KEY UPDATE needs it).
type DuplicateError struct {
	Table    string
	Index    string // "PRIMARY" for the primary key
	Key      []any
	Existing *Row
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("storage: duplicate entry %v for key '%s.%s'", e.Key, e.Table, e.Index)
}

func (t *Table) keyOf(cols []int, r *Row) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		out[i] = r.Value(c)
	}
	return out
}

// checkUnique returns a *DuplicateError if r's key collides with a row other
// than the row numbered except.
func (t *Table) checkUnique(r *Row, except uint64, checkPK bool) error {
	def := t.shape.def
	if checkPK && len(def.PK) > 0 {
		if old, ok := t.primary.Get(r); ok && old.ID != except {
			return &DuplicateError{Table: def.Name, Index: "PRIMARY", Key: t.keyOf(def.PK, r), Existing: old}
		}
	}
	for i, ix := range def.Indexes {
		if !ix.Unique {
			continue
		}
		if err := t.checkUniqueIndex(i, r, except); err != nil {
			return err
		}
	}
	return nil
}

// checkUniqueIndex returns a *DuplicateError if r's key in index i, a
// unique one, is that of a row other than row number except.
func (t *Table) checkUniqueIndex(i int, r *Row, except uint64) error {
	if dup := t.indexDup(i, r, except); dup != nil {
		ix := t.shape.def.Indexes[i]
		return &DuplicateError{Table: t.shape.def.Name, Index: ix.Name, Key: t.keyOf(ix.Cols, r), Existing: dup}
	}
	return nil
}

// indexDup returns the row other than row number except whose key in index
// i (a unique one) is r's, if there is one.
func (t *Table) indexDup(i int, r *Row, except uint64) *Row {
	cols := t.shape.def.Indexes[i].Cols
	for _, c := range cols {
		if r.IsNull(c) {
			return nil // NULLs never collide in a unique index
		}
	}
	var dup *Row
	t.indexes[i].walk(t, t.primary, seekFrom(r, len(cols), -1), false, false, func(o *Row) bool {
		if t.shape.compareCols(cols, o, r) != 0 {
			return false
		}
		if o.ID != except {
			dup = o
			return false
		}
		return true
	})
	return dup
}

// keepTrees gives t, a new and empty version of old with the same columns
// (a reindex), copies of old's trees wherever they already order the rows
// as t's would: the primary tree when the primary key is the same, and then
// each index over the same columns, unique as before. It returns whether
// the primary tree was kept and, per index of t, whether that one was;
// the others are t's to build. Without the same primary key nothing is
// kept: an index's entries are ordered by the primary key after its columns.
func (t *Table) keepTrees(old *Table) (primary bool, kept []bool) {
	kept = make([]bool, len(t.indexes))
	if !slices.Equal(old.shape.def.PK, t.shape.def.PK) {
		return false, kept
	}
	old.cloneMu.Lock()
	defer old.cloneMu.Unlock()
	// The kept trees order with old's comparators, which are the same
	// functions: the columns and their types are unchanged.
	t.primary = old.primary.Copy()
	for i, ix := range t.shape.def.Indexes {
		for j, o := range old.shape.def.Indexes {
			if o.Unique == ix.Unique && slices.Equal(o.Cols, ix.Cols) {
				t.indexes[i], kept[i] = old.indexes[j].copy(), true
				break
			}
		}
	}
	return true, kept
}

func (t *Table) insertRow(r *Row) { t.insertRowHint(r, nil) }

// unshareTail makes the primary tree's nodes from the one holding from to
// the last copies of their own (see unshared), in t, a version its writer
// owns. Rows appended in key order fill the last leaf, which the B-tree
// splits in two halves that share its memory; the left half keeps all of
// it once the right one has moved on: copied, it holds only its rows.
func (t *Table) unshareTail(from *Row) {
	t.cloneMu.Lock()
	defer t.cloneMu.Unlock()
	c := t.primary.Copy()
	c.unshareFrom(from)
	t.primary = c
}

// insertRowHint is insertRow with search hints for the trees (hints[0]:
// the primary key, then the indexes; nil: none), which make inserts in
// key order cheap. Hints only speed a search up, whatever they hold.
func (t *Table) insertRowHint(r *Row, hints []btree.PathHint) {
	if _, replaced := t.primary.SetHint(r, hintAt(hints, 0)); replaced {
		panic(fmt.Sprintf("storage: table %s: insert replaced row %d", t.shape.def.Name, r.ID))
	}
	for i, ix := range t.indexes {
		ix.insert(t, r, hintAt(hints, i+1))
	}
}

func hintAt(hints []btree.PathHint, i int) *btree.PathHint {
	if i < len(hints) {
		return &hints[i]
	}
	return nil
}

// removeRow takes r out of every tree; hint, if not nil, is the path to r
// in the primary tree (see locate).
func (t *Table) removeRow(r *Row, hint *btree.PathHint) {
	if _, ok := t.primary.DeleteHint(r, hint); !ok {
		panic(fmt.Sprintf("storage: table %s: row %d missing from primary", t.shape.def.Name, r.ID))
	}
	for i, ix := range t.indexes {
		ix.remove(t, r, t.shape.def.Indexes[i].Name)
	}
}

// updateRow puts r, a new version of the stored row old (same row number),
// in its place. Where a tree's key of the row (the primary key; an index's
// columns, then the primary key) is unchanged, the entry is replaced in
// one step; elsewhere the old entry is removed and the new one added.
// hint, if not nil, is the path to old in the primary tree (see locate).
func (t *Table) updateRow(old, r *Row, hint *btree.PathHint) {
	if t.shape.comparePrimary(old, r) == 0 {
		if prev, ok := t.primary.SetHint(r, hint); !ok || prev != old {
			panic(fmt.Sprintf("storage: table %s: row %d not where the primary key has it", t.shape.def.Name, r.ID))
		}
	} else {
		if _, ok := t.primary.Delete(old); !ok {
			panic(fmt.Sprintf("storage: table %s: row %d missing from primary", t.shape.def.Name, old.ID))
		}
		if _, replaced := t.primary.Set(r); replaced {
			panic(fmt.Sprintf("storage: table %s: update replaced row %d", t.shape.def.Name, r.ID))
		}
	}
	for i, ix := range t.indexes {
		ix.update(t, old, r, t.shape.def.Indexes[i].Name)
	}
}

func lower(s string) string { return strings.ToLower(s) }

// Cursor walks the rows of one index (or the primary key) of a table frozen
// when the cursor was made, so the table's owner may write while it runs.
type Cursor struct {
	it      rowsIter
	started bool
	pivot   *Row
	valid   bool
	// An index of integers: its entries, where the walk starts, and the
	// frozen primary tree its rows are read from.
	ints   entryIter
	from   start
	lookup *pkLookup
	x      *secondary
	shape  *shape
}

// Cursor returns a cursor on index ix (-1: primary) starting at pivot (nil:
// at the first row).
func (t *Table) Cursor(ix int, pivot *Row) *Cursor {
	t.cloneMu.Lock()
	defer t.cloneMu.Unlock()
	if ix >= 0 && !t.indexes[ix].holdsRows() {
		x := t.indexes[ix].copy()
		c := &Cursor{pivot: pivot, x: x, shape: t.shape, from: start{none: true}}
		if x.ints != nil {
			c.ints = x.ints.iter()
			c.from = x.startAt(t.shape, pivot, false)
			c.lookup = x.lookup(t, t.primary.Copy())
		}
		return c
	}
	if ix >= 0 {
		it := t.indexes[ix].rows.Copy().Iter()
		return &Cursor{it: &it, pivot: pivot}
	}
	return &Cursor{it: t.primary.Copy().Iter(), pivot: pivot}
}

// Next returns the next row, or false at the end.
func (c *Cursor) Next() (*Row, bool) {
	if c.x != nil {
		return c.nextInt()
	}
	if !c.started {
		c.started = true
		if c.pivot != nil {
			c.valid = c.it.Seek(c.pivot)
		} else {
			c.valid = c.it.First()
		}
	} else if c.valid {
		c.valid = c.it.Next()
	}
	if !c.valid {
		return nil, false
	}
	return c.it.Item(), true
}

// nextInt is Next on an index of integers.
func (c *Cursor) nextInt() (*Row, bool) {
	if c.from.none {
		return nil, false
	}
	for {
		if !c.started {
			c.started = true
			if c.from.all {
				c.valid = c.ints.first()
			} else {
				c.valid = c.ints.seek(c.from.from)
			}
		} else if c.valid {
			c.valid = c.ints.next()
		}
		if !c.valid {
			return nil, false
		}
		r := c.lookup.row(c.ints.item().pk)
		if c.from.skip != nil {
			if c.shape.compareIndex(c.x.cols, r, c.from.skip) < 0 {
				continue
			}
			c.from.skip = nil
		}
		return r, true
	}
}

// Close releases the cursor.
func (c *Cursor) Close() {
	if c.ints != nil {
		c.ints.release()
		return
	}
	if c.x == nil {
		c.it.Release()
	}
}
