package rules

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// User variables assigned within an expression, MySQL's
// SELECT (@n := @n + 1) AS rn, name FROM t ORDER BY score, which numbers
// rows or keeps running totals in applications written before window
// functions. go-mysql-server v0.20's parser knows := only in SET (1064).
// Before parsing, each @name := expr of a statement other than SET
// becomes a call of AssignFunction, which sets the variable to the
// value and returns it; the column such an expression names keeps the
// text the client wrote.
//
// The expression assigned runs to the first of , ) ; or a clause's
// keyword (AS, FROM, WHERE, …) outside parentheses; an alias without AS
// after it is not told from the expression, and the statement keeps the
// parser's 1064.

// AssignFunction is the function @name := expr becomes.
const AssignFunction = "__miraj_assign"

// assignStop are the words that end the expression assigned.
var assignStop = map[string]bool{
	"AS": true, "FROM": true, "WHERE": true, "GROUP": true, "HAVING": true, "ORDER": true,
	"LIMIT": true, "INTO": true, "UNION": true, "INTERSECT": true, "EXCEPT": true,
	"FOR": true, "LOCK": true, "WINDOW": true, "THEN": true, "ELSE": true, "END": true, "WHEN": true,
}

// assignment is one rewritten @name := expr: the text written and the
// text it became, and where each starts.
type assignment struct {
	written, call  string
	from, fromCall int
}

// assignments are the rewrites of one text, in order.
type Assignments []assignment

// WrittenPos maps a position of the rewritten text outside the rewrites
// to the same place in the text before.
func (as Assignments) WrittenPos(pos int) int {
	shift := 0
	for _, a := range as {
		if pos < a.fromCall+len(a.call) {
			break
		}
		shift += len(a.call) - len(a.written)
	}
	return pos - shift
}

// WrittenRest maps rest, the end of the rewritten text r, to the end of
// the text before, q.
func (as Assignments) WrittenRest(q, r, rest string) string {
	if len(as) == 0 || rest == "" {
		return rest
	}
	at := strings.LastIndex(r, rest)
	if at < 0 {
		return rest
	}
	from, to := as.WrittenPos(at), as.WrittenPos(at+len(rest))
	if from > to || to > len(q) {
		return rest
	}
	return q[from:to]
}

// WrittenRoutine returns parsed, the text of stmt in r, as written in
// q when stmt creates a procedure, trigger, event or view (go-mysql-server
// keeps that text as the routine's definition, and cuts its body out of
// it by the parser's positions, which it maps to q's): SHOW CREATE and
// dumps show what the client wrote, and the definition is read again, as
// a statement is, at each use.
func (as Assignments) WrittenRoutine(stmt ast.Statement, q, r, parsed string) string {
	ddl, ok := stmt.(*ast.DDL)
	if len(as) == 0 || !ok || (ddl.ProcedureSpec == nil && ddl.TriggerSpec == nil && ddl.EventSpec == nil && ddl.ViewSpec == nil) {
		return parsed
	}
	lead := len(r) - len(strings.TrimLeftFunc(r, unicode.IsSpace))
	if lead+len(parsed) > len(r) || r[lead:lead+len(parsed)] != parsed {
		return parsed
	}
	from, to := as.WrittenPos(lead), as.WrittenPos(lead+len(parsed))
	start, end := as.WrittenPos(ddl.SubStatementPositionStart), as.WrittenPos(ddl.SubStatementPositionEnd)
	if from > to || to > len(q) || start > end || end > len(q) {
		return parsed
	}
	ddl.SubStatementPositionStart, ddl.SubStatementPositionEnd = start, end
	return q[from:to]
}

// setListStop ends the search back for the SET of a list of assignments.
var setListStop = map[string]bool{
	"SELECT": true, "VALUES": true, "VALUE": true, "FROM": true, "WHERE": true, "BY": true,
	"HAVING": true, "ON": true, "BEGIN": true, "DO": true, "THEN": true, "ELSE": true,
}

