package sqlserver

import (
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/show"
	"github.com/miraj-db/miraj/internal/storage"
)

// Index cardinality: SHOW INDEX's Cardinality and
// information_schema.STATISTICS.CARDINALITY, the number of distinct values
// of an index's first columns, which go-mysql-server left at 0.
//
// It is counted exactly, by walking the index (storage.Table.Distinct),
// and kept until the table's row count has moved by a tenth, as InnoDB
// recomputes its estimates once a tenth of a table has changed; ANALYZE
// TABLE counts again. A whole primary key counts the rows.

// walkCache keeps what a walk of a table's rows found, for the table as
// def defined it (a table altered, or dropped and created again, is
// walked anew) and while its row count stays within a tenth of rows.
type walkCache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]walked[V]
}

type walked[V any] struct {
	def  *storage.TableDef
	rows int
	v    V
}

// get returns what is kept for key, and the row count it was found at.
func (c *walkCache[K, V]) get(key K, def *storage.TableDef, rows int) (v V, at int, ok bool) {
	c.mu.Lock()
	w, ok := c.m[key]
	c.mu.Unlock()
	if !ok || w.def != def || 10*abs(rows-w.rows) > w.rows || (rows == 0) != (w.rows == 0) {
		return v, 0, false
	}
	return w.v, w.rows, true
}

func (c *walkCache[K, V]) put(key K, def *storage.TableDef, rows int, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[K]walked[V]{}
	}
	c.m[key] = walked[V]{def: def, rows: rows, v: v}
}

// forget drops what is kept for the keys of which drop says so.
func (c *walkCache[K, V]) forget(drop func(K) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if drop(k) {
			delete(c.m, k)
		}
	}
}

// cardKey names one count: an index by its columns, and how many of them.
type cardKey struct {
	db, table, index string
	cols             string
	n                int
}

var cardinalities walkCache[cardKey, int]

// forgetCardinality drops what is kept for a table (ANALYZE TABLE).
func forgetCardinality(db, table string) {
	cardinalities.forget(func(k cardKey) bool { return k.db == db && k.table == table })
}

// cardinality is the number of distinct values of the first n columns of
// index name of t as the session sees it; false when t has no such index
// or n is out of its range.
func (t *Table) cardinality(ctx *sql.Context, name string, n int) (int64, bool) {
	def := t.info.Def
	index, cols := -2, []int(nil)
	if strings.EqualFold(name, "PRIMARY") && len(def.PK) > 0 {
		index, cols = -1, def.PK
	} else {
		for i, ix := range def.Indexes {
			if strings.EqualFold(ix.Name, name) {
				index, cols = i, ix.Cols
				break
			}
		}
	}
	if index == -2 || n < 1 || n > len(cols) {
		return 0, false
	}
	_, st, err := t.current(ctx)
	if err != nil {
		return 0, false
	}
	rows := st.Len()
	if index == -1 && n == len(cols) {
		return int64(rows), true
	}
	var sb strings.Builder
	for _, c := range cols {
		sb.WriteByte(byte(c))
		sb.WriteByte(byte(c >> 8))
	}
	if t.temp { // a session's own: not kept
		return int64(st.Distinct(index, n)), true
	}
	key := cardKey{db: strings.ToLower(t.db.Name()), table: strings.ToLower(t.Name()), index: strings.ToLower(name), cols: sb.String(), n: n}
	if distinct, _, ok := cardinalities.get(key, def, rows); ok {
		return int64(min(distinct, rows)), true
	}
	distinct := st.Distinct(index, n)
	cardinalities.put(key, def, rows, distinct)
	return int64(distinct), true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// showIndexes is SHOW INDEX with each column's cardinality and, for a
// column indexed by a prefix (KEY (c(10))), that prefix's length as its
// Sub_part (go-mysql-server leaves it NULL).
func showIndexes(ctx *sql.Context, n *plan.ShowIndexes, row sql.Row) (sql.RowIter, error) {
	rows, err := show.DefaultRows(ctx, n, row)
	if err != nil {
		return nil, err
	}
	t, ok := show.UnderlyingTable(n.Child).(*Table)
	for _, r := range rows {
		if !ok {
			break
		}
		// Key_name, Seq_in_index, Collation, Cardinality.
		name, _ := r[2].(string)
		seq, _ := r[3].(int)
		if c, ok := t.cardinality(ctx, name, seq); ok {
			r[5], r[6] = "A", c
		}
		r[7] = t.subPart(name, seq)
	}
	return sql.RowsToRowIter(rows...), nil
}

// subPart is SHOW INDEX's and information_schema.STATISTICS's Sub_part of
// column seq (from 1) of index name: the length of its prefix, NULL when
// the whole column is indexed.
func (t *Table) subPart(name string, seq int) any {
	for _, ix := range t.info.Meta.Indexes {
		if strings.EqualFold(ix.Name, name) {
			if seq >= 1 && seq <= len(ix.Prefixes) && ix.Prefixes[seq-1] > 0 {
				return int64(ix.Prefixes[seq-1])
			}
			return nil
		}
	}
	return nil
}

// countCardinalities sets the CARDINALITY of information_schema.STATISTICS's
// rows, and their SUB_PART (see subPart: go-mysql-server writes 0 for a
// whole column in an index with a prefix elsewhere).
func countCardinalities(ctx *sql.Context, cat sql.Catalog, rows []sql.Row) {
	tables := map[[2]string]*Table{}
	for _, r := range rows {
		// TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, CARDINALITY.
		db, _ := r[1].(string)
		name, _ := r[2].(string)
		index, _ := r[5].(string)
		seq, _ := r[6].(int)
		k := [2]string{db, name}
		t, seen := tables[k]
		if !seen {
			t = catalogTable(ctx, cat, db, name)
			tables[k] = t
		}
		if t == nil {
			continue
		}
		if n, ok := t.cardinality(ctx, index, seq); ok {
			r[9] = n
		}
		r[10] = t.subPart(index, seq)
	}
}

// catalogTable is table name of database db, nil when it is not one of
// Miraj's tables.
func catalogTable(ctx *sql.Context, cat sql.Catalog, db, name string) *Table {
	ours, _ := show.AnyTable(ctx, cat, db, name).(*Table)
	return ours
}

// patchedInfoTable is an information_schema table whose rows patch
// changes once go-mysql-server has made them.
type patchedInfoTable struct {
	sql.CatalogTable
	cat   sql.Catalog
	patch func(ctx *sql.Context, cat sql.Catalog, rows []sql.Row)
}

func (s *patchedInfoTable) AssignCatalog(cat sql.Catalog) sql.Table {
	if t, ok := s.CatalogTable.AssignCatalog(cat).(sql.CatalogTable); ok {
		s.CatalogTable = t
	}
	s.cat = cat
	return s
}

func (s *patchedInfoTable) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	iter, err := s.CatalogTable.PartitionRows(ctx, p)
	if err != nil || s.cat == nil {
		return iter, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	s.patch(ctx, s.cat, rows)
	return sql.RowsToRowIter(rows...), nil
}
