package sqlserver

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/show"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// Updatable views. go-mysql-server v0.20 refuses INSERT, UPDATE and
// DELETE through any view (1105 "table doesn't support UPDATE"), accepts
// WITH CASCADED CHECK OPTION without keeping it and refuses WITH LOCAL
// CHECK OPTION. Miraj rewrites a statement that writes through a view
// into the same statement on the view's table, as MySQL's MERGE algorithm
// does (rewriteViewDML, at parse time):
//
//   - a view is updatable when it is one SELECT from one table (or from
//     an updatable view), without DISTINCT, GROUP BY, HAVING, aggregate
//     or window functions, or a subquery among its columns; otherwise
//     UPDATE and DELETE are 1288, INSERT 1471;
//   - the view's columns name the table's columns or expressions: the
//     statement's references to them become those; SET of an expression
//     column is 1348, INSERT into one 1471;
//   - UPDATE and DELETE see the view's rows only: its WHERE joins the
//     statement's;
//   - WITH [CASCADED | LOCAL] CHECK OPTION (kept in the view's
//     definition, viewData.Check) refuses a row written through the view
//     that the view would not show with 1369: the view's WHERE is given to
//     the table as one more CHECK constraint for the statement
//     (Table.GetChecks reads Session.viewChecks), and its violation is
//     reported as MySQL reports the view's. A view over a view with
//     CASCADED checks the inner views' conditions too; LOCAL its own only.
//
// Not built: writes through a view of a join (1288/1471, where MySQL
// writes the one table a statement changes), and a multi-table UPDATE or
// DELETE naming a view (left to go-mysql-server, which refuses it).

// maxViewCheckStatements bounds the statements whose view checks a
// session keeps (the statements prepared or run last).
const maxViewCheckStatements = 32

// viewCheck is a CHECK OPTION to enforce on a table during a statement.
type viewCheck struct {
	db, table string // lower-case
	view      string // db.view, as the error names it
	expr      string
}

// setViewChecks keeps the checks of the statement whose text is query.
// The parser may be handed a statement it rewrote already (which then
// names the table, not the view): no checks leave those found before,
// which forgetViewChecks drops when a client sends the text again.
func (s *Session) setViewChecks(query string, checks []viewCheck) {
	if len(checks) == 0 {
		return
	}
	if s.viewChecks == nil || len(s.viewChecks) >= maxViewCheckStatements {
		s.viewChecks = map[string][]viewCheck{}
	}
	s.viewChecks[query] = checks
}

// forgetViewChecks drops the checks kept for the statement text query,
// before it is parsed again (not before a prepared statement runs again:
// it is not).
func (s *Session) forgetViewChecks(query string) {
	if s != nil && s.viewChecks != nil {
		delete(s.viewChecks, query)
	}
}

// viewChecksOf returns the CHECK constraints that the statement under way
// adds to table db.table.
func viewChecksOf(ctx *sql.Context, db, table string) []sql.CheckDefinition {
	if ctx == nil {
		return nil
	}
	s, ok := ctx.Session.(*Session)
	if !ok || len(s.viewChecks) == 0 {
		return nil
	}
	var out []sql.CheckDefinition
	for _, c := range s.viewChecks[ctx.Query()] {
		if c.db == strings.ToLower(db) && c.table == strings.ToLower(table) {
			out = append(out, sql.CheckDefinition{Name: mysqlerr.ViewCheckPrefix + c.view, CheckExpression: c.expr, Enforced: true})
		}
	}
	return out
}

// viewCheckOptionRE finds a CREATE VIEW's WITH [CASCADED | LOCAL] CHECK
// OPTION at its end; viewTailRE what go-mysql-server kept of it at the end
// of the view's text.
var (
	viewCheckOptionRE = regexp.MustCompile(`(?is)\bWITH\s+(?:(CASCADED|LOCAL)\s+)?CHECK\s+OPTION\s*;?\s*$`)
	viewTailRE        = regexp.MustCompile(`(?is)\s+WITH(?:\s+(?:CASCADED|LOCAL))?(?:\s+CHECK(?:\s+OPTION)?)?\s*;?\s*$`)
)

// viewCheckOption reads the CHECK OPTION of CREATE VIEW q: "CASCADED",
// "LOCAL" or "".
func viewCheckOption(q string) string {
	m := viewCheckOptionRE.FindStringSubmatch(q)
	switch {
	case m == nil:
		return ""
	case strings.EqualFold(m[1], "LOCAL"):
		return "LOCAL"
	}
	return "CASCADED"
}

