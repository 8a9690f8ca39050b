package sqlserver

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/procedures"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// Stored procedure bodies. go-mysql-server v0.20 turns a body into a list
// of operations (procedures.Parse) and runs them with its interpreter
// (procedures.Call), which Miraj replaces with routineRun for these
// reasons, found by running applications' procedures:
//
//   - it put the values of parameters and local variables into some
//     places of a statement only (a SELECT's columns and WHERE, an
//     UPDATE's WHERE): `UPDATE t SET qty = qty + d WHERE id = n` failed
//     with 1054 on d, and so did a variable in GROUP BY, HAVING, ORDER BY,
//     CASE, BETWEEN, IN, IS NULL, a join's ON, INSERT … SELECT, ON
//     DUPLICATE KEY UPDATE…. Here every column reference without a table
//     name that names a variable or parameter in scope is that variable,
//     as in MySQL (a local variable hides a column of the same name),
//     wherever it is, but for the column an UPDATE or SET assigns;
//   - a value set into a variable kept the type of the expression
//     (DECLARE x INT; SET x = 2.6 kept 2.6): here it takes the variable's
//     type, as MySQL converts it, and DECLARE … DEFAULT takes any
//     expression;
//   - handlers: only NOT FOUND and SQLEXCEPTION, and a handler whose body
//     was a BEGIN … END ran its first operation only. Here a handler is
//     chosen as MySQL chooses: for an error, the innermost block's handler
//     for its number, else for its SQLSTATE, else SQLEXCEPTION; for a
//     cursor at its end, NOT FOUND (or SQLSTATE '02000'); a condition
//     name (DECLARE … CONDITION FOR 1062) stands for its number or
//     SQLSTATE. An EXIT handler leaves the block that declared it,
//     closing the blocks inside it;
//   - RESIGNAL raised nothing (the error the handler caught was lost):
//     here it raises the condition being handled again, with the SQLSTATE,
//     MYSQL_ERRNO and MESSAGE_TEXT it sets; outside a handler it is 1645;
//   - SIGNAL … SET MESSAGE_TEXT = v took literals only.
//
// The parser keeps what go-mysql-server's planner refuses in a body
// (handlers for error numbers, conditions for error numbers) in a form it
// accepts (routineSyntax); routineRun reads it back.

// runCall runs CALL n, a procedure of SQL statements, as go-mysql-server's
// buildCall does, with routineRun for its body.
func runCall(ctx *sql.Context, srv *Server, n *plan.Call, row sql.Row) (sql.RowIter, error) {
	for i, paramExpr := range n.Params {
		param := n.Procedure.Params[i]
		paramVal, err := paramExpr.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		paramVal, _, err = param.Type.Convert(ctx, paramVal)
		if err != nil {
			return nil, err
		}
		paramName := strings.ToLower(param.Name)
		for spp := ctx.Session.GetStoredProcParam(paramName); spp != nil; {
			spp.Value = paramVal
			if spp.Reference == spp {
				break
			}
			spp = spp.Reference
		}
	}
	// The body's statements run in transactions of their own, as
	// go-mysql-server's buildCall has it.
	oldTx := ctx.GetTransaction()
	defer ctx.SetTransaction(oldTx)
	ctx.SetTransaction(nil)

	r := &routineRun{srv: srv, runner: n.GetRunner(), stack: procedures.NewInterpreterStack()}
	if s, ok := ctx.Session.(*Session); ok {
		s.rt.depth++
		defer func() { s.rt.depth-- }()
		r.level = s.rt.depth
	}
	if db := n.Database(); db != nil {
		r.stack.SetDatabase(db.Name())
	}
	iter, sch, err := r.run(ctx, n.GetStatements())
	if err != nil {
		return nil, err
	}
	n.SetSchema(sch)
	for i, param := range n.Params {
		procParam := n.Procedure.Params[i]
		if procParam.Direction == plan.ProcedureParamDirection_In {
			continue
		}
		paramName := strings.ToLower(procParam.Name)
		spp := ctx.Session.GetStoredProcParam(paramName)
		if spp == nil {
			return nil, fmt.Errorf("parameter `%s` not found", paramName)
		}
		switch p := param.(type) {
		case *expression.ProcedureParam:
			err = p.Set(ctx, spp.Value, spp.Type)
		case *expression.UserVar:
			val := spp.Value
			if procParam.Direction == plan.ProcedureParamDirection_Out && !spp.HasBeenSet {
				val = nil
			}
			err = ctx.SetUserVariable(ctx, p.Name, val, spp.Type)
		case *expression.SystemVar:
			err = fmt.Errorf("unable to set `%s` as it is a system variable", p.Name)
		}
		if err != nil {
			return nil, err
		}
	}
	return &routineIter{RowIter: iter, call: n}, nil
}

