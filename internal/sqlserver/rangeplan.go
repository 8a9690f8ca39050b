package sqlserver

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/sqlserver/weights"
	"github.com/miraj-db/miraj/internal/storage"
)

// Range reads by key skip go-mysql-server's planner, as point lookups do
// (pointget.go).
//
// A prepared statement of the form
//
//	SELECT [DISTINCT] col, … | * | agg(col), … FROM [db.]t
//	WHERE <ranges of one column>
//	[ORDER BY col [ASC|DESC], …] [LIMIT n]
//
// where the ranges are `c BETWEEN ? AND ?`, `c = ?`, `c IN (?, …)`, a
// conjunction of comparisons of c with parameters (`c >= ? AND c < ?`), or
// a disjunction of these, on a column c that leads the primary key or a
// secondary index, and the aggregates are COUNT(*), COUNT(c), SUM(c) of an
// exact number, MIN(c) and MAX(c), is compiled once: its text is parsed
// and checked when it is first executed, and its result columns are those
// the planner described at its first execution, kept while the table's
// definition and the session's character_set_results stay as they were.
// Every later execution walks the index over the ranges with the new
// parameter values, in the order the planner's index scan gives, then
// applies DISTINCT, ORDER BY (a stable sort, as the planner's), LIMIT and
// the aggregates. Anything the compiled form cannot answer exactly as the
// planner would — a parameter of another kind than the column, a NULL
// parameter, a view, a temporary table, a missing privilege, a changed
// sql_select_limit, a column that is not there — goes the usual way,
// which also produces every error message. TestRangeReadsMatchThePlanner
// checks the two paths against each other on random statements.

// selectPlan is a compiled range read.
type selectPlan struct {
	db, table string
	star      bool
	cols      []string // projected columns, when not star and not aggregates
	aggs      []aggSpec
	distinct  bool
	whole     bool   // no WHERE: aggregates of every row
	col       string // the column the ranges are on
	ranges    []argRange
	order     []orderSpec
	limitArg  string // bind variable of LIMIT ?, "" for none
	limitN    int64  // literal LIMIT, -1 for none

	// The result columns as the planner described them, for the table
	// definition, database and character_set_results they were made for.
	mu     sync.Mutex
	fields []*querypb.Field
	forDef *storage.TableDef
	forDB  string
	forCS  sql.CharacterSetID

	enc atomic.Pointer[encoding] // how the result columns are written, as last made
}

type aggSpec struct {
	fn  string // count, sum, min, max
	col string // "" for COUNT(*)
}

// argRange is one range of parameter values; an empty name is no bound.
type argRange struct {
	lo, hi         string
	loIncl, hiIncl bool
}

type orderSpec struct {
	col  string
	desc bool
}

// parseSelectPlan returns the compiled form of a range read, or nil.
func parseSelectPlan(query string) *selectPlan {
	stmt, err := ast.Parse(query)
	if err != nil {
		return nil
	}
	sel, ok := stmt.(*ast.Select)
	if !ok || sel.With != nil || len(sel.GroupBy) > 0 || sel.Having != nil || sel.Lock != "" || sel.Into != nil ||
		len(sel.From) != 1 || len(sel.Window) > 0 || sel.QueryOpts.SQLCalcFoundRows {
		return nil
	}
	tn, ok := plainTable(sel.From[0])
	if !ok {
		return nil
	}
	p := &selectPlan{db: tn.DbQualifier.String(), table: tn.Name.String(), distinct: sel.QueryOpts.Distinct, limitN: -1}
	for _, e := range sel.SelectExprs {
		switch x := e.(type) {
		case *ast.StarExpr:
			if !x.TableName.IsEmpty() || len(sel.SelectExprs) != 1 {
				return nil
			}
			p.star = true
		case *ast.AliasedExpr:
			if !x.As.IsEmpty() {
				return nil
			}
			switch ex := x.Expr.(type) {
			case *ast.ColName:
				if !ex.Qualifier.IsEmpty() {
					return nil
				}
				p.cols = append(p.cols, ex.Name.String())
			case *ast.FuncExpr:
				a, ok := parseAgg(ex)
				if !ok {
					return nil
				}
				p.aggs = append(p.aggs, a)
			default:
				return nil
			}
		default:
			return nil
		}
	}
	if len(p.aggs) > 0 && (len(p.cols) > 0 || len(sel.OrderBy) > 0) {
		return nil // aggregates with columns need GROUP BY rules; ORDER BY of one row is left alone
	}
	switch {
	case sel.Where == nil:
		// Aggregates of the whole table: one row, whatever its size.
		if len(p.aggs) == 0 {
			return nil
		}
		p.whole = true
	case !p.disjuncts(sel.Where.Expr) || len(p.ranges) == 0:
		return nil
	}
	for _, o := range sel.OrderBy {
		c, ok := o.Expr.(*ast.ColName)
		if !ok || !c.Qualifier.IsEmpty() {
			return nil
		}
		p.order = append(p.order, orderSpec{col: c.Name.String(), desc: o.Direction == ast.DescScr})
		if p.distinct && !p.star && !slices.ContainsFunc(p.cols, func(n string) bool { return strings.EqualFold(n, c.Name.String()) }) {
			return nil // DISTINCT ordered by a column it does not return
		}
	}
	if !p.parseLimit(sel.Limit) {
		return nil
	}
	return p
}

