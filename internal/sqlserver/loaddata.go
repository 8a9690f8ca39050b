package sqlserver

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// loadData runs LOAD DATA with MySQL's reading of the file: FIELDS
// [OPTIONALLY] ENCLOSED BY, whose quoted fields may hold the field and
// line separators and a doubled quote; ESCAPED BY's sequences (\N for
// NULL, \t, \n, \\ …); the word NULL unquoted (with ENCLOSED BY) for
// NULL; LINES STARTING BY; IGNORE n LINES; and CHARACTER SET. The file is
// read as it is loaded, not whole. Each line's fields go to the listed
// columns and user variables in order (a NULL field makes a variable
// NULL), then the SET assignments are evaluated, and the row goes on to
// go-mysql-server's INSERT (conversions, defaults, IGNORE and REPLACE).
// A line with fewer fields than the list is 1261, with more 1262: errors
// in a strict sql_mode, warnings with LOCAL or IGNORE or without one.
// go-mysql-server v0.20's own reader split a line at every separator,
// wanted every field quoted, dropped every escape character, took the
// text NULL (even quoted) for NULL and gave user variables the text NULL
// for \N. A nil iterator leaves the statement to go-mysql-server.
func loadData(ctx *sql.Context, n *plan.LoadData, row sql.Row) (sql.RowIter, error) {
	targets, err := loadTargets(ctx, n)
	if err != nil || targets == nil {
		return nil, err
	}
	decode, err := loadCharset(n.Charset)
	if err != nil {
		return nil, err
	}
	if n.FieldsTerminatedBy == "" && n.FieldsEnclosedBy == "" {
		return nil, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
			"This version of MySQL doesn't yet support 'LOAD DATA with fixed-width fields (FIELDS TERMINATED BY '' ENCLOSED BY '')'")
	}
	var r io.ReadCloser
	if n.Local {
		_, v, _ := sql.SystemVariables.GetGlobal("local_infile")
		if on, ok := v.(int8); !ok || on == 0 {
			return nil, mysql.NewSQLError(3948, "42000", "Loading local data is disabled; this must be enabled on both the client and server sides")
		}
		r, err = loadLocal(ctx, n.File)
	} else {
		if err := checkFileDir(n.File); err != nil {
			return nil, err
		}
		r, err = os.Open(n.File)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, mysql.NewSQLError(29, "HY000", "File '%s' not found (OS errno 2 - No such file or directory)", n.File)
	}
	if err != nil {
		return nil, sql.ErrLoadDataCannotOpen.New(err.Error())
	}
	f := loadFormat{
		term: n.FieldsTerminatedBy, encl: n.FieldsEnclosedBy, esc: n.FieldsEscapedBy,
		linesStart: n.LinesStartingBy, linesTerm: n.LinesTerminatedBy,
	}
	return &loadIter{
		n: n, rd: &loadReader{f: f, r: r, decode: decode}, targets: targets,
		sets: loadSets(n), skip: n.IgnoreNum, refuse: refusesBadValues(ctx, n.IsIgnore),
	}, nil
}

// loadTarget is where one field of a line goes: a column of the table
// (its index) or a user variable.
type loadTarget struct {
	col     int
	userVar string
}

// loadTargets reads the statement's list of columns and user variables
// (the plan keeps them in a form that cannot always be read back); all
// the table's columns when there is none. nil: the statement could not be
// read, and is left to go-mysql-server.
func loadTargets(ctx *sql.Context, n *plan.LoadData) ([]loadTarget, error) {
	stmt, err := sqlparser.Parse(ctx.Query())
	if err != nil {
		return nil, nil
	}
	ld, ok := stmt.(*sqlparser.Load)
	if !ok {
		return nil, nil
	}
	sch := n.DestSch
	if len(ld.Columns) == 0 {
		t := make([]loadTarget, len(sch))
		for i := range sch {
			t[i].col = i
		}
		return t, nil
	}
	t := make([]loadTarget, len(ld.Columns))
	for i, c := range ld.Columns {
		name := c.String()
		if col := sch.IndexOfColName(name); col >= 0 {
			t[i].col = col
			continue
		}
		if v, scope, _, err := sqlparser.VarScope(name); err == nil && scope == sqlparser.SetScope_User {
			t[i] = loadTarget{col: -1, userVar: v}
			continue
		}
		return nil, sql.ErrColumnNotFound.New(name)
	}
	return t, nil
}

