package show

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// explainRow is one row of EXPLAIN's tabular form: one table access.
type explainRow struct {
	id         uint64
	selectType string
	table      any // string, or nil
	accessType any
	keys       any // possible_keys and key: the index used, or nil
	ref        any
	rows       any // uint64, or nil
	extra      []string
}

// explain answers EXPLAIN (without PLAN, ANALYZE or FORMAT) in MySQL's
// tabular form: a row per table the statement reads, in the order the plan
// reads them, with how (ALL: a full scan; const, eq_ref, ref, range: by
// the index in key), the rows it expects and Extra's notes (Using where,
// Using filesort, Using temporary, No tables used). go-mysql-server v0.20
// answers one row of NULLs with a warning that it is a placeholder. The
// columns are MySQL 8's (with partitions and filtered); key_len is not
// known here and stays NULL.
func Explain(ctx *sql.Context, n *plan.DescribeQuery) (sql.RowIter, error) {
	e := explainer{ctx: ctx}
	top := "SIMPLE"
	switch n.Child.(type) {
	case *plan.Update:
		top = "UPDATE"
	case *plan.DeleteFrom:
		top = "DELETE"
	case *plan.InsertInto:
		top = "INSERT"
	}
	e.walk(n.Child, 1, top)
	if len(e.rows) == 0 {
		e.rows = append(e.rows, &explainRow{id: 1, selectType: top, extra: []string{"No tables used"}})
	}
	if e.subqueries && e.rows[0].selectType == "SIMPLE" {
		for _, r := range e.rows {
			if r.id == 1 {
				r.selectType = "PRIMARY"
			}
		}
	}
	out := make([]sql.Row, len(e.rows))
	for i, r := range e.rows {
		var filtered any
		if r.table != nil {
			filtered = float64(100)
		}
		out[i] = sql.Row{r.id, r.selectType, r.table, nil, r.accessType, r.keys, r.keys, nil, r.ref, r.rows, filtered, strings.Join(r.extra, "; ")}
	}
	return sql.RowsToRowIter(out...), nil
}

type explainer struct {
	ctx        *sql.Context
	rows       []*explainRow
	nextID     uint64
	subqueries bool
}

// walk adds the table accesses under n, in the order they are read, and
// the notes of the nodes above them to the first of them.
func (e *explainer) walk(n sql.Node, id uint64, selectType string) {
	if e.nextID < id {
		e.nextID = id
	}
	first := len(e.rows)
	note := ""
	switch n := n.(type) {
	case *plan.TableAlias:
		e.table(n.Name(), n.Child, id, selectType)
		e.subqueriesOf(n)
		return
	case *plan.ResolvedTable:
		if plan.IsDualTable(n.Table) {
			return
		}
		e.table(n.Name(), n, id, selectType)
		e.subqueriesOf(n)
		return
	case *plan.IndexedTableAccess:
		e.table(n.Name(), n, id, selectType)
		e.subqueriesOf(n)
		return
	case *plan.Filter:
		note = "Using where"
	case *plan.Having:
		note = "Using where"
	case *plan.Sort:
		note = "Using filesort"
	case *plan.GroupBy:
		if len(n.GroupByExprs) > 0 {
			note = "Using temporary"
		}
	case *plan.Distinct:
		note = "Using temporary"
	}
	for _, c := range n.Children() {
		e.walk(c, id, selectType)
	}
	if note != "" && len(e.rows) > first {
		r := e.rows[first]
		r.extra = append(r.extra, note)
	}
	e.subqueriesOf(n)
}

// subqueriesOf adds the subqueries in n's expressions, each with an id of
// its own.
func (e *explainer) subqueriesOf(n sql.Node) {
	ex, ok := n.(sql.Expressioner)
	if !ok {
		return
	}
	for _, x := range ex.Expressions() {
		transform.InspectExpr(x, func(x sql.Expression) bool {
			sq, ok := x.(*plan.Subquery)
			if !ok {
				return false
			}
			e.subqueries = true
			t := "SUBQUERY"
			if !sq.Correlated().Empty() {
				t = "DEPENDENT SUBQUERY"
			}
			e.nextID++
			e.walk(sq.Query, e.nextID, t)
			return true
		})
	}
}

