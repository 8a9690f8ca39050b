package sqlserver

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/miraj-db/miraj/internal/binlog"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// CHECKSUM TABLE t1 [, t2 …] [QUICK | EXTENDED], which the parser does not
// know, is run as a SELECT of one row per table (Table, Checksum) whose
// checksum is miraj_table_checksum(db, table): the number MariaDB gives for
// an InnoDB table with the same definition and rows (checksumRows), so a
// table can be compared with a MariaDB replica or source, and with another
// Miraj server. QUICK gives NULL (no table keeps a live checksum). As in
// MariaDB, a table the account may not read fails the statement (1142),
// no current database for an unqualified name too (1046); a table that
// does not exist, or a view, gives NULL and an Error-level warning (1146,
// 1347) and the other tables are summed.

const (
	checksumFunc      = "miraj_table_checksum"
	checksumLabelFunc = "miraj_table_checksum_label" // db.table, a VARCHAR as MariaDB's
)

// checksumRewrite returns the SELECT that answers a CHECKSUM TABLE
// statement (the first statement of q), or false.
func checksumRewrite(q string) (string, bool) {
	if sqltext.FirstWord(q) != "CHECKSUM" {
		return "", false
	}
	w, end := sqltext.ScanStatement(q)
	if len(w) < 3 || !w[0].IsWord || w[0].Text != "CHECKSUM" || !w[1].IsWord || (w[1].Text != "TABLE" && w[1].Text != "TABLES") {
		return "", false
	}
	refs, next := tableRefs(q, w, 2)
	quick := false
	if next < len(w) && w[next].IsWord && (w[next].Text == "QUICK" || w[next].Text == "EXTENDED") {
		quick = w[next].Text == "QUICK"
		next++
	}
	if len(refs) == 0 || next != len(w) {
		return "", false
	}
	lit := func(s string) string {
		return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
	}
	var parts []string
	for _, r := range refs {
		db := "DATABASE()"
		if r.db != "" {
			db = lit(r.db)
		}
		sum := fmt.Sprintf("%s(%s, %s)", checksumFunc, db, lit(r.name))
		if quick {
			// QUICK asks for a checksum kept live, which no Miraj table has
			// (nor InnoDB's): NULL, as MariaDB answers for InnoDB.
			sum = "IF(FALSE, " + sum + ", NULL)"
		}
		parts = append(parts, fmt.Sprintf("SELECT %s(%s, %s) AS `Table`, %s AS `Checksum`",
			checksumLabelFunc, db, lit(r.name), sum))
	}
	return strings.Join(parts, " UNION ALL ") + q[end:], true
}

// tableChecksum is miraj_table_checksum(db, table), or with label
// miraj_table_checksum_label(db, table).
type tableChecksum struct {
	cat      sql.Catalog
	grants   grants
	db, name sql.Expression
	label    bool
}

var checksumLabelType = types.MustCreateString(sqltypes.VarChar, 513, sql.Collation_Default)

var _ sql.FunctionExpression = (*tableChecksum)(nil)

func checksumFunction(cat sql.Catalog, g grants) sql.Function {
	return sql.Function2{Name: checksumFunc, Fn: func(db, name sql.Expression) sql.Expression {
		return &tableChecksum{cat: cat, grants: g, db: db, name: name}
	}}
}

func checksumLabelFunction(cat sql.Catalog) sql.Function {
	return sql.Function2{Name: checksumLabelFunc, Fn: func(db, name sql.Expression) sql.Expression {
		return &tableChecksum{cat: cat, db: db, name: name, label: true}
	}}
}

func (c *tableChecksum) FunctionName() string {
	if c.label {
		return checksumLabelFunc
	}
	return checksumFunc
}
func (c *tableChecksum) Description() string { return "checksum of a table's rows (CHECKSUM TABLE)" }
func (c *tableChecksum) Resolved() bool      { return c.db.Resolved() && c.name.Resolved() }
func (c *tableChecksum) String() string {
	return fmt.Sprintf("%s(%s, %s)", c.FunctionName(), c.db, c.name)
}
func (c *tableChecksum) Type() sql.Type {
	if c.label {
		return checksumLabelType
	}
	return types.Int64
}
func (c *tableChecksum) IsNullable() bool           { return true }
func (c *tableChecksum) Children() []sql.Expression { return []sql.Expression{c.db, c.name} }
func (c *tableChecksum) IsNonDeterministic() bool   { return true }
func (c *tableChecksum) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}