// loadSets returns the SET assignments by the table's column index, their
// column references pointing into a row of the table.
func loadSets(n *plan.LoadData) []sql.Expression {
	if len(n.SetExprs) == 0 {
		return nil
	}
	sets := make([]sql.Expression, len(n.DestSch))
	for i, e := range n.SetExprs {
		if e == nil || i >= len(sets) {
			continue
		}
		e, _, _ = transform.Expr(e, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			gf, ok := e.(*expression.GetField)
			if !ok {
				return e, transform.SameTree, nil
			}
			if idx := n.DestSch.IndexOfColName(gf.Name()); idx >= 0 {
				return gf.WithIndex(idx), transform.NewTree, nil
			}
			return e, transform.SameTree, nil
		})
		sets[i] = e
	}
	return sets
}

// loadIter turns the file's lines into the rows go-mysql-server's INSERT
// of LOAD DATA takes: the values of the plan's columns (n.ColNames, or
// every column of the table), in that order.
type loadIter struct {
	n       *plan.LoadData
	rd      *loadReader
	targets []loadTarget
	sets    []sql.Expression
	skip    int64
	refuse  bool
	lines   int // data lines read
}

func (it *loadIter) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		fields, ok, err := it.rd.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, io.EOF
		}
		if it.skip > 0 {
			it.skip--
			continue
		}
		if fields == nil {
			continue // no LINES STARTING BY prefix
		}
		it.lines++
		return it.row(ctx, fields)
	}
}

// row maps one line's fields.
func (it *loadIter) row(ctx *sql.Context, fields []*string) (sql.Row, error) {
	sch := it.n.DestSch
	tab := make(sql.Row, len(sch)) // the values by the table's column index
	given := make([]bool, len(sch))
	for i, t := range it.targets {
		var v any
		if i < len(fields) && fields[i] != nil {
			v = *fields[i]
		}
		if t.col < 0 {
			typ := sql.Type(types.LongText)
			if v == nil {
				typ = types.Null
			}
			// A variable whose field is missing is NULL.
			if err := ctx.SetUserVariable(ctx, t.userVar, v, typ); err != nil {
				return nil, err
			}
			continue
		}
		if i < len(fields) {
			tab[t.col], given[t.col] = v, true
		}
	}
	for _, t := range it.targets[min(len(fields), len(it.targets)):] {
		if t.col < 0 {
			continue // a variable: no word
		}
		// A word for each missing column.
		if err := it.problem(ctx, 1261, "Row %d doesn't contain data for all columns", it.lines); err != nil {
			return nil, err
		}
	}
	if len(fields) > len(it.targets) && !emptyLast(fields, len(it.targets)) {
		if err := it.problem(ctx, 1262, "Row %d was truncated; it contained more data than there were input columns", it.lines); err != nil {
			return nil, err
		}
	}
	// Columns listed whose field is missing.
	for _, t := range it.targets {
		if t.col < 0 || given[t.col] {
			continue
		}
		v, err := loadMissing(ctx, sch[t.col], tab)
		if err != nil {
			return nil, err
		}
		tab[t.col], given[t.col] = v, true
	}
	for i, e := range it.sets {
		if e == nil {
			continue
		}
		v, err := e.Eval(ctx, tab)
		if err != nil {
			return nil, err
		}
		tab[i], given[i] = v, true
	}
	out := make(sql.Row, len(sch))
	if len(it.n.ColNames) == 0 {
		copy(out, tab)
		return out, nil
	}
	for k, name := range it.n.ColNames {
		if idx := sch.IndexOfColName(name); idx >= 0 && k < len(out) {
			out[k] = tab[idx]
		}
	}
	return out, nil
}

// emptyLast reports a line whose one field beyond the list is empty (a
// field separator ending it), which MySQL does not count as more data.
func emptyLast(fields []*string, n int) bool {
	return len(fields) == n+1 && fields[n] != nil && *fields[n] == ""
}

// problem is a line MySQL does not load as it is: an error when values a
// column cannot take are refused, else a warning.
func (it *loadIter) problem(ctx *sql.Context, code int, format string, args ...any) error {
	if it.refuse {
		return mysql.NewSQLError(code, "01000", format, args...)
	}
	ctx.Warn(code, format, args...)
	return nil
}

