package sqlserver

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/procedures"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
)

// Conditions in stored program bodies (routine.go): the handler that
// takes an error, SIGNAL and RESIGNAL.

// conditionOf gives err MySQL's code and SQLSTATE, as the client would
// get them.
func (r *routineRun) conditionOf(ctx *sql.Context, err error) *mysql.SQLError {
	var nd noData
	if errors.Is(err, expression.FetchEOF) || errors.As(err, &nd) {
		return mysql.NewSQLError(1329, "02000", "No data - zero rows fetched, selected, or processed")
	}
	se := sql.CastSQLError(mysqlerr.From(err))
	mc := mysqlerr.Context{DB: ctx.GetCurrentDatabase()}
	if s, ok := ctx.Session.(*Session); ok {
		mc.DupIndex = s.lastDupIndex
	}
	if r.srv != nil {
		mc.FKClause = func(table, name string) string { return r.srv.fkClause(mc.DB, table, name) }
		mc.Columns = r.srv.columnCount
	}
	if m := wrappedSQLError.FindStringSubmatch(se.Message); se.Num == mysql.ERUnknownError && m != nil {
		code, _ := strconv.Atoi(m[2])
		return mysql.NewSQLError(code, m[3], "%s", m[1])
	}
	return mysqlerr.Translate(se, mc)
}

// handle finds the handler for err, raised by operation pc, and runs it.
// It returns the operation before the next one to run and, for an EXIT
// handler, exit (next < 0: the body is left); or err when no handler
// takes it.
func (r *routineRun) handle(ctx *sql.Context, ops []*procedures.InterpreterOperation, pc int, err error) (next int, exit bool, sch sql.Schema, sel sql.RowIter, _ error) {
	cond := r.conditionOf(ctx, err)
	found := r.handlerFor(cond)
	if found == nil {
		var nd noData
		switch {
		case errors.As(err, &nd), strings.HasPrefix(cond.SQLState(), "01"):
			// A warning: the body goes on.
			ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: cond.Num, Message: cond.Message})
			return pc, false, nil, nil, nil
		case errors.Is(err, expression.FetchEOF):
			return 0, false, nil, nil, cond // MySQL's 1329, not go-mysql-server's text
		}
		return 0, false, nil, nil, err
	}
	h := *found
	var hops []*procedures.InterpreterOperation
	if cerr := procedures.ConvertStmt(&hops, procedures.NewInterpreterStack(), h.decl.Statement); cerr != nil {
		return 0, false, nil, nil, cerr
	}
	// The handler runs in a block of its own, with the handlers of the
	// blocks around the one that declared it.
	saved, savedDepth, savedHandling := r.handlers, r.depth, r.handling
	r.handlers = slices.Clone(r.handlers[:r.indexOf(found)])
	r.handling = cond
	r.stack.PushScope()
	r.depth++
	hiter, hsch, herr := r.run(ctx, hops)
	for r.depth > savedDepth {
		r.popScope(ctx)
	}
	r.handlers, r.handling = saved, savedHandling
	if herr != nil {
		return 0, false, nil, nil, herr
	}
	if len(hsch) > 0 && !types.IsOkResultSchema(hsch) {
		sch, sel = hsch, hiter // the handler's SELECT
	}
	if h.decl.Action == ast.DeclareHandlerAction_Continue {
		return pc, false, sch, sel, nil
	}
	// EXIT: leave the block that declared the handler.
	open := 1
	end := h.at + 1
	for ; end < len(ops); end++ {
		switch ops[end].OpCode {
		case procedures.OpCode_ScopeBegin:
			open++
		case procedures.OpCode_ScopeEnd:
			open--
		}
		if open == 0 {
			break
		}
	}
	for r.depth >= h.depth && r.depth > 0 {
		r.popScope(ctx)
	}
	if end >= len(ops) {
		return -1, true, sch, sel, nil
	}
	return end, true, sch, sel, nil
}

func (r *routineRun) indexOf(h *routineHandler) int {
	for i := range r.handlers {
		if &r.handlers[i] == h {
			return i
		}
	}
	return len(r.handlers)
}

// handlerFor returns the handler MySQL picks for cond: in the innermost
// block with one that matches, the one for its number, else for its
// SQLSTATE, else SQLEXCEPTION / SQLWARNING / NOT FOUND.
func (r *routineRun) handlerFor(cond *mysql.SQLError) *routineHandler {
	class := cond.SQLState()
	for i := len(r.handlers) - 1; i >= 0; {
		depth := r.handlers[i].depth
		best, rank := -1, 0
		for ; i >= 0 && r.handlers[i].depth == depth; i-- {
			for _, c := range r.handlers[i].conds {
				k := 0
				switch c.kind {
				case ast.DeclareHandlerCondition_MysqlErrorCode:
					if c.code == cond.Num {
						k = 3
					}
				case ast.DeclareHandlerCondition_SqlState:
					if c.state == class {
						k = 2
					}
				case ast.DeclareHandlerCondition_NotFound:
					if strings.HasPrefix(class, "02") {
						k = 1
					}
				case ast.DeclareHandlerCondition_SqlWarning:
					if strings.HasPrefix(class, "01") {
						k = 1
					}
				case ast.DeclareHandlerCondition_SqlException:
					if !strings.HasPrefix(class, "00") && !strings.HasPrefix(class, "01") && !strings.HasPrefix(class, "02") {
						k = 1
					}
				}
				if k > rank {
					best, rank = i, k
				}
			}
		}
		if best >= 0 {
			return &r.handlers[best]
		}
	}
	return nil
}

