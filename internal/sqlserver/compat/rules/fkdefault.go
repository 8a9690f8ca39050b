package rules

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// SetDefault refuses a foreign key ON DELETE or ON UPDATE SET
// DEFAULT, as InnoDB does. go-mysql-server refuses it only when its own
// MySQL parser read the statement; through the server's it created the
// key, and a delete of a parent row then set the child's columns to
// their defaults.
func SetDefault(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	var fks []*sql.ForeignKeyConstraint
	switch n := n.(type) {
	case *plan.CreateTable:
		fks = n.ForeignKeys()
	case *plan.CreateForeignKey:
		fks = []*sql.ForeignKeyConstraint{n.FkDef}
	case *plan.Block:
		for _, c := range n.Children() { // ALTER TABLE of several changes
			if fk, ok := c.(*plan.CreateForeignKey); ok {
				fks = append(fks, fk.FkDef)
			}
		}
	default:
		return n, transform.SameTree, nil
	}
	for _, fk := range fks {
		if fk != nil && (fk.OnDelete == sql.ForeignKeyReferentialAction_SetDefault || fk.OnUpdate == sql.ForeignKeyReferentialAction_SetDefault) {
			return nil, transform.SameTree, sql.ErrForeignKeySetDefault.New()
		}
	}
	return n, transform.SameTree, nil
}
