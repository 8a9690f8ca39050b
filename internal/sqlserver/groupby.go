package sqlserver

import (
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
)

// ONLY_FULL_GROUP_BY, part of MySQL 8's default sql_mode, as MySQL checks
// it: a query that groups (GROUP BY, or an aggregate function without
// one) may select, and order by, a column outside an aggregate function
// only when the grouping determines its value:
//
//   - the column is grouped, or an expression it is part of is;
//   - all the columns of its table's primary key (or of a unique key of
//     NOT NULL columns) are determined;
//   - WHERE or a join's ON says it equals a constant or a determined
//     column (top-level AND terms), or a join's USING names it.
//
// Otherwise MySQL refuses the query: 1055 (Expression #n of SELECT list
// is not in GROUP BY clause …) or, without GROUP BY, 1140. go-mysql-server
// v0.20 checks almost none of it (only a GROUP BY directly under no
// projection), so Miraj answered such queries with the value of some row.
//
// The check reads the statement as parsed, with the definitions of the
// tables it names. It errs on the side of the query: a column it cannot
// place (a derived table's, a view's, a common table expression's, an
// outer query's, an alias it does not know) passes, and so does what an
// aggregate function, a window function or ANY_VALUE() holds. A subquery
// is checked on its own, and the columns of the grouped query that a
// subquery in its select list or ORDER BY reads are checked as the
// grouped query's.

// checkFullGroupBy returns MySQL's error for the first grouped query of
// stmt that ONLY_FULL_GROUP_BY refuses; nil when there is none, when the
// session does not have the mode, or for another session.
func checkFullGroupBy(ctx *sql.Context, stmt ast.Statement) error {
	switch stmt.(type) {
	case ast.SelectStatement, *ast.Insert, *ast.Update, *ast.Delete:
	default:
		return nil // no query in it (SET, BEGIN, COMMIT, DDL …)
	}
	s, ok := ctx.Session.(*Session)
	if !ok || !s.mysql || s.engine == nil {
		return nil
	}
	g := &groupCheck{sess: s, db: ctx.GetCurrentDatabase(), full: compat.SQLMode(ctx).ModeEnabled("ONLY_FULL_GROUP_BY")}
	switch st := stmt.(type) {
	case ast.SelectStatement:
		return g.query(st, nil)
	case *ast.Insert:
		if rows, ok := st.Rows.(ast.SelectStatement); ok {
			return g.query(rows, nil)
		}
	case *ast.Update, *ast.Delete:
		return g.subqueries(st, nil)
	}
	return nil
}

// groupCheck checks the grouped queries of one statement.
type groupCheck struct {
	sess *Session
	db   string // the session's database
	full bool   // ONLY_FULL_GROUP_BY is on (else only ambiguity is checked)
}

// query checks a query and its subqueries; ctes are the names of the
// common table expressions in scope (not tables).
func (g *groupCheck) query(q ast.SelectStatement, ctes map[string]bool) error {
	switch q := q.(type) {
	case *ast.Select:
		ctes = withCTEs(q.With, ctes)
		if q.With != nil {
			for _, c := range q.With.Ctes {
				if err := g.subqueries(c, ctes); err != nil {
					return err
				}
			}
		}
		if err := g.selectOne(q, ctes); err != nil {
			return err
		}
		return g.subqueries(q, ctes)
	case *ast.SetOp:
		ctes = withCTEs(q.With, ctes)
		if err := g.query(q.Left, ctes); err != nil {
			return err
		}
		return g.query(q.Right, ctes)
	case *ast.ParenSelect:
		return g.query(q.Select, ctes)
	}
	return nil
}

// withCTEs adds the names of a WITH clause's expressions to ctes.
func withCTEs(w *ast.With, ctes map[string]bool) map[string]bool {
	if w == nil || len(w.Ctes) == 0 {
		return ctes
	}
	out := map[string]bool{}
	for k := range ctes {
		out[k] = true
	}
	for _, c := range w.Ctes {
		if c != nil && c.AliasedTableExpr != nil {
			out[strings.ToLower(c.As.String())] = true
		}
	}
	return out
}

// subqueries checks the subqueries directly inside n (not those inside
// them, which their own check reaches).
func (g *groupCheck) subqueries(n ast.SQLNode, ctes map[string]bool) error {
	var err error
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if node == n {
			return true, nil
		}
		switch node := node.(type) {
		case *ast.Subquery:
			err = g.query(node.Select, ctes)
			return false, err
		case ast.SelectStatement:
			err = g.query(node, ctes)
			return false, err
		}
		return true, nil
	}, n)
	return err
}

