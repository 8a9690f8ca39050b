package sqlserver

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/storage"
)

// Table is a table as go-mysql-server sees it: a name and a definition; the
// rows always come from the session's transaction.
type Table struct {
	db     *Database
	info   *tabledef.Info
	lookup *sql.IndexLookup
	temp   bool // a session temporary table
	// live: reads see the statement's own writes (foreign key checks
	// between rows of one statement), not the table frozen at its start.
	live bool
}

// tx returns the session's transaction that holds this table.
func (t *Table) tx(ctx *sql.Context) *storage.Tx {
	if t.temp {
		s := sessionOf(ctx)
		return s.storageTx(s.tempDB(t.db.Name(), true))
	}
	return t.db.tx(ctx)
}

// IsTemporary reports whether this is a session temporary table.
func (t *Table) IsTemporary() bool { return t.temp }

var (
	_ sql.Table                 = (*Table)(nil)
	_ sql.IndexAddressableTable = (*Table)(nil)
	_ sql.IndexedTable          = (*Table)(nil)
	_ sql.InsertableTable       = (*Table)(nil)
	_ sql.UpdatableTable        = (*Table)(nil)
	_ sql.DeletableTable        = (*Table)(nil)
	_ sql.ReplaceableTable      = (*Table)(nil)
	_ sql.TruncateableTable     = (*Table)(nil)
	_ sql.AutoIncrementTable    = (*Table)(nil)
	_ sql.AlterableTable        = (*Table)(nil)
	_ sql.IndexAlterableTable   = (*Table)(nil)
	_ sql.CheckTable            = (*Table)(nil)
	_ sql.CheckAlterableTable   = (*Table)(nil)
	_ sql.PrimaryKeyTable       = (*Table)(nil)
	_ sql.CommentedTable        = (*Table)(nil)
	_ sql.TemporaryTable        = (*Table)(nil)
)

func (t *Table) Name() string                           { return t.info.Def.Name }
func (t *Table) String() string                         { return t.info.Def.Name }
func (t *Table) Schema() sql.Schema                     { return t.info.SchemaIn(t.db.Name()).Schema }
func (t *Table) PrimaryKeySchema() sql.PrimaryKeySchema { return t.info.SchemaIn(t.db.Name()) }
func (t *Table) Collation() sql.CollationID             { return t.info.Collation() }
func (t *Table) Comment() string                        { return t.info.Meta.Comment }

// current returns the table as the session's transaction sees it now.
func (t *Table) current(ctx *sql.Context) (*storage.Tx, *storage.Table, error) {
	tx := t.tx(ctx)
	st, ok := tx.Table(t.Name())
	if !ok {
		return nil, nil, sql.ErrTableNotFound.New(t.Name())
	}
	return tx, st, nil
}

type partition struct{ lookup *sql.IndexLookup }

func (p partition) Key() []byte { return []byte("p") }

type partitionIter struct {
	p    partition
	done bool
}

func (it *partitionIter) Next(*sql.Context) (sql.Partition, error) {
	if it.done {
		return nil, io.EOF
	}
	it.done = true
	return it.p, nil
}

func (it *partitionIter) Close(*sql.Context) error { return nil }

func (t *Table) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return &partitionIter{p: partition{lookup: t.lookup}}, nil
}

func (t *Table) LookupPartitions(ctx *sql.Context, lookup sql.IndexLookup) (sql.PartitionIter, error) {
	return &partitionIter{p: partition{lookup: &lookup}}, nil
}

func (t *Table) IndexedAccess(ctx *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	nt := *t
	nt.lookup = &lookup
	return &nt
}

func (t *Table) PreciseMatch() bool { return true }

