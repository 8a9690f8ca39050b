package storage

import (
	"errors"

	"github.com/tidwall/btree"

	"fmt"
	"github.com/miraj-db/miraj/internal/history"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// ErrNoTable is returned for an operation on a table that does not exist.
var ErrNoTable = errors.New("storage: no such table")

// ErrTableExists is returned when creating a table that exists.
var ErrTableExists = errors.New("storage: table already exists")

// ErrRowMissing is returned when an update or delete names a row that is not
// there: in replay, the sign of a log that does not match the tables.
var ErrRowMissing = errors.New("storage: row not found")

// Object is a named catalog object stored as the SQL layer gives it: a view,
// trigger, stored procedure or event definition.
type Object struct {
	Kind string
	Name string
	Data []byte
}

func objectKey(kind, name string) string { return kind + "\x00" + lower(name) }

// Catalog is one consistent version of a database: its tables and objects.
// A published Catalog is never modified once frozen (DB.Snapshot); one
// that no one froze may be taken over by a commit, which changes its
// trees in place and publishes the next one (see DB.Read).
type Catalog struct {
	tables tableSet
	// objects is shared with the catalog this one was copied from until
	// an applier changes it (applier.ownObjects): objects change seldom.
	objects map[string]*Object
	options []byte
	baseID  []byte
	// seq counts the transactions applied; rows carry the seq that wrote them.
	seq uint64
	// refs: who may read a committed catalog's trees (see DB.Read).
	refs atomic.Int64
	// id tells catalogs apart (catalogIDs): the tables made for this one
	// carry it (Table.made). A catalog taken over by a commit gives its id
	// to the catalog that commit publishes (DB.commitWith), which holds the
	// tables made for it alone, as it is never read again.
	id uint64
	// history: the epoch marks of the journal that produced this catalog
	// (OpEpoch frames), shared between versions: History.Append copies.
	history history.History
	// defs: see Defs.
	defs uint64
}

// catalogIDs numbers the catalogs of the process; defsSeq their
// definitions (Defs).
var catalogIDs, defsSeq atomic.Uint64

// Defs identifies the catalog's definitions: its tables' names and
// definitions, its objects and options. A catalog whose definitions differ
// from another's has other Defs; versions that only changed rows (or
// counters) keep them. What is worked out from the definitions alone may
// be kept under it.
func (c *Catalog) Defs() uint64 { return c.defs }

func newCatalog() *Catalog {
	return &Catalog{objects: map[string]*Object{}, id: catalogIDs.Add(1), defs: defsSeq.Add(1)}
}

// shallowClone returns a catalog with the same tables, whose set of tables
// may be changed; its objects are shared (see objects).
func (c *Catalog) shallowClone() *Catalog {
	return &Catalog{tables: c.tables.clone(), objects: c.objects, options: c.options, baseID: c.baseID, seq: c.seq, history: c.history, id: catalogIDs.Add(1), defs: c.defs}
}

// Table returns the table called name (case-insensitive).
func (c *Catalog) Table(name string) (*Table, bool) {
	return c.tables.get(lower(name))
}

// TableNames returns the tables' names, sorted.
func (c *Catalog) TableNames() []string {
	out := make([]string, 0, c.tables.len())
	for _, e := range c.tables.e {
		out = append(out, e.t.Name())
	}
	sort.Strings(out)
	return out
}

// Object returns the object of that kind and name (case-insensitive).
func (c *Catalog) Object(kind, name string) (*Object, bool) {
	o, ok := c.objects[objectKey(kind, name)]
	return o, ok
}

// HasObjects says whether the catalog holds an object of that kind.
func (c *Catalog) HasObjects(kind string) bool {
	for _, o := range c.objects {
		if o.Kind == kind {
			return true
		}
	}
	return false
}

// EachTable calls fn for every table, in no order, until fn returns false.
func (c *Catalog) EachTable(fn func(t *Table) bool) {
	for _, e := range c.tables.e {
		if !fn(e.t) {
			return
		}
	}
}

// Objects returns the objects of a kind, sorted by name.
func (c *Catalog) Objects(kind string) []*Object {
	var out []*Object
	for _, o := range c.objects {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// History returns the epoch marks of the journal this catalog was built from.
func (c *Catalog) History() history.History { return c.history }

// BaseID returns the database's identity (see Op.BaseID).
func (c *Catalog) BaseID() []byte { return c.baseID }

// Options returns the database options recorded at creation.
func (c *Catalog) Options() []byte { return c.options }

// schemaSeq numbers table definitions so a commit can tell a table's
// definition changed since its snapshot.
var schemaSeq atomic.Uint64

// applier executes ops on a private copy of a catalog. It is the one apply
// function: commits, transactions' own views, checkpoint loading and journal
// replay (recovery, and replicas) all go through apply.
type applier struct {
	cat   *Catalog
	owned ownedTables // tables cloned by this applier, safe to modify
	ver   uint64      // stamped on the rows written
	bind  Binder
	// made lists the rows a transaction's view stored (ver pendingVer), so
	// that a commit adopting the view's tables can stamp them (Tx.adoptable).
	made []*Row
	// hints are search hints for the trees of hinted, the table inserted
	// into last (Table.insertRowHint).
	hints  []btree.PathHint
	hinted *Table
	// tail is the first of the rows inserted into hinted after every row
	// it held (in key order) since its tail was last unshared, and
	// appended how many there are (see Table.unshareTail).
	tail     *Row
	appended int
	// from is the id of the catalog the applier started from.
	from uint64
	// inPlace: the applier took over the committed catalog (a commit no
	// one's read holds, DB.commitWith): the tables it writes that were
	// made for that catalog (no older one holds them) share their trees
	// with it and change them in place; undo records how to put the rows
	// back should the commit fail.
	inPlace bool
	undo    []undoRow
	// objectsOwned: cat.objects is the applier's own copy (ownObjects).
	objectsOwned bool
	// adopt is a row made for this commit alone (DB.CommitRow), stored as
	// it is rather than copied (rowFor).
	adopt *Row
}

// rowFor returns the row to store for o, numbered id: o itself when it is
// the compact row the commit made for this write (adopt), else a copy
// (o may be a transaction's, or a journal's decoded row).
func (a *applier) rowFor(id uint64, o *Row) *Row {
	if o == a.adopt && o.ID == id && o.vf&flagExt == 0 {
		a.adopt = nil
		return o
	}
	return copyRow(id, o)
}

// ownObjects gives the applier's catalog its own copy of the objects
// before it changes them.
func (a *applier) ownObjects() {
	if a.objectsOwned {
		return
	}
	a.cat.objects = maps.Clone(a.cat.objects)
	if a.cat.objects == nil {
		a.cat.objects = map[string]*Object{}
	}
	a.objectsOwned = true
}

// undoRow puts a table's row back as it was before an in-place change:
// row (nil: none) where now is (nil: none).
type undoRow struct {
	t        *Table
	row, now *Row
}

// changedInPlace records that t's row old (nil: none) became now (nil:
// none), for undoInPlace.
func (a *applier) changedInPlace(t *Table, old, now *Row) {
	if a.inPlace {
		a.undo = append(a.undo, undoRow{t: t, row: old, now: now})
	}
}

// undoInPlace reverses the in-place changes, last first: the trees are
// again those of the catalog taken over.
func (a *applier) undoInPlace() {
	for i := len(a.undo) - 1; i >= 0; i-- {
		u := a.undo[i]
		switch {
		case u.row == nil:
			u.t.removeRow(u.now, nil)
		case u.now == nil:
			u.t.insertRow(u.row)
		default:
			u.t.updateRow(u.now, u.row, nil)
		}
	}
	a.undo = nil
}

// tailRows is how many rows appended to a table in key order make the
// applier unshare its primary tree's tail: a bulk load's leaves use the
// memory they hold, at the price of copying them once more (tests lower
// it).
var tailRows = 256

// hintsFor returns the search hints for inserts into t.
func (a *applier) hintsFor(t *Table) []btree.PathHint {
	if a.hinted != t {
		a.hinted = t
		if n := 1 + len(t.indexes); cap(a.hints) >= n {
			a.hints = a.hints[:n]
			clear(a.hints)
		} else {
			a.hints = make([]btree.PathHint, n)
		}
		a.tail, a.appended = nil, 0
	}
	return a.hints
}

// noteAppend counts r, just inserted into t after every row t held, and
// unshares t's tail once tailRows rows were.
func (a *applier) noteAppend(t *Table, r *Row) {
	if a.tail == nil {
		a.tail = r
	}
	if a.appended++; a.appended >= tailRows {
		t.unshareTail(a.tail)
		a.tail, a.appended = nil, 0
	}
}

func newApplier(base *Catalog, ver uint64, bind Binder) *applier {
	return &applier{cat: base.shallowClone(), from: base.id, ver: ver, bind: bind}
}

// commitAppliers holds the appliers of ended commits (DB.commitWith),
// which no one keeps past its commit: one serves the next commit with the
// lists it grew (owned tables, undo records, search hints).
var commitAppliers sync.Pool

// commitApplier is newApplier for a commit, which gives it back
// (endCommitApplier) once it is published or failed.
func commitApplier(base *Catalog, ver uint64, bind Binder) *applier {
	a, ok := commitAppliers.Get().(*applier)
	if !ok {
		return newApplier(base, ver, bind)
	}
	a.cat, a.from, a.ver, a.bind = base.shallowClone(), base.id, ver, bind
	return a
}

// endCommitApplier forgets what a's commit held and keeps a for the next;
// a large commit's applier is left to the collector.
func endCommitApplier(a *applier) {
	if a.owned.many != nil || len(a.made) > 0 || cap(a.undo) > 64 || cap(a.hints) > 64 {
		return
	}
	clear(a.owned.few)
	clear(a.undo)
	*a = applier{owned: ownedTables{few: a.owned.few[:0]}, undo: a.undo[:0], hints: a.hints[:0]}
	commitAppliers.Put(a)
}

// ownedTables is a set of tables: a short list for the one or few tables
// a commit writes, a map once there are many.
type ownedTables struct {
	few  []*Table
	many map[*Table]bool
}

const fewOwned = 8

func (o *ownedTables) has(t *Table) bool {
	if o.many != nil {
		return o.many[t]
	}
	for _, x := range o.few {
		if x == t {
			return true
		}
	}
	return false
}

func (o *ownedTables) add(t *Table) {
	switch {
	case o.many != nil:
		o.many[t] = true
	case len(o.few) < fewOwned:
		o.few = append(o.few, t)
	default:
		o.many = make(map[*Table]bool, 2*fewOwned)
		for _, x := range o.few {
			o.many[x] = true
		}
		o.many[t] = true
		o.few = nil
	}
}

// release forgets which tables (and objects) are private, so that what was
// built so far stays frozen (a savepoint keeps it) and later writes clone
// again.
func (a *applier) release() { a.owned, a.objectsOwned = ownedTables{}, false }

func (a *applier) writable(name string) (*Table, error) {
	key := lower(name)
	t, ok := a.cat.tables.get(key)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoTable, name)
	}
	if !a.owned.has(t) {
		if a.inPlace && t.made == a.from {
			// Made for the catalog taken over: only it holds the trees.
			// A table it shares with an older catalog is copied.
			t = t.shareTrees()
		} else {
			t = t.clone()
		}
		t.made = a.cat.id
		a.cat.tables.set(key, t)
		a.owned.add(t)
	}
	return t, nil
}

// keep records a row stored by a transaction's view.
func (a *applier) keep(r *Row) {
	if a.ver == pendingVer {
		a.made = append(a.made, r)
	}
}

func (a *applier) put(t *Table) {
	t.made = a.cat.id
	key := lower(t.Name())
	if old, ok := a.cat.tables.get(key); !ok || old.shape != t.shape {
		// A table of another definition (a transaction's reindexed
		// table adopted by its commit, which applies no op for it).
		a.cat.defs = defsSeq.Add(1)
	}
	a.cat.tables.set(key, t)
	a.owned.add(t)
}

func toUint64(v any) (uint64, bool) {
	switch x := v.(type) {
	case int8:
		return uint64(max(x, 0)), true
	case int16:
		return uint64(max(x, 0)), true
	case int32:
		return uint64(max(x, 0)), true
	case int64:
		return uint64(max(x, 0)), true
	case int:
		return uint64(max(x, 0)), true
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case uint:
		return uint64(x), true
	case float32:
		return uint64(max(x, 0)), true
	case float64:
		return uint64(max(x, 0)), true
	}
	return 0, false
}

func (a *applier) stamp(t *Table, r *Row) {
	bumpTo(&t.ctr.nextID, r.ID+1)
	if ac := t.shape.def.AutoCol; ac >= 0 {
		if v, ok := toUint64(r.Value(ac)); ok && v > 0 {
			bumpTo(&t.ctr.nextAuto, v+1)
		}
	}
	t.lastWrite = a.ver
}

// locate finds the stored row that op.Old (or op.Row for updates) designates.
func (t *Table) locate(old *Row) (*Row, bool) { return t.locateHint(old, nil) }

// locateHint is locate leaving in hint (if not nil) the path to the row,
// which makes the update or removal that follows cheaper.
func (t *Table) locateHint(old *Row, hint *btree.PathHint) (*Row, bool) {
	if len(t.shape.def.PK) == 0 {
		return t.primary.GetHint(&Row{ID: old.ID}, hint)
	}
	return t.primary.GetHint(old, hint)
}

// sameStructure reports whether two definitions order and index rows alike.
func sameStructure(a, b *TableDef) bool {
	if lower(a.Name) != lower(b.Name) || a.NumCols != b.NumCols || a.AutoCol != b.AutoCol || !slices.Equal(a.PK, b.PK) || len(a.Indexes) != len(b.Indexes) {
		return false
	}
	for i := range a.Indexes {
		if !slices.Equal(a.Indexes[i].Cols, b.Indexes[i].Cols) || a.Indexes[i].Unique != b.Indexes[i].Unique {
			return false
		}
	}
	return true
}

// insert applies an OpInsert. checkPK false: the caller has just found no
// row with the primary key in the same table version.
func (a *applier) insert(op *Op, checkPK bool) error {
	t, err := a.writable(op.Table)
	if err != nil {
		return err
	}
	r := a.rowFor(op.Row.ID, op.Row)
	r.setVersion(a.ver)
	if n := r.NumValues(); n != t.shape.def.NumCols {
		return fmt.Errorf("%w: insert into %s with %d values for %d columns", ErrDecode, op.Table, n, t.shape.def.NumCols)
	}
	if err := t.checkUnique(r, r.ID, checkPK); err != nil {
		return err
	}
	if len(t.shape.def.PK) == 0 {
		if _, exists := t.primary.Get(r); exists {
			return fmt.Errorf("storage: table %s: row number %d already used", op.Table, r.ID)
		}
	}
	hints := a.hintsFor(t)
	last, held := t.primary.Max()
	appended := !held || t.shape.comparePrimary(r, last) > 0
	t.insertRowHint(r, hints)
	a.changedInPlace(t, nil, r)
	if appended && !a.inPlace {
		a.noteAppend(t, r)
	}
	a.stamp(t, r)
	a.keep(r)
	return nil
}

func (a *applier) apply(op *Op) error {
	if op.Kind.changesDefs() {
		a.cat.defs = defsSeq.Add(1)
	}
	switch op.Kind {
	case OpInsert:
		return a.insert(op, true)
	case OpUpdate:
		t, err := a.writable(op.Table)
		if err != nil {
			return err
		}
		var hint btree.PathHint
		old, ok := t.locateHint(op.Old, &hint)
		if !ok {
			return fmt.Errorf("%w: update in %s", ErrRowMissing, op.Table)
		}
		r := a.rowFor(old.ID, op.Row)
		r.setVersion(a.ver)
		if n := r.NumValues(); n != t.shape.def.NumCols {
			return fmt.Errorf("%w: update of %s with %d values for %d columns", ErrDecode, op.Table, n, t.shape.def.NumCols)
		}
		// A row that keeps its primary key cannot take another's.
		if err := t.checkUnique(r, old.ID, t.shape.comparePrimary(old, r) != 0); err != nil {
			return err
		}
		t.updateRow(old, r, &hint)
		a.changedInPlace(t, old, r)
		a.stamp(t, r)
		a.keep(r)
	case OpDelete:
		t, err := a.writable(op.Table)
		if err != nil {
			return err
		}
		var hint btree.PathHint
		old, ok := t.locateHint(op.Old, &hint)
		if !ok {
			return fmt.Errorf("%w: delete in %s", ErrRowMissing, op.Table)
		}
		t.removeRow(old, &hint)
		a.changedInPlace(t, old, nil)
		t.lastWrite = a.ver
	case OpCreateTable:
		if _, exists := a.cat.tables.get(lower(op.Def.Name)); exists {
			return fmt.Errorf("%w: %s", ErrTableExists, op.Def.Name)
		}
		t, err := newTable(op.Def, a.bind)
		if err != nil {
			return err
		}
		bumpTo(&t.ctr.nextID, op.NextID)
		bumpTo(&t.ctr.nextAuto, op.NextAuto)
		t.schemaVer = schemaSeq.Add(1)
		t.lastWrite = a.ver
		a.put(t)
	case OpDropTable:
		if _, ok := a.cat.tables.get(lower(op.Table)); !ok {
			return fmt.Errorf("%w: %s", ErrNoTable, op.Table)
		}
		a.cat.tables.del(lower(op.Table))
	case OpRenameTable:
		t, ok := a.cat.tables.get(lower(op.Table))
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoTable, op.Table)
		}
		if _, exists := a.cat.tables.get(lower(op.NewName)); exists && lower(op.NewName) != lower(op.Table) {
			return fmt.Errorf("%w: %s", ErrTableExists, op.NewName)
		}
		def := *t.shape.def
		def.Name = op.NewName
		n := t.clone()
		n.shape = newShape(&def, t.shape.cmp)
		n.schemaVer = schemaSeq.Add(1)
		n.lastWrite = a.ver
		a.cat.tables.del(lower(op.Table))
		a.put(n)
	case OpAlterTable, OpTruncate:
		old, ok := a.cat.tables.get(lower(op.Table))
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoTable, op.Table)
		}
		def := op.Def
		if op.Kind == OpTruncate {
			def = old.shape.def
		}
		t, err := newTable(def, a.bind)
		if err != nil {
			return err
		}
		bumpTo(&t.ctr.nextID, old.ctr.nextID.Load())
		if op.Kind == OpAlterTable {
			bumpTo(&t.ctr.nextAuto, old.ctr.nextAuto.Load())
		}
		t.schemaVer = schemaSeq.Add(1)
		t.lastWrite = a.ver
		a.cat.tables.del(lower(op.Table))
		a.put(t)
	case OpSetMeta:
		t, err := a.writable(op.Table)
		if err != nil {
			return err
		}
		if !sameStructure(t.shape.def, op.Def) {
			return fmt.Errorf("storage: table %s: a definition change that moves columns or keys must rewrite the table", op.Table)
		}
		cmp, err := a.bind(op.Def)
		if err != nil {
			return err
		}
		// The trees keep ordering with the previous comparators, which
		// are the same functions: the columns and their types are unchanged.
		t.shape = newShape(op.Def, cmp)
		t.schemaVer = schemaSeq.Add(1)
		t.lastWrite = a.ver
	case OpReindex:
		old, ok := a.cat.tables.get(lower(op.Table))
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoTable, op.Table)
		}
		if old.shape.def.NumCols != op.Def.NumCols {
			return fmt.Errorf("storage: table %s: a reindex cannot change the columns", op.Table)
		}
		t, err := newTable(op.Def, a.bind)
		if err != nil {
			return err
		}
		// The same rows (the same Row values: versions and row numbers
		// unchanged), ordered and indexed by the new definition. Trees
		// that already order them so are kept (copy-on-write): adding an
		// index builds that index only, dropping one builds nothing.
		primary, kept := t.keepTrees(old)
		var dupErr error
		if !primary {
			old.primary.Scan(func(r *Row) bool {
				if dupErr = t.checkUnique(r, r.ID, true); dupErr != nil {
					return false
				}
				t.insertRow(r)
				return true
			})
			if dupErr != nil {
				return dupErr
			}
		}
		for i, ix := range t.indexes {
			switch {
			case !primary || kept[i]:
			case op.Def.Indexes[i].Unique:
				// Row by row, each checked against those before it.
				old.primary.Scan(func(r *Row) bool {
					if dupErr = t.checkUniqueIndex(i, r, r.ID); dupErr != nil {
						return false
					}
					ix.insert(t, r, nil)
					return true
				})
			default:
				ix.build(t)
			}
			if dupErr != nil {
				return dupErr
			}
		}
		t.ctr = old.ctr
		t.schemaVer = schemaSeq.Add(1)
		t.lastWrite = a.ver
		a.cat.tables.del(lower(op.Table))
		a.put(t)
	case OpSetCounters:
		t, ok := a.cat.tables.get(lower(op.Table))
		if !ok {
			return fmt.Errorf("%w: %s", ErrNoTable, op.Table)
		}
		bumpTo(&t.ctr.nextID, op.NextID)
		if op.NextAuto > 0 {
			t.ctr.nextAuto.Store(op.NextAuto)
		}
	case OpPutObject:
		a.ownObjects()
		a.cat.objects[objectKey(op.ObjKind, op.ObjName)] = &Object{Kind: op.ObjKind, Name: op.ObjName, Data: op.Data}
	case OpDeleteObject:
		a.ownObjects()
		delete(a.cat.objects, objectKey(op.ObjKind, op.ObjName))
	case OpDatabase:
		a.cat.options = op.Data
		if len(op.BaseID) > 0 {
			a.cat.baseID = op.BaseID
		}
	case OpEpoch:
		h, err := a.cat.history.Append(op.Mark)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrDecode, err)
		}
		a.cat.history = h
	default:
		panic(fmt.Sprintf("storage: apply of unknown op kind %d", op.Kind))
	}
	return nil
}
