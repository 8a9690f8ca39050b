package show

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// ShowCreateTable runs go-mysql-server's SHOW CREATE TABLE and writes the
// columns' defaults as MySQL does: an ENUM's or SET's as its value ('x'),
// where go-mysql-server v0.20 writes the value's number ('1'), which MySQL
// would read back as the first member whatever the default was (and
// MariaDB refuses for a SET); a DECIMAL's with the column's scale; and
// DEFAULT NULL (TIMESTAMP: NULL DEFAULT NULL) for a nullable column without
// a default, as dumps written by MySQL have them.
func ShowCreateTable(ctx *sql.Context, n *plan.ShowCreateTable, row sql.Row) (sql.RowIter, error) {
	rows, err := DefaultRows(ctx, n, row)
	if err != nil {
		return nil, err
	}
	orderForeignKeys(rows)
	fixes := map[string]func(line string) string{} // by the column line's prefix
	var plainTimes []string                        // the lines' prefixes of TIME columns
	for _, col := range n.TargetSchema() {
		prefix := "  `" + strings.ReplaceAll(col.Name, "`", "``") + "` "
		if types.IsTimespan(col.Type) {
			// go-mysql-server's TIME writes itself time(6); a TIME(n) is
			// Miraj's own type (timetype.go), and this one keeps whole
			// seconds.
			plainTimes = append(plainTimes, prefix+"time(6)")
		}
		if def := mysqlDefaultClause(ctx, col); def != "" {
			fixes[prefix] = func(l string) string { return defaultClauseRE.ReplaceAllLiteralString(l, def) }
			continue
		}
		if col.Nullable && types.IsTimestampType(col.Type) {
			// MySQL writes a nullable TIMESTAMP with NULL before its
			// default, whether the default was written or implied.
			fixes[prefix] = func(l string) string {
				if strings.Contains(l, " NULL DEFAULT ") || strings.Contains(l, " NOT NULL") {
					return l
				}
				if strings.Contains(l, " DEFAULT ") {
					return strings.Replace(l, " DEFAULT ", " NULL DEFAULT ", 1)
				}
				return addColumnClause(l, " NULL DEFAULT NULL")
			}
			continue
		}
		if col.Default == nil && col.Generated == nil && col.Nullable && !col.AutoIncrement && takesDefaultNull(col.Type) {
			fixes[prefix] = func(l string) string {
				if strings.Contains(l, " DEFAULT ") {
					return l
				}
				return addColumnClause(l, " DEFAULT NULL")
			}
		}
	}
	if len(fixes) > 0 || len(plainTimes) > 0 {
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
				for _, p := range plainTimes {
					if strings.HasPrefix(l, p) {
						l = p[:len(p)-len("(6)")] + l[len(p):]
						lines[i] = l
					}
				}
				for prefix, fix := range fixes {
					if strings.HasPrefix(l, prefix) {
						lines[i] = fix(l)
					}
				}
			}
			r[1] = strings.Join(lines, "\n")
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// defaultClauseRE is the literal DEFAULT clause of a column line written
// by go-mysql-server: a quoted number.
var defaultClauseRE = regexp.MustCompile(`DEFAULT '-?[\d.:]+'`) // a number, or a time (TIME(n))

// mysqlDefaultClause is MySQL's DEFAULT clause of a column whose literal
// default go-mysql-server writes otherwise: an ENUM's or SET's value, where
// it writes the value's number, and a DECIMAL's with the column's scale
// ('1.50', where it writes '1.5'). "" for the other columns.
func mysqlDefaultClause(ctx *sql.Context, col *sql.Column) string {
	d := col.Default
	if n := funcs.TimeDigits(col.Type); n > 0 {
		// With the column's digits (go-mysql-server wrote six).
		if text, ok := funcs.TimeDefaultText(d, n); ok {
			return "DEFAULT " + text
		}
	}
	if d == nil || !d.IsLiteral() {
		return ""
	}
	v, err := d.Eval(ctx, nil)
	if err != nil || v == nil {
		return ""
	}
	var text string
	switch t := col.Type.(type) {
	case types.EnumType:
		idx, ok := v.(uint16)
		if !ok {
			return ""
		}
		if text, ok = t.At(int(idx)); !ok {
			return ""
		}
	case types.SetType:
		bits, ok := v.(uint64)
		if !ok {
			return ""
		}
		if text, err = t.BitsToString(bits); err != nil {
			return ""
		}
	case sql.DecimalType:
		dv, ok := v.(decimal.Decimal)
		if !ok {
			return ""
		}
		text = dv.StringFixed(int32(t.Scale()))
	default:
		return ""
	}
	return fmt.Sprintf("DEFAULT '%s'", strings.ReplaceAll(text, "'", "''"))
}

// takesDefaultNull says whether MySQL writes DEFAULT NULL for a nullable
// column of type t without a default (not for TEXT, BLOB and spatial
// columns, which have none).
func takesDefaultNull(t sql.Type) bool {
	return !types.IsTextBlob(t) && !types.IsGeometry(t)
}

// ShowColumns runs go-mysql-server's SHOW [FULL] COLUMNS (DESCRIBE) and
// writes Type and Default as MySQL does: the type without go-mysql-server's
// " COLLATE …" (MySQL shows the collation only in SHOW FULL COLUMNS'
// Collation), and a literal default as its value (Paris, an empty string),
// not quoted ('Paris', ”). ORMs read both. SHOW FULL COLUMNS' Collation is
// the column's (go-mysql-server wrote utf8mb4_0900_bin for every text
// column, none for ENUM and SET: Rails took every string column for case
// sensitive), Privileges those the user has on the column.
func ShowColumns(ctx *sql.Context, n *plan.ShowColumns, row sql.Row, mdb *mysql_db.MySQLDb) (sql.RowIter, error) {
	rows, err := DefaultRows(ctx, n, row)
	if err != nil {
		return nil, err
	}
	typeCol, defaultCol := 1, 4
	if n.Full {
		defaultCol = 5
		fullColumns(ctx, n, rows, mdb)
	}
	plainTimes := map[string]bool{} // TIME columns, by name: go-mysql-server writes them time(6)
	for _, col := range n.TargetSchema() {
		if types.IsTimespan(col.Type) {
			plainTimes[col.Name] = true
		}
	}
	for _, r := range rows {
		if len(r) <= defaultCol {
			continue
		}
		if t, ok := r[typeCol].(string); ok {
			r[typeCol] = collateRE.ReplaceAllString(t, "")
			if name, _ := r[0].(string); plainTimes[name] && t == "time(6)" {
				r[typeCol] = "time"
			}
		}
		if d, ok := r[defaultCol].(string); ok && len(d) >= 2 && d[0] == '\'' && d[len(d)-1] == '\'' {
			r[defaultCol] = strings.ReplaceAll(d[1:len(d)-1], "''", "'")
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// columnPrivileges are the privileges SHOW FULL COLUMNS lists, in
// MySQL's order.
var columnPrivileges = []struct {
	name string
	typ  sql.PrivilegeType
}{{"select", sql.PrivilegeType_Select}, {"insert", sql.PrivilegeType_Insert}, {"update", sql.PrivilegeType_Update}, {"references", sql.PrivilegeType_References}}

// fullColumns writes the Collation and Privileges of SHOW FULL COLUMNS'
// rows, one per column of n's table in order.
func fullColumns(ctx *sql.Context, n *plan.ShowColumns, rows []sql.Row, mdb *mysql_db.MySQLDb) {
	schema := n.TargetSchema()
	if len(schema) != len(rows) {
		return
	}
	db, table := "", ""
	if rt, ok := n.Child.(*plan.ResolvedTable); ok {
		db, table = rt.SqlDatabase.Name(), rt.Name()
	}
	for i, col := range schema {
		r := rows[i]
		if len(r) != 9 {
			continue
		}
		r[2] = nil
		if tc, ok := col.Type.(sql.TypeWithCollation); ok && tc.Collation() != sql.Collation_binary && !types.IsBinaryType(col.Type) {
			r[2] = tc.Collation().String()
		}
		if mdb == nil || table == "" {
			continue
		}
		var privs []string
		for _, p := range columnPrivileges {
			op := sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{Database: db, Table: table, Column: col.Name}, p.typ)
			if mdb.UserHasPrivileges(ctx, op) {
				privs = append(privs, p.name)
			}
		}
		r[7] = strings.Join(privs, ",")
	}
}

// collateRE is the CHARACTER SET and COLLATE clauses go-mysql-server adds
// to a string type.
var collateRE = regexp.MustCompile(` (?:CHARACTER SET|COLLATE) \w+`)

// ShowVariables runs go-mysql-server's SHOW VARIABLES and writes the
// values of boolean variables ON and OFF, as MySQL does (SELECT
// @@autocommit stays 1).
func ShowVariables(ctx *sql.Context, n *plan.ShowVariables, row sql.Row) (sql.RowIter, error) {
	rows, err := DefaultRows(ctx, n, row)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if len(r) < 2 {
			continue
		}
		name, ok := r[0].(string)
		if !ok {
			continue
		}
		sv, _, ok := sql.SystemVariables.GetGlobal(name)
		if !ok {
			continue
		}
		if _, isBool := sv.GetType().(types.SystemBoolType); !isBool {
			continue
		}
		switch fmt.Sprint(r[1]) {
		case "1", "true":
			r[1] = "ON"
		case "0", "false":
			r[1] = "OFF"
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// addColumnClause adds clause to a column's line of SHOW CREATE TABLE,
// before its COMMENT and its trailing comma.
func addColumnClause(l, clause string) string {
	body, comma := strings.CutSuffix(l, ",")
	if i := strings.Index(body, " COMMENT '"); i >= 0 {
		body = body[:i] + clause + body[i:]
	} else {
		body += clause
	}
	if comma {
		body += ","
	}
	return body
}

// DefaultRows runs n as go-mysql-server would and returns its rows, for a
// statement whose answer is then changed here.
func DefaultRows(ctx *sql.Context, n sql.Node, row sql.Row) ([]sql.Row, error) {
	iter, err := rowexec.DefaultBuilder.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(ctx, iter)
}
