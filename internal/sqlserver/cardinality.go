package sqlserver

import (
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"

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

// cardKey names one count: an index by its columns, and how many of them.
type cardKey struct {
	db, table, index string
	cols             string
	n                int
}

// cardCount is a count, of the table as def defined it: a table altered,
// or dropped and created again, is counted anew.
type cardCount struct {
	def            *storage.TableDef
	rows, distinct int
}

var cardinalities struct {
	sync.Mutex
	m map[cardKey]cardCount
}

// forgetCardinality drops what is kept for a table (ANALYZE TABLE).
func forgetCardinality(db, table string) {
	cardinalities.Lock()
	defer cardinalities.Unlock()
	for k := range cardinalities.m {
		if k.db == db && k.table == table {
			delete(cardinalities.m, k)
		}
	}
}

// cardinality is the number of distinct values of the first n columns of
// index name of t as the session sees it; false when t has no such index
// or n is out of its range.
func (t *Table) cardinality(ctx *sql.Context, name string, n int) (int64, bool) {
	def := t.info.def
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
	cardinalities.Lock()
	c, ok := cardinalities.m[key]
	cardinalities.Unlock()
	if ok && c.def == def && 10*abs(rows-c.rows) <= c.rows && (rows == 0) == (c.rows == 0) {
		return int64(min(c.distinct, rows)), true
	}
	c = cardCount{def: def, rows: rows, distinct: st.Distinct(index, n)}
	cardinalities.Lock()
	if cardinalities.m == nil {
		cardinalities.m = map[cardKey]cardCount{}
	}
	cardinalities.m[key] = c
	cardinalities.Unlock()
	return int64(c.distinct), true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// showIndexes is SHOW INDEX with each column's cardinality.
func showIndexes(ctx *sql.Context, n *plan.ShowIndexes, row sql.Row) (sql.RowIter, error) {
	iter, err := rowexec.DefaultBuilder.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	t, ok := underlyingTable(n.Child).(*Table)
	if !ok {
		return iter, nil
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		// Key_name, Seq_in_index, Collation, Cardinality.
		name, _ := r[2].(string)
		seq, _ := r[3].(int)
		if c, ok := t.cardinality(ctx, name, seq); ok {
			r[5], r[6] = "A", c
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// statisticsTable is information_schema.STATISTICS with each row's
// CARDINALITY counted.
type statisticsTable struct {
	sql.CatalogTable
	cat sql.Catalog
}

func (s *statisticsTable) AssignCatalog(cat sql.Catalog) sql.Table {
	if t, ok := s.CatalogTable.AssignCatalog(cat).(sql.CatalogTable); ok {
		s.CatalogTable = t
	}
	s.cat = cat
	return s
}

func (s *statisticsTable) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	iter, err := s.CatalogTable.PartitionRows(ctx, p)
	if err != nil || s.cat == nil {
		return iter, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
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
			if d, err := s.cat.Database(ctx, db); err == nil {
				if tt, ok, err := d.GetTableInsensitive(ctx, name); err == nil && ok {
					t, _ = tt.(*Table)
				}
			}
			tables[k] = t
		}
		if t == nil {
			continue
		}
		if n, ok := t.cardinality(ctx, index, seq); ok {
			r[9] = n
		}
	}
	return sql.RowsToRowIter(rows...), nil
}