// signal raises SIGNAL's condition.
func (r *routineRun) signal(ctx *sql.Context, s *ast.Signal) error {
	state := s.SqlStateValue
	code := 0
	if s.ConditionName != "" {
		cond := r.stack.GetCondition(s.ConditionName)
		if cond == nil {
			return mysql.NewSQLError(1319, "42000", "Undefined CONDITION: %s", s.ConditionName)
		}
		state, code = cond.SQLState, int(cond.MySQLErrCode)
		if state == "" {
			// SIGNAL of a condition for an error number: MySQL refuses it.
			return mysql.NewSQLError(1645, "0K000", "SIGNAL/RESIGNAL can only use a CONDITION defined with SQLSTATE")
		}
	}
	if len(state) != 5 || strings.HasPrefix(state, "00") {
		return mysql.NewSQLError(1407, "42000", "Bad SQLSTATE: '%s'", state)
	}
	code, msg, err := r.signalInfo(ctx, s, code, "")
	if err != nil {
		return err
	}
	return raised(state, code, msg)
}

// resignal raises the condition being handled again, changed as
// RESIGNAL says.
func (r *routineRun) resignal(ctx *sql.Context, s *ast.Resignal) error {
	if r.handling == nil {
		return mysql.NewSQLError(1645, "0K000", "RESIGNAL when handler not active")
	}
	state, code, msg := r.handling.SQLState(), r.handling.Num, r.handling.Message
	if s.ConditionName != "" {
		cond := r.stack.GetCondition(s.ConditionName)
		if cond == nil {
			return mysql.NewSQLError(1319, "42000", "Undefined CONDITION: %s", s.ConditionName)
		}
		if cond.SQLState == "" {
			return mysql.NewSQLError(1645, "0K000", "SIGNAL/RESIGNAL can only use a CONDITION defined with SQLSTATE")
		}
		state, code, msg = cond.SQLState, 0, ""
	} else if s.SqlStateValue != "" {
		state, code, msg = s.SqlStateValue, 0, ""
	}
	code, msg, err := r.signalInfo(ctx, &s.Signal, code, msg)
	if err != nil {
		return err
	}
	return raised(state, code, msg)
}

// signalInfo reads SIGNAL's SET MYSQL_ERRNO and MESSAGE_TEXT (any
// expression, variables included).
func (r *routineRun) signalInfo(ctx *sql.Context, s *ast.Signal, code int, msg string) (int, string, error) {
	for _, item := range s.Info {
		v, _, err := r.value(ctx, item.Value)
		if err != nil {
			return 0, "", err
		}
		switch item.ConditionItemName {
		case ast.SignalConditionItemName_MysqlErrno:
			n, err := strconv.Atoi(fmt.Sprint(v))
			if err != nil || n <= 0 || n > 65535 {
				return 0, "", mysql.NewSQLError(1231, "42000", "Variable 'MYSQL_ERRNO' can't be set to the value of '%v'", v)
			}
			code = n
		case ast.SignalConditionItemName_MessageText:
			if v == nil {
				return 0, "", mysql.NewSQLError(1231, "42000", "Variable 'MESSAGE_TEXT' can't be set to the value of 'NULL'")
			}
			msg = fmt.Sprint(v)
			if len(msg) > 128 {
				msg = msg[:128]
			}
		}
	}
	return code, msg, nil
}

// noData is SELECT … INTO that found no row: a NOT FOUND condition that
// is a warning when no handler takes it.
type noData struct{}

func (noData) Error() string { return "No data - zero rows fetched, selected, or processed" }

// raised is the error SIGNAL raises: MySQL's defaults for a number and a
// text not given.
func raised(state string, code int, msg string) error {
	if code == 0 {
		switch state[:2] {
		case "01":
			code = 1642
		case "02":
			code = 1643
		default:
			code = 1644
		}
	}
	if msg == "" {
		switch state[:2] {
		case "01":
			msg = "Unhandled user-defined warning condition"
		case "02":
			msg = "Unhandled user-defined not found condition"
		default:
			msg = "Unhandled user-defined exception condition"
		}
	}
	return mysql.NewSQLError(code, state, "%s", msg)
}