func (t *Table) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	tx, st, err := t.current(ctx)
	if err != nil {
		return nil, err
	}
	if !t.live {
		if f, ok := sessionOf(ctx).frozenTable(frozenKey{tx: tx, table: strings.ToLower(t.Name())}); ok {
			st = f
		}
	}
	lc := lockClause{}
	if !t.temp {
		lc = sessionOf(ctx).lockClause(ctx)
	}
	if lc.mode != 0 {
		// A locking read walks the latest committed table (with the
		// transaction's own writes), not its snapshot.
		if st, err = tx.LatestTable(t.Name()); err != nil {
			return nil, sessionOf(ctx).lockError(ctx, err)
		}
	}
	src, err := t.rowSource(st, p)
	if err != nil || lc.mode == 0 {
		return src, err
	}
	return &lockingIter{src: src, tx: tx, table: t.Name(), lc: lc}, nil
}

// rowSource is an iterator over stored rows: a scan or an index range.
type rowSource interface {
	sql.RowIter
	next() (*storage.Row, error)
}

func (t *Table) rowSource(st *storage.Table, p sql.Partition) (rowSource, error) {
	part, _ := p.(partition)
	if part.lookup == nil || part.lookup.Index == nil {
		return &scanIter{cur: st.Cursor(-1, nil)}, nil
	}
	if part.lookup.IsEmptyRange {
		// Contradictory conditions (v1 < 4 AND v1 >= 19): no row.
		return emptyIter{}, nil
	}
	idx, ok := part.lookup.Index.(*Index)
	if !ok {
		return nil, fmt.Errorf("sqlserver: lookup on a foreign index %T", part.lookup.Index)
	}
	ranges, ok := part.lookup.Ranges.(sql.MySQLRangeCollection)
	if !ok {
		return nil, fmt.Errorf("sqlserver: unsupported range type %T", part.lookup.Ranges)
	}
	return newRangeIter(st, idx, ranges), nil
}

// emptyIter returns no row.
type emptyIter struct{}

func (emptyIter) Next(*sql.Context) (sql.Row, error) { return nil, io.EOF }
func (emptyIter) next() (*storage.Row, error)        { return nil, io.EOF }
func (emptyIter) Close(*sql.Context) error           { return nil }

// scanIter returns every row in primary key order.
type scanIter struct{ cur *storage.Cursor }

func (it *scanIter) Next(*sql.Context) (sql.Row, error) {
	r, err := it.next()
	if err != nil {
		return nil, err
	}
	return sql.Row(r.Values()), nil
}

func (it *scanIter) next() (*storage.Row, error) {
	r, ok := it.cur.Next()
	if !ok {
		return nil, io.EOF
	}
	return r, nil
}

// lockingIter locks each row its source yields (SELECT … FOR UPDATE / FOR
// SHARE) and returns the row's version read under the lock; rows skipped
// (SKIP LOCKED) or deleted while it waited are left out.
type lockingIter struct {
	src   rowSource
	tx    *storage.Tx
	table string
	lc    lockClause
}

func (it *lockingIter) Next(ctx *sql.Context) (sql.Row, error) {
	s := sessionOf(ctx)
	for {
		r, err := it.src.next()
		if err != nil {
			return nil, err
		}
		req := storage.LockRequest{Mode: it.lc.mode, Wait: it.lc.wait, Timeout: s.lockWaitTimeout(ctx)}
		row, ok, err := it.tx.LockRow(ctx, it.table, r, req)
		if err != nil {
			return nil, s.lockError(ctx, err)
		}
		if !ok {
			continue
		}
		if rng, isRange := it.src.(*rangeIter); isRange && row != r {
			// Changed since the walk began (while this transaction
			// waited, or just before): the index range must hold for the
			// version read, as the planner may rely on it alone.
			if in, _ := rng.check(row); !in {
				continue
			}
		}
		return sql.Row(row.Values()), nil
	}
}

func (it *lockingIter) Close(ctx *sql.Context) error { return it.src.Close(ctx) }

func (it *scanIter) Close(*sql.Context) error { it.cur.Close(); return nil }

