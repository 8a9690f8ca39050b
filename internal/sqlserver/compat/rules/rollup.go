package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// GROUP BY … WITH ROLLUP, as MySQL 8 answers it: after the rows of each
// group come super-aggregate rows, one per grouping prefix, in which the
// grouped expressions that prefix leaves out are NULL; the last row
// aggregates every row. go-mysql-server v0.20's parser does not know the
// clause (1064), so Miraj reads it itself:
//
//   - before parsing, WITH ROLLUP becomes a marker column at the end of
//     the GROUP BY list (RollupText), which parses wherever a GROUP BY may
//     stand, so the statement's SELECT that carries it is found after;
//   - that SELECT is rewritten (RewriteRollup) as one grouped query per
//     prefix, joined with UNION ALL in a derived table, the left-out
//     expressions printed as NULL in each (in the select list, HAVING and
//     ORDER BY, not inside aggregate functions or subqueries), sorted by
//     the grouped expressions with each super-aggregate row after the
//     rows it sums up (MySQL's order without ORDER BY), or by the query's
//     ORDER BY (which MySQL 8 allows, and MariaDB refuses with 1221).
//
// GROUPING(expr, …) answers 1 for an expression the row leaves out, as
// in MySQL 8. What the rewriting cannot carry is refused with 1235: a
// window function, SELECT *, and WITH ROLLUP in a view's stored text.

// rollupMarker is the GROUP BY column that stands for WITH ROLLUP while
// the statement is parsed.
const rollupMarker = "~rollup"

// RollupText returns q with each WITH ROLLUP replaced by the marker
// column (padded to the same length, so positions hold).
func RollupText(q string) string {
	if sqltext.IndexFold(q, "rollup") < 0 {
		return q
	}
	var b []byte
	words := sqltext.Scan(q, false)
	for i := 0; i+1 < len(words); i++ {
		if !words[i].IsWord || words[i].Text != "WITH" || !words[i+1].IsWord || words[i+1].Text != "ROLLUP" {
			continue
		}
		if b == nil {
			b = []byte(q)
		}
		start, end := words[i].Start, words[i+1].End
		marker := ",`" + rollupMarker + "`"
		copy(b[start:], marker)
		for j := start + len(marker); j < end; j++ {
			b[j] = ' '
		}
	}
	if b == nil {
		return q
	}
	return string(b)
}

// IsRollupMarker reports the marker column.
func IsRollupMarker(e ast.Expr) bool {
	cn, ok := e.(*ast.ColName)
	return ok && cn.Qualifier.IsEmpty() && cn.Name.String() == rollupMarker
}

// TakeRollup takes the marker off the end of sel's GROUP BY, reporting
// whether it was there.
func TakeRollup(sel *ast.Select) bool {
	if len(sel.GroupBy) == 0 || !IsRollupMarker(sel.GroupBy[len(sel.GroupBy)-1]) {
		return false
	}
	sel.GroupBy = sel.GroupBy[:len(sel.GroupBy)-1]
	return true
}

// ErrRollupSyntax is the parser's 1064 for WITH ROLLUP where MySQL takes
// none (the marker left anywhere but at the end of a GROUP BY).
func ErrRollupSyntax() error {
	return mysql.NewSQLError(mysql.ERParseError, "42000",
		"You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'WITH ROLLUP'")
}

// ErrRollupUnsupported is MySQL's 1235 for what Miraj does not carry
// through WITH ROLLUP.
func ErrRollupUnsupported(what string) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
		"This version of Miraj doesn't yet support '%s with WITH ROLLUP'", what)
}

// rollupQuery is one SELECT … WITH ROLLUP being rewritten.
type rollupQuery struct {
	sel    *ast.Select
	groups []ast.Expr // the GROUP BY items, positions and aliases resolved
	err    error      // from printing (GROUPING of an expression not grouped)
}