// setItem reports whether words[i] starts an item of a SET statement's
// list (a procedure's or trigger's SET @n := …, which the parser reads).
func setItem(words []sqltext.Word, i int) bool {
	if i == 0 {
		return false
	}
	if prev := words[i-1]; prev.IsWord {
		return prev.Text == "SET"
	} else if prev.Text != "," {
		return false
	}
	depth := 0
	for k := i - 2; k >= 0; k-- {
		w := words[k]
		switch {
		case !w.IsWord && w.Text == ")":
			depth++
		case !w.IsWord && w.Text == "(":
			if depth == 0 {
				return false
			}
			depth--
		case depth > 0:
		case !w.IsWord && w.Text == ";":
			return false
		case w.IsWord && w.Text == "SET":
			return true
		case w.IsWord && setListStop[w.Text]:
			return false
		}
	}
	return false
}

// AssignmentText returns q with its @name := expr rewritten, and the
// rewrites made; and with the function INTERVAL(N, N1, …) named
// intervalFunction, which the parser does not read (it takes INTERVAL for
// a date interval's), the column it names keeping the text written.
func AssignmentText(q string) (string, Assignments) {
	assigns, interval, substr := strings.Contains(q, ":="), sqltext.IndexFold(q, "INTERVAL") >= 0, sqltext.IndexFold(q, "SUBSTR") >= 0
	literals := sqltext.IndexFold(q, "DATE") >= 0 || sqltext.IndexFold(q, "TIME") >= 0 // datelit.go
	if !assigns && !interval && !substr && !literals {
		return q, nil
	}
	words := sqltext.Scan(q, false)
	if len(words) == 0 {
		return q, nil
	}
	assigns = assigns && words[0].Text != "SET"
	units := interval && !eventStatement(words)
	var b strings.Builder
	var done Assignments
	last := 0
	// rewrite replaces words[i] with call (syntaxtext.go).
	rewrite := func(w sqltext.Word, call string) {
		b.WriteString(q[last:w.Start])
		done = append(done, assignment{written: q[w.Start:w.End], call: call, from: w.Start, fromCall: b.Len()})
		b.WriteString(call)
		last = w.End
	}
	var separators map[int]bool // the FROM and FOR of SUBSTRING(s FROM n FOR m) ahead
	for i := 0; i < len(words); i++ {
		if literals && funcs.TypedLiteral(q, words, i) && (i == 0 || words[i-1].Text != "DEFAULT") {
			// DATE '…' → __miraj_DATE('…') (datelit.go).
			w, str := words[i], words[i+1]
			call := "__miraj_" + q[w.Start:w.End] + "(" + q[str.Start:str.End] + ")"
			b.WriteString(q[last:w.Start])
			done = append(done, assignment{written: q[w.Start:str.End], call: call, from: w.Start, fromCall: b.Len()})
			b.WriteString(call)
			last = str.End
			i++
			continue
		}
		if w := words[i]; separators[i] {
			rewrite(w, substringSeparator[w.Text])
			continue
		} else if w.IsWord && q[w.Start] != '`' {
			if units && compoundUnits[w.Text] && afterInterval(words, i) {
				rewrite(w, UnitPrefix+q[w.Start:w.End])
				continue
			}
			if substr && (w.Text == "SUBSTRING" || w.Text == "SUBSTR") {
				for _, k := range substringFromFor(words, i) {
					if separators == nil {
						separators = map[int]bool{}
					}
					separators[k] = true
				}
			}
		}
		if i+3 >= len(words) {
			continue
		}
		if w := words[i]; interval && w.IsWord && w.Text == "INTERVAL" && q[w.Start] != '`' && intervalCall(words, i) {
			// The call keeps the case written ("__miraj_" + "Interval"):
			// function names are read in any case, and RestoreName gives
			// each column back its own spelling.
			call := "__miraj_" + q[w.Start:w.End]
			b.WriteString(q[last:w.Start])
			done = append(done, assignment{written: q[w.Start:w.End], call: call, from: w.Start, fromCall: b.Len()})
			b.WriteString(call)
			last = w.End
			continue
		}
		if !assigns {
			continue
		}
		at, name, colon, eq := words[i], words[i+1], words[i+2], words[i+3]
		if at.Text != "@" || at.IsWord || !name.IsWord || name.Start != at.End || q[name.Start] == '`' ||
			colon.Text != ":" || eq.Text != "=" || eq.Start != colon.End || (i > 0 && words[i-1].Text == "@" && words[i-1].End == at.Start) ||
			setItem(words, i) {
			continue
		}
		// The expression: to the first stop outside parentheses.
		end, depth := len(q), 0
		j := i + 4
		for ; j < len(words); j++ {
			w := words[j]
			if !w.IsWord && (w.Text == "(") {
				depth++
				continue
			}
			if !w.IsWord && w.Text == ")" {
				if depth == 0 {
					end = w.Start
					break
				}
				depth--
				continue
			}
			if depth == 0 && ((!w.IsWord && (w.Text == "," || w.Text == ";")) || (w.IsWord && q[w.Start] != '`' && assignStop[w.Text])) {
				end = w.Start
				break
			}
		}
		if j == i+4 {
			continue // nothing assigned
		}
		exprEnd := end
		for exprEnd > eq.End && (q[exprEnd-1] == ' ' || q[exprEnd-1] == '\t' || q[exprEnd-1] == '\n' || q[exprEnd-1] == '\r') {
			exprEnd--
		}
		call := AssignFunction + "('" + strings.ReplaceAll(q[name.Start:name.End], "'", "''") + "', " + strings.TrimLeft(q[eq.End:exprEnd], " \t\r\n") + ")"
		b.WriteString(q[last:at.Start])
		done = append(done, assignment{written: q[at.Start:exprEnd], call: call, from: at.Start, fromCall: b.Len()})
		b.WriteString(call)
		last = exprEnd
		// Assignments inside the expression (@a := @b := 1) are left to
		// the parser.
		for i+1 < len(words) && words[i+1].Start < exprEnd {
			i++
		}
	}
	if done == nil {
		return q, nil
	}
	b.WriteString(q[last:])
	return b.String(), done
}