// acceptCheckOption lets go-mysql-server's planner take a CREATE VIEW …
// WITH LOCAL CHECK OPTION, which it refuses: CreateView keeps the option
// from the statement's text.
func acceptCheckOption(stmt ast.Statement) {
	if ddl, ok := stmt.(*ast.DDL); ok && ddl.ViewSpec != nil {
		ddl.ViewSpec.CheckOption = ast.ViewCheckOptionUnspecified
	}
}

// viewInfo is a view as a write through it reads it.
type viewInfo struct {
	db, name  string
	base      ast.TableName // the table (or view) it selects from, with its database
	baseAlias string        // the view's alias for it ("" if none)
	cols      []viewCol
	where     ast.Expr // nil: none
	check     string   // "", "CASCADED" or "LOCAL"
	why       string   // not updatable: why ("" when it is)
}

// viewCol is a column of a view: the expression it names (a column of
// the base when plain).
type viewCol struct {
	name  string
	expr  ast.Expr
	plain *ast.ColName
}

// loadView returns the view db.name, or false when it is not a view.
func loadView(s *Session, db, name string) (*viewInfo, bool, error) {
	if s == nil || s.engine == nil || db == "" {
		return nil, false, nil
	}
	sdb, ok := s.engine.Database(db)
	if !ok {
		return nil, false, nil
	}
	defs := s.defsIn(sdb)
	o, ok := defs.Object(objView, name)
	if !ok {
		if o, ok = defs.Object(objView, strings.ToLower(name)); !ok {
			return nil, false, nil
		}
	}
	var vd viewData
	if err := json.Unmarshal(o.Data, &vd); err != nil {
		return nil, false, err
	}
	v := &viewInfo{db: sdb.Name(), name: o.Name, check: vd.Check}
	var colNames []string
	var sel ast.SelectStatement
	if stmt, err := sql.GlobalParser.ParseSimple(vd.Create); err == nil {
		if ddl, ok := stmt.(*ast.DDL); ok && ddl.ViewSpec != nil {
			sel = ddl.ViewSpec.ViewExpr
			for _, c := range ddl.ViewSpec.Columns {
				colNames = append(colNames, c.String())
			}
		}
	}
	if sel == nil {
		stmt, err := sql.GlobalParser.ParseSimple(vd.Select)
		if err != nil {
			return nil, false, err
		}
		if sel, ok = stmt.(ast.SelectStatement); !ok {
			return nil, false, fmt.Errorf("view %s: its definition is not a SELECT", name)
		}
	}
	s1, ok := sel.(*ast.Select)
	switch {
	case !ok:
		v.why = "a UNION"
	case s1.QueryOpts.Distinct:
		v.why = "DISTINCT"
	case len(s1.GroupBy) > 0:
		v.why = "GROUP BY"
	case s1.Having != nil:
		v.why = "HAVING"
	case len(s1.From) != 1:
		v.why = "a join"
	}
	if v.why != "" {
		return v, true, nil
	}
	ate, ok := s1.From[0].(*ast.AliasedTableExpr)
	var tn ast.TableName
	if ok {
		tn, ok = ate.Expr.(ast.TableName)
	}
	if !ok {
		v.why = "a join or a derived table"
		return v, true, nil
	}
	if tn.DbQualifier.IsEmpty() {
		tn.DbQualifier = ast.NewTableIdent(v.db)
	}
	v.base, v.baseAlias = tn, ate.As.String()
	if s1.Where != nil {
		v.where = s1.Where.Expr
	}
	for _, se := range s1.SelectExprs {
		switch e := se.(type) {
		case *ast.StarExpr:
			ti := (&groupCheck{sess: s}).table(tn.DbQualifier.String(), tn.Name.String())
			if ti == nil {
				v.why = "a view over a view with *"
				return v, true, nil
			}
			for _, c := range ti.Schema.Schema {
				cn := &ast.ColName{Name: ast.NewColIdent(c.Name)}
				v.cols = append(v.cols, viewCol{name: c.Name, expr: cn, plain: cn})
			}
		case *ast.AliasedExpr:
			if hasAggregateOrSubquery(e.Expr) {
				v.why = "an aggregate, a window function or a subquery among its columns"
				return v, true, nil
			}
			c := viewCol{expr: e.Expr}
			if cn, isCol := e.Expr.(*ast.ColName); isCol {
				c.plain = cn
			}
			switch {
			case !e.As.IsEmpty():
				c.name = e.As.String()
			case c.plain != nil:
				c.name = c.plain.Name.String()
			case e.InputExpression != "":
				c.name = e.InputExpression
			default:
				c.name = ast.String(e.Expr)
			}
			v.cols = append(v.cols, c)
		default:
			v.why = "its columns"
			return v, true, nil
		}
	}
	if len(colNames) == len(v.cols) {
		for i := range v.cols {
			v.cols[i].name = colNames[i]
		}
	}
	return v, true, nil
}