func (c *tableChecksum) WithChildren(ch ...sql.Expression) (sql.Expression, error) {
	if len(ch) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(ch), 2)
	}
	return &tableChecksum{cat: c.cat, grants: c.grants, db: ch[0], name: ch[1], label: c.label}, nil
}

func (c *tableChecksum) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	dbv, err := c.db.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	namev, err := c.name.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if namev == nil {
		return nil, nil
	}
	if dbv == nil {
		return nil, sql.ErrNoDatabaseSelected.New()
	}
	dbName, name := fmt.Sprint(dbv), fmt.Sprint(namev)
	if c.label {
		return dbName + "." + name, nil
	}
	if d := (authorization{grants: c.grants}).tableRefusal(ctx, dbName, name, []sql.PrivilegeType{sql.PrivilegeType_Select}); d != nil {
		return nil, mysqlerr.From(d)
	}
	// What MariaDB reports in the row's stead: NULL, and the error as a
	// warning.
	missing := func(code int, msg string) (any, error) {
		if s, ok := ctx.Session.(*Session); ok {
			s.Warn(&sql.Warning{Level: "Error", Code: code, Message: msg})
		} else {
			ctx.Warn(code, "%s", msg)
		}
		return nil, nil
	}
	notThere := func() (any, error) {
		return missing(mysql.ERNoSuchTable, fmt.Sprintf("Table '%s.%s' doesn't exist", dbName, name))
	}
	db, err := c.cat.Database(ctx, dbName)
	if err != nil {
		if sql.ErrDatabaseNotFound.Is(err) {
			return notThere()
		}
		return nil, err
	}
	t, ok, err := db.GetTableInsensitive(ctx, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		if vdb, isViews := db.(sql.ViewDatabase); isViews {
			if _, isView, err := vdb.GetViewDefinition(ctx, name); err == nil && isView {
				return missing(erWrongObject, fmt.Sprintf("'%s.%s' is not of type 'BASE TABLE'", dbName, name))
			}
		}
		return notThere()
	}
	return checksumRows(ctx, t)
}

// erWrongObject is ER_WRONG_OBJECT: "'%s.%s' is not of type '%s'".
const erWrongObject = 1347

// checksumRows is MariaDB's CHECKSUM TABLE of an InnoDB table with the
// same definition and rows (handler::calculate_checksum): the sum, modulo
// 2^32, of one CRC-32 per row over the row as MariaDB's record holds it.
// That is: the null bytes first (a bit per nullable column, set for NULL,
// after a first bit always set when the table has no column of variable
// length, the last byte's unused bits set), then each non-NULL column in
// order: VARCHAR, BLOB, TEXT, JSON, GEOMETRY and BIT as their bytes, every
// other type in its fixed-size record form (the row events' encoding;
// CHAR padded with spaces to its size in bytes, BINARY with zeros). Rows
// are summed, so the order they are read in does not count.
func checksumRows(ctx *sql.Context, t sql.Table) (int64, error) {
	cs, err := newRowChecksum(t.Schema())
	if err != nil {
		return 0, err
	}
	parts, err := t.Partitions(ctx)
	if err != nil {
		return 0, err
	}
	defer parts.Close(ctx)
	var sum uint32
	for {
		p, err := parts.Next(ctx)
		if errors.Is(err, io.EOF) {
			return int64(sum), nil
		}
		if err != nil {
			return 0, err
		}
		rows, err := t.PartitionRows(ctx, p)
		if err != nil {
			return 0, err
		}
		for {
			r, err := rows.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err == nil {
				var crc uint32
				crc, err = cs.row(r)
				sum += crc
			}
			if err != nil {
				rows.Close(ctx)
				return 0, err
			}
		}
		if err := rows.Close(ctx); err != nil {
			return 0, err
		}
	}
}

