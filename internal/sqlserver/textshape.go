package sqlserver

import (
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// A text statement's shape is its text with its literals cut out. Parsing
// a statement to find its normalized form and parameters (tryText) costs
// more than running a compiled one; a statement whose shape was parsed
// before on the connection gets the same normalized form, with its own
// literals as parameters, without being parsed. The shape is read only for
// statements whose literals are read here exactly as the parser reads them,
// and a shape is kept only when the parse of the statement that brought it
// gave the same parameters, in the same order, as its literals: a statement
// of the same shape then parses to the same tree with other values.

// textShape is what parsing a statement of one shape gave.
type textShape struct {
	norm     string // normalized text, literals as :v1, :v2, …
	isSelect bool   // the key also holds the select list as written
	ints     []bool // per literal: an integer (else a string)
}

// shapeLiteral is a literal of a statement, as the parser reads it.
type shapeLiteral struct {
	text  string // a string's content, or an integer's digits
	isInt bool
}

// shapeMarkers stand for a literal in a shape (bytes a statement that is
// read here never holds).
const (
	shapeInt    = '\x01'
	shapeString = '\x02'
)

// shapeOf returns q's shape and literals. ok is false for a statement
// whose literals might be read otherwise by the parser: one with comments,
// double quotes, backslashes or parameter markers outside strings; a
// number that is not a decimal integer within BIGINT (1.5, 1e5, 0x1F, an
// identifier starting with digits) or that follows a sign; a string with an escape or a doubled
// quote, or that does not follow '(' ',' '=' '<' '>' (a DATE '…' literal,
// an _utf8mb4'…' or N'…' introducer, adjacent strings, which MySQL joins).
func shapeOf(q string) (shape []byte, lits []shapeLiteral, ok bool) {
	shape = make([]byte, 0, len(q))
	prev := byte(0) // the last byte of the shape that is not a space
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			shape = append(shape, c)
			i++
			continue
		case c == '_' || c == '$' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z'):
			j := i
			for j < len(q) && isIdentByte(q[j]) {
				j++
			}
			shape = append(shape, q[i:j]...)
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			// After '-' or '+' the parser may read the sign as part of
			// the number (-5 is one literal).
			if prev == '.' || prev == '-' || prev == '+' || (j < len(q) && (isIdentByte(q[j]) || q[j] == '.')) {
				return nil, nil, false
			}
			if _, err := strconv.ParseInt(q[i:j], 10, 64); err != nil {
				return nil, nil, false
			}
			lits = append(lits, shapeLiteral{text: q[i:j], isInt: true})
			shape = append(shape, shapeInt)
			i = j
		case c == '\'':
			if !strings.ContainsRune("(,=<>", rune(prev)) {
				return nil, nil, false
			}
			j := strings.IndexByte(q[i+1:], '\'')
			if j < 0 {
				return nil, nil, false
			}
			s := q[i+1 : i+1+j]
			if strings.IndexByte(s, '\\') >= 0 || (i+2+j < len(q) && q[i+2+j] == '\'') {
				return nil, nil, false
			}
			lits = append(lits, shapeLiteral{text: s})
			shape = append(shape, shapeString)
			i += j + 2
		case c == '`':
			j := i + 1
			for {
				k := strings.IndexByte(q[j:], '`')
				if k < 0 {
					return nil, nil, false
				}
				if strings.ContainsFunc(q[j:j+k], func(r rune) bool { return r < ' ' }) {
					return nil, nil, false // nothing in a shape is a marker but markers
				}
				j += k + 1
				if j < len(q) && q[j] == '`' {
					j++ // a doubled backquote is one
					continue
				}
				break
			}
			shape = append(shape, q[i:j]...)
			i = j
		case c == '"' || c == '\\' || c == '#' || c == '?' || c == ':' || c < ' ' ||
			(c == '-' && i+1 < len(q) && q[i+1] == '-') || (c == '/' && i+1 < len(q) && q[i+1] == '*'):
			return nil, nil, false
		default:
			shape = append(shape, c)
			i++
		}
		prev = shape[len(shape)-1]
	}
	return shape, lits, true
}

// bindVar is the parameter parameterize makes of the literal.
func (l shapeLiteral) bindVar() *querypb.BindVariable {
	if l.isInt {
		n, _ := strconv.ParseInt(l.text, 10, 64) // checked by shapeOf
		return sqltypes.Int64BindVariable(n)
	}
	return sqltypes.StringBindVariable(l.text)
}

// bind returns the parameters of a statement of this shape with literals
// lits, as parameterize gives them.
func (ts *textShape) bind(lits []shapeLiteral) map[string]*querypb.BindVariable {
	vars := make(map[string]*querypb.BindVariable, len(lits))
	for i, l := range lits {
		vars["v"+strconv.Itoa(i+1)] = l.bindVar()
	}
	return vars
}

// newTextShape returns the shape to keep for a statement whose literals
// are lits and that parsed to norm with parameters vars, or nil when the
// parameters are not exactly the literals, in order.
func newTextShape(norm string, isSelect bool, vars map[string]*querypb.BindVariable, lits []shapeLiteral) *textShape {
	if len(vars) != len(lits) {
		return nil
	}
	ts := &textShape{norm: norm, isSelect: isSelect, ints: make([]bool, len(lits))}
	for i, l := range lits {
		got, ok := vars["v"+strconv.Itoa(i+1)]
		want := l.bindVar()
		if !ok || got.Type != want.Type || string(got.Value) != string(want.Value) {
			return nil
		}
		ts.ints[i] = l.isInt
	}
	return ts
}

// maxTextShapes bounds the shapes kept per connection.
const maxTextShapes = 256

// textShape returns the shape kept on c, if any, for a statement of shape
// shape whose literals are lits.
func (g *pointGets) textShape(c *mysql.Conn, shape []byte, lits []shapeLiteral) *textShape {
	cp := g.conn(c.ConnectionID)
	shapes := cp.shapes
	if len(shape) > maxTextLen {
		shapes = cp.longShapes
	}
	ts := shapes[string(shape)]
	if ts == nil || len(ts.ints) != len(lits) {
		return nil
	}
	for i, l := range lits {
		if ts.ints[i] != l.isInt {
			return nil
		}
	}
	return ts
}

// keepTextShape keeps ts on c under shape.
func (g *pointGets) keepTextShape(c *mysql.Conn, shape []byte, ts *textShape) {
	cp := g.conn(c.ConnectionID)
	if len(shape) > maxTextLen {
		bounded(&cp.longShapes, maxLongTexts)[string(shape)] = ts
		return
	}
	bounded(&cp.shapes, maxTextShapes)[string(shape)] = ts
}

// bounded returns the cache *m, emptied first when it holds limit entries.
func bounded[T any](m *map[string]T, limit int) map[string]T {
	if *m == nil || len(*m) >= limit {
		*m = map[string]T{}
	}
	return *m
}