// groupSource is a table of a FROM clause: its name in the query and, for
// a base table, its columns and keys (nil for anything else).
type groupSource struct {
	alias, db, table string
	info             *tabledef.Info
}

// colRef is a column of a known source.
type colRef struct {
	src *groupSource
	col int
}

// groupScope is one grouped query: its sources, what its grouping
// determines, and its select list.
type groupScope struct {
	g          *groupCheck
	ctes       map[string]bool
	sources    []*groupSource
	incomplete bool // a source whose columns are not known
	// unknownGroup: GROUP BY names a column none of the tables has, no
	// alias, no select-list column: the planner's 1054, not a 1055 here.
	unknownGroup bool
	conds        []ast.Expr
	grouped      map[string]bool // expressions grouped, as groupText
	determined   map[colRef]bool
	aliases      map[string]ast.Expr // select-list aliases
	using        map[string]bool     // columns a join's USING or NATURAL makes one
	selectList   ast.SelectExprs
}

// selectOne checks one SELECT of a query.
func (g *groupCheck) selectOne(sel *ast.Select, ctes map[string]bool) error {
	hasGroupBy := len(sel.GroupBy) > 0
	if !hasGroupBy && !hasAggregate(sel) {
		return nil
	}
	sc := &groupScope{g: g, ctes: ctes, grouped: map[string]bool{}, determined: map[colRef]bool{}, aliases: map[string]ast.Expr{}, using: map[string]bool{}, selectList: sel.SelectExprs}
	for _, te := range sel.From {
		g.addSources(sc, te, ctes)
	}
	if sel.Where != nil {
		sc.conds = append(sc.conds, sel.Where.Expr)
	}
	for _, se := range sel.SelectExprs {
		if a, ok := se.(*ast.AliasedExpr); ok && !a.As.IsEmpty() {
			sc.aliases[a.As.Lowered()] = a.Expr
		}
	}
	if err := sc.checkAmbiguous(sel); err != nil {
		return err
	}
	if !g.full {
		return nil
	}
	for _, e := range sel.GroupBy {
		sc.group(e)
	}
	if sc.unknownGroup {
		return nil
	}
	sc.closeOver()

	pos := 0
	for _, se := range sel.SelectExprs {
		switch se := se.(type) {
		case *ast.StarExpr:
			cols, ok := sc.star(se)
			if !ok {
				return nil // positions past it are not known
			}
			for _, c := range cols {
				pos++
				if !sc.determined[c] {
					return groupByError(hasGroupBy, "SELECT list", pos, c)
				}
			}
		case *ast.AliasedExpr:
			pos++
			if c, bad := sc.firstUngrouped(se.Expr); bad {
				return groupByError(hasGroupBy, "SELECT list", pos, c)
			}
		default:
			pos++
		}
	}
	if !hasGroupBy {
		return nil
	}
	for i, o := range sel.OrderBy {
		if _, ok := o.Expr.(*ast.SQLVal); ok {
			continue // a position in the select list, checked there
		}
		if cn, ok := o.Expr.(*ast.ColName); ok && cn.Qualifier.IsEmpty() {
			if _, alias := sc.aliases[cn.Name.Lowered()]; alias {
				continue // an alias of the select list, checked there
			}
		}
		if c, bad := sc.firstUngrouped(o.Expr); bad {
			return groupByError(true, "ORDER BY clause", i+1, c)
		}
	}
	return nil
}

