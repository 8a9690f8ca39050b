package rules

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// Forms of MySQL's syntax the parser (vitess, as go-mysql-server v0.20
// uses it) does not read, rewritten with the assignments of assignvar.go
// before parsing (the column a rewritten expression names keeps the text
// written, RestoreName):
//
//   - INTERVAL expr HOUR_MINUTE (and the other compound units, YEAR_MONTH,
//     DAY_SECOND, …_MICROSECOND): the parser reads a unit word there
//     (INTERVAL expr sql_id) and the compound units are reserved words
//     (1064). The unit becomes the identifier UnitPrefix + unit, which
//     RestoreUnit gives back to the parsed interval; CompoundInterval then
//     reads the value as MySQL does.
//   - SUBSTRING(s FROM n) and SUBSTR(s FROM n): the parser knows FROM only
//     with FOR, and after a column or a string only. FROM and FOR become
//     commas, SUBSTRING(s, n[, m]).

// UnitPrefix starts the identifier a compound unit becomes.
const UnitPrefix = "__miraj_unit_"

// compoundUnits are the interval units the parser does not read after
// INTERVAL expr.
var compoundUnits = map[string]bool{
	"YEAR_MONTH": true, "DAY_HOUR": true, "DAY_MINUTE": true, "DAY_SECOND": true,
	"HOUR_MINUTE": true, "HOUR_SECOND": true, "MINUTE_SECOND": true,
	"DAY_MICROSECOND": true, "HOUR_MICROSECOND": true, "MINUTE_MICROSECOND": true, "SECOND_MICROSECOND": true,
}

// intervalUnits are all the units of an interval.
var intervalUnits = map[string]bool{
	"MICROSECOND": true, "SECOND": true, "MINUTE": true, "HOUR": true, "DAY": true,
	"WEEK": true, "MONTH": true, "QUARTER": true, "YEAR": true,
}

// afterInterval reports whether words[i], a unit, ends INTERVAL expr: the
// nearest INTERVAL before it in the same parentheses, with no unit, comma
// or statement end between them. (EXTRACT(YEAR_MONTH FROM d) and
// TIMESTAMPADD(DAY_HOUR, …), which the parser reads, are not.)
func afterInterval(words []sqltext.Word, i int) bool {
	depth := 0
	for k := i - 1; k >= 0; k-- {
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
		case !w.IsWord && (w.Text == "," || w.Text == ";"):
			return false
		case w.IsWord && w.Text == "INTERVAL":
			return !intervalCall(words, k)
		case w.IsWord && (intervalUnits[w.Text] || compoundUnits[w.Text]):
			return false
		}
	}
	return false
}

// eventStatement reports whether words are CREATE or ALTER EVENT, whose
// schedule (EVERY '1:30' HOUR_MINUTE, STARTS … + INTERVAL '1:30'
// HOUR_MINUTE) the parser reads with its compound units.
func eventStatement(words []sqltext.Word) bool {
	if len(words) == 0 || !words[0].IsWord || (words[0].Text != "CREATE" && words[0].Text != "ALTER") {
		return false
	}
	for _, w := range words[1:min(len(words), 12)] {
		if w.IsWord && w.Text == "EVENT" {
			return true
		}
	}
	return false
}

// substringSeparator is what FROM and FOR become in SUBSTRING(s FROM n
// FOR m); RestoreName gives the column its text back.
var substringSeparator = map[string]string{
	"FROM": ",/*__miraj_from*/",
	"FOR":  ",/*__miraj_for*/",
}

// substringFromFor returns the indexes of the FROM and FOR of
// words[i](s FROM n [FOR m]), words[i] SUBSTRING or SUBSTR; none when the
// call has no FROM of its own.
func substringFromFor(words []sqltext.Word, i int) []int {
	if i+1 >= len(words) || words[i+1].IsWord || words[i+1].Text != "(" {
		return nil
	}
	var from, forAt = -1, -1
	depth := 0
	for k := i + 2; k < len(words); k++ {
		w := words[k]
		switch {
		case !w.IsWord && w.Text == "(":
			depth++
		case !w.IsWord && w.Text == ")":
			if depth == 0 {
				if from < 0 {
					return nil
				}
				if forAt < 0 {
					return []int{from}
				}
				return []int{from, forAt}
			}
			depth--
		case depth > 0:
		case !w.IsWord && (w.Text == "," || w.Text == ";"):
			return nil
		case w.IsWord && w.Text == "FROM" && from < 0:
			from = k
		case w.IsWord && w.Text == "FOR" && from >= 0 && forAt < 0:
			forAt = k
		}
	}
	return nil
}

// RestoreUnit gives a compound unit rewritten before parsing its name back.
func RestoreUnit(e *ast.IntervalExpr) {
	if len(e.Unit) > len(UnitPrefix) && strings.EqualFold(e.Unit[:len(UnitPrefix)], UnitPrefix) {
		e.Unit = strings.ToUpper(e.Unit[len(UnitPrefix):])
	}
}