// parseLimit reads LIMIT n or LIMIT ? (no OFFSET) into the plan.
func (p *selectPlan) parseLimit(l *ast.Limit) bool {
	if l == nil {
		return true
	}
	if l.Offset != nil {
		return false
	}
	v, ok := l.Rowcount.(*ast.SQLVal)
	if !ok {
		return false
	}
	switch v.Type {
	case ast.ValArg:
		p.limitArg = strings.TrimPrefix(string(v.Val), ":")
	case ast.IntVal:
		n, err := strconv.ParseInt(string(v.Val), 10, 64)
		if err != nil || n < 0 {
			return false
		}
		p.limitN = n
	default:
		return false
	}
	return true
}

// limited reports whether the plan has a LIMIT.
func (p *selectPlan) limited() bool { return p.limitArg != "" || p.limitN >= 0 }

// limit returns the plan's LIMIT for these parameters, -1 for none; false
// when the parameter is not a count.
func (p *selectPlan) limit(vars map[string]*querypb.BindVariable) (int64, bool) {
	if p.limitArg == "" {
		return p.limitN, true
	}
	bv, ok := vars[p.limitArg]
	if !ok {
		return 0, false
	}
	v, err := sqltypes.BindVariableToValue(bv)
	if err != nil || !v.IsIntegral() {
		return 0, false
	}
	n, err := sqltypes.ToInt64(v)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func parseAgg(f *ast.FuncExpr) (aggSpec, bool) {
	if f.Distinct || f.Over != nil || !f.Qualifier.IsEmpty() || len(f.Exprs) != 1 {
		return aggSpec{}, false
	}
	name := f.Name.Lowered()
	switch name {
	case "count", "sum", "min", "max":
	default:
		return aggSpec{}, false
	}
	switch x := f.Exprs[0].(type) {
	case *ast.StarExpr:
		if name != "count" || !x.TableName.IsEmpty() {
			return aggSpec{}, false
		}
		return aggSpec{fn: name}, true
	case *ast.AliasedExpr:
		c, ok := x.Expr.(*ast.ColName)
		if !ok || !c.Qualifier.IsEmpty() || !x.As.IsEmpty() {
			return aggSpec{}, false
		}
		return aggSpec{fn: name, col: c.Name.String()}, true
	}
	return aggSpec{}, false
}

// disjuncts reads `range OR range …`, all on one column.
func (p *selectPlan) disjuncts(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.OrExpr:
		return p.disjuncts(x.Left) && p.disjuncts(x.Right)
	case *ast.ParenExpr:
		return p.disjuncts(x.Expr)
	}
	r := argRange{}
	if !p.conjunct(e, &r, true) {
		if in, ok := e.(*ast.ComparisonExpr); ok && in.Operator == ast.InStr {
			return p.inList(in)
		}
		return false
	}
	if r.lo == "" && r.hi == "" {
		return false
	}
	p.ranges = append(p.ranges, r)
	return true
}

// onColumn checks that c names the plan's column, setting it if unset.
func (p *selectPlan) onColumn(c *ast.ColName) bool {
	if !c.Qualifier.IsEmpty() {
		return false
	}
	name := c.Name.String()
	if p.col == "" {
		p.col = name
		return true
	}
	return strings.EqualFold(p.col, name)
}

func argName(e ast.Expr) (string, bool) {
	v, ok := e.(*ast.SQLVal)
	if !ok || v.Type != ast.ValArg {
		return "", false
	}
	return strings.TrimPrefix(string(v.Val), ":"), true
}

