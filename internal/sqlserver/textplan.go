package sqlserver

import (
	"context"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// Text statements (COM_QUERY) of the compiled shapes are compiled too: the
// statement is parsed, its integer and string literals become parameters
// (`UPDATE t SET c = 'x' WHERE id = 5` is `update t set c = :v1 where id =
// :v2` with v1 = 'x', v2 = 5), and the normalized text is the key of the
// connection's compiled statements. A statement that repeats with other
// values is then run as the prepared form would be. Everything else, and
// whatever the compiled form hands back, runs as the client sent it.

// maxTextPlans bounds the compiled text statements kept per connection; a
// connection that sends more distinct shapes starts over.
const maxTextPlans = 256

// maxTextLen bounds the text statements parsed here: a longer one has
// no compiled shape, and parsing it twice would cost what it costs to run.
// An INSERT of many rows (maxInsertTextLen) is worth it: its shape repeats
// (an application's batches), and its compiled form writes the rows
// without the planner. A dump's INSERTs, of a megabyte each, are longer.
const (
	maxTextLen       = 4096
	maxInsertTextLen = 64 << 10
	// maxLongTexts bounds the plans and the shapes of such long
	// statements kept per connection (tens of kilobytes each).
	maxLongTexts = 8
)

// textVerbs are the first words of the statements worth parsing here.
var textVerbs = []string{"select", "insert", "update", "delete", "begin", "commit", "start"}

// tryText answers a text statement if it has a compiled shape.
func (g *pointGets) tryText(goctx context.Context, h mysql.Handler, c *mysql.Conn, q string, callback func(*sqltypes.Result) error) (bool, error) {
	if g.off.Load() || len(q) > maxTextLen && !startsWithFold(q, "insert") || !startsWithVerb(q) {
		return false, nil
	}
	var key, norm string
	var vars map[string]*querypb.BindVariable
	var folded *foldedRows
	switch {
	case len(q) < 32 && isBeginOrCommit(q):
		key, norm = q, q
	default:
		var ok bool
		if key, norm, vars, folded, ok = g.normalize(c, q); !ok {
			return false, nil
		}
	}
	cp := g.textPlan(c, key, norm)
	if folded != nil {
		// The INSERT of the first row, compiled: run with all of them.
		if cp.write == nil {
			return false, nil
		}
		p, ok := cp.write.withRows(folded)
		if !ok {
			return false, nil
		}
		cp = &compiled{text: cp.text, write: p}
	}
	if cp.point == nil && cp.sel == nil && cp.write == nil {
		return false, nil
	}
	prep := &mysql.PrepareData{PrepareStmt: norm, BindVars: vars}
	usual := func(cb func(*sqltypes.Result) error) error {
		return h.ComQuery(goctx, c, q, func(r *sqltypes.Result, _ bool) error { return cb(r) })
	}
	return g.run(goctx, c, cp, prep, q, usual, callback)
}

// isBeginOrCommit reports whether q is BEGIN, START TRANSACTION or COMMIT
// (with WORK), in any case.
func isBeginOrCommit(q string) bool {
	switch strings.ToUpper(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(q), ";"))) {
	case "BEGIN", "START TRANSACTION", "BEGIN WORK", "COMMIT", "COMMIT WORK":
		return true
	}
	return false
}

