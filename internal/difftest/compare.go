package difftest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Aspect is one thing compared of a statement's outcome.
type Aspect string

const (
	AspectErrorCode    Aspect = "error-code"    // code and SQLSTATE, or an error on one side only
	AspectErrorMessage Aspect = "error-message" // the text of an error both sides gave with the same code
	AspectColumns      Aspect = "columns"       // column names and protocol types
	AspectRows         Aspect = "rows"          // the rows (in order with ORDER BY, as a multiset otherwise)
	AspectAffected     Aspect = "affected"      // rows affected of a statement without a result set
	AspectWarnings     Aspect = "warnings"      // SHOW WARNINGS: level, code and message, in order
)

var aspects = []Aspect{AspectErrorCode, AspectErrorMessage, AspectColumns, AspectRows, AspectAffected, AspectWarnings}

// Kind says why a difference is listed.
type Kind string

const (
	// KindIntended is a difference Miraj keeps on purpose (its version
	// string, a MariaDB-only behaviour where Miraj follows MySQL 8).
	KindIntended Kind = "intended"
	// KindKnown is a bug not fixed yet: listed so the harness passes, and
	// counted apart so it is not mistaken for an intended one.
	KindKnown Kind = "known"
)

// Intended is one entry of the reviewed list of differences.
type Intended struct {
	File      string   // corpus file name, or "*"
	Statement string   // the statement (white space collapsed), or "*" for every statement of File
	Aspects   []Aspect // the aspects that may differ
	Kind      Kind
	Reason    string
	Line      int // line of the entry in the list
	used      int
}