// conjunct narrows r by one condition, or by an AND of them when top (an
// AND inside a disjunct). It refuses a second bound on the same side.
func (p *selectPlan) conjunct(e ast.Expr, r *argRange, top bool) bool {
	switch x := e.(type) {
	case *ast.AndExpr:
		return top && p.conjunct(x.Left, r, false) && p.conjunct(x.Right, r, false)
	case *ast.ParenExpr:
		return p.conjunct(x.Expr, r, top)
	case *ast.RangeCond:
		c, ok := x.Left.(*ast.ColName)
		lo, ok1 := argName(x.From)
		hi, ok2 := argName(x.To)
		if x.Operator != ast.BetweenStr || !ok || !ok1 || !ok2 || !p.onColumn(c) || r.lo != "" || r.hi != "" {
			return false
		}
		*r = argRange{lo: lo, hi: hi, loIncl: true, hiIncl: true}
		return true
	case *ast.ComparisonExpr:
		if x.Escape != nil {
			return false
		}
		op := x.Operator
		c, ok := x.Left.(*ast.ColName)
		arg, ok2 := argName(x.Right)
		if !ok || !ok2 {
			c, ok = x.Right.(*ast.ColName)
			arg, ok2 = argName(x.Left)
			op = flipComparison(op)
		}
		if !ok || !ok2 || !p.onColumn(c) {
			return false
		}
		switch op {
		case ast.EqualStr:
			if r.lo != "" || r.hi != "" {
				return false
			}
			*r = argRange{lo: arg, hi: arg, loIncl: true, hiIncl: true}
		case ast.GreaterThanStr, ast.GreaterEqualStr:
			if r.lo != "" {
				return false
			}
			r.lo, r.loIncl = arg, op == ast.GreaterEqualStr
		case ast.LessThanStr, ast.LessEqualStr:
			if r.hi != "" {
				return false
			}
			r.hi, r.hiIncl = arg, op == ast.LessEqualStr
		default:
			return false
		}
		return true
	}
	return false
}

func flipComparison(op string) string {
	switch op {
	case ast.GreaterThanStr:
		return ast.LessThanStr
	case ast.GreaterEqualStr:
		return ast.LessEqualStr
	case ast.LessThanStr:
		return ast.GreaterThanStr
	case ast.LessEqualStr:
		return ast.GreaterEqualStr
	}
	return op
}

// inList reads c IN (?, ?, …): one point range per parameter.
func (p *selectPlan) inList(x *ast.ComparisonExpr) bool {
	c, ok := x.Left.(*ast.ColName)
	tuple, ok2 := x.Right.(ast.ValTuple)
	if !ok || !ok2 || len(tuple) == 0 || !p.onColumn(c) {
		return false
	}
	for _, e := range tuple {
		arg, ok := argName(e)
		if !ok {
			return false
		}
		p.ranges = append(p.ranges, argRange{lo: arg, hi: arg, loIncl: true, hiIncl: true})
	}
	return true
}

// valueRange is a range of converted values.
type valueRange struct {
	lo, hi         any // nil: unbounded
	loIncl, hiIncl bool
}

