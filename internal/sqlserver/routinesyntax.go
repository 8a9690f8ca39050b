package sqlserver

import (
	"strconv"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// go-mysql-server's planner checks a procedure's body at CREATE PROCEDURE
// and at each CALL, and refuses handlers other than one NOT FOUND or one
// SQLEXCEPTION, and conditions for an error number (DECLARE c CONDITION
// FOR 1062), with 1105 "unsupported syntax". Miraj runs bodies itself
// (routine.go), so the parser gives those declarations to the planner in
// a form it accepts and routineRun reads the original back:
//
//   - a handler's conditions become one SQLEXCEPTION whose text (unused
//     by the planner) lists them: routineHandlerMark, then per condition
//     its kind, a space and its value (number, SQLSTATE or name), joined
//     by newlines;
//   - a condition for an error number keeps its number and gets the
//     SQLSTATE HY000, which the planner checks and routineRun ignores.
//
// Only procedure bodies: triggers and events still run on
// go-mysql-server's own path, where a rewritten handler would catch the
// wrong errors, so those keep refusing them.

const routineHandlerMark = "\x00miraj-handler\n"

// routineSyntax rewrites the declarations of the procedure body in stmt
// (see above).
func routineSyntax(stmt ast.Statement) {
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.ProcedureSpec == nil || ddl.ProcedureSpec.Body == nil {
		return
	}
	rewriteRoutineBody(ddl.ProcedureSpec.Body)
}

func rewriteRoutineBody(body ast.Statement) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		d, ok := node.(*ast.Declare)
		if !ok {
			return true, nil
		}
		if c := d.Condition; c != nil && c.SqlStateValue == "" && c.MysqlErrorCode != nil {
			c.SqlStateValue = "HY000"
		}
		if h := d.Handler; h != nil && !plannerHandler(h) {
			var b strings.Builder
			b.WriteString(routineHandlerMark)
			for i, c := range h.ConditionValues {
				if i > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(string(c.ValueType))
				b.WriteByte(' ')
				if c.MysqlErrorCode != nil {
					b.Write(c.MysqlErrorCode.Val)
				} else {
					b.WriteString(c.String)
				}
			}
			h.ConditionValues = []ast.DeclareHandlerCondition{{ValueType: ast.DeclareHandlerCondition_SqlException, String: b.String()}}
		}
		return true, nil
	}, body)
}

// plannerHandler reports whether go-mysql-server's planner takes h as it
// is.
func plannerHandler(h *ast.DeclareHandler) bool {
	if len(h.ConditionValues) != 1 {
		return false
	}
	switch h.ConditionValues[0].ValueType {
	case ast.DeclareHandlerCondition_NotFound:
		return true
	case ast.DeclareHandlerCondition_SqlException:
		return !strings.HasPrefix(h.ConditionValues[0].String, routineHandlerMark)
	}
	return false
}

// handlerConditions returns h's conditions as written, whether or not
// routineSyntax rewrote them.
func handlerConditions(h *ast.DeclareHandler) []ast.DeclareHandlerCondition {
	if len(h.ConditionValues) != 1 || !strings.HasPrefix(h.ConditionValues[0].String, routineHandlerMark) {
		return h.ConditionValues
	}
	var out []ast.DeclareHandlerCondition
	for _, line := range strings.Split(strings.TrimPrefix(h.ConditionValues[0].String, routineHandlerMark), "\n") {
		kind, val, _ := strings.Cut(line, " ")
		c := ast.DeclareHandlerCondition{ValueType: ast.DeclareHandlerConditionValue(kind)}
		if c.ValueType == ast.DeclareHandlerCondition_MysqlErrorCode {
			if _, err := strconv.Atoi(val); err == nil {
				c.MysqlErrorCode = ast.NewIntVal([]byte(val))
			}
		} else {
			c.String = val
		}
		out = append(out, c)
	}
	return out
}