// routineIter is the rows of a CALL: its body's last result set.
type routineIter struct {
	sql.RowIter
	call *plan.Call
}

func (it *routineIter) GetChildIter() sql.RowIter { return it.RowIter }

func (it *routineIter) WithChildIter(child sql.RowIter) sql.RowIter {
	c := *it
	c.RowIter = child
	return &c
}

func (it *routineIter) Close(ctx *sql.Context) error {
	if err := it.RowIter.Close(ctx); err != nil {
		return err
	}
	return it.call.Pref.CloseAllCursors(ctx)
}

// maxRoutineSteps bounds the operations one run of a body takes, loops
// included: MySQL has no such bound, but a body that loops forever would
// hold its session until KILL (which also ends it, through the context);
// at about a microsecond an operation this is many minutes of work.
const maxRoutineSteps = 1 << 30

// routineRun is one run of a body: its variables (stack), its handlers
// and the condition its running handler handles.
type routineRun struct {
	srv    *Server
	runner sql.StatementRunner
	stack  *procedures.InterpreterStack
	// depth counts the blocks open (BEGIN … END); handlers are those
	// declared in them, innermost last.
	depth    int
	handlers []routineHandler
	// handling is the condition the handler running now handles (nil
	// outside a handler): what RESIGNAL raises.
	handling *mysql.SQLError
	// function: the body is a stored function's (storedfunc.go): RETURN
	// ends it, and the parameters of a procedure that calls it are not
	// its variables.
	function bool
	// level is the number of runs in progress in the session when this
	// one began (typedVarName); renamed the references bind renamed.
	level   int
	renamed []renamedCol
}

// routineReturn is a stored function's RETURN: it ends the body's run.
type routineReturn struct{ value any }

func (*routineReturn) Error() string { return "RETURN" }

func asReturn(err error, ret **routineReturn) bool { return errors.As(err, ret) }

type routineHandler struct {
	decl  *ast.DeclareHandler
	conds []handlerCond
	depth int // the block that declared it
	at    int // the operation that declared it
}

// handlerCond is one condition of DECLARE … HANDLER FOR.
type handlerCond struct {
	kind  ast.DeclareHandlerConditionValue
	code  int    // MysqlErrorCode
	state string // SqlState
}