// trySelect answers a compiled range read; ok false sends it the usual way
// (which, when the plan has no result columns yet, records them). ctx is
// the statement's, in the process list (run).
func (g *pointGets) trySelect(ctx *sql.Context, usual func(func(*sqltypes.Result) error) error, c *mysql.Conn, prep *mysql.PrepareData, p *selectPlan, callback func(*sqltypes.Result) error) (bool, error) {
	sess := g.srv.session(c.ConnectionID)
	if sess == nil || len(sess.temp) > 0 {
		return false, nil
	}
	t, dbName, ok := g.readTable(ctx, sess, p.db, p.table)
	if !ok {
		return false, nil
	}
	if limited, _ := sql.HasDefaultValue(ctx, sess, "sql_select_limit"); !limited {
		return false, nil
	}
	def := t.Def()
	p.mu.Lock()
	fields := p.fields
	if fields != nil && (p.forDef != def || !strings.EqualFold(p.forDB, dbName) || p.forCS != ctx.GetCharacterSetResults()) {
		fields = nil
	}
	p.mu.Unlock()
	if fields == nil {
		return g.recordFields(usual, p, def, dbName, ctx.GetCharacterSetResults(), callback)
	}
	ti, err := tabledef.Decode(def)
	if err != nil {
		return false, nil
	}
	sch := ti.SchemaIn(dbName).Schema
	pos, ix := -1, -1
	if !p.whole {
		pos = sch.IndexOfColName(p.col)
		if pos < 0 || sch[pos].Virtual {
			return false, nil
		}
		if ix, ok = leadingIndex(def, pos); !ok {
			return false, nil
		}
	}
	// The columns read, in output order.
	var proj []int
	switch {
	case p.star:
		for i, col := range sch {
			if col.Virtual {
				return false, nil
			}
			proj = append(proj, i)
		}
	case len(p.aggs) > 0:
		for _, a := range p.aggs {
			if a.col == "" {
				proj = append(proj, -1)
				continue
			}
			i := sch.IndexOfColName(a.col)
			if i < 0 || sch[i].Virtual || (a.fn == "sum" && !exactNumber(sch[i].Type)) {
				return false, nil
			}
			proj = append(proj, i)
		}
	default:
		for _, name := range p.cols {
			i := sch.IndexOfColName(name)
			if i < 0 || sch[i].Virtual {
				return false, nil
			}
			proj = append(proj, i)
		}
	}
	if len(fields) != len(proj) {
		return false, nil
	}
	var order []int
	for _, o := range p.order {
		i := sch.IndexOfColName(o.col)
		if i < 0 || sch[i].Virtual {
			return false, nil
		}
		order = append(order, i)
	}
	var ranges []valueRange
	if !p.whole {
		if ranges, ok = p.bind(ctx, t, sch[pos].Type, pos, prep.BindVars); !ok {
			return false, nil
		}
	}
	limit, ok := p.limit(prep.BindVars)
	if !ok {
		return false, nil
	}
	if !g.srv.engine.Analyzer.Catalog.MySQLDb.UserHasPrivileges(ctx,
		sql.NewPrivilegedOperation(sql.PrivilegeCheckSubject{Database: dbName, Table: def.Name}, sql.PrivilegeType_Select)) {
		return false, nil
	}

	sc := getScratch()
	defer putScratch(sc)
	rows := sc.rows[:0]
	// Aggregates of the whole table that need no scan: COUNT(*) is the
	// number of rows the transaction sees, MIN and MAX of a column that
	// leads an index are at the ends of that index.
	// COUNT(*) and COUNT of the range's column (never NULL in a range)
	// over ranges are the number of the index's entries in them.
	countOnly, ends, counted := p.whole, p.whole, !p.whole && len(p.aggs) > 0
	for i, a := range p.aggs {
		countOnly = countOnly && a.fn == "count" && a.col == ""
		counted = counted && a.fn == "count" && (a.col == "" || proj[i] == pos)
		if a.fn == "min" || a.fn == "max" {
			_, leads := leadingIndex(def, proj[i])
			ends = ends && leads
		} else {
			ends = ends && a.fn == "count" && a.col == ""
		}
	}
	switch {
	case countOnly || ends || counted:
	case p.whole:
		rows = slices.Grow(rows, t.Len())
		var sc scanning
		var err error
		t.Scan(func(r *storage.Row) bool {
			rows = append(rows, r)
			err = sc.step(ctx, 1)
			return err == nil
		})
		if err != nil {
			return true, err
		}
	default:
		// Rows are read through the index alone when it holds every
		// column the statement reads (a covering index).
		only := t.IndexCovers(ix, append(append([]int{pos}, proj...), order...))
		if err := scanRanges(ctx, t, ix, pos, ranges, only, func(r *storage.Row) { rows = append(rows, r) }); err != nil {
			return true, err
		}
	}
	sc.rows = rows

	sess.ClearWarnings()
	res := &sqltypes.Result{Fields: fields}
	if len(p.aggs) > 0 {
		var out []sqltypes.Value
		switch {
		case countOnly:
			out, ok = countRow(fields, t.Len())
		case counted:
			out, ok = countRow(fields, countRanges(t, ix, pos, ranges))
		case ends:
			out, ok = indexEnds(ctx, t, sch, p.aggs, proj, fields)
		default:
			out, ok = aggregateRow(ctx, t, sch, p.aggs, proj, fields, rows)
		}
		if !ok {
			return false, nil
		}
		if limit != 0 {
			res.Rows = [][]sqltypes.Value{out}
		}
	} else {
		sorted := false
		if p.distinct && len(order) > 0 {
			if r, ok := sortedDistinct(t, sch, proj, order, p.order, rows, sc); ok {
				rows, sorted = r, true
			}
		}
		if p.distinct && !sorted {
			rows, err = distinctRows(ctx, sch, proj, rows)
			if err != nil {
				return false, nil
			}
		}
		if len(order) > 0 && !sorted {
			rows = sortRows(t, sch, order, p.order, rows, sc)
		}
		if limit >= 0 && int64(len(rows)) > limit {
			rows = rows[:limit]
		}
		// The values are written out by the callback, after which the
		// buffer goes back to the pool (as the planner's results do).
		buf := sql.ByteBufPool.Get().(*sql.ByteBuffer)
		defer func() {
			buf.Reset()
			sql.ByteBufPool.Put(buf)
		}()
		cs := ctx.GetCharacterSetResults()
		enc := p.enc.Load()
		if !enc.fits(def, dbName, cs) || !slices.Equal(enc.proj, proj) {
			enc = &encoding{def: def, db: dbName, cs: cs, proj: proj, cols: encodeCols(sch, proj, cs)}
			p.enc.Store(enc)
		}
		if res.Rows, err = encodeRows(enc.encoder(ctx, buf), rows, sc); err != nil {
			return false, nil
		}
	}
	sess.SetLastQueryInfoInt(sql.RowCount, -1)
	sess.SetLastQueryInfoInt(sql.FoundRows, int64(len(res.Rows)))
	g.ranged.Add(1)
	countStatement(ctx, "Com_select")
	return true, callback(res)
}

