package sqlserver

import (
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/iters"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
)

// UNION (DISTINCT), INTERSECT and EXCEPT compare rows as MySQL does, under the
// collation of each string column: 'apple' UNION 'Apple' is one row under
// utf8mb4_0900_ai_ci. go-mysql-server v0.20 hashed the rows' values as
// text (sql.HashOf), and made a column whose two sides' types differ a
// CHAR in utf8mb4_0900_bin, so it kept both, even for a column with
// itself. Here the union's rows are read without go-mysql-server's
// DISTINCT, then made distinct by DistinctKey with each string column's
// collation as MySQL works it out from the two sides (the column's, or
// the connection's for literals), then ordered (ORDER BY, with the same
// collations), then OFFSET and LIMIT, in the order the union applies them.

// setOp runs a UNION DISTINCT, an INTERSECT or an EXCEPT of a client
// session over string columns with a collation; nil leaves the others to
// go-mysql-server. INTERSECT and EXCEPT compare rows by DistinctKey too
// (go-mysql-server compared their hashes: 'apple' INTERSECT 'APPLE' was
// empty); with ALL they keep as many copies of a row as MySQL does (the
// fewer of the two sides', the left's less the right's).
func (x adminExec) setOp(ctx *sql.Context, n *plan.SetOp, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) || (n.SetOpType == plan.UnionType && !n.Distinct) {
		return nil, nil
	}
	sch := unionSchema(ctx, n)
	if !rules.HasCollatedString(sch) {
		return nil, nil
	}
	var iter sql.RowIter
	var err error
	if n.SetOpType == plan.UnionType {
		all := *n
		all.Distinct, all.SortFields, all.Limit, all.Offset = false, nil, nil, nil
		if iter, err = x.exec.Build(ctx, &all, row); err != nil {
			return nil, err
		}
		iter = rules.NewCollatedDistinct(iter, sch)
	} else if iter, err = x.intersectExcept(ctx, n, sch, row); err != nil {
		return nil, err
	}
	if len(n.SortFields) > 0 {
		iter = &keyedSortIter{child: iter, fields: retypeSortFields(n.SortFields, sch), idx: -1}
	}
	if n.Offset == nil && n.Limit == nil {
		return iter, nil
	}
	w := &windowIter{child: iter, limit: -1}
	if n.Offset != nil {
		if w.skip, err = iters.GetInt64Value(ctx, n.Offset); err != nil {
			return nil, err
		}
	}
	if n.Limit != nil {
		if w.limit, err = iters.GetInt64Value(ctx, n.Limit); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// intersectExcept returns the rows of an INTERSECT or EXCEPT, compared
// under sch's collations: for each key of the left side, in the order the
// keys first came, copies of its first row (MySQL, as MariaDB, returns a
// key's first row): one when DISTINCT keeps the key (it is on the right
// side too for INTERSECT, not for EXCEPT), else as many as ALL keeps, the
// fewer of the two sides' counts (INTERSECT) or the left's less the
// right's (EXCEPT).
func (x adminExec) intersectExcept(ctx *sql.Context, n *plan.SetOp, sch sql.Schema, row sql.Row) (sql.RowIter, error) {
	right, err := x.keyedRows(ctx, n.Right(), sch, row)
	if err != nil {
		return nil, err
	}
	left, err := x.keyedRows(ctx, n.Left(), sch, row)
	if err != nil {
		return nil, err
	}
	intersect := n.SetOpType == plan.IntersectType
	var rows []sql.Row
	for _, k := range left.order {
		l, r := left.count[k], right.count[k]
		var copies int
		switch {
		case n.Distinct && (r > 0) == intersect:
			copies = 1
		case n.Distinct:
		case intersect:
			copies = min(l, r)
		default:
			copies = max(l-r, 0)
		}
		for range copies {
			rows = append(rows, left.first[k])
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// keyedRows are the rows of one side of a set operation by DistinctKey: the
// keys in the order they first came, the first row and the count of each.
type keyedRows struct {
	order []string
	first map[string]sql.Row
	count map[string]int
}

// keyedRows reads the rows of n.
func (x adminExec) keyedRows(ctx *sql.Context, n sql.Node, sch sql.Schema, row sql.Row) (*keyedRows, error) {
	iter, err := x.exec.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	defer iter.Close(ctx)
	out := &keyedRows{first: map[string]sql.Row{}, count: map[string]int{}}
	var key []byte
	for {
		r, err := iter.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if key, err = rules.DistinctKey(ctx, key[:0], sch, r); err != nil {
			return nil, err
		}
		k := string(key)
		if out.count[k] == 0 {
			out.order = append(out.order, k)
			out.first[k] = r
		}
		out.count[k]++
	}
}

// unionSchema is a union's schema with each string column in the
// collation MySQL gives it: the two sides' collations resolved by their
// coercibility, a side's CHAR conversion (go-mysql-server's, where the
// sides' types differ) read through to what it converts.
func unionSchema(ctx *sql.Context, n *plan.SetOp) sql.Schema {
	out := n.Schema().Copy()
	for i, c := range out {
		st, ok := c.Type.(sql.StringType)
		if !ok || types.IsBinaryType(c.Type) {
			continue
		}
		lc, lk := sideCollation(ctx, n.Left(), i)
		rc, rk := sideCollation(ctx, n.Right(), i)
		coll, _ := sql.ResolveCoercibility(lc, lk, rc, rk)
		if coll == sql.Collation_Unspecified || coll.Equals(sql.Collation_binary) || coll.Equals(st.Collation()) {
			continue
		}
		t, err := types.CreateString(st.Type(), st.Length(), coll)
		if err != nil {
			continue
		}
		out[i].Type = t
	}
	return out
}

// sideCollation is the collation and coercibility of column i of one side
// of a union.
func sideCollation(ctx *sql.Context, side sql.Node, i int) (sql.CollationID, byte) {
	if u, ok := side.(*plan.SetOp); ok { // a union of its own
		lc, lk := sideCollation(ctx, u.Left(), i)
		rc, rk := sideCollation(ctx, u.Right(), i)
		return sql.ResolveCoercibility(lc, lk, rc, rk)
	}
	if p, ok := side.(*plan.Project); ok && i < len(p.Projections) {
		e := p.Projections[i]
		if a, ok := e.(*expression.Alias); ok {
			e = a.Child
		}
		if c, ok := e.(*expression.Convert); ok && c.Type() == types.LongText {
			e = c.Child
		}
		return sql.GetCoercibility(ctx, e)
	}
	sch := side.Schema()
	if i < len(sch) {
		if st, ok := sch[i].Type.(sql.StringType); ok {
			return st.Collation(), 2
		}
	}
	return sql.Collation_Unspecified, 6
}

// retypeSortFields gives the sort fields that read a column of sch that
// column's type (its collation).
func retypeSortFields(fields sql.SortFields, sch sql.Schema) sql.SortFields {
	out := make(sql.SortFields, len(fields))
	for i, f := range fields {
		col, _, _ := transform.Expr(f.Column, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			gf, ok := e.(*expression.GetField)
			if !ok || gf.Index() < 0 || gf.Index() >= len(sch) || gf.Type() == sch[gf.Index()].Type {
				return e, transform.SameTree, nil
			}
			return expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), sch[gf.Index()].Type, gf.Database(), gf.Table(), gf.Name(), gf.IsNullable()), transform.NewTree, nil
		})
		f.Column = col
		out[i] = f
	}
	return out
}

// windowIter skips the first skip rows of its child, then returns at most
// limit (all when negative).
type windowIter struct {
	child       sql.RowIter
	skip, limit int64
}

func (w *windowIter) Next(ctx *sql.Context) (sql.Row, error) {
	for ; w.skip > 0; w.skip-- {
		if _, err := w.child.Next(ctx); err != nil {
			return nil, err
		}
	}
	if w.limit == 0 {
		return nil, io.EOF
	}
	r, err := w.child.Next(ctx)
	if err == nil && w.limit > 0 {
		w.limit--
	}
	return r, err
}

func (w *windowIter) Close(ctx *sql.Context) error { return w.child.Close(ctx) }

// unionRowsRule clears the flag by which go-mysql-server's handler takes a
// query for one that returns at most one row, in a query with a set
// operation: the flag is set when one side reads a single row by a unique
// key, and the handler then failed the whole statement when the union
// returned a second row ("result max1Row iterator returned more than one
// row"; SELECT … WHERE id = 1 UNION SELECT …).
func unionRowsRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if qFlags == nil || !qFlags.IsSet(sql.QFlagMax1Row) {
		return n, transform.SameTree, nil
	}
	found := false
	transform.Inspect(n, func(n sql.Node) bool {
		switch n.(type) {
		case *plan.SetOp, *plan.RecursiveCte:
			found = true
		}
		return !found
	})
	if found {
		qFlags.Unset(sql.QFlagMax1Row)
	}
	return n, transform.SameTree, nil
}