// hasAggregateOrSubquery reports whether e holds an aggregate or window
// function or a subquery.
func hasAggregateOrSubquery(e ast.Expr) bool {
	found := false
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery:
			found = true
		case *ast.FuncExpr:
			if n.IsAggregate() || n.Over != nil {
				found = true
			}
		}
		return !found, nil
	}, e)
	return found
}

func (v *viewInfo) col(name string) (viewCol, bool) {
	for _, c := range v.cols {
		if strings.EqualFold(c.name, name) {
			return c, true
		}
	}
	return viewCol{}, false
}

// qualifier is how the statement rewritten onto the base names it.
func (v *viewInfo) qualifier() ast.TableName {
	if v.baseAlias != "" {
		return ast.TableName{Name: ast.NewTableIdent(v.baseAlias)}
	}
	return ast.TableName{Name: v.base.Name}
}

// mapExpr returns e with the view's columns (unqualified, or qualified by
// alias, the name the statement gives the view) replaced by what they
// name in the base; subqueries are left as they are.
func (v *viewInfo) mapExpr(e ast.Expr, alias string) ast.Expr {
	if e == nil {
		return nil
	}
	var cols []*ast.ColName
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.ColName:
			q := n.Qualifier.Name.String()
			if q == "" || strings.EqualFold(q, alias) {
				cols = append(cols, n)
			}
			return false, nil
		}
		return true, nil
	}, e)
	for _, cn := range cols {
		c, ok := v.col(cn.Name.String())
		if !ok {
			continue
		}
		to := v.baseExpr(c)
		if e == ast.Expr(cn) {
			return to
		}
		e = ast.ReplaceExpr(e, cn, to)
	}
	return e
}

// baseExpr is column c of the view as an expression on the base.
func (v *viewInfo) baseExpr(c viewCol) ast.Expr {
	if c.plain != nil {
		return &ast.ColName{Name: c.plain.Name, Qualifier: v.qualifier()}
	}
	return &ast.ParenExpr{Expr: c.expr}
}

// baseColumn is column c of the view as a column of the base, or false
// when it is an expression.
func (v *viewInfo) baseColumn(c viewCol) (*ast.ColName, bool) {
	if c.plain == nil {
		return nil, false
	}
	return &ast.ColName{Name: c.plain.Name, Qualifier: v.qualifier()}, true
}

// withWhere joins the view's WHERE to the statement's.
func (v *viewInfo) withWhere(w *ast.Where) *ast.Where {
	if v.where == nil {
		return w
	}
	vw := &ast.ParenExpr{Expr: v.where}
	if w == nil || w.Expr == nil {
		return &ast.Where{Type: ast.WhereStr, Expr: vw}
	}
	return &ast.Where{Type: ast.WhereStr, Expr: &ast.AndExpr{Left: &ast.ParenExpr{Expr: w.Expr}, Right: vw}}
}

// pendingCheck is a check on the current target, in terms of its columns.
type pendingCheck struct {
	view string
	expr ast.Expr
}