// ParseIntended reads the list: blocks of "key: value" lines separated by
// blank lines, '#' lines being comments. Keys: file, statement, aspects
// (comma-separated), kind (intended or known), reason (may continue on
// indented lines).
func ParseIntended(r io.Reader) ([]*Intended, error) {
	var out []*Intended
	var cur *Intended
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.File == "" || cur.Statement == "" || len(cur.Aspects) == 0 || cur.Reason == "" {
			return fmt.Errorf("line %d: an entry needs file, statement, aspects and reason", cur.Line)
		}
		if cur.Reason == todoReason {
			return fmt.Errorf("line %d: the reason of an entry is to be written (%s)", cur.Line, todoReason)
		}
		if cur.Kind != KindIntended && cur.Kind != KindKnown {
			return fmt.Errorf("line %d: kind must be %q or %q", cur.Line, KindIntended, KindKnown)
		}
		out = append(out, cur)
		cur = nil
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxStatementBytes)
	line := 0
	last := ""
	for sc.Scan() {
		line++
		l := sc.Text()
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "#"):
			continue
		case t == "":
			if err := finish(); err != nil {
				return nil, err
			}
			continue
		case cur != nil && (l[0] == ' ' || l[0] == '\t'):
			// A continuation line of the last key.
			switch last {
			case "reason":
				cur.Reason += " " + t
			case "statement":
				cur.Statement = normalize(cur.Statement + " " + t)
			default:
				return nil, fmt.Errorf("line %d: continuation of %q", line, last)
			}
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want key: value", line)
		}
		if cur == nil {
			cur = &Intended{Line: line, Kind: KindIntended}
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		last = k
		switch k {
		case "file":
			cur.File = v
		case "statement":
			cur.Statement = normalize(v)
		case "aspects":
			for _, a := range strings.Split(v, ",") {
				a := Aspect(strings.TrimSpace(a))
				if !slices.Contains(aspects, a) {
					return nil, fmt.Errorf("line %d: unknown aspect %q (known: %v)", line, a, aspects)
				}
				cur.Aspects = append(cur.Aspects, a)
			}
		case "kind":
			cur.Kind = Kind(v)
		case "reason":
			cur.Reason = v
		default:
			return nil, fmt.Errorf("line %d: unknown key %q", line, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return out, nil
}

// LoadIntended reads the list from a file.
func LoadIntended(path string) ([]*Intended, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := ParseIntended(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

func (in *Intended) matches(file, stmt string, a Aspect) bool {
	return (in.File == "*" || in.File == file) &&
		(in.Statement == "*" || in.Statement == normalize(stmt)) &&
		slices.Contains(in.Aspects, a)
}

// Difference is one aspect of one statement that the servers answered
// differently.
type Difference struct {
	Result
	Aspect   Aspect
	Miraj    string // what Miraj gave of the aspect
	MariaDB  string
	Intended *Intended // nil: unexpected
}

// Report is the comparison of a run.
type Report struct {
	Scripts    int
	Statements int
	// Differing counts the statements with at least one difference.
	Differing   int
	Differences []Difference
	// Stale are the entries of the list that matched no difference.
	Stale []*Intended
}

// Compare compares every result and sorts the differences against the
// list.
func Compare(results []Result, list []*Intended) *Report {
	rep := &Report{Statements: len(results)}
	seen := map[string]bool{}
	for _, r := range results {
		seen[r.Script] = true
		diffs := compareOne(r)
		if len(diffs) > 0 {
			rep.Differing++
		}
		for _, d := range diffs {
			for _, in := range list {
				if in.matches(r.Script, r.Statement.SQL, d.Aspect) {
					in.used++
					d.Intended = in
					break
				}
			}
			rep.Differences = append(rep.Differences, d)
		}
	}
	rep.Scripts = len(seen)
	for _, in := range list {
		// An entry is stale only if its file was run: a CI subset does not
		// make the other files' entries stale.
		if in.used == 0 && (in.File == "*" || seen[in.File]) {
			rep.Stale = append(rep.Stale, in)
		}
	}
	return rep
}

func compareOne(r Result) []Difference {
	var out []Difference
	add := func(a Aspect, m, d string) {
		out = append(out, Difference{Result: r, Aspect: a, Miraj: m, MariaDB: d})
	}
	m, d := r.Miraj, r.MariaDB
	switch {
	case m.Err != nil || d.Err != nil:
		if m.Err == nil || d.Err == nil || m.Err.Code != d.Err.Code || m.Err.State != d.Err.State {
			add(AspectErrorCode, errString(m.Err), errString(d.Err))
		} else if m.Err.Message != d.Err.Message {
			add(AspectErrorMessage, m.Err.Message, d.Err.Message)
		}
		return out
	}
	if !slices.Equal(m.Columns, d.Columns) {
		add(AspectColumns, strings.Join(m.Columns, ", "), strings.Join(d.Columns, ", "))
	}
	mr, dr := m.Rows, d.Rows
	if !ordered(r.Statement.SQL) {
		mr, dr = sortedCopy(mr), sortedCopy(dr)
	}
	if !slices.Equal(mr, dr) {
		add(AspectRows, rowsString(mr), rowsString(dr))
	}
	if m.Affected != d.Affected {
		add(AspectAffected, fmt.Sprint(m.Affected), fmt.Sprint(d.Affected))
	}
	if !slices.Equal(m.Warnings, d.Warnings) {
		add(AspectWarnings, warningsString(m.Warnings), warningsString(d.Warnings))
	}
	return out
}

func errString(e *SQLError) string {
	if e == nil {
		return "(no error)"
	}
	return e.String()
}

// maxReportRows bounds the rows a report prints of one side of a
// difference.
const maxReportRows = 20

func rowsString(rows []string) string {
	if len(rows) == 0 {
		return "(no rows)"
	}
	var b strings.Builder
	for i, r := range rows {
		if i == maxReportRows {
			fmt.Fprintf(&b, "\n      … %d more", len(rows)-i)
			break
		}
		b.WriteString("\n      " + r)
	}
	return b.String()
}

func warningsString(ws []Warning) string {
	if len(ws) == 0 {
		return "(no warnings)"
	}
	var s []string
	for _, w := range ws {
		s = append(s, w.String())
	}
	return strings.Join(s, "; ")
}

// Unexpected returns the differences that the list does not name.
func (rep *Report) Unexpected() []Difference {
	var out []Difference
	for _, d := range rep.Differences {
		if d.Intended == nil {
			out = append(out, d)
		}
	}
	return out
}

func (rep *Report) count(k Kind) int {
	n := 0
	for _, d := range rep.Differences {
		if d.Intended != nil && d.Intended.Kind == k {
			n++
		}
	}
	return n
}

// Write prints the report: the counts, then every unexpected difference
// with both sides, then the listed ones with their reasons, then the stale
// entries.
func (rep *Report) Write(w io.Writer) {
	un := rep.Unexpected()
	fmt.Fprintf(w, "difftest: %d scripts, %d statements compared, %d identical, %d with differences\n",
		rep.Scripts, rep.Statements, rep.Statements-rep.Differing, rep.Differing)
	fmt.Fprintf(w, "differences: %d (%d unexpected, %d intended, %d known and not fixed yet); %d stale list entries\n",
		len(rep.Differences), len(un), rep.count(KindIntended), rep.count(KindKnown), len(rep.Stale))
	section := func(title string, ds []Difference) {
		if len(ds) == 0 {
			return
		}
		fmt.Fprintf(w, "\n== %s\n", title)
		for _, d := range ds {
			fmt.Fprintf(w, "\n%s:%d [%s] %s\n", d.Script, d.Statement.Line, d.Aspect, normalize(d.Statement.SQL))
			if d.Intended != nil {
				fmt.Fprintf(w, "  %s (list line %d): %s\n", d.Intended.Kind, d.Intended.Line, d.Intended.Reason)
			}
			fmt.Fprintf(w, "  miraj:   %s\n  mariadb: %s\n", d.Miraj, d.MariaDB)
		}
	}
	section("unexpected differences", un)
	var intended, known []Difference
	for _, d := range rep.Differences {
		switch {
		case d.Intended == nil:
		case d.Intended.Kind == KindIntended:
			intended = append(intended, d)
		default:
			known = append(known, d)
		}
	}
	section("intended differences", intended)
	section("known differences, not fixed yet", known)
	if len(rep.Stale) > 0 {
		fmt.Fprintf(w, "\n== stale list entries (they match no difference: remove them)\n")
		for _, in := range rep.Stale {
			fmt.Fprintf(w, "line %d: %s [%s] %s\n", in.Line, in.File, in.Statement, in.Reason)
		}
	}
}

// todoReason marks a proposed entry whose reason is still to be written:
// the list refuses it, so every entry it holds has been reviewed.
const todoReason = "TODO"

// Propose writes an entry of the list for each statement with unexpected
// differences (its aspects together), with the reason to be written: the
// start of a review, not a list to commit as it is.
func (rep *Report) Propose(w io.Writer) {
	type key struct{ file, stmt string }
	var order []key
	aspectsOf := map[key][]string{}
	for _, d := range rep.Unexpected() {
		k := key{d.Script, normalize(d.Statement.SQL)}
		if _, ok := aspectsOf[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(aspectsOf[k], string(d.Aspect)) {
			aspectsOf[k] = append(aspectsOf[k], string(d.Aspect))
		}
	}
	for _, k := range order {
		fmt.Fprintf(w, "file: %s\nstatement: %s\naspects: %s\nkind: %s\nreason: %s\n\n", k.file, k.stmt, strings.Join(aspectsOf[k], ", "), KindKnown, todoReason)
	}
}