// recordFields runs the statement the usual way and keeps the result
// columns the planner gave it.
func (g *pointGets) recordFields(usual func(func(*sqltypes.Result) error) error, p *selectPlan, def *storage.TableDef, db string, cs sql.CharacterSetID, callback func(*sqltypes.Result) error) (bool, error) {
	seen := false
	err := usual(func(r *sqltypes.Result) error {
		if !seen && len(r.Fields) > 0 {
			seen = true
			p.mu.Lock()
			p.fields, p.forDef, p.forDB, p.forCS = r.Fields, def, db, cs
			p.mu.Unlock()
		}
		return callback(r)
	})
	return true, err
}

// readTable finds the table a compiled read reads: in the session's
// transaction, or committed in autocommit mode outside one.
func (g *pointGets) readTable(ctx *sql.Context, sess *Session, dbName, table string) (*storage.Table, string, bool) {
	if dbName == "" {
		dbName = sess.GetCurrentDatabase()
	}
	if dbName == "" {
		return nil, "", false
	}
	db, found := g.srv.storage.Database(dbName)
	if !found {
		return nil, "", false
	}
	var t *storage.Table
	if sess.txn != nil {
		t, found = sess.storageTx(db).Table(table)
	} else {
		if !sess.autocommit() {
			return nil, "", false // a transaction would begin: let the engine do it
		}
		t, found = db.Snapshot().Table(table)
	}
	if !found {
		return nil, "", false
	}
	return t, db.Name(), true
}

// leadingIndex is the index whose first column is col: -1 for the primary
// key, the position of a secondary index otherwise.
func leadingIndex(def *storage.TableDef, col int) (int, bool) {
	if len(def.PK) > 0 && def.PK[0] == col {
		return -1, true
	}
	for i, ix := range def.Indexes {
		if len(ix.Cols) > 0 && ix.Cols[0] == col {
			return i, true
		}
	}
	return 0, false
}

func exactNumber(t sql.Type) bool { return types.IsInteger(t) || types.IsDecimal(t) }

// bind converts the parameters of the plan's ranges to the column's type,
// drops empty ranges, and merges overlapping ones into ascending order.
func (p *selectPlan) bind(ctx *sql.Context, t *storage.Table, typ sql.Type, pos int, vars map[string]*querypb.BindVariable) ([]valueRange, bool) {
	val := func(name string) (any, bool) {
		if name == "" {
			return nil, true
		}
		bv, ok := vars[name]
		if !ok {
			return nil, false
		}
		return keyValue(ctx, typ, bv)
	}
	cmp := func(a, b any) int { return t.CompareCol(pos, a, b) }
	out := make([]valueRange, 0, len(p.ranges))
	for _, r := range p.ranges {
		lo, ok1 := val(r.lo)
		hi, ok2 := val(r.hi)
		if !ok1 || !ok2 {
			return nil, false
		}
		vr := valueRange{lo: lo, hi: hi, loIncl: r.loIncl, hiIncl: r.hiIncl}
		if lo != nil && hi != nil {
			if c := cmp(lo, hi); c > 0 || (c == 0 && (!vr.loIncl || !vr.hiIncl)) {
				continue // empty
			}
		}
		out = append(out, vr)
	}
	// Ascending by lower bound (unbounded first), then merged.
	slices.SortStableFunc(out, func(a, b valueRange) int { return compareLow(cmp, a, b) })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && overlaps(cmp, merged[n-1], r) {
			last := &merged[n-1]
			if last.hi != nil && (r.hi == nil || cmp(r.hi, last.hi) > 0 || (cmp(r.hi, last.hi) == 0 && r.hiIncl)) {
				last.hi, last.hiIncl = r.hi, r.hiIncl
			} else if r.hi == nil {
				last.hi = nil
			}
			continue
		}
		merged = append(merged, r)
	}
	return merged, true
}