// checkAmbiguous returns MySQL's 1052 for a column of the grouped query
// sel that names no table and that more than one of its tables has.
// go-mysql-server v0.20 takes the first table's in a grouped query
// (SELECT COUNT(id) FROM t JOIN u … counted t.id), where it refuses the
// name in any other. In GROUP BY, HAVING and ORDER BY such a name is the
// select list's column of that name, as in MySQL (SELECT u.g … GROUP BY
// g groups by u.g): the name gets that column's table. Unless every
// table's columns are known, nothing is refused.
func (sc *groupScope) checkAmbiguous(sel *ast.Select) error {
	if sc.incomplete || len(sc.sources) < 2 {
		return nil
	}
	// GROUP BY, HAVING and ORDER BY take a name of the select list's
	// first: an alias, or a column's name (GROUP BY g after SELECT t.g).
	named := map[string]*ast.ColName{}
	for _, se := range sel.SelectExprs {
		if ae, ok := se.(*ast.AliasedExpr); ok {
			if cn, isCol := ae.Expr.(*ast.ColName); isCol && ae.As.IsEmpty() {
				if _, dup := named[cn.Name.Lowered()]; !dup {
					named[cn.Name.Lowered()] = cn
				}
			}
		}
	}
	check := func(n ast.SQLNode, clause string, aliases bool) error {
		var err error
		_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
			if err != nil {
				return false, nil
			}
			switch n := node.(type) {
			case *ast.Subquery:
				return false, nil
			case *ast.ColName:
				name := n.Name.Lowered()
				if !n.Qualifier.IsEmpty() || sc.using[name] {
					return false, nil
				}
				if _, isAlias := sc.aliases[name]; aliases && isAlias {
					return false, nil
				}
				found := 0
				for _, s := range sc.sources {
					if s.info.Schema.Schema.IndexOfColName(n.Name.String()) >= 0 {
						found++
					}
				}
				if col, ok := named[name]; aliases && ok {
					if found > 1 && !col.Qualifier.IsEmpty() {
						// go-mysql-server would take the first table's.
						n.Qualifier = col.Qualifier
					}
					return false, nil
				}
				if found > 1 {
					err = mysql.NewSQLError(mysql.ERNonUniq, "23000", "Column '%s' in %s is ambiguous", n.Name.String(), clause)
				}
				return false, nil
			}
			return true, nil
		}, n)
		return err
	}
	if err := check(sel.SelectExprs, "field list", false); err != nil {
		return err
	}
	if err := check(sel.GroupBy, "group statement", true); err != nil {
		return err
	}
	if sel.Having != nil {
		if err := check(sel.Having, "having clause", true); err != nil {
			return err
		}
	}
	return check(sel.OrderBy, "order clause", true)
}

// groupByError is MySQL's 1055 (with GROUP BY) or 1140 (without).
func groupByError(hasGroupBy bool, clause string, pos int, c colRef) error {
	name := c.src.db + "." + c.src.alias + "." + c.src.info.Schema.Schema[c.col].Name
	if !hasGroupBy {
		return mysql.NewSQLError(1140, "42000",
			"In aggregated query without GROUP BY, expression #%d of SELECT list contains nonaggregated column '%s'; this is incompatible with sql_mode=only_full_group_by", pos, name)
	}
	return mysql.NewSQLError(1055, "42000",
		"Expression #%d of %s is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by", pos, clause, name)
}

// addSources adds the tables of a FROM item, and the conditions of its
// joins.
func (g *groupCheck) addSources(sc *groupScope, te ast.TableExpr, ctes map[string]bool) {
	switch te := te.(type) {
	case *ast.AliasedTableExpr:
		src := &groupSource{alias: strings.ToLower(te.As.String())}
		if tn, ok := te.Expr.(ast.TableName); ok {
			src.table = tn.Name.String()
			src.db = tn.DbQualifier.String()
			if src.alias == "" {
				src.alias = strings.ToLower(src.table)
			}
			if src.db == "" {
				src.db = g.db
			}
			if !(tn.DbQualifier.IsEmpty() && ctes[strings.ToLower(src.table)]) && te.AsOf == nil {
				src.info = g.table(src.db, src.table)
			}
		}
		if src.info == nil {
			sc.incomplete = true
		}
		sc.sources = append(sc.sources, src)
	case *ast.JoinTableExpr:
		g.addSources(sc, te.LeftExpr, ctes)
		g.addSources(sc, te.RightExpr, ctes)
		if te.Condition.On != nil {
			sc.conds = append(sc.conds, te.Condition.On)
		}
		using := te.Condition.Using
		if strings.HasPrefix(strings.ToLower(te.Join), "natural") {
			// NATURAL: every column name the tables share (of all the
			// tables so far: more equalities only pass more queries).
			seen := map[string]bool{}
			for _, s := range sc.sources {
				if s.info == nil {
					continue
				}
				for _, col := range s.info.Schema.Schema {
					name := strings.ToLower(col.Name)
					if !seen[name] {
						seen[name] = true
						using = append(using, ast.NewColIdent(col.Name))
					}
				}
			}
		}
		for _, c := range using {
			sc.using[c.Lowered()] = true
			// USING (c): the column of each side is the other's.
			var eq []*ast.ColName
			for _, s := range sc.sources {
				if s.info != nil && s.info.Schema.Schema.IndexOfColName(c.String()) >= 0 {
					eq = append(eq, &ast.ColName{Name: c, Qualifier: ast.TableName{Name: ast.NewTableIdent(s.alias)}})
				}
			}
			for i := 1; i < len(eq); i++ {
				sc.conds = append(sc.conds, &ast.ComparisonExpr{Operator: ast.EqualStr, Left: eq[0], Right: eq[i]})
			}
		}
	case *ast.ParenTableExpr:
		for _, e := range te.Exprs {
			g.addSources(sc, e, ctes)
		}
	default:
		sc.incomplete = true
	}
}

