package sqlserver

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/show"
)

// Table sizes: Data_length and Index_length of SHOW TABLE STATUS and
// information_schema.TABLES are the memory a table holds, its rows and
// primary key (data) and its secondary indexes (index), as
// storage.Table.Footprint estimates them. go-mysql-server gave a size
// worked out from the column types (a VARCHAR(255) counted 1,020 bytes a
// row, however short its values) and no index length; in a server that
// keeps every row in memory, these say how much each table takes.
//
// Footprint walks the rows; its result is kept, scaled by the row count,
// until the row count has moved by a tenth (as the index cardinalities,
// cardinality.go), or ANALYZE TABLE. Sessions of go-mysql-server's engine
// suites get its own estimate, which they assert.

type sizeKey struct{ db, table string }

type size struct{ data, index uint64 }

var sizes walkCache[sizeKey, size]

// forgetSize drops what is kept for a table (ANALYZE TABLE).
func forgetSize(db, table string) {
	sizes.forget(func(k sizeKey) bool { return k == sizeKey{db, table} })
}

// footprint returns the memory t holds as the session sees it.
func (t *Table) footprint(ctx *sql.Context) (data, index uint64, err error) {
	_, st, err := t.current(ctx)
	if err != nil {
		return 0, 0, err
	}
	rows := st.Len()
	if t.temp { // a session's own: not kept
		data, index = st.Footprint()
		return data, index, nil
	}
	key := sizeKey{strings.ToLower(t.db.Name()), strings.ToLower(t.Name())}
	if c, at, ok := sizes.get(key, t.info.Def, rows); ok {
		if at == 0 {
			return c.data, c.index, nil
		}
		return c.data * uint64(rows) / uint64(at), c.index * uint64(rows) / uint64(at), nil
	}
	data, index = st.Footprint()
	sizes.put(key, t.info.Def, rows, size{data, index})
	return data, index, nil
}

// showTableStatus is SHOW TABLE STATUS with each table's Index_length,
// Auto_increment and Comment (go-mysql-server's said 0, NULL and NULL),
// InnoDB's Row_format (Dynamic) and an empty Create_options, as MySQL's.
func showTableStatus(ctx *sql.Context, n *plan.ShowTableStatus, row sql.Row) (sql.RowIter, error) {
	rows, err := show.DefaultRows(ctx, n, row)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		name, _ := r[0].(string)
		tt, ok, err := n.Database().GetTableInsensitive(ctx, name)
		if err != nil || !ok {
			continue
		}
		t, ok := tt.(*Table)
		if !ok {
			continue
		}
		if _, index, err := t.footprint(ctx); err == nil {
			r[8] = int64(index)
		}
		if next, err := t.PeekNextAutoIncrementValue(ctx); err == nil && t.hasAutoIncrement() {
			r[10] = next
		}
		if len(r) == 18 {
			r[3], r[16], r[17] = "Dynamic", "", t.Comment()
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// renameStatusComment names SHOW TABLE STATUS's last column Comment, as
// MySQL does; go-mysql-server names it Comments (its schema is shared: the
// name is set once, by Install).
func renameStatusComment() {
	if s := plan.NewShowTableStatus(nil).Schema(); len(s) == 18 && s[17].Name == "Comments" {
		s[17].Name = "Comment"
	}
}

// hasAutoIncrement reports whether a column of t is AUTO_INCREMENT.
func (t *Table) hasAutoIncrement() bool {
	for _, c := range t.Schema() {
		if c.AutoIncrement {
			return true
		}
	}
	return false
}

// tableSizes sets the INDEX_LENGTH of information_schema.TABLES's rows,
// and leaves out the creation and update times (go-mysql-server said
// 2000-01-01 for every table; Miraj does not keep them).
func tableSizes(ctx *sql.Context, cat sql.Catalog, rows []sql.Row) {
	for _, r := range rows {
		// TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, INDEX_LENGTH, CREATE_TIME,
		// UPDATE_TIME.
		db, _ := r[1].(string)
		name, _ := r[2].(string)
		if typ, _ := r[3].(string); typ != "BASE TABLE" {
			continue
		}
		r[14], r[15] = nil, nil
		if t := catalogTable(ctx, cat, db, name); t != nil {
			if _, index, err := t.footprint(ctx); err == nil {
				r[11] = index
			}
		}
	}
}