// RewriteRollup replaces sel (its GROUP BY without the marker) with the
// query that answers it with rollup rows; parse parses a statement.
func RewriteRollup(sel *ast.Select, parse func(string) (ast.Statement, error)) error {
	q := &rollupQuery{sel: sel}
	if sel.Into != nil {
		return ErrRollupUnsupported("SELECT … INTO")
	}
	if len(sel.Window) > 0 || hasWindow(sel) {
		return ErrRollupUnsupported("a window function")
	}
	aliases := map[string]ast.Expr{}
	for _, se := range sel.SelectExprs {
		ae, ok := se.(*ast.AliasedExpr)
		if !ok {
			return ErrRollupUnsupported("SELECT *")
		}
		if !ae.As.IsEmpty() {
			aliases[ae.As.Lowered()] = ae.Expr
		}
	}
	for _, g := range sel.GroupBy {
		q.groups = append(q.groups, resolveGroupItem(g, sel.SelectExprs, aliases))
	}

	n := len(q.groups)
	var b strings.Builder
	if sel.With != nil {
		b.WriteString(strings.TrimSpace(ast.String(sel.With)))
		b.WriteByte(' ')
	}
	b.WriteString("select ")
	if sel.QueryOpts.Distinct {
		b.WriteString("distinct ")
	}
	if sel.QueryOpts.SQLCalcFoundRows {
		b.WriteString("sql_calc_found_rows ")
	}
	// The derived table's columns: the select list's (under their alias,
	// or ~c<i>), the sort keys of the ORDER BY items that are not
	// columns of the result (~o<i>), and per grouped expression whether
	// the row leaves it out (~r<j>) and its value (~g<j>).
	names := make([]string, len(sel.SelectExprs))
	for i, se := range sel.SelectExprs {
		ae := se.(*ast.AliasedExpr)
		names[i] = "~c" + strconv.Itoa(i+1)
		if !ae.As.IsEmpty() {
			names[i] = ae.As.String()
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s as %s", sqltext.QuoteIdent(names[i]), sqltext.QuoteIdent(columnName(ae)))
	}
	var orderKeys []ast.Expr // ORDER BY items computed in the branches
	var order []string
	for _, o := range sel.OrderBy {
		dir := " " + o.Direction
		if o.Direction == "" {
			dir = ""
		}
		if i, ok := resultColumn(o.Expr, sel.SelectExprs); ok {
			order = append(order, sqltext.QuoteIdent(names[i])+dir)
			continue
		}
		orderKeys = append(orderKeys, o.Expr)
		order = append(order, sqltext.QuoteIdent("~o"+strconv.Itoa(len(orderKeys)))+dir)
	}
	if !sel.QueryOpts.Distinct {
		for j := 1; j <= n; j++ {
			order = append(order, sqltext.QuoteIdent("~r"+strconv.Itoa(j)), sqltext.QuoteIdent("~g"+strconv.Itoa(j)))
		}
	}
	b.WriteString(" from (")
	for k := n; k >= 0; k-- {
		if k < n {
			b.WriteString(" union all ")
		}
		q.branch(&b, k, names, orderKeys)
	}
	b.WriteString(") as " + sqltext.QuoteIdent(rollupMarker))
	if len(order) > 0 {
		b.WriteString(" order by " + strings.Join(order, ", "))
	}
	if sel.Limit != nil {
		b.WriteString(ast.String(sel.Limit))
	}
	b.WriteString(sel.Lock)
	if q.err != nil {
		return q.err
	}
	stmt, err := parse(b.String())
	if err != nil {
		return err
	}
	out, ok := stmt.(*ast.Select)
	if !ok {
		return fmt.Errorf("WITH ROLLUP: the rewritten query is a %T", stmt)
	}
	*sel = *out
	return nil
}

// branch writes the grouped query of the rows that group by the first k
// grouped expressions (k = all: the query's own rows; 0: the total).
func (q *rollupQuery) branch(b *strings.Builder, k int, names []string, orderKeys []ast.Expr) {
	sel := q.sel
	b.WriteString("select ")
	for i, se := range sel.SelectExprs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q.print(se.(*ast.AliasedExpr).Expr, k))
		b.WriteString(" as " + sqltext.QuoteIdent(names[i]))
	}
	for i, e := range orderKeys {
		fmt.Fprintf(b, ", %s as %s", q.print(e, k), sqltext.QuoteIdent("~o"+strconv.Itoa(i+1)))
	}
	for j, g := range q.groups {
		left := "1"
		val := "null"
		if j < k {
			left, val = "0", q.print(g, k)
		}
		fmt.Fprintf(b, ", %s as %s, %s as %s", left, sqltext.QuoteIdent("~r"+strconv.Itoa(j+1)), val, sqltext.QuoteIdent("~g"+strconv.Itoa(j+1)))
	}
	if sel.From != nil {
		b.WriteString(" from ")
		b.WriteString(ast.String(sel.From))
	}
	b.WriteString(ast.String(sel.Where))
	for j := 0; j < k; j++ {
		if j == 0 {
			b.WriteString(" group by ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(ast.String(q.groups[j]))
	}
	var having []string
	if sel.Having != nil && sel.Having.Expr != nil {
		having = append(having, "("+q.print(sel.Having.Expr, k)+")")
	}
	if k == 0 {
		// Without rows there is no total row (MySQL), as a query without
		// GROUP BY would have one.
		having = append(having, "count(*) > 0")
	}
	if len(having) > 0 {
		b.WriteString(" having " + strings.Join(having, " and "))
	}
}

// print writes e for the rows grouped by the first k grouped
// expressions: the others are NULL, GROUPING() is a number.
func (q *rollupQuery) print(e ast.Expr, k int) string {
	var format ast.NodeFormatter
	format = func(buf *ast.TrackedBuffer, node ast.SQLNode) {
		switch n := node.(type) {
		case *ast.Subquery, *ast.GroupConcatExpr:
			buf.WriteString(ast.String(n))
			return
		case *ast.FuncExpr:
			if n.Name.Lowered() == "grouping" && n.Over == nil {
				buf.WriteString(strconv.Itoa(q.grouping(n, k)))
				return
			}
			if n.IsAggregate() && n.Over == nil {
				buf.WriteString(ast.String(n))
				return
			}
		}
		if e, ok := node.(ast.Expr); ok {
			for j := k; j < len(q.groups); j++ {
				if sameGroupExpr(e, q.groups[j]) {
					buf.WriteString("null")
					return
				}
			}
		}
		node.Format(buf)
	}
	buf := ast.NewTrackedBuffer(format)
	buf.Myprintf("%v", e)
	return buf.String()
}

// grouping is GROUPING(args) for the rows grouped by the first k grouped
// expressions: a bit per argument, the last argument's lowest, set when
// the row leaves that expression out.
func (q *rollupQuery) grouping(f *ast.FuncExpr, k int) int {
	v := 0
	for i, se := range f.Exprs {
		ae, ok := se.(*ast.AliasedExpr)
		j := -1
		if ok {
			for gi, g := range q.groups {
				if sameGroupExpr(ae.Expr, g) {
					j = gi
					break
				}
			}
		}
		if j < 0 {
			if q.err == nil {
				q.err = mysql.NewSQLError(3580, "HY000", "Argument #%d of GROUPING function is not in GROUP BY", i+1)
			}
			return 0
		}
		v <<= 1
		if j >= k {
			v |= 1
		}
	}
	return v
}

// resolveGroupItem returns the expression a GROUP BY item groups: a
// select-list position or alias stands for that expression.
func resolveGroupItem(g ast.Expr, list ast.SelectExprs, aliases map[string]ast.Expr) ast.Expr {
	if v, ok := g.(*ast.SQLVal); ok && v.Type == ast.IntVal {
		if n, err := strconv.Atoi(string(v.Val)); err == nil && n >= 1 && n <= len(list) {
			return list[n-1].(*ast.AliasedExpr).Expr
		}
	}
	if cn, ok := g.(*ast.ColName); ok && cn.Qualifier.IsEmpty() {
		if e, ok := aliases[cn.Name.Lowered()]; ok {
			if _, agg := e.(*ast.FuncExpr); !agg || !e.(*ast.FuncExpr).IsAggregate() {
				return e
			}
		}
	}
	return g
}

// resultColumn returns the select-list column an ORDER BY item names: a
// position, an alias, or the same expression.
func resultColumn(e ast.Expr, list ast.SelectExprs) (int, bool) {
	if v, ok := e.(*ast.SQLVal); ok && v.Type == ast.IntVal {
		if n, err := strconv.Atoi(string(v.Val)); err == nil && n >= 1 && n <= len(list) {
			return n - 1, true
		}
	}
	if cn, ok := e.(*ast.ColName); ok && cn.Qualifier.IsEmpty() {
		for i, se := range list {
			if ae := se.(*ast.AliasedExpr); !ae.As.IsEmpty() && ae.As.Lowered() == cn.Name.Lowered() {
				return i, true
			}
		}
	}
	for i, se := range list {
		if sameGroupExpr(e, se.(*ast.AliasedExpr).Expr) {
			return i, true
		}
	}
	return 0, false
}

// sameGroupExpr reports whether two expressions are the same for
// GROUP BY: the same text, or the same column where one of them leaves
// its table out.
func sameGroupExpr(a, b ast.Expr) bool {
	ca, aok := a.(*ast.ColName)
	cb, bok := b.(*ast.ColName)
	if aok && bok {
		if !ca.Name.Equal(cb.Name) {
			return false
		}
		return ca.Qualifier.IsEmpty() || cb.Qualifier.IsEmpty() || strings.EqualFold(ast.String(ca.Qualifier), ast.String(cb.Qualifier))
	}
	if aok != bok {
		return false
	}
	return GroupText(a) == GroupText(b)
}

// columnName is the name MySQL gives a select-list column: its alias,
// the column's name, or the expression as written.
func columnName(ae *ast.AliasedExpr) string {
	switch {
	case !ae.As.IsEmpty():
		return ae.As.String()
	case ae.InputExpression != "":
		return ae.InputExpression
	}
	if cn, ok := ae.Expr.(*ast.ColName); ok {
		return cn.Name.String()
	}
	return ast.String(ae.Expr)
}

// hasWindow reports a window function in sel's select list or ORDER BY.
func hasWindow(sel *ast.Select) bool {
	found := false
	visit := func(node ast.SQLNode) (bool, error) {
		if _, ok := node.(*ast.Subquery); ok {
			return false, nil
		}
		if f, ok := node.(*ast.FuncExpr); ok && f.Over != nil {
			found = true
		}
		return !found, nil
	}
	_ = ast.Walk(visit, sel.SelectExprs)
	_ = ast.Walk(visit, sel.OrderBy)
	return found
}

// GroupText is an expression's text for matching a GROUP BY expression.
func GroupText(e ast.Expr) string {
	return strings.ToLower(strings.ReplaceAll(ast.String(e), "`", ""))
}
