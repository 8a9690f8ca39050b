package slt

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Kind is what went wrong with a record.
type Kind string

const (
	KindWrong   Kind = "wrong"    // other values, another count, another hash
	KindSchema  Kind = "schema"   // other columns: count or types (I/R stand for each other)
	KindError   Kind = "error"    // an error where the record expects none
	KindNoError Kind = "no-error" // no error where the record expects one
	KindTimeout Kind = "timeout"  // no answer within the query timeout
	KindParse   Kind = "parse"    // the file could not be parsed (Line 0)
)

// Failure is one record that did not give its expected result.
type Failure struct {
	File     string
	Line     int // the record's first line of SQL
	Query    string
	Kind     Kind
	Err      string // the error, or what was wrong
	Expected string // for KindWrong and KindSchema: the expected values
	Got      string
	Known    string // the reason, when the failure is in the list of known failures
}

// Key names the record: "select1.test:123".
func (f Failure) Key() string { return fmt.Sprintf("%s:%d", f.File, f.Line) }

// FileResult is what one file gave.
type FileResult struct {
	Name       string
	OK         int
	Failed     int
	Skipped    int // not for MySQL (skipif mysql, onlyif another engine)
	NotRun     int // left when the file's time budget was spent
	BudgetLine int // the first record not run for the budget, or 0
	Halted     bool
	Elapsed    time.Duration
	Failures   []Failure
	Passed     []int    // lines of the records that passed
	Slowest    []Timing // the file's slowest records, slowest first, at most slowestKept
}

// Timing is how long one record took.
type Timing struct {
	File    string
	Line    int
	Query   string
	Elapsed time.Duration
}

// slowestKept bounds the slow records kept per file and written in the report.
const slowestKept = 10

// noteSlow keeps t if it is among the file's slowest records.
func (f *FileResult) noteSlow(t Timing) {
	if len(f.Slowest) == slowestKept && t.Elapsed <= f.Slowest[slowestKept-1].Elapsed {
		return
	}
	i := sort.Search(len(f.Slowest), func(i int) bool { return f.Slowest[i].Elapsed < t.Elapsed })
	f.Slowest = append(f.Slowest, Timing{})
	copy(f.Slowest[i+1:], f.Slowest[i:])
	f.Slowest[i] = t
	if len(f.Slowest) > slowestKept {
		f.Slowest = f.Slowest[:slowestKept]
	}
}

// Records counts the records run.
func (f FileResult) Records() int { return f.OK + f.Failed }

func (f FileResult) summary() string {
	s := fmt.Sprintf("%-40s %7d records %7d ok %5d failed %6d skipped %8.1f s", f.Name, f.Records(), f.OK, f.Failed, f.Skipped, f.Elapsed.Seconds())
	if f.Halted {
		s += "  (halt for MySQL)"
	}
	if f.NotRun > 0 {
		s += fmt.Sprintf("  (time budget spent at line %d: %d records not run)", f.BudgetLine, f.NotRun)
	}
	return s
}

// Report is what a run gave, file by file.
type Report struct {
	Files   []FileResult
	Elapsed time.Duration
	// Stale lists the known failures whose record ran and passed.
	Stale []KnownEntry
}

// Totals sums the files.
func (r *Report) Totals() (t FileResult) {
	for _, f := range r.Files {
		t.OK += f.OK
		t.Failed += f.Failed
		t.Skipped += f.Skipped
		t.NotRun += f.NotRun
	}
	return t
}

// Failures returns every failure, file by file in the order run.
func (r *Report) Failures() []Failure {
	var all []Failure
	for _, f := range r.Files {
		all = append(all, f.Failures...)
	}
	return all
}

// Unexpected returns the failures that are not in the list of known ones.
func (r *Report) Unexpected() []Failure {
	var u []Failure
	for _, f := range r.Failures() {
		if f.Known == "" {
			u = append(u, f)
		}
	}
	return u
}