func compareLow(cmp func(a, b any) int, a, b valueRange) int {
	switch {
	case a.lo == nil && b.lo == nil:
		return 0
	case a.lo == nil:
		return -1
	case b.lo == nil:
		return 1
	}
	if c := cmp(a.lo, b.lo); c != 0 {
		return c
	}
	switch {
	case a.loIncl == b.loIncl:
		return 0
	case a.loIncl:
		return -1
	}
	return 1
}

// overlaps says whether b, which starts no earlier than a, shares a value
// with a or touches it.
func overlaps(cmp func(a, b any) int, a, b valueRange) bool {
	if a.hi == nil || b.lo == nil {
		return true
	}
	c := cmp(b.lo, a.hi)
	return c < 0 || (c == 0 && (a.hiIncl || b.loIncl))
}

// countRanges returns how many rows of index ix (-1: primary) have their
// column pos in one of the ranges, which do not overlap (scanRanges).
func countRanges(t *storage.Table, ix, pos int, ranges []valueRange) int {
	vals := make([]any, t.Def().NumCols)
	n := 0
	for _, r := range ranges {
		vals[pos] = r.lo
		bound := int8(-1)
		if r.lo == nil || !r.loIncl {
			bound = 1 // past the NULLs when there is no lower bound
		}
		lo := storage.Seek(slices.Clone(vals), 1, bound)
		var hi *storage.Row
		if r.hi != nil {
			vals[pos], bound = r.hi, 1
			if !r.hiIncl {
				bound = -1
			}
			hi = storage.Seek(slices.Clone(vals), 1, bound)
		}
		n += t.CountRange(ix, lo, hi)
	}
	return n
}

// scanRanges calls fn for each row of index ix (-1: primary) whose column
// pos is in one of the ranges, in index order. NULLs are in no range. only:
// fn reads no other column than the index's and the primary key's
// (Table.AscendIndexOnly). It stops with the error of ctx once ctx ends
// (KILL QUERY; see scanning).
func scanRanges(ctx context.Context, t *storage.Table, ix, pos int, ranges []valueRange, only bool, fn func(r *storage.Row)) error {
	var sc scanning
	ascend := t.AscendIndex
	if only {
		ascend = t.AscendIndexOnly
	}
	def := t.Def()
	vals := make([]any, def.NumCols)
	batch := make([]*storage.Row, 0, storage.WarmBatch)
	for _, r := range ranges {
		// Past the NULLs when there is no lower bound: a seek after
		// every row whose column is NULL.
		vals[pos] = r.lo
		bound := int8(-1)
		if r.lo == nil || !r.loIncl {
			bound = 1
		}
		pivot := storage.Seek(slices.Clone(vals), 1, bound)
		// The rows come in batches, warmed before they are read
		// (storage.Warm): the index's order is not the rows' order in
		// memory.
		past := false
		work := func() {
			if !only { // rows made from an index's entries are fresh in memory
				storage.Warm(batch)
			}
			for _, row := range batch {
				if row.IsNull(pos) {
					continue
				}
				if r.hi != nil {
					c := t.CompareAt(row, pos, r.hi)
					if c > 0 || (c == 0 && !r.hiIncl) {
						past = true
						break
					}
				}
				fn(row)
			}
			batch = batch[:0]
		}
		var err error
		ascend(ix, pivot, func(row *storage.Row) bool {
			batch = append(batch, row)
			if len(batch) == storage.WarmBatch {
				work()
				err = sc.step(ctx, storage.WarmBatch)
			}
			return !past && err == nil
		})
		if err != nil {
			return err
		}
		if !past {
			work()
		}
	}
	return nil
}

// scanning checks, every scanCheckRows rows a compiled statement reads or
// writes, whether its context ended (KILL QUERY, the connection's end), so
// that a statement over many rows stops as the planner's does.
type scanning struct {
	rows   int
	writes bool // the rows are being written
}

const scanCheckRows = 1024

// scanPause, when set (by tests), is called at each check.
var scanPause atomic.Pointer[func(writes bool)]

func (s *scanning) step(ctx context.Context, rows int) error {
	s.rows += rows
	if s.rows < scanCheckRows {
		return nil
	}
	s.rows = 0
	if f := scanPause.Load(); f != nil {
		(*f)(s.writes)
	}
	return ctx.Err()
}