// normalize returns the key, normalized text and parameters of a SELECT,
// INSERT, UPDATE or DELETE; from the statement's shape when one was kept
// (textshape.go), else by parsing it. An INSERT of rows alike is folded
// to its first row (textfold.go): folded binds its rows, and vars are the
// first row's.
func (g *pointGets) normalize(c *mysql.Conn, q string) (key, norm string, vars map[string]*querypb.BindVariable, folded *foldedRows, ok bool) {
	shape, lits, shaped := shapeOf(q)
	rows, rowLits := 1, lits
	if shaped {
		if f, ok := foldRows(shape, len(lits)); ok {
			shape, rows, rowLits = f.shape, f.rows, lits[:f.lits]
		}
	}
	if rows == 1 && len(q) > maxInsertTextLen {
		return "", "", nil, nil, false // parsing it here would cost what running it costs
	}
	var ts *textShape
	if shaped {
		ts = g.textShape(c, shape, rowLits)
	}
	if ts == nil {
		text := q
		if rows > 1 {
			text = render(shape, rowLits)
		}
		g.textParses.Add(1)
		stmt, err := ast.Parse(text)
		if err != nil {
			return "", "", nil, nil, false
		}
		isSelect := false
		switch stmt.(type) {
		case *ast.Select:
			isSelect = true
		case *ast.Insert, *ast.Update, *ast.Delete:
		default:
			return "", "", nil, nil, false
		}
		vars = parameterize(stmt)
		ts = &textShape{norm: ast.String(stmt), isSelect: isSelect}
		if shaped {
			kept := newTextShape(ts.norm, isSelect, vars, rowLits)
			if kept != nil {
				g.keepTextShape(c, shape, kept)
			} else if rows > 1 {
				return "", "", nil, nil, false // its parameters are not its literals: the planner's
			}
		}
	}
	if shaped && (rows > 1 || vars == nil) {
		vars = ts.bind(rowLits)
	}
	if rows > 1 {
		folded = newFoldedRows(lits, len(rowLits))
	}
	key = ts.norm
	if ts.isSelect {
		// Result columns are named as the client wrote them (`count( k )`):
		// the select list as written is part of the key.
		key += "\x00" + selectList(q)
	}
	return key, ts.norm, vars, folded, true
}

// startsWithFold reports whether q's first word, past spaces and
// parentheses, starts with verb (lower-case), in any case.
func startsWithFold(q, verb string) bool {
	q = strings.TrimLeft(q, " \t\r\n(")
	return len(q) >= len(verb) && strings.EqualFold(q[:len(verb)], verb)
}

func startsWithVerb(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n(")
	for _, v := range textVerbs {
		if len(q) > len(v) && strings.EqualFold(q[:len(v)], v) {
			return true
		}
		if strings.EqualFold(q, v) {
			return true
		}
	}
	return false
}

// parameterize turns the statement's integer and string literals into
// parameters :v1, :v2, … and returns their values.
func parameterize(stmt ast.Statement) map[string]*querypb.BindVariable {
	vars := map[string]*querypb.BindVariable{}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		v, ok := node.(*ast.SQLVal)
		if !ok {
			return true, nil
		}
		bv, ok := literalBindVar(v)
		if !ok {
			return true, nil // beyond BIGINT, or not an integer or a string: left as written
		}
		name := "v" + strconv.Itoa(len(vars)+1)
		vars[name] = bv
		v.Type, v.Val = ast.ValArg, []byte(":"+name)
		return true, nil
	}, stmt)
	return vars
}

// literalBindVar is the parameter an integer (within BIGINT) or string
// literal is bound as.
func literalBindVar(v *ast.SQLVal) (*querypb.BindVariable, bool) {
	switch v.Type {
	case ast.IntVal:
		n, err := strconv.ParseInt(string(v.Val), 10, 64)
		if err != nil {
			return nil, false
		}
		return sqltypes.Int64BindVariable(n), true
	case ast.StrVal:
		return sqltypes.StringBindVariable(string(v.Val)), true
	}
	return nil, false
}

// textPlan is the compiled form of the normalized text norm on c, kept
// under key.
func (g *pointGets) textPlan(c *mysql.Conn, key, norm string) *compiled {
	cp := g.conn(c.ConnectionID)
	texts, limit := &cp.texts, maxTextPlans
	if len(key) > maxTextLen {
		texts, limit = &cp.longTexts, maxLongTexts
	}
	p, ok := (*texts)[key]
	if !ok {
		p = compile(norm)
		bounded(texts, limit)[key] = p
	}
	return p
}

// selectList is the text of q before its first FROM (case-insensitive).
func selectList(q string) string {
	if i := sqltext.IndexFold(q, "from"); i >= 0 {
		return q[:i]
	}
	return q
}