// run runs ops and returns the last result set they made (an OK result
// when none).
func (r *routineRun) run(ctx *sql.Context, ops []*procedures.InterpreterOperation) (sql.RowIter, sql.Schema, error) {
	var selIter, lastIter sql.RowIter
	var selSch, lastSch sql.Schema
	steps := 0
	for pc := 0; pc < len(ops); pc++ {
		if steps++; steps > maxRoutineSteps {
			return nil, nil, fmt.Errorf("stored procedure ran more than %d operations", maxRoutineSteps)
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		sub := sql.NewContext(ctx.Context)
		sub.Session = ctx.Session
		next, sch, sel, iter, err := r.exec(sub, ops, pc)
		r.unbind()
		var ret *routineReturn
		if err != nil && asReturn(err, &ret) {
			return nil, nil, err
		}
		if err != nil {
			var exit bool
			next, exit, sch, sel, err = r.handle(sub, ops, pc, err)
			if err != nil {
				return nil, nil, err
			}
			iter = sel
			if exit && next < 0 {
				if sel != nil {
					selIter, selSch = sel, sch
				}
				break // the handler left the body
			}
		}
		if iter != nil {
			lastIter, lastSch = iter, sch
		}
		if sel != nil {
			selIter, selSch = sel, sch
		}
		pc = next
	}
	if selIter != nil {
		return selIter, selSch, nil
	}
	if lastIter == nil {
		return sql.RowsToRowIter(sql.Row{types.NewOkResult(0)}), types.OkResultSchema, nil
	}
	return lastIter, lastSch, nil
}

// exec runs operation pc of ops; it returns the operation before the next
// one to run, and the result set it made (sel: a SELECT's).
func (r *routineRun) exec(ctx *sql.Context, ops []*procedures.InterpreterOperation, pc int) (next int, sch sql.Schema, sel, iter sql.RowIter, err error) {
	op := ops[pc]
	switch op.OpCode {
	case procedures.OpCode_Select:
		s := op.PrimaryData.(*ast.Select)
		r.bind(ctx, s)
		if s.Into == nil {
			sch, iter, err := r.query(ctx, s)
			if err != nil {
				return 0, nil, nil, nil, err
			}
			return pc, sch, iter, iter, nil
		}
		into := s.Into
		s.Into = nil
		defer func() { s.Into = into }()
		sch, row, err := r.oneRow(ctx, s, true)
		if err != nil {
			return 0, nil, nil, nil, err
		}
		if row == nil {
			// MySQL: no row leaves the variables as they are, with
			// warning 1329; a NOT FOUND handler catches it.
			return 0, nil, nil, nil, noData{}
		}
		if len(row) != len(into.Variables) {
			return 0, nil, nil, nil, sql.ErrColumnNumberDoesNotMatch.New()
		}
		for i, v := range into.Variables {
			if err := r.assign(ctx, v.String(), row[i], sch[i].Type); err != nil {
				return 0, nil, nil, nil, err
			}
		}

	case procedures.OpCode_Declare:
		if err := r.declare(ctx, op.PrimaryData.(*ast.Declare), pc); err != nil {
			return 0, nil, nil, nil, err
		}

	case procedures.OpCode_Signal:
		return 0, nil, nil, nil, r.signal(ctx, op.PrimaryData.(*ast.Signal))

	case procedures.OpCode_Open:
		o := op.PrimaryData.(*ast.OpenCursor)
		cursor := r.stack.GetCursor(o.Name)
		if cursor == nil {
			return 0, nil, nil, nil, sql.ErrCursorNotFound.New(o.Name)
		}
		if cursor.RowIter != nil {
			return 0, nil, nil, nil, sql.ErrCursorAlreadyOpen.New(o.Name)
		}
		r.bind(ctx, cursor.SelectStmt)
		sch, iter, _, err := r.runner.QueryWithBindings(ctx, "", cursor.SelectStmt, nil, nil)
		if err != nil {
			return 0, nil, nil, nil, err
		}
		cursor.Schema, cursor.RowIter = sch, iter

	case procedures.OpCode_Fetch:
		f := op.PrimaryData.(*ast.FetchCursor)
		cursor := r.stack.GetCursor(f.Name)
		if cursor == nil {
			return 0, nil, nil, nil, sql.ErrCursorNotFound.New(f.Name)
		}
		if cursor.RowIter == nil {
			return 0, nil, nil, nil, sql.ErrCursorNotOpen.New(f.Name)
		}
		row, err := cursor.RowIter.Next(ctx)
		if err == io.EOF {
			return 0, nil, nil, nil, expression.FetchEOF
		}
		if err != nil {
			return 0, nil, nil, nil, err
		}
		if len(row) != len(f.Variables) {
			return 0, nil, nil, nil, sql.ErrFetchIncorrectCount.New()
		}
		for i, name := range f.Variables {
			if err := r.assign(ctx, name, row[i], cursor.Schema[i].Type); err != nil {
				return 0, nil, nil, nil, err
			}
		}

	case procedures.OpCode_Close:
		c := op.PrimaryData.(*ast.CloseCursor)
		cursor := r.stack.GetCursor(c.Name)
		if cursor == nil {
			return 0, nil, nil, nil, sql.ErrCursorNotFound.New(c.Name)
		}
		if cursor.RowIter == nil {
			return 0, nil, nil, nil, sql.ErrCursorNotOpen.New(c.Name)
		}
		err := cursor.RowIter.Close(ctx)
		cursor.RowIter = nil
		if err != nil {
			return 0, nil, nil, nil, err
		}

	case procedures.OpCode_Set:
		s := op.PrimaryData.(*ast.Select)
		r.bind(ctx, s)
		sch, row, err := r.oneRow(ctx, s, false)
		if err != nil {
			return 0, nil, nil, nil, err
		}
		if err := r.assign(ctx, op.Target, row[0], sch[0].Type); err != nil {
			return 0, nil, nil, nil, err
		}

	case procedures.OpCode_Call:
		return r.call(ctx, op.PrimaryData.(*ast.Call), pc)

	case procedures.OpCode_If:
		s := op.PrimaryData.(*ast.Select)
		r.bind(ctx, s)
		_, row, err := r.oneRow(ctx, s, false)
		if err != nil {
			return 0, nil, nil, nil, err
		}
		cond, _, err := types.Boolean.Convert(ctx, row[0])
		if err != nil {
			return 0, nil, nil, nil, err
		}
		if cond == nil || cond.(int8) == 0 {
			return op.Index - 1, nil, nil, nil, nil
		}

	case procedures.OpCode_Goto:
		return r.jump(ctx, ops, pc, op.Index), nil, nil, nil, nil

	case procedures.OpCode_Execute:
		switch s := op.PrimaryData.(type) {
		case *ast.Resignal:
			return 0, nil, nil, nil, r.resignal(ctx, s)
		case *ast.Return:
			if !r.function {
				return 0, nil, nil, nil, mysql.NewSQLError(1313, "42000", "RETURN is only allowed in a FUNCTION")
			}
			v, _, err := r.value(ctx, s.Expr)
			if err != nil {
				return 0, nil, nil, nil, err
			}
			return 0, nil, nil, nil, &routineReturn{value: v}
		}
		r.bind(ctx, op.PrimaryData)
		if s, ok := ctx.Session.(*Session); ok {
			// A write through a view (viewdml.go): the parser did it for a
			// client's statement, the body's were parsed at CALL.
			checks, err := rewriteViewDML(s, r.stack.GetDatabase(), op.PrimaryData)
			if err != nil {
				return 0, nil, nil, nil, err
			}
			s.forgetViewChecks(ctx.Query())
			s.setViewChecks(ctx.Query(), checks)
			defer s.forgetViewChecks(ctx.Query())
		}
		sch, iter, err := r.query(ctx, op.PrimaryData)
		if err != nil {
			return 0, nil, nil, nil, err
		}
		return pc, sch, nil, iter, nil

	case procedures.OpCode_Exception:
		return 0, nil, nil, nil, op.Error

	case procedures.OpCode_ScopeBegin:
		r.stack.PushScope()
		r.depth++

	case procedures.OpCode_ScopeEnd:
		r.popScope(ctx)

	default:
		return 0, nil, nil, nil, fmt.Errorf("stored procedure: operation %d not handled", op.OpCode)
	}
	return pc, nil, nil, nil, nil
}

// popScope closes the innermost block: its variables, cursors and
// handlers.
func (r *routineRun) popScope(ctx *sql.Context) {
	r.stack.PopScope(ctx)
	r.depth--
	for len(r.handlers) > 0 && r.handlers[len(r.handlers)-1].depth > r.depth {
		r.handlers = r.handlers[:len(r.handlers)-1]
	}
}

// jump goes from operation pc to target (LEAVE, ITERATE, the end of a
// loop or an IF branch), opening and closing the blocks in between, and
// returns the operation before target.
func (r *routineRun) jump(ctx *sql.Context, ops []*procedures.InterpreterOperation, pc, target int) int {
	if pc <= target {
		for ; pc < target-1; pc++ {
			switch ops[pc].OpCode {
			case procedures.OpCode_ScopeBegin:
				r.stack.PushScope()
				r.depth++
			case procedures.OpCode_ScopeEnd:
				r.popScope(ctx)
			}
		}
		return pc
	}
	for ; pc > target-1; pc-- {
		switch ops[pc].OpCode {
		case procedures.OpCode_ScopeBegin:
			r.popScope(ctx)
		case procedures.OpCode_ScopeEnd:
			r.stack.PushScope()
			r.depth++
		}
	}
	return pc
}

// query runs stmt and reads its rows, so that the next statement runs
// after it has ended.
func (r *routineRun) query(ctx *sql.Context, stmt ast.Statement) (sql.Schema, sql.RowIter, error) {
	sch, iter, _, err := r.runner.QueryWithBindings(ctx, "", stmt, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, nil, err
	}
	return sch, sql.RowsToRowIter(rows...), nil
}

// oneRow runs s, which gives at most one row (nil: none, when
// allowNone; a SET's or an IF's expression always gives one).
func (r *routineRun) oneRow(ctx *sql.Context, s *ast.Select, allowNone bool) (sql.Schema, sql.Row, error) {
	sch, iter, err := r.query(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(rows) > 1:
		return nil, nil, mysql.NewSQLError(1172, "42000", "Result consisted of more than one row")
	case len(rows) == 0 && allowNone:
		return sch, nil, nil
	case len(rows) == 0:
		return nil, nil, fmt.Errorf("stored procedure: an expression gave no row")
	}
	return sch, rows[0], nil
}

// value evaluates expr, with the variables in scope.
func (r *routineRun) value(ctx *sql.Context, expr ast.Expr) (any, sql.Type, error) {
	s := &ast.Select{SelectExprs: ast.SelectExprs{&ast.AliasedExpr{Expr: expr}}}
	r.bind(ctx, s)
	sch, row, err := r.oneRow(ctx, s, false)
	if err != nil {
		return nil, nil, err
	}
	return row[0], sch[0].Type, nil
}

// assign sets the variable, parameter or user variable (@name) name to
// v, of type typ, converted to the variable's type.
func (r *routineRun) assign(ctx *sql.Context, name string, v any, typ sql.Type) error {
	name = strings.ToLower(name)
	if strings.HasPrefix(name, "@") {
		return ctx.SetUserVariable(ctx, strings.TrimPrefix(name, "@"), v, typ)
	}
	if iv := r.stack.GetVariable(name); iv != nil {
		cv, err := convertTo(ctx, iv.Type, v)
		if err != nil {
			return err
		}
		iv.Value, iv.HasBeenSet = cv, true
		return nil
	}
	if spp := ctx.Session.GetStoredProcParam(name); spp != nil && !r.function {
		cv, err := convertTo(ctx, spp.Type, v)
		if err != nil {
			return err
		}
		spp.SetValue(cv)
		return nil
	}
	return sql.ErrUnknownUserVariable.New(name)
}

// convertTo converts v to typ as an assignment to a variable does.
func convertTo(ctx *sql.Context, typ sql.Type, v any) (any, error) {
	if v == nil || typ == nil {
		return v, nil
	}
	cv, inRange, err := typ.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	if inRange == sql.OutOfRange {
		return nil, mysql.NewSQLError(1264, "22003", "Out of range value for variable")
	}
	return cv, nil
}

// variable returns the variable or parameter name in scope (a local
// variable first), nil when there is none.
func (r *routineRun) variable(ctx *sql.Context, name string) *procedures.InterpreterVariable {
	if iv := r.stack.GetVariable(name); iv != nil {
		return iv
	}
	if r.function {
		return nil
	}
	if spp := ctx.Session.GetStoredProcParam(name); spp != nil {
		return &procedures.InterpreterVariable{Type: spp.Type, Value: spp.Value, HasBeenSet: spp.HasBeenSet}
	}
	return nil
}

// bind puts the values of the variables in scope into stmt: every column
// reference without a qualifier that names one (see above), but for the
// columns UPDATE and SET assign.
func (r *routineRun) bind(ctx *sql.Context, stmt ast.SQLNode) { r.bindAs(ctx, stmt, true) }

// bindAs is bind; without typed, every value is a literal (a CALL's
// arguments: the procedure converts them to its parameters' types, and
// passes OUT values back to the variables they name).
func (r *routineRun) bindAs(ctx *sql.Context, stmt ast.SQLNode, typed bool) {
	r.unbind()
	var visit ast.Visit
	visit = func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.ColName:
			if !n.Qualifier.IsEmpty() {
				return false, nil
			}
			name := n.Name.Lowered()
			iv := r.variable(ctx, name)
			if iv == nil {
				return false, nil
			}
			if typed && typedVariable(iv.Type) {
				// The value as itself, not as a literal's text: through a
				// user variable of the statement's (typedVarName).
				uv := r.typedVarName(ctx, name)
				if err := ctx.SetUserVariable(ctx, uv, iv.Value, iv.Type); err == nil {
					r.renamed = append(r.renamed, renamedCol{col: n, name: n.Name})
					n.Name, n.StoredProcVal = ast.NewColIdent("@"+uv), nil
					return false, nil
				}
			}
			n.StoredProcVal = literalOf(ctx, iv)
			return false, nil
		case *ast.Select:
			if n.Having != nil {
				// go-mysql-server's planner resolves HAVING's column
				// references before their values: the values replace them.
				n.Having.Expr = r.replaceVars(ctx, n.Having.Expr)
			}
		case *ast.AssignmentExpr:
			return false, ast.Walk(visit, n.Expr)
		case *ast.SetVarExpr:
			return false, ast.Walk(visit, n.Expr)
		}
		return true, nil
	}
	_ = ast.Walk(visit, stmt)
}

