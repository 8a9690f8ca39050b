package sqlserver

// The execution builder's first look at each node (adminExec.Build): a
// dispatch table from the node's type to what the server does for it,
// before go-mysql-server's builder runs it (a nil iterator) or instead of
// it. The builders' comments name the files of their concerns.

import (
	"fmt"
	"reflect"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/show"
)

// adminExec is the execution builder's first look at each node: it refuses
// what the session's account may not do, then lets go-mysql-server's
// builder run the node (a nil iterator), or runs it itself with fewer rows
// (SHOW PROCESSLIST).
type adminExec struct {
	grants grants
	// exec is the builder adminExec is the first look of, which builds
	// the children of the nodes adminExec wraps (so that adminExec sees
	// them too).
	exec *execBuilder
	srv  *Server
}

// execBuilder holds the execution builder, set once it is made.
type execBuilder struct{ sql.NodeExecBuilder }

var _ sql.NodeExecBuilder = adminExec{}

// Build runs the node's entry of adminBuilders, if any: the refusals of
// what the session's account may not do (privileges.go) and MySQL's
// answers where go-mysql-server's differ.
func (x adminExec) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	if s, ok := ctx.Session.(*Session); ok && s.ins.source.node != nil && s.ins.source.node == n {
		// The rows of the INSERT being built: built as any node, then
		// their text values for numeric columns checked (numtext.go).
		src := s.ins.source
		s.ins.source = insertSource{}
		iter, err := x.exec.Build(ctx, n, row)
		if err != nil {
			return nil, err
		}
		return newInsertRows(ctx, iter, src), nil
	}
	if n, ok := n.(ownNode); ok {
		return n.buildWith(ctx, x, row)
	}
	if build, ok := adminBuilders[reflect.TypeOf(n)]; ok {
		return build(x, ctx, n, row)
	}
	return nil, nil
}

// adminBuilder is what adminExec does for one type of node.
type adminBuilder func(x adminExec, ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error)

// nodeKey is the dispatch table's key of node type T.
func nodeKey[T sql.Node]() reflect.Type { return reflect.TypeFor[T]() }

// on makes the entry of a builder of node type T.
func on[T sql.Node](build func(adminExec, *sql.Context, T, sql.Row) (sql.RowIter, error)) adminBuilder {
	return func(x adminExec, ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
		return build(x, ctx, n.(T), row)
	}
}

// adminBuilders is the dispatch table.
var adminBuilders = map[reflect.Type]adminBuilder{
	nodeKey[*plan.Call]():            on(adminExec.buildCall),
	nodeKey[*plan.Set]():             on(adminExec.buildSet),
	nodeKey[*plan.Kill]():            on(adminExec.buildKill),
	nodeKey[*plan.Update]():          adminExec.buildUpdateOrDeleteFrom,
	nodeKey[*plan.DeleteFrom]():      adminExec.buildUpdateOrDeleteFrom,
	nodeKey[*plan.CreateUser]():      on(adminExec.buildCreateUser),
	nodeKey[*plan.Grant]():           on(adminExec.grantDynamic),
	nodeKey[*plan.Revoke]():          on(adminExec.revokeDynamic),
	nodeKey[*plan.InsertInto]():      on(adminExec.buildInsertInto),
	nodeKey[*plan.TriggerExecutor](): on(adminExec.triggerExecutor),
	nodeKey[*plan.ShowTableStatus](): on(adminExec.buildShowTableStatus),
	nodeKey[*plan.ShowIndexes]():     on(adminExec.buildShowIndexes),
	nodeKey[*plan.AnalyzeTable]():    on(adminExec.buildAnalyzeTable),
	nodeKey[*plan.ShowCreateTable](): on(adminExec.buildShowCreateTable),
	nodeKey[*plan.CreateTable]():     on(adminExec.buildCreateTable),
	nodeKey[*plan.AddColumn]():       on(adminExec.buildAddColumn),
	nodeKey[*plan.ModifyColumn]():    on(adminExec.buildModifyColumn),
	nodeKey[*plan.Limit]():           on(adminExec.buildLimit),
	nodeKey[*plan.SetOp]():           on(adminExec.setOp),
	nodeKey[*plan.Distinct]():        on(adminExec.buildDistinct),
	nodeKey[*plan.OrderedDistinct](): on(adminExec.buildOrderedDistinct),
	nodeKey[*plan.Sort]():            on(adminExec.sortNode),
	nodeKey[*plan.TopN]():            on(adminExec.topNNode),
	nodeKey[*plan.CreateDB]():        on(adminExec.buildCreateDB),
	nodeKey[*plan.ShowColumns]():     on(adminExec.buildShowColumns),
	nodeKey[*plan.ShowVariables]():   on(adminExec.buildShowVariables),
	nodeKey[*plan.DescribeQuery]():   on(adminExec.buildDescribeQuery),
	nodeKey[*plan.LoadData]():        on(adminExec.buildLoadData),
	nodeKey[*plan.ShowProcessList](): on(adminExec.buildShowProcessList),
}

