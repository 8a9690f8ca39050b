package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
)

// addKeepDeleteRule adds keepDeleteRule to go-mysql-server's
// AlwaysBeforeDefault rules, the only ones it runs before turning a DELETE
// into a TRUNCATE (its short batches for a single-table DELETE run no
// other rule of ours). That list is the package's, read when an analyzer
// is built and when a DELETE is analyzed: it is extended once per process,
// by Install.
func addKeepDeleteRule() {
	analyzer.AlwaysBeforeDefault = append(analyzer.AlwaysBeforeDefault, analyzer.Rule{Id: keepDeleteRuleID, Apply: keepDeleteRule})
}

// keepDeleteRule keeps a DELETE without WHERE from becoming a TRUNCATE,
// which go-mysql-server v0.20 makes of it on a table without trigger,
// foreign key or AUTO_INCREMENT column: run as a TRUNCATE, it set
// ROW_COUNT() to 0 (a DDL's) where MySQL gives the rows deleted. A WHERE
// TRUE is what keeps it (go-mysql-server turns only a DELETE straight from
// the table). Client connections only (Session.mysql), as go-mysql-server's
// engine suites assert its own behaviour.
func keepDeleteRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !compat.FromClient(ctx) {
		return n, transform.SameTree, nil
	}
	d, ok := n.(*plan.DeleteFrom)
	if !ok || d.HasExplicitTargets() {
		return n, transform.SameTree, nil
	}
	rt, ok := d.Child.(*plan.ResolvedTable)
	if !ok {
		return n, transform.SameTree, nil
	}
	nd, err := d.WithChildren(plan.NewFilter(expression.NewLiteral(true, types.Boolean), rt))
	if err != nil {
		return n, transform.SameTree, err
	}
	return nd, transform.NewTree, nil
}
