package rules

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// Comparisons quantified by ANY, SOME or ALL over a subquery (x > ALL
// (SELECT …), x = ANY (…), x <> SOME (…)) are MySQL syntax that
// go-mysql-server v0.20's parser refuses (1064). The text of a statement is
// rewritten before it is parsed: "x > ALL (S)" becomes
// "x = miraj_quantified('> ALL ', (S))" (the call carries the text it
// replaces), a comparison the parser takes, and
// the analyzer rule Quantified turns that comparison into a quantified
// one, evaluated with MySQL's three-valued logic.

// quantifiedFunction is the name the rewritten text calls.
const quantifiedFunction = "miraj_quantified"

// RewriteQuantified returns q with every comparison quantified by ANY, SOME
// or ALL over a parenthesized operand rewritten as described above, and
// whether it found one. Quotes and comments are skipped (sqltext.Scan).
func RewriteQuantified(q string) (string, bool) {
	if !mayQuantify(q) {
		return q, false
	}
	words := sqltext.Scan(q, false)
	var b strings.Builder
	last, found := 0, false
	for i := 1; i+1 < len(words); i++ {
		quant, open := words[i], words[i+1]
		if !quant.IsWord || q[quant.Start] == '`' || open.Text != "(" {
			continue
		}
		switch quant.Text {
		case "ANY", "SOME", "ALL":
		default:
			continue
		}
		opStart, ok := comparisonBefore(q, words, i)
		if !ok {
			continue
		}
		close := matchingParen(words, i+1)
		if close < 0 {
			return q, false // unbalanced: the parser reports it
		}
		// The call carries the text it replaces (restoreQuantified puts it
		// back in column names).
		orig := q[opStart:open.Start]
		if strings.ContainsAny(orig, `'\`) {
			orig = q[opStart:words[i-1].End] + " " + q[quant.Start:quant.End] + " "
		}
		b.WriteString(q[last:opStart])
		fmt.Fprintf(&b, "= %s('%s', (", quantifiedFunction, orig)
		b.WriteString(q[open.End:words[close].Start])
		b.WriteString("))")
		last, found = words[close].End, true
		i = close
	}
	if !found {
		return q, false
	}
	b.WriteString(q[last:])
	return b.String(), true
}

// comparisonBefore returns where the comparison operator that ends just
// before words[i] starts: =, <, >, <=, >=, <> or != (sqltext.Scan gives each
// character of an operator as a word of its own).
func comparisonBefore(q string, words []sqltext.Word, i int) (int, bool) {
	last := words[i-1]
	op := last.Text
	start := last.Start
	if i >= 2 && words[i-2].End == last.Start && !words[i-2].IsWord {
		switch words[i-2].Text + op {
		case "<=", ">=", "<>", "!=":
			op, start = words[i-2].Text+op, words[i-2].Start
		}
	}
	switch op {
	case "=", "<", ">", "<=", ">=", "<>", "!=":
	default:
		return 0, false
	}
	if i >= 3 && op == "<=" && words[i-3].End == start && words[i-3].Text == "<" {
		return 0, false // <<= is no comparison
	}
	return start, true
}

// restoreQuantified undoes RewriteQuantified in a text: each
// "= miraj_quantified('x > ALL ', (S))" is "x > ALL (S)" again.
func RestoreQuantified(text string) string {
	words := sqltext.Scan(text, false)
	var b strings.Builder
	last := 0
	for i := 1; i+4 < len(words); i++ {
		eq, name, open, code, comma, inner := words[i-1], words[i], words[i+1], words[i+2], words[i+3], words[i+4]
		if eq.Text != "=" || name.Text != strings.ToUpper(quantifiedFunction) || open.Text != "(" ||
			code.Text != "'" || code.End-code.Start < 2 || comma.Text != "," || inner.Text != "(" {
			continue
		}
		innerClose := matchingParen(words, i+4)
		if innerClose < 0 || innerClose+1 >= len(words) || words[innerClose+1].Text != ")" {
			continue
		}
		b.WriteString(text[last:eq.Start])
		b.WriteString(text[code.Start+1 : code.End-1])
		b.WriteString(text[inner.Start:words[innerClose].End])
		last = words[innerClose+1].End
		i = innerClose + 1
	}
	b.WriteString(text[last:])
	return b.String()
}

// mayQuantify is a quick test: does q contain ANY, SOME or ALL at all?
func mayQuantify(q string) bool {
	for i := 0; i+2 < len(q); i++ {
		switch q[i] | 0x20 {
		case 'a':
			if n := q[i+1] | 0x20; (n == 'n' && q[i+2]|0x20 == 'y') || (n == 'l' && q[i+2]|0x20 == 'l') {
				return true
			}
		case 's':
			if i+3 < len(q) && strings.EqualFold(q[i:i+4], "some") {
				return true
			}
		}
	}
	return false
}

// matchingParen returns the index of the word closing the parenthesis at
// words[open], or -1.
func matchingParen(words []sqltext.Word, open int) int {
	depth := 0
	for i := open; i < len(words); i++ {
		switch words[i].Text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// quantifiedCall is miraj_quantified('op quantifier', operand) as the
// rewritten text calls it: Quantified replaces the comparison around
// it. Evaluated anywhere else (called by name), it fails.
type quantifiedCall struct {
	code    sql.Expression
	operand sql.Expression
}

var QuantifiedFunctions = []sql.Function{
	sql.Function2{Name: quantifiedFunction, Fn: func(code, operand sql.Expression) sql.Expression {
		return &quantifiedCall{code: code, operand: operand}
	}},
}

func (c *quantifiedCall) Resolved() bool { return c.code.Resolved() && c.operand.Resolved() }
func (c *quantifiedCall) String() string {
	return fmt.Sprintf("%s(%s, %s)", quantifiedFunction, c.code, c.operand)
}
func (c *quantifiedCall) Type() sql.Type             { return types.Boolean }
func (c *quantifiedCall) IsNullable() bool           { return true }
func (c *quantifiedCall) Children() []sql.Expression { return []sql.Expression{c.code, c.operand} }
func (c *quantifiedCall) FunctionName() string       { return quantifiedFunction }
func (c *quantifiedCall) Description() string        { return "a comparison quantified by ANY, SOME or ALL" }
func (c *quantifiedCall) IsNonDeterministic() bool   { return true }
func (c *quantifiedCall) Eval(*sql.Context, sql.Row) (any, error) {
	return nil, errQuantifier()
}

func (c *quantifiedCall) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(children), 2)
	}
	return &quantifiedCall{code: children[0], operand: children[1]}, nil
}

func errQuantifier() error {
	return mysql.NewSQLError(mysql.ERParseError, "42000", "You have an error in your SQL syntax; ANY, SOME and ALL take a subquery after a comparison operator")
}

// Quantified replaces each comparison the text rewrite made, x =
// miraj_quantified('op quantifier', (subquery)), by the quantified
// comparison, in every node and subquery.
func Quantified(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return rewriteQuantifiedNode(n)
}

func rewriteQuantifiedNode(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return compat.TransformAllExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if a, ok := e.(*expression.Alias); ok && strings.Contains(a.Name(), quantifiedFunction) {
			// A column named after its expression: the text as written.
			na := expression.NewAlias(RestoreQuantified(a.Name()), a.Child)
			if a.Unreferencable() {
				na = na.AsUnreferencable()
			}
			return na.WithId(a.Id()).(sql.Expression), transform.NewTree, nil
		}
		eq, ok := e.(*expression.Equals)
		if !ok {
			return e, transform.SameTree, nil
		}
		call, ok := eq.Right().(*quantifiedCall)
		if !ok {
			return e, transform.SameTree, nil
		}
		lit, ok := call.code.(*expression.Literal)
		if !ok {
			return nil, transform.SameTree, errQuantifier()
		}
		code, _ := lit.Value().(string)
		words := strings.Fields(code)
		if len(words) < 2 {
			return nil, transform.SameTree, errQuantifier()
		}
		op, quant := words[0], strings.ToLower(words[len(words)-1])
		if _, ok := quantifiedComparison(op, nil, nil); !ok {
			return nil, transform.SameTree, errQuantifier()
		}
		if _, ok := call.operand.(*plan.Subquery); !ok {
			return nil, transform.SameTree, errQuantifier()
		}
		return &quantified{op: op, all: quant == "all", left: eq.Left(), sub: call.operand}, transform.NewTree, nil
	})
}

// quantifiedComparison builds the comparison op of l and r.
func quantifiedComparison(op string, l, r sql.Expression) (sql.Expression, bool) {
	switch op {
	case "=":
		return expression.NewEquals(l, r), true
	case "<>", "!=":
		return expression.NewNot(expression.NewEquals(l, r)), true
	case "<":
		return expression.NewLessThan(l, r), true
	case "<=":
		return expression.NewLessThanOrEqual(l, r), true
	case ">":
		return expression.NewGreaterThan(l, r), true
	case ">=":
		return expression.NewGreaterThanOrEqual(l, r), true
	}
	return nil, false
}

// quantified is left op ANY (sub) or left op ALL (sub). ANY is TRUE when
// the comparison is TRUE for some row of the subquery, FALSE when it is
// FALSE for every row (or there is none), else NULL. ALL is FALSE when the
// comparison is FALSE for some row, TRUE when it is TRUE for every row (or
// there is none), else NULL.
type quantified struct {
	op   string
	all  bool
	left sql.Expression
	sub  sql.Expression // *plan.Subquery
}

func (q *quantified) Resolved() bool             { return q.left.Resolved() && q.sub.Resolved() }
func (q *quantified) Type() sql.Type             { return types.Boolean }
func (q *quantified) IsNullable() bool           { return true }
func (q *quantified) Children() []sql.Expression { return []sql.Expression{q.left, q.sub} }

func (q *quantified) String() string {
	word := "ANY"
	if q.all {
		word = "ALL"
	}
	return fmt.Sprintf("%s %s %s %s", q.left, q.op, word, q.sub)
}

func (q *quantified) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(q, len(children), 2)
	}
	return &quantified{op: q.op, all: q.all, left: children[0], sub: children[1]}, nil
}

func (q *quantified) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	sub, ok := q.sub.(*plan.Subquery)
	if !ok {
		return nil, errQuantifier()
	}
	if n := types.NumColumns(sub.Type()); n != 1 {
		return nil, mysql.NewSQLError(mysql.EROperandColumns, "21000", "Operand should contain 1 column(s)")
	}
	left, err := q.left.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	vals, err := sub.EvalMultiple(ctx, row)
	if err != nil {
		return nil, err
	}
	l := expression.NewLiteral(left, q.left.Type())
	sawNull := false
	for _, v := range vals {
		cmp, _ := quantifiedComparison(q.op, l, expression.NewLiteral(v, sub.Type()))
		res, err := cmp.Eval(ctx, nil)
		if err != nil {
			return nil, err
		}
		if res == nil {
			sawNull = true
			continue
		}
		truth, err := sql.ConvertToBool(ctx, res)
		if err != nil {
			return nil, err
		}
		if truth != q.all {
			return truth, nil // ANY: one TRUE decides; ALL: one FALSE does
		}
	}
	if sawNull {
		return nil, nil
	}
	return q.all, nil
}