// table returns a base table's definition; nil for anything else.
func (g *groupCheck) table(db, name string) *tabledef.Info {
	if db == "" {
		return nil
	}
	d, ok := g.sess.engine.Database(db)
	if !ok {
		return nil
	}
	t, ok := d.Latest().Table(name)
	if !ok {
		return nil
	}
	ti, err := tabledef.Decode(t.Def())
	if err != nil {
		return nil
	}
	return ti
}

// resolve places a column reference in a known source.
func (sc *groupScope) resolve(cn *ast.ColName) (colRef, bool) {
	name := cn.Name.String()
	if !cn.Qualifier.IsEmpty() {
		q := strings.ToLower(cn.Qualifier.Name.String())
		db := cn.Qualifier.DbQualifier.String()
		for _, s := range sc.sources {
			if s.alias != q || (db != "" && !strings.EqualFold(db, s.db)) {
				continue
			}
			if s.info == nil {
				return colRef{}, false
			}
			if i := s.info.Schema.Schema.IndexOfColName(name); i >= 0 {
				return colRef{s, i}, true
			}
			return colRef{}, false
		}
		return colRef{}, false
	}
	var found colRef
	n := 0
	for _, s := range sc.sources {
		if s.info == nil {
			continue
		}
		if i := s.info.Schema.Schema.IndexOfColName(name); i >= 0 {
			found, n = colRef{s, i}, n+1
		}
	}
	if n != 1 {
		return colRef{}, false
	}
	return found, true
}

// group records a GROUP BY item: a column, a position or alias of the
// select list, or an expression.
func (sc *groupScope) group(e ast.Expr) {
	if v, ok := e.(*ast.SQLVal); ok && v.Type == ast.IntVal {
		n, err := strconv.Atoi(string(v.Val))
		if err != nil || n < 1 || n > len(sc.selectList) {
			return
		}
		if a, ok := sc.selectList[n-1].(*ast.AliasedExpr); ok {
			sc.group(a.Expr)
		}
		return
	}
	if cn, ok := e.(*ast.ColName); ok {
		if c, ok := sc.resolve(cn); ok {
			sc.determined[c] = true
			return
		}
		if q := cn.Qualifier; !q.IsEmpty() {
			for _, src := range sc.sources {
				if src.alias == strings.ToLower(q.Name.String()) && src.info != nil && src.info.Schema.Schema.IndexOfColName(cn.Name.String()) < 0 {
					sc.unknownGroup = true // a column its table does not have
				}
			}
		}
		if cn.Qualifier.IsEmpty() {
			if a, ok := sc.aliases[cn.Name.Lowered()]; ok {
				if _, isCol := a.(*ast.ColName); isCol || !sc.grouped[rules.GroupText(a)] {
					sc.group(a)
				}
				return
			}
			// A name more than one table has: the select list's column
			// of that name (GROUP BY g after SELECT t.g), as MySQL takes it.
			for _, se := range sc.selectList {
				if ae, ok := se.(*ast.AliasedExpr); ok && ae.As.IsEmpty() {
					if sel, isCol := ae.Expr.(*ast.ColName); isCol && !sel.Qualifier.IsEmpty() && sel.Name.Equal(cn.Name) {
						sc.group(sel)
						return
					}
				}
			}
			if !sc.incomplete && !sc.anyHas(cn.Name.String()) {
				sc.unknownGroup = true
			}
		}
	}
	sc.grouped[rules.GroupText(e)] = true
}

// anyHas reports whether a table of the query has a column called name.
func (sc *groupScope) anyHas(name string) bool {
	for _, s := range sc.sources {
		if s.info == nil || s.info.Schema.Schema.IndexOfColName(name) >= 0 {
			return true
		}
	}
	return false
}