// typedVariable reports whether a variable of type t enters a statement
// as a user variable of its type rather than as a literal: the planner
// takes a literal as a number or a string, and a DECIMAL or a date as a
// string compared as text ('100.50' < '20.00'), computed as a DOUBLE and
// sent as text.
func typedVariable(t sql.Type) bool {
	return t != nil && (types.IsDecimal(t) || types.IsTime(t) || funcs.IsTimeType(t))
}

// renamedCol is a column reference bind renamed to a user variable, and
// its name as written, which unbind gives back.
type renamedCol struct {
	col  *ast.ColName
	name ast.ColIdent
}

// typedVarName is the user variable that carries variable name of this
// run into a statement: one per nesting level of runs and name, so that a
// session holds a bounded number of them.
func (r *routineRun) typedVarName(ctx *sql.Context, name string) string {
	return fmt.Sprintf("__miraj_routine_%d_%s", r.level, name)
}

// unbind gives the column references bind renamed their names back (a
// body's statements are run again: loops, the next CALL of a function).
func (r *routineRun) unbind() {
	for _, rc := range r.renamed {
		rc.col.Name = rc.name
	}
	r.renamed = r.renamed[:0]
}

// replaceVars returns e with the variables among its operands (through
// comparisons, AND, OR, NOT, arithmetic, parentheses, function arguments,
// BETWEEN and IS) replaced by their values.
func (r *routineRun) replaceVars(ctx *sql.Context, e ast.Expr) ast.Expr {
	switch n := e.(type) {
	case *ast.ColName:
		if n.Qualifier.IsEmpty() {
			if iv := r.variable(ctx, n.Name.Lowered()); iv != nil {
				lit := literalOf(ctx, iv)
				if typedVariable(iv.Type) && iv.Value != nil {
					return castTo(lit, iv.Type)
				}
				return lit
			}
		}
	case *ast.ComparisonExpr:
		n.Left, n.Right = r.replaceVars(ctx, n.Left), r.replaceVars(ctx, n.Right)
	case *ast.AndExpr:
		n.Left, n.Right = r.replaceVars(ctx, n.Left), r.replaceVars(ctx, n.Right)
	case *ast.OrExpr:
		n.Left, n.Right = r.replaceVars(ctx, n.Left), r.replaceVars(ctx, n.Right)
	case *ast.BinaryExpr:
		n.Left, n.Right = r.replaceVars(ctx, n.Left), r.replaceVars(ctx, n.Right)
	case *ast.NotExpr:
		n.Expr = r.replaceVars(ctx, n.Expr)
	case *ast.ParenExpr:
		n.Expr = r.replaceVars(ctx, n.Expr)
	case *ast.IsExpr:
		n.Expr = r.replaceVars(ctx, n.Expr)
	case *ast.RangeCond:
		n.Left, n.From, n.To = r.replaceVars(ctx, n.Left), r.replaceVars(ctx, n.From), r.replaceVars(ctx, n.To)
	case *ast.FuncExpr:
		for _, se := range n.Exprs {
			if ae, ok := se.(*ast.AliasedExpr); ok {
				ae.Expr = r.replaceVars(ctx, ae.Expr)
			}
		}
	}
	return e
}