// distinctRows keeps the first of the rows whose projected values MySQL
// takes for the same (DistinctKey).
func distinctRows(ctx *sql.Context, sch sql.Schema, proj []int, rows []*storage.Row) ([]*storage.Row, error) {
	outSch := make(sql.Schema, len(proj))
	for i, pos := range proj {
		outSch[i] = sch[pos]
	}
	seen := make(map[string]struct{}, len(rows))
	vals := make(sql.Row, len(proj))
	var key []byte
	out := rows[:0]
	for _, r := range rows {
		for i, pos := range proj {
			vals[i] = r.Value(pos)
		}
		var err error
		if key, err = rules.DistinctKey(ctx, key[:0], outSch, vals); err != nil {
			return nil, err
		}
		if _, dup := seen[string(key)]; dup {
			continue
		}
		seen[string(key)] = struct{}{}
		out = append(out, r)
	}
	return out, nil
}

// aggregateRow computes the one row of aggregates over rows, written as the
// planner's result columns describe it.
func aggregateRow(ctx *sql.Context, t *storage.Table, sch sql.Schema, aggs []aggSpec, proj []int, fields []*querypb.Field, rows []*storage.Row) ([]sqltypes.Value, bool) {
	out := make([]sqltypes.Value, len(aggs))
	for i, a := range aggs {
		pos := proj[i]
		f := fields[i]
		switch a.fn {
		case "count":
			n := len(rows)
			if pos >= 0 {
				n = storage.CountNonNull(rows, pos)
			}
			if !sqltypes.IsIntegral(f.Type) {
				return nil, false
			}
			out[i] = sqltypes.MakeTrusted(f.Type, strconv.AppendInt(nil, int64(n), 10))
		case "sum":
			if f.Type != sqltypes.Decimal {
				return nil, false
			}
			if types.IsInteger(sch[pos].Type) {
				if sum, some, ok := sumInts(rows, pos); ok {
					if !some {
						out[i] = sqltypes.NULL
					} else {
						out[i] = sqltypes.MakeTrusted(sqltypes.Decimal, []byte(sum.StringFixed(int32(f.Decimals))))
					}
					continue
				}
			}
			sum, some := decimal.Zero, false
			for _, r := range rows {
				v := r.Value(pos)
				if v == nil {
					continue
				}
				d, err := funcs.ExactValue(ctx, v)
				if err != nil {
					return nil, false
				}
				sum, some = sum.Add(d), true
			}
			if !some {
				out[i] = sqltypes.NULL
				continue
			}
			out[i] = sqltypes.MakeTrusted(sqltypes.Decimal, []byte(sum.StringFixed(int32(f.Decimals))))
		case "min", "max":
			var best any
			for _, r := range rows {
				v := r.Value(pos)
				if v == nil {
					continue
				}
				if best == nil {
					best = v
					continue
				}
				c := t.CompareCol(pos, v, best)
				if (a.fn == "min" && c < 0) || (a.fn == "max" && c > 0) {
					best = v
				}
			}
			if f.Type != sch[pos].Type.Type() {
				return nil, false
			}
			vals, err := server.RowToSQL(ctx, sch[pos:pos+1], sql.Row{best}, nil, sql.NewByteBuffer(64))
			if err != nil {
				return nil, false
			}
			out[i] = vals[0]
		default:
			return nil, false
		}
	}
	return out, true
}

// sortRows sorts rows stably by the columns of order, as the planner's
// ORDER BY does. A string column is compared rune weight by rune weight
// with the ASCII weights from a table (weights.Compare), stopping at the
// first difference, as types.StringType.Compare does.
func sortRows(t *storage.Table, sch sql.Schema, order []int, spec []orderSpec, rows []*storage.Row, sc *selectScratch) []*storage.Row {
	colls := make([]sql.CollationID, len(order))
	fast := make([]bool, len(order))
	for k, col := range order {
		if st, ok := sch[col].Type.(sql.StringType); ok && weights.HasSortKey(st.Collation()) {
			colls[k], fast[k] = st.Collation(), true
		}
	}
	if len(order) > 0 && fast[0] && len(rows) > 8 {
		// The first column's prefixes first (weights.Prefix): most pairs
		// differ there.
		var keyed []prefixedRow
		if sc != nil && cap(sc.keyed) >= len(rows) {
			keyed = sc.keyed[:len(rows)]
		} else {
			keyed = make([]prefixedRow, len(rows))
		}
		if sc != nil {
			sc.keyed = keyed
		}
		for i, r := range rows {
			keyed[i] = prefixedRow{row: r, pos: i}
			if s, ok := r.StringAt(order[0]); ok {
				keyed[i].prefix, keyed[i].ok = weights.Prefix(colls[0], s), true
			}
		}
		desc := spec[0].desc
		// Equal rows keep their order by their positions: the order of
		// a stable sort, with the quicker unstable one.
		slices.SortFunc(keyed, func(a, b prefixedRow) int {
			if a.ok && b.ok && a.prefix != b.prefix {
				c := cmp.Compare(a.prefix, b.prefix)
				if desc {
					c = -c
				}
				return c
			}
			if c := compareBy(t, order, spec, colls, fast, a.row, b.row); c != 0 {
				return c
			}
			return cmp.Compare(a.pos, b.pos)
		})
		for i := range keyed {
			rows[i] = keyed[i].row
		}
		return rows
	}
	slices.SortStableFunc(rows, func(a, b *storage.Row) int {
		return compareBy(t, order, spec, colls, fast, a, b)
	})
	return rows
}