// closeOver adds what the grouped columns, the conditions and the keys
// determine, until nothing changes.
func (sc *groupScope) closeOver() {
	var eqs [][2]ast.Expr
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.AndExpr:
			walk(e.Left)
			walk(e.Right)
		case *ast.ParenExpr:
			walk(e.Expr)
		case *ast.ComparisonExpr:
			if e.Operator == ast.EqualStr || e.Operator == ast.NullSafeEqualStr {
				eqs = append(eqs, [2]ast.Expr{e.Left, e.Right})
			}
		}
	}
	for _, c := range sc.conds {
		walk(c)
	}
	for changed := true; changed; {
		changed = false
		add := func(c colRef) {
			if !sc.determined[c] {
				sc.determined[c] = true
				changed = true
			}
		}
		for _, eq := range eqs {
			l, lok := sc.column(eq[0])
			r, rok := sc.column(eq[1])
			switch {
			case lok && rok:
				if sc.determined[l] {
					add(r)
				}
				if sc.determined[r] {
					add(l)
				}
			case lok && constant(eq[1]):
				add(l)
			case rok && constant(eq[0]):
				add(r)
			}
		}
		for _, s := range sc.sources {
			if s.info != nil && sc.keyDetermined(s) {
				for i := range s.info.Schema.Schema {
					add(colRef{s, i})
				}
			}
		}
	}
}

// column places an expression that is a column reference.
func (sc *groupScope) column(e ast.Expr) (colRef, bool) {
	cn, ok := e.(*ast.ColName)
	if !ok {
		return colRef{}, false
	}
	return sc.resolve(cn)
}

// constant reports a literal or a parameter.
func constant(e ast.Expr) bool {
	switch e.(type) {
	case *ast.SQLVal, *ast.NullVal, ast.BoolVal:
		return true
	}
	return false
}

// keyDetermined reports whether all the columns of the source's primary
// key, or of a unique key of NOT NULL columns, are determined.
func (sc *groupScope) keyDetermined(s *groupSource) bool {
	all := func(cols []int) bool {
		if len(cols) == 0 {
			return false
		}
		for _, c := range cols {
			if !sc.determined[colRef{s, c}] {
				return false
			}
		}
		return true
	}
	def := s.info.Def
	if all(def.PK) {
		return true
	}
	for _, ix := range def.Indexes {
		if !ix.Unique {
			continue
		}
		notNull := true
		for _, c := range ix.Cols {
			if s.info.Schema.Schema[c].Nullable {
				notNull = false
			}
		}
		if notNull && all(ix.Cols) {
			return true
		}
	}
	return false
}

// star returns the columns a * or t.* of the select list stands for;
// false when a source's columns are not known.
func (sc *groupScope) star(se *ast.StarExpr) ([]colRef, bool) {
	var out []colRef
	q := strings.ToLower(se.TableName.Name.String())
	for _, s := range sc.sources {
		if q != "" && s.alias != q {
			continue
		}
		if s.info == nil {
			return nil, false
		}
		for i := range s.info.Schema.Schema {
			out = append(out, colRef{s, i})
		}
	}
	return out, true
}

// firstUngrouped returns the first column of e, outside aggregate
// functions, that the grouping does not determine.
func (sc *groupScope) firstUngrouped(e ast.Expr) (colRef, bool) {
	return sc.ungroupedIn(e, nil)
}

// ungroupedIn returns the first column of the grouped query in n,
// outside aggregate functions, that the grouping does not determine; n
// is inside the subqueries of scopes (none: the grouped query's own
// expression), whose own columns pass.
func (sc *groupScope) ungroupedIn(n ast.SQLNode, scopes []*innerScope) (colRef, bool) {
	var bad colRef
	found := false
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if found {
			return false, nil
		}
		switch n := node.(type) {
		case *ast.Subquery:
			bad, found = sc.outerUngrouped(n.Select, scopes)
			return false, nil
		case *ast.GroupConcatExpr:
			return false, nil
		case *ast.FuncExpr:
			if n.Over != nil || n.IsAggregate() || n.Name.Lowered() == "any_value" {
				return false, nil
			}
		case *ast.ColName:
			if innerColumn(scopes, n) {
				return false, nil
			}
			if c, ok := sc.resolve(n); ok && !sc.determined[c] {
				bad, found = c, true
			}
			return false, nil
		}
		if x, ok := node.(ast.Expr); ok && len(sc.grouped) > 0 && sc.grouped[rules.GroupText(x)] {
			return false, nil
		}
		return true, nil
	}, n)
	return bad, found
}

