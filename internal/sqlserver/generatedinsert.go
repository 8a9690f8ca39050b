package sqlserver

import (
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// insertGeneratedColumns lists the table's columns in stmt, an INSERT or
// REPLACE … VALUES that lists none into a table with a generated column:
// INSERT INTO t VALUES (1, DEFAULT), where the value of a generated
// column is DEFAULT, as MySQL takes it. go-mysql-server v0.20 refused any
// INSERT without a column list into such a table (1105); with the list, a
// value other than DEFAULT for a generated column is refused (3105,
// messages.go) and a row of the wrong length is 1136, as in MySQL.
func insertGeneratedColumns(s *Session, db string, stmt ast.Statement) {
	ins, ok := stmt.(*ast.Insert)
	if !ok || len(ins.Columns) > 0 || s == nil || s.engine == nil {
		return
	}
	switch ins.Rows.(type) {
	case ast.Values, *ast.AliasedValues:
	default:
		return
	}
	if q := ins.Table.DbQualifier.String(); q != "" {
		db = q
	}
	ti := (&groupCheck{sess: s}).table(db, ins.Table.Name.String())
	if ti == nil {
		return
	}
	generated := false
	cols := make(ast.Columns, len(ti.Schema.Schema))
	for i, c := range ti.Schema.Schema {
		generated = generated || c.Generated != nil
		cols[i] = ast.NewColIdent(c.Name)
	}
	if generated {
		ins.Columns = cols
	}
}
