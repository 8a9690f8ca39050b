package sqlserver

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
)

// maxLoadDataBytes bounds the file LOAD DATA reads here (it is read whole
// to be rewritten): larger files go to go-mysql-server's reader as they are.
const maxLoadDataBytes = 256 << 20

// Field and line separators of the rewritten file: bytes that text data
// does not hold (a file whose fields hold them is left to go-mysql-server).
const (
	loadFieldSep = "\x1f" // ASCII unit separator
	loadLineSep  = "\n"
)

// loadData runs LOAD DATA with MySQL's reading of fields: FIELDS [OPTIONALLY]
// ENCLOSED BY, whose quoted fields may hold the field separator ("be,ta")
// and a doubled quote; ESCAPED BY's sequences (\N for NULL, \t, \n, \\ …);
// LINES STARTING BY; and IGNORE n LINES. go-mysql-server v0.20 splits a
// line at every separator and then wants every field quoted (OPTIONALLY is
// ignored), so `11,"be,ta",2.50` failed with "field not properly
// enclosed", and it drops every escape character. The file is read here,
// its fields written again one per separator with nothing to unquote or
// unescape, and go-mysql-server loads that (its column mapping, SET and
// user variables, defaults and conversions are kept). A nil iterator leaves
// the statement to go-mysql-server as it is.
func loadData(ctx *sql.Context, n *plan.LoadData, row sql.Row) (sql.RowIter, error) {
	var r io.ReadCloser
	var err error
	if n.Local {
		_, v, _ := sql.SystemVariables.GetGlobal("local_infile")
		if on, ok := v.(int8); !ok || on == 0 {
			return nil, nil
		}
		r, err = ctx.LoadInfile(n.File)
	} else {
		if err := checkFileDir(n.File); err != nil {
			return nil, err
		}
		r, err = os.Open(n.File)
	}
	if err != nil {
		return nil, sql.ErrLoadDataCannotOpen.New(err.Error())
	}
	data, err := io.ReadAll(io.LimitReader(r, maxLoadDataBytes+1))
	r.Close()
	if err != nil {
		return nil, sql.ErrLoadDataCannotOpen.New(err.Error())
	}
	if len(data) > maxLoadDataBytes {
		return nil, fmt.Errorf("LOAD DATA: %s is larger than %d bytes", n.File, maxLoadDataBytes)
	}
	f := loadFormat{
		term: n.FieldsTerminatedBy, encl: n.FieldsEnclosedBy, esc: n.FieldsEscapedBy,
		linesStart: n.LinesStartingBy, linesTerm: n.LinesTerminatedBy,
	}
	out, ok := f.rewrite(data, n.IgnoreNum)
	if !ok {
		return nil, fmt.Errorf("LOAD DATA: a field of %s holds a line break or the byte 0x1f, which this server cannot load", n.File)
	}
	// The rewritten file goes where go-mysql-server may read it: the
	// folder of the server's files when there is one.
	_, dir, _ := sql.SystemVariables.GetGlobal("secure_file_priv")
	tmpDir, _ := dir.(string)
	tmp, err := os.CreateTemp(tmpDir, "miraj-load-*.txt")
	if err != nil {
		return nil, err
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	nn := *n
	nn.Local, nn.File, nn.IgnoreNum = false, tmp.Name(), 0
	nn.FieldsTerminatedBy, nn.FieldsEnclosedBy, nn.FieldsEnclosedByOpt, nn.FieldsEscapedBy = loadFieldSep, "", false, ""
	nn.LinesStartingBy, nn.LinesTerminatedBy = "", loadLineSep
	iter, err := rowexec.DefaultBuilder.Build(ctx, &nn, row)
	if err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	return &removeOnClose{RowIter: iter, path: tmp.Name()}, nil
}

// removeOnClose removes the rewritten file once LOAD DATA has read it.
type removeOnClose struct {
	sql.RowIter
	path string
}

func (it *removeOnClose) Close(ctx *sql.Context) error {
	err := it.RowIter.Close(ctx)
	os.Remove(it.path)
	return err
}

// loadFormat is LOAD DATA's FIELDS and LINES clauses.
type loadFormat struct {
	term, encl, esc       string
	linesStart, linesTerm string
}

// rewrite reads data as MySQL does and writes its lines again with the
// fields separated by loadFieldSep, NULL written NULL. ok is false when a
// field holds one of the new separators (the file is not loaded then).
func (f loadFormat) rewrite(data []byte, ignore int64) (out []byte, ok bool) {
	var b bytes.Buffer
	s := string(data)
	for line := int64(0); len(s) > 0; line++ {
		fields, rest := f.line(s)
		s = rest
		if line < ignore || fields == nil {
			continue
		}
		for i, fl := range fields {
			if i > 0 {
				b.WriteString(loadFieldSep)
			}
			if fl == nil {
				b.WriteString("NULL")
				continue
			}
			if strings.Contains(*fl, loadFieldSep) || strings.Contains(*fl, loadLineSep) {
				return nil, false
			}
			b.WriteString(*fl)
		}
		b.WriteString(loadLineSep)
	}
	return b.Bytes(), true
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