func (x adminExec) buildCall(ctx *sql.Context, n *plan.Call, row sql.Row) (sql.RowIter, error) {
	if n.Procedure != nil && n.Procedure.ExternalProc == nil && n.Procedure.ValidationError == nil {
		return runCall(ctx, x.srv, n, row) // routine.go
	}
	return nil, nil
}

func (x adminExec) buildSet(ctx *sql.Context, n *plan.Set, row sql.Row) (sql.RowIter, error) {
	if err := x.checkSet(ctx, n); err != nil {
		return nil, err
	}
	if compat.FromClient(ctx) {
		if err := checkIsolation(ctx, n); err != nil {
			return nil, err
		}
		if err := checkSetValues(ctx, n); err != nil {
			return nil, err
		}
		warnUnused(ctx, n)
	}
	// A SET statement's own assignments of variables: a SET inside a
	// trigger (SET NEW.x = …) or a routine hands its row on.
	if !compat.FromClient(ctx) || !setsVariablesOnly(n) || len(row) > 0 || !setStatementRE.MatchString(ctx.Query()) {
		return nil, nil
	}
	// MySQL's OK packet of a SET counts no rows (go-mysql-server's
	// counted one). Only a statement of its own: a trigger's SET
	// NEW.col = … yields the row being written.
	if _, err := show.DefaultRows(ctx, n, row); err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

func (x adminExec) buildKill(ctx *sql.Context, n *plan.Kill, row sql.Row) (sql.RowIter, error) {
	if err := x.checkKill(ctx, n); err != nil {
		return nil, err
	}
	if n.Kt == plan.KillType_Connection && x.srv != nil {
		// Said before go-mysql-server cancels its statement: a
		// session waiting for secondaries answers 1927, not OK.
		if s := x.srv.session(n.ConnID); s != nil {
			s.connKilled.Store(true)
		}
	}
	return nil, nil
}

func (x adminExec) buildUpdateOrDeleteFrom(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	if d, ok := n.(*plan.DeleteFrom); ok {
		if iter, err := x.multiDelete(ctx, d, row); iter != nil || err != nil {
			return iter, err
		}
	}
	// go-mysql-server plans a single-table UPDATE or DELETE without
	// the analyzer's own rules: integer arithmetic is checked here,
	// numbers that meet dates read as dates.
	if !compat.FromClient(ctx) {
		return nil, nil
	}
	checked, sameDates, err := funcs.NumbersAsDates(n)
	if err != nil {
		return nil, err
	}
	checked, same, err := rules.CheckArithmetic(checked)
	if err != nil {
		return nil, err
	}
	same = same && sameDates
	if u, ok := n.(*plan.Update); ok {
		var sameText transform.TreeIdentity
		checked, sameText, err = checkUpdateText(ctx, checked, u.Ignore)
		if err != nil {
			return nil, err
		}
		same = same && sameText
	}
	if same {
		return nil, nil
	}
	return x.exec.Build(ctx, checked, row)
}

func (x adminExec) buildCreateUser(ctx *sql.Context, n *plan.CreateUser, row sql.Row) (sql.RowIter, error) {
	return x.createUser(ctx, n)
}

func (x adminExec) buildInsertInto(ctx *sql.Context, n *plan.InsertInto, row sql.Row) (sql.RowIter, error) {
	// MySQL's texts for errors about a value (messages.go).
	s, ok := ctx.Session.(*Session)
	if !ok || !s.mysql {
		return nil, nil
	}
	if s.ins.building == n {
		return nil, nil // adminExec's own call below: go-mysql-server builds it
	}
	s.takeDelayed(ctx)
	// A single-row INSERT … VALUES skips the analyzer's own rules:
	// its numbers put in dates are read as dates, its integer
	// arithmetic checked here.
	if dated, same, err := funcs.NumbersAsDates(n); err != nil {
		return nil, err
	} else if !same {
		n = dated.(*plan.InsertInto)
	}
	checked, _, err := rules.CheckArithmetic(n)
	if err != nil {
		return nil, err
	}
	if len(n.OnDupExprs) > 0 {
		// ON DUPLICATE KEY UPDATE's assignments, checked as an
		// UPDATE's are (rangecheck.go, numtext.go).
		at := func() int { return max(s.ins.calls, 1) } // the row that found its duplicate counts already
		if checked, _, err = checkAssignments(ctx, checked, n.Ignore, at); err != nil {
			return nil, err
		}
	}
	n = checked.(*plan.InsertInto)
	src, same, err := rules.CheckArithmetic(n.Source)
	if err != nil {
		return nil, err
	}
	if !same {
		n = n.WithSource(src)
	}
	s.ins.building = n
	tally := &insertTally{}
	s.ins.source = insertSource{node: n.Source, sch: n.Destination.Schema(), ignore: n.Ignore, tally: tally}
	iter, err := x.exec.Build(ctx, n, row)
	s.ins.building, s.ins.source = nil, insertSource{}
	if err != nil {
		return nil, err
	}
	it := newInsertErrors(iter, s, n.Destination.Schema())
	it.info = newInsertInfo(n, tally)
	it.replace = n.IsReplace
	it.noInsertID = (n.IsReplace || len(n.OnDupExprs) > 0) && !hasAutoIncrement(n.Destination.Schema())
	if err := x.rowTriggers(ctx, s, n, it); err != nil {
		iter.Close(ctx)
		return nil, err
	}
	if s.trig.wrapInsert {
		// Under an AFTER trigger: the wrapper goes around the
		// trigger executor (triggerexec.go).
		s.trig.wrapInsert, s.trig.wrapper = false, it
		return iter, nil
	}
	return it, nil
}

func (x adminExec) buildShowTableStatus(ctx *sql.Context, n *plan.ShowTableStatus, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) {
		return nil, nil // go-mysql-server's engine suites assert its own form
	}
	return showTableStatus(ctx, n, row)
}