// prefixedRow is a row with the prefix of its first sort column (ok: the
// value is a string).
type prefixedRow struct {
	row    *storage.Row
	pos    int // in the rows as read
	prefix uint64
	ok     bool
}

func compareBy(t *storage.Table, order []int, spec []orderSpec, colls []sql.CollationID, fast []bool, a, b *storage.Row) int {
	for k, col := range order {
		var c int
		x, ok1 := a.StringAt(col)
		y, ok2 := b.StringAt(col)
		if fast[k] && ok1 && ok2 {
			c = weights.Compare(colls[k], x, y)
		} else {
			c = t.CompareCol(col, a.Value(col), b.Value(col))
		}
		if spec[k].desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// sortedDistinct is DISTINCT after the sort, for an ORDER BY over exactly
// the returned columns, all strings of a collation weights.Compare knows
// or integers: rows the planner's DISTINCT takes for one are then
// neighbours, the first of them in index order (the sort is stable), and
// comparing neighbours replaces the weight string of every row.
func sortedDistinct(t *storage.Table, sch sql.Schema, proj, order []int, spec []orderSpec, rows []*storage.Row, sc *selectScratch) ([]*storage.Row, bool) {
	if len(proj) != len(order) {
		return nil, false
	}
	for _, col := range proj {
		if !slices.Contains(order, col) {
			return nil, false
		}
		st, isString := sch[col].Type.(sql.StringType)
		if !(isString && weights.HasSortKey(st.Collation())) && !types.IsInteger(sch[col].Type) {
			return nil, false
		}
	}
	rows = sortRows(t, sch, order, spec, rows, sc)
	colls := make([]sql.CollationID, len(order))
	fast := make([]bool, len(order))
	for k, col := range order {
		if st, ok := sch[col].Type.(sql.StringType); ok {
			colls[k], fast[k] = st.Collation(), true
		}
	}
	out := rows[:0]
	for i, r := range rows {
		if i > 0 && compareBy(t, order, spec, colls, fast, out[len(out)-1], r) == 0 {
			continue
		}
		out = append(out, r)
	}
	return out, true
}

// countRow is the row of COUNT(*)s of n rows.
func countRow(fields []*querypb.Field, n int) ([]sqltypes.Value, bool) {
	out := make([]sqltypes.Value, len(fields))
	for i, f := range fields {
		if !sqltypes.IsIntegral(f.Type) {
			return nil, false
		}
		out[i] = sqltypes.MakeTrusted(f.Type, strconv.AppendInt(nil, int64(n), 10))
	}
	return out, true
}

// indexEnds is the row of COUNT(*)s, MINs and MAXes of a whole table whose
// MIN and MAX columns each lead an index: the smallest value is the first
// after the NULLs of that index, the largest its last (NULL when the last
// is NULL: every value is).
func indexEnds(ctx *sql.Context, t *storage.Table, sch sql.Schema, aggs []aggSpec, proj []int, fields []*querypb.Field) ([]sqltypes.Value, bool) {
	out := make([]sqltypes.Value, len(aggs))
	for i, a := range aggs {
		if a.fn == "count" {
			v, ok := countRow(fields[i:i+1], t.Len())
			if !ok {
				return nil, false
			}
			out[i] = v[0]
			continue
		}
		pos := proj[i]
		ix, ok := leadingIndex(t.Def(), pos)
		if !ok {
			return nil, false
		}
		var end []*storage.Row
		take := func(r *storage.Row) bool {
			if !r.IsNull(pos) {
				end = append(end, r)
			}
			return false
		}
		if a.fn == "min" {
			t.AscendIndex(ix, storage.Seek(make([]any, t.Def().NumCols), 1, 1), take)
		} else {
			t.DescendIndex(ix, nil, take)
		}
		v, ok := aggregateRow(ctx, t, sch, aggs[i:i+1], proj[i:i+1], fields[i:i+1], end)
		if !ok {
			return nil, false
		}
		out[i] = v[0]
	}
	return out, true
}
