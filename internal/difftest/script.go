package difftest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Statement is one statement of a script.
type Statement struct {
	Line int    // line of the statement's first line in its file
	SQL  string // the text, without the final ';'
}

// Script is one corpus file.
type Script struct {
	Name       string // file name without directory ("joins.sql")
	Dir        string // absolute path of its folder, which CorpusDirToken stands for
	Statements []Statement
}

// CorpusDirToken in a script stands for the absolute path of the script's
// folder (LOAD DATA INFILE of a file beside it; both servers run on this
// machine). It is replaced when the statement is sent, so reports and the
// list of intended differences show the token.
const CorpusDirToken = "@CORPUS@"

// maxStatementBytes bounds one statement of a corpus file: the corpus is
// hand-written, so a longer one is a missing ';'.
const maxStatementBytes = 64 << 10

// LoadScripts reads the corpus files matching pattern, sorted by name.
func LoadScripts(pattern string) ([]Script, error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Script
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s, err := ParseScript(filepath.Base(f), string(data))
		if err != nil {
			return nil, err
		}
		if s.Dir, err = filepath.Abs(filepath.Dir(f)); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ParseScript splits text into statements: a statement ends with a line
// whose last non-blank character is ';'. Lines starting with '--' outside a
// statement are comments.
func ParseScript(name, text string) (Script, error) {
	s := Script{Name: name}
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), maxStatementBytes)
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		trimmed := strings.TrimSpace(l)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "--")) {
			continue
		}
		if cur.Len() == 0 {
			start = line
		} else {
			cur.WriteByte('\n')
		}
		cur.WriteString(l)
		if cur.Len() > maxStatementBytes {
			return s, fmt.Errorf("%s:%d: statement longer than %d bytes (missing ';'?)", name, start, maxStatementBytes)
		}
		if strings.HasSuffix(trimmed, ";") {
			q := strings.TrimSpace(cur.String())
			q = strings.TrimSpace(strings.TrimSuffix(q, ";"))
			s.Statements = append(s.Statements, Statement{Line: start, SQL: q})
			cur.Reset()
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	if strings.TrimSpace(cur.String()) != "" {
		return s, fmt.Errorf("%s:%d: statement without a final ';'", name, start)
	}
	return s, nil
}

// normalize collapses white space, so that an intended difference names a
// statement however it is wrapped.
func normalize(q string) string { return strings.Join(strings.Fields(q), " ") }