// rewriteViewDML rewrites an INSERT, UPDATE or DELETE whose target is a
// view into one on the view's table (see above), and returns the checks
// the statement must enforce there.
func rewriteViewDML(s *Session, db string, stmt ast.Statement) ([]viewCheck, error) {
	switch st := stmt.(type) {
	case *ast.Update:
		return rewriteViewWrite(s, db, st.TableExprs, "UPDATE", func(v *viewInfo, alias string) error {
			for _, a := range st.Exprs {
				q := a.Name.Qualifier.Name.String()
				if q != "" && !strings.EqualFold(q, alias) {
					continue
				}
				c, ok := v.col(a.Name.Name.String())
				if !ok {
					continue // the planner reports the unknown column
				}
				bc, ok := v.baseColumn(c)
				if !ok {
					return mysql.NewSQLError(1348, "HY000", "Column '%s' is not updatable", c.name)
				}
				a.Name = bc
				a.Expr = v.mapExpr(a.Expr, alias)
			}
			st.Where = v.withWhere(mapWhere(v, st.Where, alias))
			for _, o := range st.OrderBy {
				o.Expr = v.mapExpr(o.Expr, alias)
			}
			return nil
		})
	case *ast.Delete:
		if len(st.Targets) > 0 {
			return nil, nil // multi-table: the planner's
		}
		return rewriteViewWrite(s, db, st.TableExprs, "DELETE", func(v *viewInfo, alias string) error {
			st.Where = v.withWhere(mapWhere(v, st.Where, alias))
			for _, o := range st.OrderBy {
				o.Expr = v.mapExpr(o.Expr, alias)
			}
			return nil
		})
	case *ast.Insert:
		return rewriteViewInsert(s, db, st)
	}
	return nil, nil
}

func mapWhere(v *viewInfo, w *ast.Where, alias string) *ast.Where {
	if w == nil {
		return nil
	}
	return &ast.Where{Type: w.Type, Expr: v.mapExpr(w.Expr, alias)}
}

// rewriteViewWrite rewrites the one table of an UPDATE or DELETE while it
// is a view: rewrite maps the statement's own parts onto the view's base.
func rewriteViewWrite(s *Session, db string, tables ast.TableExprs, verb string, rewrite func(v *viewInfo, alias string) error) ([]viewCheck, error) {
	if len(tables) != 1 {
		return nil, nil
	}
	ate, ok := tables[0].(*ast.AliasedTableExpr)
	if !ok {
		return nil, nil
	}
	var pending []pendingCheck
	cascaded := false
	for depth := 0; ; depth++ {
		tn, ok := ate.Expr.(ast.TableName)
		if !ok {
			return nil, nil
		}
		vdb := tn.DbQualifier.String()
		if vdb == "" {
			vdb = db
		}
		v, isView, err := loadView(s, vdb, tn.Name.String())
		if err != nil || !isView {
			return finishChecks(pending, vdb, tn.Name.String()), err
		}
		if depth == maxViewDepth {
			return nil, mysql.NewSQLError(1288, "HY000", "The target table %s of the %s is not updatable", v.name, verb)
		}
		if v.why != "" {
			return nil, mysql.NewSQLError(1288, "HY000", "The target table %s of the %s is not updatable", v.name, verb)
		}
		alias := ate.As.String()
		if alias == "" {
			alias = v.name
		}
		if err := rewrite(v, alias); err != nil {
			return nil, err
		}
		pending = v.nextChecks(pending, alias, &cascaded)
		ate.Expr, ate.As = v.base, ast.NewTableIdent(v.baseAlias)
	}
}

// nextChecks maps the checks pending on the view onto its base, and adds
// the view's own when it has a CHECK OPTION (or one around it is
// CASCADED).
func (v *viewInfo) nextChecks(pending []pendingCheck, alias string, cascaded *bool) []pendingCheck {
	out := make([]pendingCheck, 0, len(pending)+1)
	for _, p := range pending {
		out = append(out, pendingCheck{view: p.view, expr: v.mapExpr(p.expr, alias)})
	}
	if v.where != nil && (v.check != "" || *cascaded) {
		out = append(out, pendingCheck{view: v.db + "." + v.name, expr: v.where})
	}
	if v.check == "CASCADED" {
		*cascaded = true
	}
	return out
}

// finishChecks turns the checks pending on table db.table into CHECK
// constraint expressions on its columns.
func finishChecks(pending []pendingCheck, db, table string) []viewCheck {
	var out []viewCheck
	for _, p := range pending {
		e := p.expr
		_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
			if cn, ok := node.(*ast.ColName); ok {
				cn.Qualifier = ast.TableName{}
			}
			return true, nil
		}, e)
		out = append(out, viewCheck{db: strings.ToLower(db), table: strings.ToLower(table), view: p.view,
			expr: "(" + ast.String(e) + ") IS TRUE"})
	}
	return out
}

