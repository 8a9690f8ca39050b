package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
)

// ALTER TABLE … [DEFAULT] CHARACTER SET / COLLATE
// (sql.CollationAlterableTable): it was 1105 (the table could not have its
// collation altered).

var _ sql.CollationAlterableTable = (*Table)(nil)

// ModifyDefaultCollation sets the collation the table's new text columns
// get (ALTER TABLE t CHARACTER SET …, COLLATE …); the columns there keep
// theirs, as in MySQL, and no row is written again.
func (t *Table) ModifyDefaultCollation(ctx *sql.Context, collation sql.CollationID) error {
	if t.temp {
		return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'", "ALTER TABLE … CHARACTER SET of a temporary table")
	}
	ti := t.info
	def, err := tabledef.Build(t.Name(), ti.Schema, collation, ti.Meta.Comment, ti.Meta.Indexes, ti.Meta.Checks, ti.Meta.ForeignKeys)
	if err != nil {
		return err
	}
	return t.redefine(ctx, def)
}

// ModifyStoredCollation is CONVERT TO CHARACTER SET, which the parser
// reads as a change of the default alone: the statement is refused before
// it gets here (notbuilt.go).
func (t *Table) ModifyStoredCollation(*sql.Context, sql.CollationID) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'", "ALTER TABLE … CONVERT TO CHARACTER SET")
}
