package sqlserver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// showCreateTable runs go-mysql-server's SHOW CREATE TABLE and writes the
// DEFAULT of an ENUM or SET column as its value ('x'), where
// go-mysql-server v0.20 writes the value's number ('1'), which MySQL would
// read back as the first member whatever the default was, and MariaDB
// refuses for a SET.
func showCreateTable(ctx *sql.Context, n *plan.ShowCreateTable, row sql.Row) (sql.RowIter, error) {
	iter, err := rowexec.DefaultBuilder.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	fixes := map[string]string{} // column line prefix → its DEFAULT clause
	for _, col := range n.TargetSchema() {
		d := col.Default
		if d == nil || !d.IsLiteral() {
			continue
		}
		v, err := d.Eval(ctx, nil)
		if err != nil || v == nil {
			continue
		}
		var text string
		switch t := col.Type.(type) {
		case types.EnumType:
			idx, ok := v.(uint16)
			if !ok {
				continue
			}
			if text, ok = t.At(int(idx)); !ok {
				continue
			}
		case types.SetType:
			bits, ok := v.(uint64)
			if !ok {
				continue
			}
			if text, err = t.BitsToString(bits); err != nil {
				continue
			}
		default:
			continue
		}
		fixes["  `"+strings.ReplaceAll(col.Name, "`", "``")+"` "] = fmt.Sprintf("DEFAULT '%s'", strings.ReplaceAll(text, "'", "''"))
	}
	if len(fixes) > 0 {
		for _, r := range rows {
			if len(r) < 2 {
				continue
			}
			stmt, ok := r[1].(string)
			if !ok {
				continue
			}
			lines := strings.Split(stmt, "\n")
			for i, l := range lines {
				for prefix, def := range fixes {
					if strings.HasPrefix(l, prefix) {
						lines[i] = defaultClauseRE.ReplaceAllLiteralString(l, def)
					}
				}
			}
			r[1] = strings.Join(lines, "\n")
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// defaultClauseRE is the DEFAULT clause of a column line written by
// go-mysql-server: a quoted number.
var defaultClauseRE = regexp.MustCompile(`DEFAULT '\d+'`)