// loadMissing is the value of a column whose field a line lacks, as MySQL
// and MariaDB set it: NULL when that is its default (an AUTO_INCREMENT
// column takes its next value then), else its type's zero value (0, the
// empty string), not its DEFAULT.
func loadMissing(ctx *sql.Context, col *sql.Column, row sql.Row) (any, error) {
	if col.AutoIncrement {
		return nil, nil
	}
	if col.Nullable {
		if col.Default == nil {
			return nil, nil
		}
		d, err := col.Default.Eval(ctx, row)
		if err != nil || d == nil {
			return nil, err
		}
	}
	return col.Type.Zero(), nil
}

func (it *loadIter) Close(*sql.Context) error { return it.rd.r.Close() }

// loadCharset returns the decoder of LOAD DATA's CHARACTER SET: none for
// UTF-8, ASCII and binary files (nor without the clause: the database's
// character set is utf8mb4), latin1 (cp1252, as MySQL's) turned into
// UTF-8; other character sets are refused.
func loadCharset(cs string) (func(string) string, error) {
	switch strings.ToLower(cs) {
	case "", "utf8mb4", "utf8", "utf8mb3", "binary", "ascii":
		return nil, nil
	case "latin1":
		return decodeLatin1, nil
	}
	if _, err := sql.ParseCharacterSet(cs); err != nil {
		return nil, mysql.NewSQLError(mysql.ERUnknownCharacterSet, "42000", "Unknown character set: '%s'", cs)
	}
	return nil, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
		"This version of MySQL doesn't yet support 'LOAD DATA CHARACTER SET %s'", cs)
}

// cp1252High is what cp1252 (MySQL's latin1) maps bytes 0x80–0x9f to; the
// other bytes are the code points of the same value.
var cp1252High = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8d, 'Ž', 0x8f,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9d, 'ž', 'Ÿ',
}