func (x adminExec) buildShowIndexes(ctx *sql.Context, n *plan.ShowIndexes, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) {
		return nil, nil // go-mysql-server's engine suites assert its own form
	}
	return showIndexes(ctx, n, row)
}

func (x adminExec) buildAnalyzeTable(ctx *sql.Context, n *plan.AnalyzeTable, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) {
		return nil, nil // go-mysql-server's engine suites assert its own form
	}
	return analyzeTables(ctx, n), nil
}

func (x adminExec) buildShowCreateTable(ctx *sql.Context, n *plan.ShowCreateTable, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) {
		return nil, nil // go-mysql-server's engine suites assert its own form
	}
	if n.IsView {
		return showCreateView(ctx, n, row) // viewdml.go
	}
	return show.ShowCreateTable(ctx, n, row)
}

func (x adminExec) buildCreateTable(ctx *sql.Context, n *plan.CreateTable, row sql.Row) (sql.RowIter, error) {
	// MySQL notes that CREATE TABLE IF NOT EXISTS found the table
	// (go-mysql-server says nothing); the statement goes on.
	if s, ok := ctx.Session.(*Session); ok && s.mysql && n.IfNotExists() && !n.Temporary() && n.Database() != nil {
		if _, found, err := n.Database().GetTableInsensitive(ctx, n.Name()); err == nil && found {
			ctx.Session.Warn(&sql.Warning{Level: "Note", Code: mysql.ERTableExists, Message: fmt.Sprintf("Table '%s' already exists", n.Name())})
		}
	}
	if compat.FromClient(ctx) {
		if err := checkTableOptions(ctx, ctx.Query(), n.Name()); err != nil {
			return nil, err
		}
		funcs.AdoptTimeDigits(ctx, n.PkSchema().Schema...) // timetype.go
	}
	return nil, nil
}