// castTo is CAST(e AS t) for a DECIMAL, date or time type t.
func castTo(e ast.Expr, t sql.Type) ast.Expr {
	ct := &ast.ConvertType{Type: "char"}
	switch {
	case types.IsDecimal(t):
		dt := t.(sql.DecimalType)
		ct = &ast.ConvertType{Type: "decimal", Length: ast.NewIntVal([]byte(fmt.Sprint(dt.Precision()))), Scale: ast.NewIntVal([]byte(fmt.Sprint(dt.Scale())))}
	case types.IsDateType(t):
		ct.Type = "date"
	case funcs.IsTimeType(t):
		ct.Type = "time"
	case types.IsTime(t):
		ct.Type = "datetime"
	}
	return &ast.ConvertExpr{Name: "CAST", Expr: e, Type: ct}
}

// literalOf is the literal of a variable's value that the planner puts in
// place of a column reference: a number as a number, NULL, anything else
// as its text (a DECIMAL's text reads back as a DOUBLE in arithmetic).
func literalOf(ctx *sql.Context, iv *procedures.InterpreterVariable) ast.Expr {
	v := iv.Value
	if sv, ok := v.(*ast.SQLVal); ok {
		return sv
	}
	if v == nil {
		return &ast.NullVal{}
	}
	switch x := v.(type) {
	case bool:
		if x {
			return ast.NewIntVal([]byte("1"))
		}
		return ast.NewIntVal([]byte("0"))
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return ast.NewIntVal([]byte(fmt.Sprint(x)))
	case float32:
		return ast.NewFloatVal([]byte(strconv.FormatFloat(float64(x), 'g', -1, 32)))
	case float64:
		return ast.NewFloatVal([]byte(strconv.FormatFloat(x, 'g', -1, 64)))
	case string:
		return ast.NewStrVal([]byte(x))
	case []byte:
		return ast.NewStrVal(x)
	}
	if iv.Type != nil {
		if sv, err := iv.Type.SQL(ctx, nil, v); err == nil {
			return ast.NewStrVal([]byte(sv.ToString()))
		}
	}
	return ast.NewStrVal([]byte(fmt.Sprint(v)))
}