// rewriteViewInsert rewrites INSERT INTO view … into an INSERT into its
// table.
func rewriteViewInsert(s *Session, db string, ins *ast.Insert) ([]viewCheck, error) {
	var pending []pendingCheck
	cascaded := false
	for depth := 0; ; depth++ {
		vdb := ins.Table.DbQualifier.String()
		if vdb == "" {
			vdb = db
		}
		v, isView, err := loadView(s, vdb, ins.Table.Name.String())
		if err != nil || !isView {
			return finishChecks(pending, vdb, ins.Table.Name.String()), err
		}
		notInsertable := mysql.NewSQLError(1471, "HY000", "The target table %s of the INSERT is not insertable-into", v.name)
		if v.why != "" || depth == maxViewDepth {
			return nil, notInsertable
		}
		cols := make(ast.Columns, 0, len(v.cols))
		if len(ins.Columns) == 0 {
			for _, c := range v.cols {
				if c.plain == nil {
					return nil, notInsertable
				}
				cols = append(cols, c.plain.Name)
			}
		} else {
			for _, ic := range ins.Columns {
				c, ok := v.col(ic.String())
				if !ok {
					cols = append(cols, ic) // the planner reports the unknown column
					continue
				}
				if c.plain == nil {
					return nil, notInsertable
				}
				cols = append(cols, c.plain.Name)
			}
		}
		alias := v.name
		for _, a := range ins.OnDup {
			if c, ok := v.col(a.Name.Name.String()); ok {
				bc, ok := v.baseColumn(c)
				if !ok {
					return nil, mysql.NewSQLError(1348, "HY000", "Column '%s' is not updatable", c.name)
				}
				a.Name = bc
			}
			a.Expr = v.mapExpr(a.Expr, alias)
		}
		pending = v.nextChecks(pending, alias, &cascaded)
		ins.Table, ins.Columns = v.base, cols
	}
}

// showCreateView runs go-mysql-server's SHOW CREATE VIEW and writes the
// view's CHECK OPTION at the end of its definition, as MySQL does.
func showCreateView(ctx *sql.Context, n *plan.ShowCreateTable, row sql.Row) (sql.RowIter, error) {
	rows, err := show.DefaultRows(ctx, n, row)
	if err != nil {
		return nil, err
	}
	s, ok := ctx.Session.(*Session)
	if !ok {
		return sql.RowsToRowIter(rows...), nil
	}
	w := sqltext.Scan(ctx.Query(), true)
	db, name := ctx.GetCurrentDatabase(), ""
	if len(w) >= 4 {
		name = w[3].Text
		if len(w) >= 6 && w[4].Text == "." {
			db, name = w[3].Text, w[5].Text
		}
		// sqltext.Scan upper-cases plain words: read the names as written.
		if q := ctx.Query(); w[3].Start < len(q) && q[w[3].Start] != '`' {
			name = q[w[3].Start:w[3].End]
			if len(w) >= 6 && w[4].Text == "." && q[w[5].Start] != '`' {
				db, name = name, q[w[5].Start:w[5].End]
			}
		}
	}
	v, isView, err := loadView(s, db, name)
	if err != nil || !isView || v.check == "" {
		return sql.RowsToRowIter(rows...), err
	}
	for _, r := range rows {
		if len(r) > 1 {
			if text, ok := r[1].(string); ok {
				r[1] = text + " WITH " + v.check + " CHECK OPTION"
			}
		}
	}
	return sql.RowsToRowIter(rows...), nil
}

// viewOptions fills information_schema.VIEWS' CHECK_OPTION and
// IS_UPDATABLE from the views' definitions (go-mysql-server wrote NONE
// and YES for every view).
func viewOptions(read func(*sql.Context, sql.Catalog) (sql.RowIter, error)) func(*sql.Context, sql.Catalog) (sql.RowIter, error) {
	return func(ctx *sql.Context, cat sql.Catalog) (sql.RowIter, error) {
		it, err := read(ctx, cat)
		if err != nil {
			return nil, err
		}
		rows, err := sql.RowIterToRows(ctx, it)
		if err != nil {
			return nil, err
		}
		s, ok := ctx.Session.(*Session)
		if !ok || !s.mysql {
			return sql.RowsToRowIter(rows...), nil // go-mysql-server's suites assert its own
		}
		for _, r := range rows {
			if len(r) < 6 {
				continue
			}
			db, _ := r[1].(string)
			name, _ := r[2].(string)
			v, isView, err := loadView(s, db, name)
			if err != nil || !isView {
				continue
			}
			r[4] = "NONE"
			if v.check != "" {
				r[4] = v.check
			}
			r[5] = "YES"
			if v.why != "" {
				r[5] = "NO"
			}
		}
		return sql.RowsToRowIter(rows...), nil
	}
}