func decodeLatin1(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xa0:
			b.WriteRune(cp1252High[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// loadChunk is how much of the file is read at a time.
const loadChunk = 64 << 10

// loadReader reads a LOAD DATA file line by line, as it is loaded.
type loadReader struct {
	f      loadFormat
	r      io.ReadCloser
	decode func(string) string
	buf    string // read, not yet parsed
	eof    bool
}

// next returns the next line's fields (nil fields: a line skipped for its
// missing LINES STARTING BY prefix); ok is false at the end of the file.
func (lr *loadReader) next() (fields []*string, ok bool, err error) {
	for {
		if lr.buf == "" && lr.eof {
			return nil, false, nil
		}
		// A line is complete when something follows it in the buffer, or
		// at the end of the file: a quoted field may span lines.
		if !lr.eof && !strings.Contains(lr.buf, lr.f.linesTerm) {
			if err := lr.fill(); err != nil {
				return nil, false, err
			}
			continue
		}
		fields, rest := lr.f.line(lr.buf)
		if rest == "" && !lr.eof {
			if err := lr.fill(); err != nil {
				return nil, false, err
			}
			continue
		}
		lr.buf = rest
		for _, fl := range fields {
			if fl != nil {
				v := strings.Clone(*fl) // not the whole chunk kept with the row
				if lr.decode != nil {
					v = lr.decode(v)
				}
				*fl = v
			}
		}
		return fields, true, nil
	}
}

// fill reads more of the file: at least a chunk, and as much again as is
// buffered, so a long line is parsed a few times, not once per chunk.
func (lr *loadReader) fill() error {
	want := loadChunk
	if len(lr.buf) > want {
		want = len(lr.buf)
	}
	p := make([]byte, want)
	n, err := io.ReadFull(lr.r, p)
	lr.buf += string(p[:n])
	switch err {
	case nil:
		return nil
	case io.EOF, io.ErrUnexpectedEOF:
		lr.eof = true
		return nil
	}
	return sql.ErrLoadDataCannotOpen.New(err.Error())
}

// loadFormat is LOAD DATA's FIELDS and LINES clauses.
type loadFormat struct {
	term, encl, esc       string
	linesStart, linesTerm string
}

// line reads one line from s: its fields (a nil field is NULL; nil fields:
// a line without LINES STARTING BY's prefix, skipped) and what follows it.
func (f loadFormat) line(s string) (fields []*string, rest string) {
	if f.linesStart != "" {
		i := strings.Index(s, f.linesStart)
		end := strings.Index(s, f.linesTerm)
		if i < 0 || (end >= 0 && end < i) {
			if end < 0 {
				return nil, ""
			}
			return nil, s[end+len(f.linesTerm):]
		}
		s = s[i+len(f.linesStart):]
	}
	fields = []*string{}
	for {
		v, quoted, next := f.field(s)
		s = next
		if !quoted && f.esc != "" && v == f.esc+"N" {
			fields = append(fields, nil)
		} else if !quoted && f.encl != "" && v == "NULL" {
			fields = append(fields, nil)
		} else {
			u := f.unescape(v)
			fields = append(fields, &u)
		}
		switch {
		case strings.HasPrefix(s, f.term) && f.term != "":
			s = s[len(f.term):]
		case strings.HasPrefix(s, f.linesTerm):
			return fields, s[len(f.linesTerm):]
		default:
			return fields, s // the end of the data
		}
	}
}

// field reads one field's raw text (quotes removed, a doubled quote made
// one, escapes left for unescape) up to the next field or line separator.
func (f loadFormat) field(s string) (v string, quoted bool, rest string) {
	if f.encl != "" && strings.HasPrefix(s, f.encl) {
		var b strings.Builder
		i := len(f.encl)
		for i < len(s) {
			switch {
			case f.esc != "" && strings.HasPrefix(s[i:], f.esc) && i+len(f.esc) < len(s):
				b.WriteString(s[i : i+len(f.esc)+1])
				i += len(f.esc) + 1
			case strings.HasPrefix(s[i:], f.encl+f.encl):
				b.WriteString(f.encl)
				i += 2 * len(f.encl)
			case strings.HasPrefix(s[i:], f.encl):
				after := s[i+len(f.encl):]
				if after == "" || (f.term != "" && strings.HasPrefix(after, f.term)) || strings.HasPrefix(after, f.linesTerm) {
					return b.String(), true, after
				}
				b.WriteString(f.encl)
				i += len(f.encl)
			default:
				b.WriteByte(s[i])
				i++
			}
		}
		return b.String(), true, ""
	}
	i := 0
	for i < len(s) {
		if f.esc != "" && strings.HasPrefix(s[i:], f.esc) && i+len(f.esc) < len(s) {
			i += len(f.esc) + 1
			continue
		}
		if (f.term != "" && strings.HasPrefix(s[i:], f.term)) || strings.HasPrefix(s[i:], f.linesTerm) {
			break
		}
		i++
	}
	return s[:i], false, s[i:]
}

// unescape applies ESCAPED BY's sequences.
func (f loadFormat) unescape(v string) string {
	if f.esc == "" || !strings.Contains(v, f.esc) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if !strings.HasPrefix(v[i:], f.esc) || i+len(f.esc) >= len(v) {
			b.WriteByte(v[i])
			continue
		}
		i += len(f.esc)
		switch c := v[i]; c {
		case '0':
			b.WriteByte(0)
		case 'b':
			b.WriteByte('\b')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'Z':
			b.WriteByte(0x1a)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// loadLocal asks the client for its file (LOAD DATA LOCAL). While the file
// comes, the connection's command filter passes its packets as they are
// (admincmd.go): their sequence numbers wrap to 0 after 255.
func loadLocal(ctx *sql.Context, file string) (io.ReadCloser, error) {
	s := sessionOf(ctx)
	if s == nil || s.client == nil {
		return ctx.LoadInfile(file)
	}
	f := &s.client.admin
	f.inFile.Store(true)
	r, err := ctx.LoadInfile(file)
	if err != nil {
		f.inFile.Store(false)
		return nil, err
	}
	return &localFile{ReadCloser: r, f: f}, nil
}

// localFile is the client's file; closing it (which reads the file to its
// end) lets the filter look for commands again.
type localFile struct {
	io.ReadCloser
	f *adminFilter
}

func (l *localFile) Close() error {
	err := l.ReadCloser.Close()
	l.f.inFile.Store(false)
	return err
}