// declare runs a DECLARE: variables (with their DEFAULT evaluated),
// conditions, cursors, handlers.
func (r *routineRun) declare(ctx *sql.Context, d *ast.Declare, pc int) error {
	switch {
	case d.Condition != nil:
		c := d.Condition
		var code int64
		if c.MysqlErrorCode != nil {
			n, err := strconv.ParseInt(string(c.MysqlErrorCode.Val), 10, 64)
			if err != nil || n == 0 {
				return fmt.Errorf("invalid value '%s' for MySQL error code", string(c.MysqlErrorCode.Val))
			}
			code = n
		}
		state := c.SqlStateValue
		if code != 0 {
			state = "" // routineSyntax put a placeholder there
		}
		r.stack.NewCondition(strings.ToLower(c.Name), state, code)
	case d.Cursor != nil:
		r.stack.NewCursor(strings.ToLower(d.Cursor.Name), d.Cursor.SelectStmt)
	case d.Handler != nil:
		h := routineHandler{decl: d.Handler, depth: r.depth, at: pc}
		for _, c := range handlerConditions(d.Handler) {
			if c.ValueType == ast.DeclareHandlerCondition_ConditionName {
				cond := r.stack.GetCondition(c.String)
				if cond == nil {
					return mysql.NewSQLError(1319, "42000", "Undefined CONDITION: %s", c.String)
				}
				if cond.MySQLErrCode != 0 {
					h.conds = append(h.conds, handlerCond{kind: ast.DeclareHandlerCondition_MysqlErrorCode, code: int(cond.MySQLErrCode)})
				} else {
					h.conds = append(h.conds, handlerCond{kind: ast.DeclareHandlerCondition_SqlState, state: cond.SQLState})
				}
				continue
			}
			hc := handlerCond{kind: c.ValueType, state: c.String}
			if c.MysqlErrorCode != nil {
				hc.code, _ = strconv.Atoi(string(c.MysqlErrorCode.Val))
			}
			h.conds = append(h.conds, hc)
		}
		if d.Handler.Action == ast.DeclareHandlerAction_Undo {
			return sql.ErrDeclareHandlerUndo.New()
		}
		r.handlers = append(r.handlers, h)
	case d.Variables != nil:
		typ, err := types.ColumnTypeToType(&d.Variables.VarType)
		if err != nil {
			return err
		}
		var val any
		if def := d.Variables.VarType.Default; def != nil {
			v, _, err := r.value(ctx, def)
			if err != nil {
				return err
			}
			if val, err = convertTo(ctx, typ, v); err != nil {
				return err
			}
		}
		for _, name := range d.Variables.Names {
			// NULL until set, as in MySQL (go-mysql-server gave the
			// type's zero).
			r.stack.NewVariableWithValue(name.Lowered(), typ, val)
		}
	}
	return nil
}

