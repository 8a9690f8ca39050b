package sqlserver

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// CHECKSUM TABLE t1 [, t2 …] [QUICK | EXTENDED], which the parser does not
// know, is run as a SELECT of one row per table (Table, Checksum) whose
// checksum is miraj_table_checksum(db, table): the sum, modulo 2^64, of the
// CRC-32 of each row as the client reads it (each value's text, NULL
// marked), so it does not depend on row order, and two tables with the
// same rows and column types have the same checksum on any Miraj server
// (not MySQL's value: MySQL's depends on its row format). The table is
// named in the SELECT's FROM clause too, so that a missing table gives
// 1146 and a table without the SELECT privilege 1142, as in MySQL.

const checksumFunc = "miraj_table_checksum"

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
	if next < len(w) && w[next].IsWord && (w[next].Text == "QUICK" || w[next].Text == "EXTENDED") {
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
		label, db, from := "CONCAT(DATABASE(), '.', "+lit(r.name)+")", "DATABASE()", quoteIdent(r.name)
		if r.db != "" {
			label, db, from = lit(r.db+"."+r.name), lit(r.db), quoteIdent(r.db)+"."+quoteIdent(r.name)
		}
		parts = append(parts, fmt.Sprintf("SELECT %s AS `Table`, %s(%s, %s) AS `Checksum` FROM (SELECT COUNT(*) AS n FROM %s) AS miraj_checked",
			label, checksumFunc, db, lit(r.name), from))
	}
	return strings.Join(parts, " UNION ALL ") + q[end:], true
}

// tableChecksum is miraj_table_checksum(db, table).
type tableChecksum struct {
	cat      sql.Catalog
	db, name sql.Expression
}

var _ sql.FunctionExpression = (*tableChecksum)(nil)

func checksumFunction(cat sql.Catalog) sql.Function {
	return sql.Function2{Name: checksumFunc, Fn: func(db, name sql.Expression) sql.Expression {
		return &tableChecksum{cat: cat, db: db, name: name}
	}}
}

func (c *tableChecksum) FunctionName() string { return checksumFunc }
func (c *tableChecksum) Description() string  { return "checksum of a table's rows (CHECKSUM TABLE)" }
func (c *tableChecksum) Resolved() bool       { return c.db.Resolved() && c.name.Resolved() }
func (c *tableChecksum) String() string {
	return fmt.Sprintf("%s(%s, %s)", checksumFunc, c.db, c.name)
}
func (c *tableChecksum) Type() sql.Type             { return types.Uint64 }
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
	return &tableChecksum{cat: c.cat, db: ch[0], name: ch[1]}, nil
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
	if dbv == nil || namev == nil {
		return nil, nil
	}
	db, err := c.cat.Database(ctx, fmt.Sprint(dbv))
	if err != nil {
		return nil, err
	}
	t, ok, err := db.GetTableInsensitive(ctx, fmt.Sprint(namev))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sql.ErrTableNotFound.New(fmt.Sprint(namev))
	}
	return checksumRows(ctx, t)
}

func checksumRows(ctx *sql.Context, t sql.Table) (uint64, error) {
	schema := t.Schema()
	parts, err := t.Partitions(ctx)
	if err != nil {
		return 0, err
	}
	defer parts.Close(ctx)
	var sum uint64
	var buf []byte
	for {
		p, err := parts.Next(ctx)
		if errors.Is(err, io.EOF) {
			return sum, nil
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
			if err != nil {
				rows.Close(ctx)
				return 0, err
			}
			buf = buf[:0]
			for i, v := range r {
				if v == nil {
					buf = append(buf, 0xff)
					continue
				}
				sv, err := schema[i].Type.SQL(ctx, nil, v)
				if err != nil {
					rows.Close(ctx)
					return 0, err
				}
				raw := sv.Raw()
				buf = append(buf, byte(len(raw)>>24), byte(len(raw)>>16), byte(len(raw)>>8), byte(len(raw)))
				buf = append(buf, raw...)
			}
			sum += uint64(crc32.ChecksumIEEE(buf))
		}
		if err := rows.Close(ctx); err != nil {
			return 0, err
		}
	}
}