func (t *Table) GetIndexes(ctx *sql.Context) ([]sql.Index, error) {
	var out []sql.Index
	def := t.info.Def
	if len(def.PK) > 0 {
		out = append(out, t.newIndex("PRIMARY", -1, def.PK, true, ""))
	}
	for i, ix := range def.Indexes {
		out = append(out, t.newIndex(ix.Name, i, ix.Cols, ix.Unique, t.info.Meta.Indexes[i].Comment))
	}
	return out, nil
}

// editor carries out a statement's writes in the session's transaction.
// A statement that fails is rolled back to where it began.
type editor struct {
	t      *Table
	tx     *storage.Tx
	sp     *storage.Savepoint
	sess   *Session
	frozen bool // this editor froze its table for the statement
	active bool // between StatementBegin and the end of the statement
}

func (e *editor) key() frozenKey { return frozenKey{tx: e.tx, table: strings.ToLower(e.t.Name())} }

func (e *editor) thaw() {
	if e.frozen {
		e.sess.unfreeze(e.key())
		e.frozen = false
	}
	if e.active {
		e.sess.writing--
		e.active = false
	}
}

func (t *Table) editor(ctx *sql.Context) *editor {
	return &editor{t: t, tx: t.tx(ctx), sess: sessionOf(ctx)}
}

func (t *Table) Inserter(ctx *sql.Context) sql.RowInserter { return t.editor(ctx) }
func (t *Table) Updater(ctx *sql.Context) sql.RowUpdater   { return t.editor(ctx) }
func (t *Table) Deleter(ctx *sql.Context) sql.RowDeleter   { return t.editor(ctx) }
func (t *Table) Replacer(ctx *sql.Context) sql.RowReplacer { return t.editor(ctx) }

func (e *editor) StatementBegin(ctx *sql.Context) {
	sp := e.tx.Savepoint()
	e.sp = &sp
	if !e.active {
		e.sess.writing++
		e.active = true
	}
	if st, ok := e.tx.Table(e.t.Name()); ok && !e.frozen {
		e.sess.freeze(e.key(), st)
		e.frozen = true
	}
}

func (e *editor) DiscardChanges(ctx *sql.Context, _ error) error {
	if e.sp != nil {
		e.tx.RollbackTo(*e.sp)
		e.sp = nil
	}
	e.thaw()
	return nil
}

func (e *editor) StatementComplete(ctx *sql.Context) error { e.sp = nil; e.thaw(); return nil }
func (e *editor) Close(*sql.Context) error                 { e.thaw(); return nil }

func (e *editor) dupError(err error) error {
	var dup *storage.DuplicateError
	if !errors.As(err, &dup) {
		return mysqlerr.From(err)
	}
	parts := make([]string, len(dup.Key))
	for i, v := range dup.Key {
		parts[i] = fmt.Sprint(v)
	}
	key := "[" + strings.Join(parts, ",") + "]"
	e.sess.lastDupIndex = dup.Index
	if dup.Index != "PRIMARY" {
		return sql.NewUniqueKeyErr(key, false, sql.Row(dup.Existing.Values()))
	}
	return sql.NewUniqueKeyErr(key, true, sql.Row(dup.Existing.Values()))
}

// lockForWrite takes the row's exclusive lock before it is updated or
// deleted: the write waits for others' locking reads and writes of it.
func (e *editor) lockForWrite(ctx *sql.Context, row sql.Row) error {
	if e.t.temp {
		return nil
	}
	if err := e.tx.LockForWrite(ctx, e.t.Name(), row, e.sess.lockWaitTimeout(ctx)); err != nil {
		return e.sess.lockError(ctx, err)
	}
	return nil
}

func (e *editor) Insert(ctx *sql.Context, row sql.Row) error {
	e.sess.ins.calls++
	vals := append([]any(nil), row...)
	if _, err := e.tx.Insert(e.t.Name(), vals); err != nil {
		noteSameRow(e.sess, vals, err)
		noteReplaceDup(e.sess, err)
		return e.dupError(err)
	}
	noteReplaced(e.sess)
	return nil
}