// rowChecksum computes one row's CRC-32 for checksumRows.
type rowChecksum struct {
	sch  sql.Schema
	cols []binlog.Column
	// fixed: no column of variable length (MariaDB's record is then not
	// "packed", and its first null bit marks a deleted row: always set).
	fixed bool
	// nullable: the column has a null bit; generated: it is read as NULL
	// (MariaDB's checksum sees a generated column, stored or virtual, as
	// NULL: its value is not read into the record).
	nullable, generated []bool
	nullBytes           int
	buf                 []byte
}

func newRowChecksum(sch sql.Schema) (*rowChecksum, error) {
	c := &rowChecksum{sch: sch, cols: make([]binlog.Column, len(sch)), fixed: true,
		nullable: make([]bool, len(sch)), generated: make([]bool, len(sch))}
	nullBits := 0
	for i, col := range sch {
		bc, err := binlogColumn(col.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", col.Name, err)
		}
		c.cols[i] = bc
		switch bc.Type {
		case binlog.TypeVarchar, binlog.TypeBlob, binlog.TypeGeometry:
			c.fixed = false
		}
		c.generated[i] = col.Generated != nil
		c.nullable[i] = col.Nullable || c.generated[i]
		if c.nullable[i] {
			nullBits++
		}
	}
	if c.fixed {
		nullBits++
	}
	c.nullBytes = (nullBits + 7) / 8
	return c, nil
}

func (c *rowChecksum) row(r sql.Row) (uint32, error) {
	vals, err := binlogValues(c.sch, r)
	if err != nil {
		return 0, err
	}
	for i, g := range c.generated {
		if g {
			vals[i] = nil
		}
	}
	b := c.buf[:0]
	for range c.nullBytes {
		b = append(b, 0)
	}
	bit := 0
	if c.fixed {
		b[0] |= 1
		bit++
	}
	for i, n := range c.nullable {
		if n {
			if vals[i] == nil {
				b[bit/8] |= 1 << (bit % 8)
			}
			bit++
		}
	}
	if bit%8 != 0 {
		b[len(b)-1] |= byte(0xff << (bit % 8))
	}
	for i, v := range vals {
		if v == nil {
			continue
		}
		bc := c.cols[i]
		switch bc.Type {
		case binlog.TypeVarchar, binlog.TypeBlob, binlog.TypeGeometry, binlog.TypeString:
			s, err := c.text(i, v)
			if err != nil {
				return 0, err
			}
			b = append(b, s...)
			if bc.Type == binlog.TypeString {
				pad := byte(' ')
				if st, ok := c.sch[i].Type.(sql.StringType); ok && st.Collation() == sql.Collation_binary {
					pad = 0
				}
				for n := len(s); n < bc.Length; n++ {
					b = append(b, pad)
				}
			}
		default:
			if b, err = binlog.AppendValue(b, bc, v); err != nil {
				return 0, fmt.Errorf("column %s: %w", c.sch[i].Name, err)
			}
		}
	}
	c.buf = b
	return crc32.ChecksumIEEE(b), nil
}

// text is a string value's bytes in its column's character set.
func (c *rowChecksum) text(i int, v any) ([]byte, error) {
	var s []byte
	switch x := v.(type) {
	case string:
		s = []byte(x)
	case []byte:
		s = x
	default:
		return nil, fmt.Errorf("column %s: a %T value", c.sch[i].Name, v)
	}
	st, ok := c.sch[i].Type.(sql.StringType)
	if !ok {
		return s, nil
	}
	if c.cols[i].Type == binlog.TypeString && st.Collation() != sql.Collation_binary {
		s = bytes.TrimRight(s, " ")
	}
	switch st.CharacterSet() {
	case sql.CharacterSet_utf8mb4, sql.CharacterSet_utf8mb3, sql.CharacterSet_binary:
		return s, nil
	}
	if enc := st.CharacterSet().Encoder(); enc != nil {
		if e, ok := enc.Encode(s); ok {
			return e, nil
		}
	}
	return s, nil
}
