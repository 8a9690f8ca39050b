package slt

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// KnownEntry is one reviewed failure: a record that is known to fail, why,
// and whether it is a bug to fix or a difference kept on purpose.
type KnownEntry struct {
	Record string // "select5.test:1234"
	Kind   string // "known" (a bug not fixed yet) or "intended" (kept on purpose)
	Reason string
}

// KnownList is a parsed list of known failures.
type KnownList struct {
	ordered []KnownEntry
	entries map[string]KnownEntry
}

// Len counts the entries.
func (l KnownList) Len() int { return len(l.ordered) }

var knownLine = regexp.MustCompile(`^(\S+\.test:\d+)\s+(known|intended)\s+(.*\S)\s*$`)

// ParseKnown reads a list of known failures: one record a line,
//
//	<file>:<line> <known|intended> <reason>
//
// where the line is the record's first line of SQL (as the report names
// it); '#' starts a comment line. A reason is required.
func ParseKnown(r io.Reader, name string) (KnownList, error) {
	l := KnownList{entries: map[string]KnownEntry{}}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := knownLine.FindStringSubmatch(line)
		if m == nil {
			return l, fmt.Errorf("%s:%d: want '<file>.test:<line> known|intended <reason>', got %q", name, n, line)
		}
		if _, dup := l.entries[m[1]]; dup {
			return l, fmt.Errorf("%s:%d: %s is listed twice", name, n, m[1])
		}
		e := KnownEntry{Record: m[1], Kind: m[2], Reason: m[3]}
		l.entries[e.Record] = e
		l.ordered = append(l.ordered, e)
	}
	return l, sc.Err()
}

// LoadKnown reads the list of known failures in path.
func LoadKnown(path string) (KnownList, error) {
	f, err := os.Open(path)
	if err != nil {
		return KnownList{}, err
	}
	defer f.Close()
	return ParseKnown(f, path)
}