func (e *editor) Update(ctx *sql.Context, old, new sql.Row) error {
	if rt := upsertTriggers(e.sess, e.t); rt != nil {
		return rt.update(ctx, old, new, e.update)
	}
	return e.update(ctx, old, new)
}

func (e *editor) update(ctx *sql.Context, old, new sql.Row) error {
	if err := e.lockForWrite(ctx, old); err != nil {
		return err
	}
	if err := e.tx.Update(e.t.Name(), old, append([]any(nil), new...)); err != nil {
		return e.dupError(err)
	}
	return nil
}

func (e *editor) Delete(ctx *sql.Context, row sql.Row) error {
	if rt := replaceTriggers(e.sess, e.t); rt != nil {
		return rt.delete(ctx, row, e.delete)
	}
	return e.delete(ctx, row)
}

func (e *editor) delete(ctx *sql.Context, row sql.Row) error {
	if err := e.lockForWrite(ctx, row); err != nil {
		return err
	}
	err := e.tx.Delete(e.t.Name(), row)
	if errors.Is(err, storage.ErrRowMissing) {
		if deletedAlready(e.sess, e.t.Name()) {
			return nil
		}
		return sql.ErrDeleteRowNotFound.New()
	}
	if err == nil {
		noteDeleted(e.sess, e.t.Name())
	}
	return mysqlerr.From(err)
}

func (t *Table) Truncate(ctx *sql.Context) (int, error) {
	tx, st, err := t.current(ctx)
	if err != nil {
		return 0, err
	}
	n := st.Len()
	return n, mysqlerr.From(tx.Truncate(t.Name()))
}

func (t *Table) PeekNextAutoIncrementValue(ctx *sql.Context) (uint64, error) {
	_, st, err := t.current(ctx)
	if err != nil {
		return 0, err
	}
	return st.NextAuto(), nil
}

// GetNextAutoIncrementValue hands out a value (never handed out again, as in
// MySQL) when none is given, and moves the counter past a given value.
func (t *Table) GetNextAutoIncrementValue(ctx *sql.Context, insertVal any) (uint64, error) {
	_, st, err := t.current(ctx)
	if err != nil {
		return 0, err
	}
	if insertVal == nil {
		return st.TakeAuto(), nil
	}
	v, _, err := typesUint64(ctx, insertVal)
	if err != nil {
		return 0, err
	}
	st.BumpAuto(v + 1)
	return v, nil
}

func (t *Table) AutoIncrementSetter(ctx *sql.Context) sql.AutoIncrementSetter {
	return &autoSetter{t: t}
}

type autoSetter struct{ t *Table }

func (a *autoSetter) SetAutoIncrementValue(ctx *sql.Context, v uint64) error {
	return mysqlerr.From(a.t.tx(ctx).SetAutoIncrement(a.t.Name(), v))
}

func (a *autoSetter) AcquireAutoIncrementLock(ctx *sql.Context) (func(), error) {
	return func() {}, nil
}
func (a *autoSetter) Close(*sql.Context) error { return nil }

// alter replaces the table's definition, converting every row.
func (t *Table) alter(ctx *sql.Context, def *storage.TableDef, convert func([]any) ([]any, error)) error {
	tx := t.tx(ctx)
	// A failed ALTER changes nothing: without this the new definition and
	// the rows converted before the error stayed in the transaction (and
	// were committed with it).
	sp := tx.Savepoint()
	if err := tx.AlterTable(t.Name(), def, convert); err != nil {
		tx.RollbackTo(sp)
		return t.editor(ctx).dupError(err)
	}
	ti, err := tabledef.Decode(def)
	if err != nil {
		return err
	}
	t.info = ti
	return nil
}

