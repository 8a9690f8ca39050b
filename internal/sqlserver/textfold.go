package sqlserver

import (
	"bytes"
	"strconv"
	"strings"
	"unsafe"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Rows of one shape. An INSERT … VALUES of several rows whose rows are
// written alike — literals of the same kinds in the same places, as a batch
// or a load writes them — is compiled as the INSERT of its first row: its
// shape folded to that row is the key of the connection's shapes, and its
// compiled form runs with the statement's rows, all of them or none. A
// batch of any size, and a load of thousands of rows a statement
// (sysbench's prepare sends about 2,500 in half a megabyte, a dump about a
// megabyte), then runs without being parsed, whatever its length; an
// INSERT not folded is compiled up to maxInsertTextLen and maxInsertRows.

// maxFoldedRows bounds the rows of a folded INSERT: more are the planner's.
const maxFoldedRows = 1 << 16

// folded is an INSERT's shape folded to its first row.
type folded struct {
	shape []byte // the shape with the first row alone
	rows  int    // the statement's rows
	lits  int    // the literals of a row
}

// foldRows folds shape, an INSERT … VALUES of two or more rows that hold
// all of its nlits literals, each row's shape the first's. ok is false for
// any other statement, and for rows that differ in shape (a NULL in one,
// a string where another has a number), which are compiled as written.
func foldRows(shape []byte, nlits int) (f folded, ok bool) {
	if !startsWithFold(string(shape[:min(len(shape), 16)]), "insert") {
		return folded{}, false
	}
	at := valuesEnd(shape)
	if at < 0 {
		return folded{}, false
	}
	litsBefore := bytes.IndexAny(shape[:at], string([]byte{shapeInt, shapeString})) >= 0
	start := skipSpaces(shape, at)
	end := closingParen(shape, start)
	if litsBefore || end < 0 {
		return folded{}, false
	}
	row := shape[start : end+1]
	k := bytes.Count(row, []byte{shapeInt}) + bytes.Count(row, []byte{shapeString})
	n, i := 1, end+1
	for {
		j := skipSpaces(shape, i)
		if j >= len(shape) || shape[j] != ',' {
			break
		}
		j = skipSpaces(shape, j+1)
		if !bytes.HasPrefix(shape[j:], row) {
			return folded{}, false
		}
		n, i = n+1, j+len(row)
	}
	if n < 2 || n > maxFoldedRows || k == 0 || n*k != nlits {
		return folded{}, false // the rest holds literals, or the rows are not alike
	}
	f = folded{rows: n, lits: k}
	f.shape = append(append(append(make([]byte, 0, start+len(row)+len(shape)-i), shape[:start]...), row...), shape[i:]...)
	return f, true
}

// valuesEnd returns the offset in shape after its first VALUES (or VALUE)
// keyword outside parentheses, or -1.
func valuesEnd(shape []byte) int {
	depth := 0
	for i := 0; i < len(shape); {
		c := shape[i]
		switch {
		case c == '`':
			j := bytes.IndexByte(shape[i+1:], '`')
			if j < 0 {
				return -1
			}
			i += j + 2 // a doubled backquote reads as two names here: nothing to find in them
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			i++
		case isIdentByte(c) && c != shapeInt && c != shapeString:
			j := i
			for j < len(shape) && isIdentByte(shape[j]) {
				j++
			}
			if w := string(shape[i:j]); depth == 0 && (strings.EqualFold(w, "values") || strings.EqualFold(w, "value")) {
				return j
			}
			i = j
		default:
			i++
		}
	}
	return -1
}

// closingParen returns the offset of the ')' that closes the '(' at
// shape[start], or -1 (shape[start] is not '(', or it is not closed).
func closingParen(shape []byte, start int) int {
	if start >= len(shape) || shape[start] != '(' {
		return -1
	}
	depth := 0
	for i := start; i < len(shape); i++ {
		switch shape[i] {
		case '`':
			j := bytes.IndexByte(shape[i+1:], '`')
			if j < 0 {
				return -1
			}
			i += j + 1
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

func skipSpaces(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// firstRowOf returns q, an INSERT whose rows are written alike, as the
// INSERT of its first row; any other statement as it is.
func firstRowOf(q string) string {
	shape, lits, ok := shapeOf(q)
	if !ok {
		return q
	}
	f, ok := foldRows(shape, len(lits))
	if !ok {
		return q
	}
	return render(f.shape, lits[:f.lits])
}

// render writes the statement of shape with literals lits back as text:
// shapeOf read them exactly (a string holds no quote or backslash), so the
// text parses as the statement that gave them.
func render(shape []byte, lits []shapeLiteral) string {
	var b strings.Builder
	b.Grow(len(shape) + 16*len(lits))
	n := 0
	for _, c := range shape {
		switch c {
		case shapeInt:
			b.WriteString(lits[n].text)
			n++
		case shapeString:
			b.WriteByte('\'')
			b.WriteString(lits[n].text)
			b.WriteByte('\'')
			n++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// foldedRows binds the rows of a folded INSERT: row r's parameters v1 …
// vk are its literals lits[r·k : r·k+k], as parameterize would bind them.
type foldedRows struct {
	lits  []shapeLiteral
	names []string // v1 … vk
	vars  map[string]*querypb.BindVariable
	bvs   []querypb.BindVariable
}

func newFoldedRows(lits []shapeLiteral, k int) *foldedRows {
	f := &foldedRows{lits: lits, names: make([]string, k), vars: make(map[string]*querypb.BindVariable, k), bvs: make([]querypb.BindVariable, k)}
	for i := range k {
		f.names[i] = "v" + strconv.Itoa(i+1)
		f.vars[f.names[i]] = &f.bvs[i]
	}
	return f
}

// row returns the parameters of row r, valid until the next call. Their
// values are the statement's own bytes, read and not kept
// (paramValue copies what it keeps).
func (f *foldedRows) row(r int) map[string]*querypb.BindVariable {
	k := len(f.names)
	for i, l := range f.lits[r*k : r*k+k] {
		bv := &f.bvs[i]
		bv.Type = sqltypes.VarChar
		if l.isInt {
			bv.Type = sqltypes.Int64 // digits within BIGINT (shapeOf)
		}
		bv.Value = unsafe.Slice(unsafe.StringData(l.text), len(l.text))
	}
	return f.vars
}

// rowVars returns the parameters of row r of an INSERT: its folded row's,
// or the statement's.
func (p *writePlan) rowVars(prep *mysql.PrepareData, r int) map[string]*querypb.BindVariable {
	if p.folded != nil {
		return p.folded.row(r)
	}
	return prep.BindVars
}

// withRows returns p, the compiled INSERT of a statement's first row whose
// parameters are v1 … vk, for the statement's rows f: each row names the
// first row's parameters, bound to its own literals (foldedRows.row);
// literals written in the row stay as they are.
func (p *writePlan) withRows(f *foldedRows) (*writePlan, bool) {
	if p.kind != writeInsert || len(p.rows) != 1 {
		return nil, false
	}
	k := len(f.names)
	for _, a := range p.rows[0] {
		if strings.HasPrefix(a, "v") {
			if j, err := strconv.Atoi(a[1:]); err != nil || j < 1 || j > k {
				return nil, false
			}
		}
	}
	q := *p
	q.rows = make([][]string, len(f.lits)/k)
	for r := range q.rows {
		q.rows[r] = p.rows[0]
	}
	q.folded = f
	return &q, true
}