// innerScope is the FROM clause of a subquery: the names its sources go
// by and the columns of those whose columns are known.
type innerScope struct {
	aliases map[string]bool
	cols    map[string]bool
	unknown bool // a source whose columns are not known
}

// outerUngrouped returns the first column of the grouped query that the
// subquery q reads (outside aggregate functions) and the grouping does
// not determine, as MySQL checks a correlated subquery in the select list
// or ORDER BY. inner are the scopes of the subqueries q is inside; a
// column that may belong to any of them, or to q's own FROM, passes.
func (sc *groupScope) outerUngrouped(q ast.SelectStatement, inner []*innerScope) (colRef, bool) {
	switch q := q.(type) {
	case *ast.SetOp:
		if c, bad := sc.outerUngrouped(q.Left, inner); bad {
			return c, bad
		}
		return sc.outerUngrouped(q.Right, inner)
	case *ast.ParenSelect:
		return sc.outerUngrouped(q.Select, inner)
	case *ast.Select:
		is := &innerScope{aliases: map[string]bool{}, cols: map[string]bool{}}
		var on []ast.SQLNode
		for _, te := range q.From {
			on = sc.innerSources(is, te, on)
		}
		if q.With != nil {
			is.unknown = true // names of its own expressions: not followed
		}
		scopes := append(append([]*innerScope{}, inner...), is)
		nodes := append([]ast.SQLNode{q.SelectExprs, q.GroupBy, q.OrderBy}, on...)
		if q.Where != nil {
			nodes = append(nodes, q.Where)
		}
		if q.Having != nil {
			nodes = append(nodes, q.Having)
		}
		for _, n := range nodes {
			if c, bad := sc.ungroupedIn(n, scopes); bad {
				return c, true
			}
		}
	}
	return colRef{}, false
}

// innerSources adds a subquery's FROM item to is and returns on with the
// conditions of its joins.
func (sc *groupScope) innerSources(is *innerScope, te ast.TableExpr, on []ast.SQLNode) []ast.SQLNode {
	switch te := te.(type) {
	case *ast.AliasedTableExpr:
		alias := strings.ToLower(te.As.String())
		var ti *tabledef.Info
		if tn, ok := te.Expr.(ast.TableName); ok {
			if alias == "" {
				alias = strings.ToLower(tn.Name.String())
			}
			db := tn.DbQualifier.String()
			if db == "" {
				db = sc.g.db
			}
			if !(tn.DbQualifier.IsEmpty() && sc.ctes[strings.ToLower(tn.Name.String())]) {
				ti = sc.g.table(db, tn.Name.String())
			}
		}
		is.aliases[alias] = true
		if ti == nil {
			is.unknown = true
			return on
		}
		for _, c := range ti.Schema.Schema {
			is.cols[strings.ToLower(c.Name)] = true
		}
	case *ast.JoinTableExpr:
		on = sc.innerSources(is, te.LeftExpr, on)
		on = sc.innerSources(is, te.RightExpr, on)
		if te.Condition.On != nil {
			on = append(on, te.Condition.On)
		}
	case *ast.ParenTableExpr:
		for _, e := range te.Exprs {
			on = sc.innerSources(is, e, on)
		}
	default:
		is.unknown = true
	}
	return on
}

// innerColumn reports whether a column reference may name a column of
// one of the subqueries' own sources.
func innerColumn(scopes []*innerScope, cn *ast.ColName) bool {
	for _, is := range scopes {
		if !cn.Qualifier.IsEmpty() {
			if is.aliases[strings.ToLower(cn.Qualifier.Name.String())] {
				return true
			}
			continue
		}
		if is.unknown || is.cols[cn.Name.Lowered()] {
			return true
		}
	}
	return false
}

// hasAggregate reports an aggregate function in a SELECT's select list,
// HAVING or ORDER BY (not in its subqueries, nor a window function).
func hasAggregate(sel *ast.Select) bool {
	found := false
	visit := func(node ast.SQLNode) (bool, error) {
		if found {
			return false, nil
		}
		switch n := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.GroupConcatExpr:
			found = true
		case *ast.FuncExpr:
			if n.Over == nil && n.IsAggregate() {
				found = true
			}
		}
		return !found, nil
	}
	_ = ast.Walk(visit, sel.SelectExprs)
	if sel.Having != nil {
		_ = ast.Walk(visit, sel.Having)
	}
	_ = ast.Walk(visit, sel.OrderBy)
	return found
}