// reindex gives the table another primary key or other indexes over the
// same columns: the rows stay where they are, checked by check (if set);
// no row is written to the journal again.
func (t *Table) reindex(ctx *sql.Context, def *storage.TableDef, check func([]any) error) error {
	tx, st, err := t.current(ctx)
	if err != nil {
		return err
	}
	if check != nil {
		var cerr error
		st.Scan(func(r *storage.Row) bool {
			cerr = check(r.Values())
			return cerr == nil
		})
		if cerr != nil {
			return cerr
		}
	}
	if err := tx.Reindex(t.Name(), def); err != nil {
		return t.editor(ctx).dupError(err)
	}
	ti, err := tabledef.Decode(def)
	if err != nil {
		return err
	}
	t.info = ti
	return nil
}

// redefine changes the definition without touching rows (constraints,
// comments, index names).
func (t *Table) redefine(ctx *sql.Context, def *storage.TableDef) error {
	if err := t.tx(ctx).SetMeta(t.Name(), def); err != nil {
		return mysqlerr.From(err)
	}
	ti, err := tabledef.Decode(def)
	if err != nil {
		return err
	}
	t.info = ti
	return nil
}

func (t *Table) AddColumn(ctx *sql.Context, column *sql.Column, order *sql.ColumnOrder) error {
	old := t.info.Schema.Schema
	pos := len(old)
	if order != nil {
		if order.First {
			pos = 0
		} else if order.AfterColumn != "" {
			pos = old.IndexOfColName(order.AfterColumn) + 1
		}
	}
	col := column.Copy()
	col.Source = t.Name()
	sch := make(sql.Schema, 0, len(old)+1)
	sch = append(sch, old[:pos]...)
	sch = append(sch, col)
	sch = append(sch, old[pos:]...)
	pk := t.pkSchema(sch)
	indexes := remapIndexes(t.info.Meta.Indexes, "", "")
	def, err := t.info.With(t.Name(), &pk, &indexes, nil, nil)
	if err != nil {
		return err
	}
	return t.alter(ctx, def, func(vals []any) ([]any, error) {
		// The default (or generation) expression reads the row in the
		// new column order: evaluate it on the new row.
		out := make([]any, 0, len(vals)+1)
		out = append(out, vals[:pos]...)
		out = append(out, nil)
		out = append(out, vals[pos:]...)
		row := sql.Row(out)
		if col.Generated == nil {
			row = sql.Row(vals)
		}
		v, err := columnDefaultValue(ctx, col, row)
		if err != nil {
			return nil, err
		}
		out[pos] = v
		return out, nil
	})
}

func (t *Table) DropColumn(ctx *sql.Context, name string) error {
	old := t.info.Schema.Schema
	pos := old.IndexOfColName(name)
	if pos < 0 {
		return sql.ErrTableColumnNotFound.New(t.Name(), name)
	}
	sch := make(sql.Schema, 0, len(old)-1)
	sch = append(sch, old[:pos]...)
	sch = append(sch, old[pos+1:]...)
	pk := t.pkSchema(sch)
	var indexes []tabledef.IndexDef
	for _, ix := range t.info.Meta.Indexes {
		var cols []string
		for _, c := range ix.Columns {
			if !strings.EqualFold(c, name) {
				cols = append(cols, c)
			}
		}
		if len(cols) > 0 {
			ix.Columns = cols
			indexes = append(indexes, ix)
		}
	}
	def, err := t.info.With(t.Name(), &pk, &indexes, nil, nil)
	if err != nil {
		return err
	}
	return t.alter(ctx, def, func(vals []any) ([]any, error) {
		out := make([]any, 0, len(vals)-1)
		out = append(out, vals[:pos]...)
		return append(out, vals[pos+1:]...), nil
	})
}