func (x adminExec) buildAddColumn(ctx *sql.Context, n *plan.AddColumn, row sql.Row) (sql.RowIter, error) {
	if compat.FromClient(ctx) {
		funcs.AdoptTimeDigits(ctx, n.Column())
	}
	return nil, nil
}

func (x adminExec) buildModifyColumn(ctx *sql.Context, n *plan.ModifyColumn, row sql.Row) (sql.RowIter, error) {
	if compat.FromClient(ctx) {
		funcs.AdoptTimeDigits(ctx, n.NewColumn())
	}
	return nil, nil
}

func (x adminExec) buildLimit(ctx *sql.Context, n *plan.Limit, row sql.Row) (sql.RowIter, error) {
	// LIMIT 0 returns no row without running its query, as in
	// MySQL (go-mysql-server's GROUP BY under it panicked when
	// closed unread). SQL_CALC_FOUND_ROWS still counts the rows.
	if lit, ok := n.Limit.(*expression.Literal); ok && !n.CalcFoundRows {
		if v, _, err := types.Int64.Convert(ctx, lit.Value()); err == nil && v == int64(0) {
			return sql.RowsToRowIter(), nil
		}
	}
	return nil, nil
}

func (x adminExec) buildDistinct(ctx *sql.Context, n *plan.Distinct, row sql.Row) (sql.RowIter, error) {
	return x.distinct(ctx, n, n.Child, row)
}

func (x adminExec) buildOrderedDistinct(ctx *sql.Context, n *plan.OrderedDistinct, row sql.Row) (sql.RowIter, error) {
	return x.distinct(ctx, n, n.Child, row)
}

func (x adminExec) buildCreateDB(ctx *sql.Context, n *plan.CreateDB, row sql.Row) (sql.RowIter, error) {
	// CREATE DATABASE IF NOT EXISTS of a database that exists
	// changes nothing: MySQL counts no row (go-mysql-server one).
	s, ok := ctx.Session.(*Session)
	if !ok || !s.mysql || !n.IfNotExists || n.Catalog == nil || !n.Catalog.HasDatabase(ctx, n.DbName) {
		return nil, nil
	}
	if _, err := show.DefaultRows(ctx, n, row); err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

func (x adminExec) buildShowColumns(ctx *sql.Context, n *plan.ShowColumns, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) {
		return nil, nil // go-mysql-server's engine suites assert its own form
	}
	return show.ShowColumns(ctx, n, row, x.grants.db)
}

func (x adminExec) buildShowVariables(ctx *sql.Context, n *plan.ShowVariables, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) {
		return nil, nil
	}
	return show.ShowVariables(ctx, n, row)
}

func (x adminExec) buildDescribeQuery(ctx *sql.Context, n *plan.DescribeQuery, row sql.Row) (sql.RowIter, error) {
	// Client connections only: go-mysql-server's engine suites
	// assert its placeholder row.
	if !compat.FromClient(ctx) || n.Format.Plan || n.Format.Analyze {
		return nil, nil
	}
	return show.Explain(ctx, n)
}

func (x adminExec) buildLoadData(ctx *sql.Context, n *plan.LoadData, row sql.Row) (sql.RowIter, error) {
	if !compat.FromClient(ctx) {
		return nil, nil
	}
	return loadData(ctx, n, row)
}

func (x adminExec) buildShowProcessList(ctx *sql.Context, n *plan.ShowProcessList, row sql.Row) (sql.RowIter, error) {
	iter, err := rowexec.DefaultBuilder.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	iter = threadStates{iter}
	if x.grants.meets(ctx, needAllThreads) {
		return iter, nil
	}
	return &ownThreads{RowIter: iter, user: ctx.Session.Client().User}, nil
}