// call runs a CALL inside the body, passing local variables to OUT and
// INOUT parameters as go-mysql-server's interpreter does.
func (r *routineRun) call(ctx *sql.Context, c *ast.Call, pc int) (int, sql.Schema, sql.RowIter, sql.RowIter, error) {
	r.bindAs(ctx, c, false)
	if c.ProcName.Qualifier.IsEmpty() {
		c.ProcName.Qualifier = ast.NewTableIdent(r.stack.GetDatabase())
	}
	stackToParam := map[*procedures.InterpreterVariable]*sql.StoredProcParam{}
	for _, p := range c.Params {
		col, ok := p.(*ast.ColName)
		if !ok {
			continue
		}
		name := col.Name.String()
		iv := r.stack.GetVariable(name)
		if iv == nil {
			continue
		}
		spp := ctx.Session.NewStoredProcParam(name, &sql.StoredProcParam{Type: iv.Type, Value: iv.Value})
		stackToParam[iv] = spp
	}
	sch, iter, err := r.query(ctx, c)
	if err != nil {
		return 0, nil, nil, nil, err
	}
	for iv, spp := range stackToParam {
		iv.Value = spp.Value
	}
	return pc, sch, nil, iter, nil
}

// routineState is the stored routines a session is running.
type routineState struct {
	// functions are the stored functions running, innermost last
	// ("db.name", lower-case): a function that calls itself is refused
	// (storedfunc.go).
	functions []string
	// depth counts the procedure and function bodies running
	// (typedVarName).
	depth int
	// params holds the parameters of the procedures the client's
	// statement calls (procparams.go).
	params map[string]*sql.StoredProcParam
}