func (t *Table) ModifyColumn(ctx *sql.Context, name string, column *sql.Column, order *sql.ColumnOrder) error {
	old := t.info.Schema.Schema
	pos := old.IndexOfColName(name)
	if pos < 0 {
		return sql.ErrTableColumnNotFound.New(t.Name(), name)
	}
	col := column.Copy()
	col.Source = t.Name()
	// The column definition of MODIFY/CHANGE does not say whether the
	// column is in the primary key: it stays where it was (without this,
	// MODIFY on a key column dropped the primary key).
	col.PrimaryKey = old[pos].PrimaryKey
	if col.PrimaryKey {
		col.Nullable = false
	}
	rest := make(sql.Schema, 0, len(old))
	rest = append(rest, old[:pos]...)
	rest = append(rest, old[pos+1:]...)
	newPos := pos
	if order != nil {
		if order.First {
			newPos = 0
		} else if order.AfterColumn != "" {
			newPos = rest.IndexOfColName(order.AfterColumn) + 1
		}
	}
	sch := make(sql.Schema, 0, len(old))
	sch = append(sch, rest[:newPos]...)
	sch = append(sch, col)
	sch = append(sch, rest[newPos:]...)
	pk := t.pkSchema(sch)
	indexes := remapIndexes(t.info.Meta.Indexes, name, col.Name)
	def, err := t.info.With(t.Name(), &pk, &indexes, nil, nil)
	if err != nil {
		return err
	}
	return t.alter(ctx, def, func(vals []any) ([]any, error) {
		v := vals[pos]
		if v != nil {
			v = enumSetText(old[pos].Type, v)
			conv, inRange, err := col.Type.Convert(ctx, v)
			switch {
			case err != nil && (types.IsEnum(col.Type) || types.IsSet(col.Type)):
				return nil, types.ErrDataTruncatedForColumn.New(col.Name)
			case err != nil:
				return nil, sql.ErrInvalidValue.New(fmt.Sprint(v), col.Type.String())
			case inRange == sql.OutOfRange:
				// Convert clamps an out-of-range number; MySQL refuses the ALTER.
				return nil, sql.ErrValueOutOfRange.New(fmt.Sprint(v), col.Type.String())
			}
			if ts, ok := conv.(types.Timespan); ok && funcs.IsTimeType(col.Type) {
				// To the column's digits (a TIME's are 0: timetype.go).
				conv = funcs.RoundTimespan(ts, funcs.TimeDigits(col.Type))
			}
			v = conv
		} else if !col.Nullable {
			return nil, sql.ErrInsertIntoNonNullableProvidedNull.New(col.Name)
		}
		others := make([]any, 0, len(vals)-1)
		others = append(others, vals[:pos]...)
		others = append(others, vals[pos+1:]...)
		out := make([]any, 0, len(vals))
		out = append(out, others[:newPos]...)
		out = append(out, v)
		return append(out, others[newPos:]...), nil
	})
}

func (t *Table) CreateIndex(ctx *sql.Context, idx sql.IndexDef) error {
	if idx.IsPrimary() {
		return t.CreatePrimaryKey(ctx, idx.Columns)
	}
	if idx.IsFullText() || idx.IsSpatial() || idx.IsVector() {
		return sql.ErrUnsupportedFeature.New("FULLTEXT, SPATIAL and VECTOR indexes")
	}
	for _, ix := range t.info.Meta.Indexes {
		if strings.EqualFold(ix.Name, idx.Name) {
			return sql.ErrDuplicateKey.New(idx.Name)
		}
	}
	mi := tabledef.IndexDef{Name: idx.Name, Unique: idx.IsUnique(), Comment: idx.Comment}
	for _, c := range idx.Columns {
		mi.Columns = append(mi.Columns, c.Name)
		mi.Prefixes = append(mi.Prefixes, uint16(c.Length))
	}
	indexes := append(append([]tabledef.IndexDef(nil), t.info.Meta.Indexes...), mi)
	def, err := t.info.With(t.Name(), nil, &indexes, nil, nil)
	if err != nil {
		return err
	}
	return t.reindex(ctx, def, nil)
}

