package sqltext

import "strings"

// The text of SQL statements, read before (or beside) the parser: the words
// of a statement with their places (locking clauses, the statements of
// dump tools), and MySQL's versioned comments.

// Word is a word or punctuation of a statement, with its place.
type Word struct {
	Text       string // upper-case for words
	Start, End int
	IsWord     bool
}

// Scan splits q into words and punctuation, skipping strings, quoted
// identifiers (as one word) and comments; the body of a /*! … */ comment
// is read as code. With first, it stops at the end of the first statement.
func Scan(q string, first bool) []Word { return ScanUpTo(q, first, 0) }

// FirstWord returns q's first word, upper-case ("" when q starts with
// something else): a statement's kind, read without scanning the rest.
func FirstWord(q string) string {
	if w := ScanUpTo(q, true, 1); len(w) == 1 && w[0].IsWord {
		return w[0].Text
	}
	return ""
}

// ScanUpTo is Scan stopping after limit words and punctuation
// marks (0: no limit).
func ScanUpTo(q string, first bool, limit int) []Word {
	var out []Word
	for i := 0; i < len(q) && (limit == 0 || len(out) < limit); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) {
				if q[j] == '\\' {
					j += 2
					continue
				}
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			out = append(out, Word{Text: "'", Start: i, End: min(j+1, len(q))})
			i = j + 1
		case c == '`':
			j := i + 1
			for j < len(q) {
				if q[j] == '`' {
					if j+1 < len(q) && q[j+1] == '`' {
						j += 2 // a doubled backquote is one
						continue
					}
					break
				}
				j++
			}
			out = append(out, Word{Text: strings.ReplaceAll(q[i+1:min(j, len(q))], "``", "`"), Start: i, End: min(j+1, len(q)), IsWord: true})
			i = j + 1
		case c == '#' || (c == '-' && strings.HasPrefix(q[i:], "-- ")):
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(q[i:], "/*!"):
			i += 3
			for i < len(q) && q[i] >= '0' && q[i] <= '9' {
				i++
			}
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				return out
			}
			i += j + 4
		case c == '*' && strings.HasPrefix(q[i:], "*/"):
			i += 2 // the end of a /*! … */ comment
		case c == ';':
			if first {
				return out
			}
			out = append(out, Word{Text: ";", Start: i, End: i + 1})
			i++
		case c == '_' || c == '$' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z') || (c >= '0' && c <= '9'):
			j := i
			for j < len(q) && (q[j] == '_' || q[j] == '$' || q[j] >= 0x80 || (q[j]|0x20 >= 'a' && q[j]|0x20 <= 'z') || (q[j] >= '0' && q[j] <= '9')) {
				j++
			}
			out = append(out, Word{Text: strings.ToUpper(q[i:j]), Start: i, End: j, IsWord: true})
			i = j
		default:
			out = append(out, Word{Text: string(c), Start: i, End: i + 1})
			i++
		}
	}
	return out
}

// ScanStatement returns the words of q's first statement and where it ends
// (its ';' or the end of q).
func ScanStatement(q string) ([]Word, int) {
	all := Scan(q, false)
	for i, x := range all {
		if x.Text == ";" && !x.IsWord {
			return all[:i], x.Start
		}
	}
	return all, len(q)
}

// VersionID is the version MySQL's versioned comments are compared
// with (/*!80000 … */ runs on 8.0.0 and later): the version we report.
const VersionID = 80033

// UnwrapVersionComments turns each MySQL versioned comment /*!NNNNN … */
// of q into its content (spaces in place of the markers, so that the length
// and positions hold), or into spaces when NNNNN is above our version, as
// MySQL reads them. Dumps wrap CREATE EVENT, VIEW and TRIGGER in such
// comments; go-mysql-server v0.20 kept the closing "*/" in the body it
// stored for an event (and the definition of a view created that way was
// left out of information_schema).
func UnwrapVersionComments(q string) string {
	if !strings.Contains(q, "/*!") {
		return q
	}
	b := []byte(q)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	var open []int // start of each versioned comment being read
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(b) && b[j] != c {
				if b[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '#' || (c == '-' && i+2 < len(b) && b[i+1] == '-' && b[i+2] == ' '):
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case c == '/' && i+2 < len(b) && b[i+1] == '*' && b[i+2] == '!':
			j := i + 3
			v := 0
			for j < len(b) && j < i+8 && b[j] >= '0' && b[j] <= '9' {
				v = v*10 + int(b[j]-'0')
				j++
			}
			if v > VersionID {
				end := strings.Index(q[j:], "*/")
				if end < 0 {
					return q
				}
				blank(i, j+end+2)
				i = j + end + 2
				continue
			}
			blank(i, j)
			open = append(open, i)
			i = j
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return string(b)
			}
			i += end + 4
		case c == '*' && i+1 < len(b) && b[i+1] == '/' && len(open) > 0:
			blank(i, i+2)
			open = open[:len(open)-1]
			i += 2
		default:
			i++
		}
	}
	return string(b)
}

// IndexFold returns the byte index of the first occurrence of word (ASCII)
// in s, ignoring case, or -1. Unlike searching a lower-cased copy it
// neither allocates nor moves positions when s holds non-ASCII text.
func IndexFold(s, word string) int {
	if word == "" {
		return 0
	}
	// Candidates are the bytes equal to the word's first one with ASCII's
	// case bit set or cleared (two letters equal in any case are equal
	// then), found with IndexByte, which skips the bytes between them
	// many at a time: every parsed statement's text is searched so
	// (DELETE's modifiers, INTERVAL, locking clauses), a bulk INSERT's
	// hundreds of kilobytes several times.
	lo, up := word[0]|0x20, word[0]&^0x20
	last := len(s) - len(word) // the last index a match may start at
	nextLo, nextUp := -1, -1   // the next candidates at or after i, -2: none
	for i := 0; i <= last; {
		if nextLo != -2 && nextLo < i {
			if nextLo = strings.IndexByte(s[i:last+1], lo); nextLo >= 0 {
				nextLo += i
			} else {
				nextLo = -2
			}
		}
		if nextUp != -2 && nextUp < i {
			if nextUp = strings.IndexByte(s[i:last+1], up); nextUp >= 0 {
				nextUp += i
			} else {
				nextUp = -2
			}
		}
		switch {
		case nextLo == -2 && nextUp == -2:
			return -1
		case nextUp == -2 || nextLo != -2 && nextLo < nextUp:
			i = nextLo
		default:
			i = nextUp
		}
		if strings.EqualFold(s[i:i+len(word)], word) {
			return i
		}
		i++
	}
	return -1
}