// compoundParts are the fields of a compound unit's text, largest first,
// and the unit they add up to; factor[k] converts field k-1 into field
// k's unit.
var compoundParts = map[string]struct {
	unit   string
	factor []int64 // factor[0] unused
	micro  bool    // the last field is a fraction of a second
}{
	"YEAR_MONTH":         {"MONTH", []int64{0, 12}, false},
	"DAY_HOUR":           {"HOUR", []int64{0, 24}, false},
	"DAY_MINUTE":         {"MINUTE", []int64{0, 24, 60}, false},
	"DAY_SECOND":         {"SECOND", []int64{0, 24, 60, 60}, false},
	"HOUR_MINUTE":        {"MINUTE", []int64{0, 60}, false},
	"HOUR_SECOND":        {"SECOND", []int64{0, 60, 60}, false},
	"MINUTE_SECOND":      {"SECOND", []int64{0, 60}, false},
	"DAY_MICROSECOND":    {"MICROSECOND", []int64{0, 24, 60, 60, 1_000_000}, true},
	"HOUR_MICROSECOND":   {"MICROSECOND", []int64{0, 60, 60, 1_000_000}, true},
	"MINUTE_MICROSECOND": {"MICROSECOND", []int64{0, 60, 1_000_000}, true},
	"SECOND_MICROSECOND": {"MICROSECOND", []int64{0, 1_000_000}, true},
}

// CompoundInterval returns an interval in a compound unit as the same
// interval in its smallest unit, its value read as MySQL reads it
// (intervalText), or nil when e's unit is not compound. go-mysql-server
// reads only the exact form ('1:30', not '-1:30', '1:30:00' or '90'):
// anything else failed with 1105.
func CompoundInterval(e *expression.Interval) sql.Expression {
	p, ok := compoundParts[e.Unit]
	if !ok {
		return nil
	}
	if _, done := e.Child.(*intervalText); done {
		return nil
	}
	return expression.NewInterval(&intervalText{UnaryExpression: expression.UnaryExpression{Child: e.Child}, unit: e.Unit}, p.unit)
}

// intervalText is the value of an interval in a compound unit, in its
// smallest unit (compoundParts).
type intervalText struct {
	expression.UnaryExpression
	unit string
}

func (e *intervalText) Type() sql.Type { return types.Int64 }

func (e *intervalText) String() string { return fmt.Sprintf("%s %s", e.Child, e.unit) }

func (e *intervalText) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	return &intervalText{UnaryExpression: expression.UnaryExpression{Child: children[0]}, unit: e.unit}, nil
}

func (e *intervalText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := e.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	s, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	text, _ := s.(string)
	n, ok := IntervalValue(text, e.unit)
	if !ok {
		return nil, nil
	}
	return n, nil
}

// IntervalValue reads text as MySQL reads an interval in a compound unit
// (get_interval_value): white space, an optional '-', then numbers
// separated by anything but digits; fewer numbers than the unit has fields
// are its last fields ('5' HOUR_MINUTE is 5 minutes); the fraction of a
// …_MICROSECOND unit counts its digits ('1.5' SECOND_MICROSECOND is 1.5
// seconds). More numbers than fields: false (NULL).
func IntervalValue(text, unit string) (int64, bool) {
	p := compoundParts[unit]
	s := strings.TrimLeft(text, " \t\n\r")
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	count := len(p.factor)
	values := make([]int64, count)
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	i := 0
	for i < len(s) && !isDigit(s[i]) {
		i++
	}
	digits := 0
	for k := 0; k < count; k++ {
		start := i
		var v int64
		for i < len(s) && isDigit(s[i]) {
			if v > (1<<62)/10 {
				return 0, false
			}
			v = v*10 + int64(s[i]-'0')
			i++
		}
		digits = i - start
		values[k] = v
		for i < len(s) && !isDigit(s[i]) {
			i++
		}
		if i == len(s) && k != count-1 {
			// Fewer numbers than fields: they are the last ones.
			got := k + 1
			copy(values[count-got:], values[:got])
			for j := 0; j < count-got; j++ {
				values[j] = 0
			}
			break
		}
	}
	if i != len(s) {
		return 0, false
	}
	if p.micro && digits > 0 {
		last := &values[count-1]
		for ; digits < 6; digits++ {
			*last *= 10
		}
		for ; digits > 6; digits-- {
			*last /= 10
		}
	}
	total := values[0]
	for k := 1; k < count; k++ {
		total = total*p.factor[k] + values[k]
	}
	if neg {
		total = -total
	}
	return total, true
}

// RestoreRoutineSyntax applies RestoreUnit and NthValueCall to the body
// of a procedure, trigger or event, which the walk over the statement does
// not enter: the body is parsed again at each use, but its plan is built
// from this statement's when it is created.
func RestoreRoutineSyntax(stmt ast.Statement) {
	ddl, ok := stmt.(*ast.DDL)
	if !ok {
		return
	}
	var body ast.Statement
	switch {
	case ddl.ProcedureSpec != nil:
		body = ddl.ProcedureSpec.Body
	case ddl.TriggerSpec != nil:
		body = ddl.TriggerSpec.Body
	case ddl.EventSpec != nil:
		body = ddl.EventSpec.Body
	}
	if body == nil {
		return
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.IntervalExpr:
			RestoreUnit(n)
		case *ast.FuncExpr:
			NthValueCall(n)
		}
		return true, nil
	}, body)
}