func (t *Table) DropIndex(ctx *sql.Context, name string) error {
	if strings.EqualFold(name, "PRIMARY") {
		return t.DropPrimaryKey(ctx)
	}
	indexes, found := withoutNamed(t.info.Meta.Indexes, name, func(ix tabledef.IndexDef) string { return ix.Name })
	if !found {
		return sql.ErrIndexNotFound.New(name)
	}
	def, err := t.info.With(t.Name(), nil, &indexes, nil, nil)
	if err != nil {
		return err
	}
	return t.reindex(ctx, def, nil)
}

func (t *Table) RenameIndex(ctx *sql.Context, from, to string) error {
	indexes := append([]tabledef.IndexDef(nil), t.info.Meta.Indexes...)
	found := false
	for i := range indexes {
		if strings.EqualFold(indexes[i].Name, from) {
			indexes[i].Name, found = to, true
		}
	}
	if !found {
		return sql.ErrIndexNotFound.New(from)
	}
	def, err := t.info.With(t.Name(), nil, &indexes, nil, nil)
	if err != nil {
		return err
	}
	return t.redefine(ctx, def)
}

// CreatePrimaryKey and DropPrimaryKey implement ALTER TABLE … PRIMARY KEY.
func (t *Table) CreatePrimaryKey(ctx *sql.Context, columns []sql.IndexColumn) error {
	if len(t.info.Def.PK) > 0 {
		return sql.ErrMultiplePrimaryKeysDefined.New()
	}
	sch := t.info.Schema.Schema.Copy()
	var ords []int
	for _, c := range columns {
		i := sch.IndexOfColName(c.Name)
		if i < 0 {
			return sql.ErrKeyColumnDoesNotExist.New(c.Name)
		}
		sch[i].PrimaryKey = true
		sch[i].Nullable = false
		ords = append(ords, i)
	}
	pk := sql.NewPrimaryKeySchema(sch, ords...)
	def, err := t.info.With(t.Name(), &pk, nil, nil, nil)
	if err != nil {
		return err
	}
	return t.reindex(ctx, def, func(vals []any) error {
		for _, o := range ords {
			if vals[o] == nil {
				return sql.ErrInsertIntoNonNullableProvidedNull.New(sch[o].Name)
			}
		}
		return nil
	})
}

func (t *Table) DropPrimaryKey(ctx *sql.Context) error {
	if len(t.info.Def.PK) == 0 {
		return sql.ErrCantDropFieldOrKey.New("PRIMARY")
	}
	// An AUTO_INCREMENT key column must stay the first column of some index.
	if err := sql.ValidatePrimaryKeyDrop(ctx, t, t.info.Schema); err != nil {
		return err
	}
	sch := t.info.Schema.Schema.Copy()
	for _, c := range sch {
		c.PrimaryKey = false
	}
	pk := sql.NewPrimaryKeySchema(sch)
	def, err := t.info.With(t.Name(), &pk, nil, nil, nil)
	if err != nil {
		return err
	}
	return t.reindex(ctx, def, nil)
}

func (t *Table) GetChecks(ctx *sql.Context) ([]sql.CheckDefinition, error) {
	if vc := viewChecksOf(ctx, t.db.Name(), t.Name()); len(vc) > 0 { // viewdml.go
		return append(append([]sql.CheckDefinition(nil), t.info.Meta.Checks...), vc...), nil
	}
	return t.info.Meta.Checks, nil
}

func (t *Table) CreateCheck(ctx *sql.Context, check *sql.CheckDefinition) error {
	add := *check
	if add.Name == "" {
		// MySQL names an unnamed CHECK <table>_chk_<n>.
		for n := 1; ; n++ {
			add.Name = fmt.Sprintf("%s_chk_%d", t.Name(), n)
			if !t.hasCheck(add.Name) {
				break
			}
		}
	}
	if t.hasCheck(add.Name) {
		return fmt.Errorf("check constraint %q already exists", add.Name)
	}
	checks := append(append([]sql.CheckDefinition(nil), t.info.Meta.Checks...), add)
	def, err := t.info.With(t.Name(), nil, nil, &checks, nil)
	if err != nil {
		return err
	}
	return t.redefine(ctx, def)
}