// Classify marks the failures the list knows, and records as stale the
// entries whose record ran (in a file of this run) and passed.
func (r *Report) Classify(list KnownList) {
	passed := map[string]bool{}
	for i := range r.Files {
		f := &r.Files[i]
		for j := range f.Failures {
			if e, ok := list.entries[f.Failures[j].Key()]; ok {
				f.Failures[j].Known = string(e.Kind) + ": " + e.Reason
			}
		}
		for _, l := range f.Passed {
			passed[fmt.Sprintf("%s:%d", f.Name, l)] = true
		}
	}
	r.Stale = nil
	for _, e := range list.ordered {
		if passed[e.Record] {
			r.Stale = append(r.Stale, e)
		}
	}
}

// Write writes the report: totals, one line per file, then every failure
// (unexpected ones first), each with its query and what differed.
func (r *Report) Write(w io.Writer) {
	t := r.Totals()
	rate := 0.0
	if t.Records() > 0 {
		rate = 100 * float64(t.OK) / float64(t.Records())
	}
	unexpected := len(r.Unexpected())
	fmt.Fprintf(w, "sqllogictest: %d files, %d records run, %d ok, %d failed (%d unexpected, %d known), %d skipped (not for MySQL), %d not run (time budget); ok rate %.4f %%; %.1f s\n",
		len(r.Files), t.Records(), t.OK, t.Failed, unexpected, t.Failed-unexpected, t.Skipped, t.NotRun, rate, r.Elapsed.Seconds())
	byKind := map[Kind]int{}
	for _, f := range r.Failures() {
		byKind[f.Kind]++
	}
	var kinds []string
	for k, n := range byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "failures by kind: %s; %d stale entries in the list of known failures\n", strings.Join(kinds, ", "), len(r.Stale))
	fmt.Fprintln(w, "\nfiles:")
	for _, f := range r.Files {
		fmt.Fprintln(w, "  "+f.summary())
	}
	var slow []Timing
	for _, f := range r.Files {
		slow = append(slow, f.Slowest...)
	}
	sort.SliceStable(slow, func(i, j int) bool { return slow[i].Elapsed > slow[j].Elapsed })
	if len(slow) > slowestKept {
		slow = slow[:slowestKept]
	}
	if len(slow) > 0 {
		fmt.Fprintf(w, "\nslowest records:\n")
		for _, s := range slow {
			q := strings.Join(strings.Fields(s.Query), " ")
			if len(q) > 120 {
				q = q[:120] + " …"
			}
			fmt.Fprintf(w, "  %8.2f s  %s:%d  %s\n", s.Elapsed.Seconds(), s.File, s.Line, q)
		}
	}
	section := func(title string, known bool) {
		var fs []Failure
		for _, f := range r.Failures() {
			if (f.Known != "") == known {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s (%d):\n", title, len(fs))
		for _, f := range fs {
			writeFailure(w, f)
		}
	}
	section("unexpected failures", false)
	section("known failures", true)
	if len(r.Stale) > 0 {
		fmt.Fprintf(w, "\nstale entries of the list of known failures (their record passes: remove them):\n")
		for _, e := range r.Stale {
			fmt.Fprintf(w, "  %s %s %s\n", e.Record, e.Kind, e.Reason)
		}
	}
}

// maxQueryReport bounds a query's text in the report (select5's joins are
// a few kilobytes each).
const maxQueryReport = 2000

func writeFailure(w io.Writer, f Failure) {
	fmt.Fprintf(w, "\n%s: %s", f.Key(), f.Kind)
	if f.Err != "" {
		fmt.Fprintf(w, ": %s", f.Err)
	}
	fmt.Fprintln(w)
	q := f.Query
	if len(q) > maxQueryReport {
		q = q[:maxQueryReport] + " …"
	}
	if q != "" {
		fmt.Fprintf(w, "  query:    %s\n", q)
	}
	if f.Expected != "" {
		fmt.Fprintf(w, "  expected: %s\n", f.Expected)
	}
	if f.Got != "" {
		fmt.Fprintf(w, "  got:      %s\n", f.Got)
	}
	if f.Known != "" {
		fmt.Fprintf(w, "  known:    %s\n", f.Known)
	}
}