// RestoreName gives a column named after a rewritten expression the text
// the client wrote.
func (as Assignments) RestoreName(ae *ast.AliasedExpr) {
	if len(as) == 0 || !strings.Contains(ae.InputExpression, "__miraj_") {
		return
	}
	for _, a := range as {
		ae.InputExpression = strings.ReplaceAll(ae.InputExpression, a.call, a.written)
	}
}

// intervalCall reports whether words[i], INTERVAL, is the function: a
// parenthesized list of two or more follows it (a date interval's
// INTERVAL (expr) unit has one expression).
func intervalCall(words []sqltext.Word, i int) bool {
	if i+1 >= len(words) || words[i+1].IsWord || words[i+1].Text != "(" {
		return false
	}
	depth := 0
	for _, w := range words[i+2:] {
		switch {
		case w.IsWord:
		case w.Text == "(":
			depth++
		case w.Text == ")":
			if depth == 0 {
				return false
			}
			depth--
		case w.Text == "," && depth == 0:
			return true
		case w.Text == ";":
			return false
		}
	}
	return false
}

// assignExpr is __miraj_assign(name, value): the user variable name set
// to value (NULL too), and value.
type assignExpr struct {
	name, value sql.Expression
}

var _ sql.FunctionExpression = (*assignExpr)(nil)

func NewAssign(name, value sql.Expression) sql.Expression {
	return &assignExpr{name: name, value: value}
}

func (a *assignExpr) FunctionName() string { return AssignFunction }
func (a *assignExpr) Description() string {
	return "sets a user variable within an expression (@name := expr)"
}
func (a *assignExpr) Resolved() bool             { return a.name.Resolved() && a.value.Resolved() }
func (a *assignExpr) String() string             { return fmt.Sprintf("@%s := %s", a.name, a.value) }
func (a *assignExpr) Type() sql.Type             { return a.value.Type() }
func (a *assignExpr) IsNullable() bool           { return a.value.IsNullable() }
func (a *assignExpr) Children() []sql.Expression { return []sql.Expression{a.name, a.value} }

func (a *assignExpr) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 2)
	}
	return NewAssign(children[0], children[1]), nil
}

func (a *assignExpr) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	n, err := a.name.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	name, ok := n.(string)
	if !ok {
		return nil, sql.ErrInvalidArgument.New(AssignFunction)
	}
	v, err := a.value.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if err := ctx.SetUserVariable(ctx, strings.ToLower(name), v, a.value.Type()); err != nil {
		return nil, err
	}
	return v, nil
}