func (t *Table) hasCheck(name string) bool {
	for _, c := range t.info.Meta.Checks {
		if strings.EqualFold(c.Name, name) {
			return true
		}
	}
	return false
}

func (t *Table) DropCheck(ctx *sql.Context, name string) error {
	checks, found := withoutNamed(t.info.Meta.Checks, name, func(c sql.CheckDefinition) string { return c.Name })
	if !found {
		return sql.ErrUnknownConstraint.New(name)
	}
	def, err := t.info.With(t.Name(), nil, nil, &checks, nil)
	if err != nil {
		return err
	}
	return t.redefine(ctx, def)
}

// pkSchema keeps the primary key's column order (PRIMARY KEY (b, a)) across
// a change of the columns.
func (t *Table) pkSchema(sch sql.Schema) sql.PrimaryKeySchema {
	var ords []int
	for _, o := range t.info.Schema.PkOrdinals {
		if i := sch.IndexOfColName(t.info.Schema.Schema[o].Name); i >= 0 && sch[i].PrimaryKey {
			ords = append(ords, i)
		}
	}
	for i, c := range sch {
		if c.PrimaryKey && !containsInt(ords, i) {
			ords = append(ords, i)
		}
	}
	return sql.NewPrimaryKeySchema(sch, ords...)
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func remapIndexes(in []tabledef.IndexDef, from, to string) []tabledef.IndexDef {
	out := make([]tabledef.IndexDef, len(in))
	for i, ix := range in {
		ix.Columns = append([]string(nil), ix.Columns...)
		for j, c := range ix.Columns {
			if from != "" && strings.EqualFold(c, from) {
				ix.Columns[j] = to
			}
		}
		out[i] = ix
	}
	return out
}

func columnDefaultValue(ctx *sql.Context, col *sql.Column, row sql.Row) (any, error) {
	def := col.Default
	if col.Generated != nil {
		def = col.Generated // a generated column added to existing rows
	}
	if def != nil {
		v, err := def.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v != nil {
			v, _, err = col.Type.Convert(ctx, v)
			return v, err
		}
	}
	if col.Nullable {
		return nil, nil
	}
	return col.Type.Zero(), nil
}

// enumSetText returns the text of an ENUM or SET value, which is stored as
// its index (ENUM) or bit set (SET) in the column's own list: converting the
// number to a new column type would pick whatever member now has that
// position (ALTER … MODIFY e ENUM('c','a','b') turned 'a' into 'c').
func enumSetText(typ sql.Type, v any) any {
	switch t := typ.(type) {
	case sql.EnumType:
		// 0 is the empty error value of every ENUM: it stays 0.
		if i, ok := v.(uint16); ok && i > 0 {
			if s, ok := t.At(int(i)); ok {
				return s
			}
		}
	case sql.SetType:
		if bits, ok := v.(uint64); ok {
			if s, err := t.BitsToString(bits); err == nil {
				return s
			}
		}
	}
	return v
}

// withoutNamed returns xs without the elements named name (compared as
// MySQL compares identifiers, ignoring case), and whether there was one.
func withoutNamed[T any](xs []T, name string, nameOf func(T) string) ([]T, bool) {
	var out []T
	found := false
	for _, x := range xs {
		if strings.EqualFold(nameOf(x), name) {
			found = true
			continue
		}
		out = append(out, x)
	}
	return out, found
}

func typesUint64(ctx *sql.Context, v any) (uint64, sql.ConvertInRange, error) {
	out, inRange, err := types.Uint64.Convert(ctx, v)
	if err != nil {
		return 0, inRange, err
	}
	return out.(uint64), inRange, nil
}