// table adds the access to one table.
func (e *explainer) table(name string, n sql.Node, id uint64, selectType string) {
	r := &explainRow{id: id, selectType: selectType, table: name, accessType: "ALL"}
	if t, ok := n.(*plan.IndexedTableAccess); ok {
		r.keys = t.Index().ID()
		switch {
		case t.Typ == plan.ItaTypeLookup && t.IsStrictLookup():
			r.accessType, r.rows = "eq_ref", uint64(1)
		case t.Typ == plan.ItaTypeLookup:
			r.accessType = "ref"
		default:
			r.accessType = "range"
			if l, err := t.GetLookup(e.ctx, nil); err == nil {
				switch kind := staticAccess(l); kind {
				case "const":
					r.accessType, r.ref, r.rows = kind, "const", uint64(1)
				case "ref":
					r.accessType, r.ref = kind, "const"
				case "":
					r.accessType, r.table, r.keys = nil, nil, nil
					r.extra = []string{"Impossible WHERE"}
				default:
					r.accessType = kind
				}
			}
		}
		if t.Typ == plan.ItaTypeLookup {
			var refs []string
			for _, x := range t.Expressions() {
				refs = append(refs, x.String())
			}
			r.ref = strings.Join(refs, ",")
		}
	}
	if r.rows == nil {
		if st, ok := UnderlyingTable(n).(sql.StatisticsTable); ok {
			if c, _, err := st.RowCount(e.ctx); err == nil {
				r.rows = c
			}
		}
	}
	e.rows = append(e.rows, r)
}

// UnderlyingTable is the table a table node reads.
func UnderlyingTable(n sql.Node) sql.Table {
	switch n := n.(type) {
	case *plan.IndexedTableAccess:
		return n.UnderlyingTable()
	case *plan.ResolvedTable:
		t := n.Table
		for {
			w, ok := t.(sql.TableWrapper)
			if !ok {
				return t
			}
			t = w.Underlying()
		}
	}
	return nil
}

// staticAccess is MySQL's access type of a lookup fixed at planning:
// const (one key of a unique index), ref (one key of an index that is not
// unique, or a prefix), range, index (every key: a full index scan), or ""
// (no key: an impossible WHERE).
func staticAccess(l sql.IndexLookup) string {
	if l.IsEmptyRange {
		return ""
	}
	ranges, ok := l.Ranges.(sql.MySQLRangeCollection)
	if !ok || len(ranges) == 0 {
		return "range"
	}
	if len(ranges) == 1 && len(ranges[0]) > 0 && fullColumn(ranges[0][0]) {
		return "index"
	}
	if len(ranges) > 1 {
		return "range"
	}
	cols := 0
	for _, c := range ranges[0] {
		if fullColumn(c) {
			break
		}
		if !pointColumn(c) {
			return "range"
		}
		cols++
	}
	if l.Index.IsUnique() && cols == len(l.Index.Expressions()) {
		return "const"
	}
	return "ref"
}

// pointColumn says whether a range of one column is one value: [v, v].
func pointColumn(c sql.MySQLRangeColumnExpr) bool {
	lo, ok1 := c.LowerBound.(sql.Below)
	hi, ok2 := c.UpperBound.(sql.Above)
	return ok1 && ok2 && fmt.Sprint(lo.Key) == fmt.Sprint(hi.Key)
}

// fullColumn says whether a range of one column takes every value.
func fullColumn(c sql.MySQLRangeColumnExpr) bool {
	_, lo := c.LowerBound.(sql.BelowNull)
	_, hi := c.UpperBound.(sql.AboveAll)
	return lo && hi
}
