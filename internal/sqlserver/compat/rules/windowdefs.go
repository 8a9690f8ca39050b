package rules

import (
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Named windows (SELECT RANK() OVER w … WINDOW w AS (ORDER BY s)) are
// written into the OVER clauses that name them before the statement is
// planned (lockParser.finish). go-mysql-server v0.20 kept the merged definition of an OVER
// clause that names a window under the empty name, and merged the next
// OVER clause without a name into it: RANK() OVER w, RANK() OVER (ORDER
// BY id) failed with 1105 (window '' cannot inherit '' since both contain
// order by clause). A definition MySQL would refuse (an OVER clause with
// its own PARTITION BY, an ORDER BY or frame given twice, a window that
// does not exist) is left for go-mysql-server to refuse.

// InlineWindows rewrites sel's OVER clauses (not its subqueries').
func InlineWindows(sel *ast.Select) {
	defs := map[string]*ast.WindowDef{}
	for _, w := range sel.Window {
		if w == nil || w.Name.IsEmpty() {
			return
		}
		defs[w.Name.Lowered()] = w
	}
	resolved := map[string]*ast.WindowDef{}
	var resolve func(name string, depth int) *ast.WindowDef
	resolve = func(name string, depth int) *ast.WindowDef {
		if r, ok := resolved[name]; ok {
			return r
		}
		w, ok := defs[name]
		if !ok || depth > len(defs) {
			return nil // not defined, or a cycle
		}
		r := w
		if !w.NameRef.IsEmpty() {
			parent := resolve(w.NameRef.Lowered(), depth+1)
			if parent == nil {
				return nil
			}
			if r = mergeWindow(w, parent); r == nil {
				return nil
			}
		}
		resolved[name] = r
		return r
	}
	visit := func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.FuncExpr:
			if n.Over == nil || n.Over.NameRef.IsEmpty() {
				return true, nil
			}
			over := (*ast.WindowDef)(n.Over)
			parent := resolve(over.NameRef.Lowered(), 0)
			if parent == nil {
				return true, nil
			}
			if m := mergeWindow(over, parent); m != nil {
				n.Over = (*ast.Over)(m)
			}
		}
		return true, nil
	}
	_ = ast.Walk(visit, sel.SelectExprs)
	_ = ast.Walk(visit, sel.OrderBy)
}

// mergeWindow returns the window w (which names parent) with parent's
// definition written in, without a name; nil when MySQL refuses the pair.
func mergeWindow(w, parent *ast.WindowDef) *ast.WindowDef {
	if len(w.PartitionBy) > 0 || (len(w.OrderBy) > 0 && len(parent.OrderBy) > 0) || (parent.Frame != nil && (w.Frame != nil || len(w.OrderBy) > 0)) {
		return nil
	}
	m := &ast.WindowDef{Name: w.Name, PartitionBy: parent.PartitionBy, OrderBy: parent.OrderBy, Frame: parent.Frame}
	if len(w.OrderBy) > 0 {
		m.OrderBy = w.OrderBy
	}
	if w.Frame != nil {
		m.Frame = w.Frame
	}
	return m
}
