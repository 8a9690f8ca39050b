package sqlserver

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// A job queue takes its next job with
//
//	SELECT id FROM jobs WHERE status = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
//
// over KEY (status). The entries of a secondary index are ordered by its
// columns, then by the primary key: with status fixed, the index range is
// in id order already, as MySQL knows. go-mysql-server v0.20 does not, and
// sorts; below a sort a locking read locks every pending job before the
// first is returned, and the other workers find none free. indexOrderRule
// drops such a sort in a locking read, so the walk stops at the first row
// it can lock. (Only in locking reads: elsewhere the sort costs time, not
// concurrency, and go-mysql-server's plans stay as its tests expect.)
func indexOrderRule(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qf *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if lockClauseOf(explained(ctx.Query())).mode == 0 {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.Sort)
		if !ok || !sortedByIndex(ctx, s) {
			return n, transform.SameTree, nil
		}
		return s.Child, transform.NewTree, nil
	})
}

// sortedByIndex reports whether the rows under s come in the order s asks
// for: s reads (through filters) one range of an index of ours, and its
// fields are ascending columns that follow the index's point columns (those
// the range fixes to one value) in the index's order, extended by the
// primary key.
func sortedByIndex(ctx *sql.Context, s *plan.Sort) bool {
	child := s.Child
	for {
		f, ok := child.(*plan.Filter)
		if !ok {
			break
		}
		child = f.Child
	}
	ita, ok := child.(*plan.IndexedTableAccess)
	if !ok || !ita.IsStatic() {
		return false
	}
	t, ok := ita.Table.(*Table)
	if !ok || t.lookup == nil || t.lookup.IsEmptyRange {
		return false
	}
	idx, ok := t.lookup.Index.(*Index)
	if !ok {
		return false
	}
	ranges, ok := t.lookup.Ranges.(sql.MySQLRangeCollection)
	if !ok || len(ranges) != 1 {
		return false
	}
	_, st, err := t.current(ctx)
	if err != nil {
		return false
	}
	ext := idx.extended()
	points := 0
	for k, ce := range ranges[0] {
		if k >= len(ext) || !isPoint(ce, st, ext[k]) {
			break
		}
		points++
	}
	fixed := map[int]bool{}
	for _, c := range ext[:points] {
		fixed[c] = true
	}
	schema := t.Schema()
	var cols []int
	for _, f := range s.SortFields {
		gf, ok := f.Column.(*expression.GetField)
		if !ok || f.Order != sql.Ascending || f.NullOrdering != sql.NullsFirst || !strings.EqualFold(gf.Table(), ita.Name()) {
			return false
		}
		c := schema.IndexOfColName(gf.Name())
		if c < 0 {
			return false
		}
		if !fixed[c] {
			cols = append(cols, c)
		}
	}
	if points+len(cols) > len(ext) {
		return false
	}
	for i, c := range cols {
		if ext[points+i] != c {
			return false
		}
	}
	return true
}

// explained returns the statement that an EXPLAIN of q explains (q itself
// when it is no EXPLAIN), so that EXPLAIN shows a locking read's plan.
func explained(q string) string {
	w, _ := sqltext.ScanStatement(q)
	if len(w) == 0 || (w[0].Text != "EXPLAIN" && w[0].Text != "DESCRIBE" && w[0].Text != "DESC") {
		return q
	}
	for _, x := range w[1:] {
		if x.IsWord && (x.Text == "SELECT" || x.Text == "WITH") || x.Text == "(" {
			return q[x.Start:]
		}
	}
	return q
}
