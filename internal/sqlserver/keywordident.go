package sqlserver

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// Names that are keywords of go-mysql-server's parser but not reserved
// in MySQL: MySQL takes them unquoted as table and column names (a column
// plan, yes or next, a table copy, shared or event in db.event), the
// parser refuses them (1064). A statement the parser refuses is parsed
// again with the word it stopped at quoted, when that word is such a
// name, as long as the parser stops at a new one of them; the first error
// stands when that does not make the statement parse.

// maxQuotedWords bounds the words quoted in one statement.
const maxQuotedWords = 8

// syntaxErrorRE reads the parser's position (one past the end of the
// token it stopped at) and that token.
var syntaxErrorRE = regexp.MustCompile(`syntax error at position (\d+) near '([^']*)'`)

// quoteStoppedWord returns q with the word the parser stopped at (err)
// quoted, when it is a plain word MySQL does not reserve; else the word
// before it, when that is one (the parser stops after a keyword it
// expected more of: FROM after SELECT now).
func quoteStoppedWord(q string, err error) (string, bool) {
	start, end, ok := stoppedAt(q, err)
	if !ok {
		return "", false
	}
	if quotable(q, start, end) {
		return q[:start] + "`" + q[start:end] + "`" + q[end:], true
	}
	if s, e := wordBefore(q, start); s < e && quotable(q, s, e) {
		return q[:s] + "`" + q[s:e] + "`" + q[e:], true
	}
	return "", false
}

// stoppedAt returns where in q the token the parser stopped at (err) is.
func stoppedAt(q string, err error) (start, end int, ok bool) {
	if err == nil {
		return 0, 0, false
	}
	m := syntaxErrorRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, 0, false
	}
	pos, _ := strconv.Atoi(m[1])
	word := m[2]
	if word == "" {
		return len(q), len(q), true
	}
	// The position may be past the token named (the parser read ahead):
	// the token is its last whole occurrence before the position.
	lower, w := asciiLower(q[:min(pos, len(q))]), asciiLower(word)
	for i := strings.LastIndex(lower, w); i >= 0; i = strings.LastIndex(lower[:i], w) {
		if (i == 0 || !isIdentByte(q[i-1])) && (i+len(w) == len(q) || !isIdentByte(q[i+len(w)])) {
			return i, i + len(w), true
		}
	}
	return 0, 0, false
}

// wordBefore returns where the word before q[at:] is, past white space
// (start == end: none).
func wordBefore(q string, at int) (start, end int) {
	e := at
	for e > 0 && (q[e-1] == ' ' || q[e-1] == '\t' || q[e-1] == '\n' || q[e-1] == '\r') {
		e--
	}
	s := e
	for s > 0 && isIdentByte(q[s-1]) {
		s--
	}
	return s, e
}

// hintKeyAsIndex returns q with the KEY the parser stopped at (err)
// written INDEX when the word before it is USE, FORCE or IGNORE: MySQL
// takes USE KEY (…), FORCE KEY and IGNORE KEY for the INDEX forms, the
// parser only INDEX.
func hintKeyAsIndex(q string, err error) (string, bool) {
	start, end, ok := stoppedAt(q, err)
	if !ok || !strings.EqualFold(q[start:end], "key") {
		return "", false
	}
	s, e := wordBefore(q, start)
	switch strings.ToLower(q[s:e]) {
	case "use", "force", "ignore":
		return q[:start] + "INDEX" + q[end:], true
	}
	return "", false
}

// quotable reports whether q[start:end] is a whole word that may name a
// column unquoted in MySQL.
func quotable(q string, start, end int) bool {
	if start >= end || (start > 0 && (isIdentByte(q[start-1]) || q[start-1] == '`')) || (end < len(q) && (isIdentByte(q[end]) || q[end] == '`')) {
		return false
	}
	w := q[start:end]
	return plainWord(w) && !sqltext.Reserved[strings.ToLower(w)]
}

// plainWord reports a word that can name a column unquoted: letters,
// digits, _ and $, not all digits, not a character set introducer.
func plainWord(w string) bool {
	if w[0] == '_' {
		return false
	}
	digits := true
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !isIdentByte(c) {
			return false
		}
		if c < '0' || c > '9' {
			digits = false
		}
	}
	return !digits
}

// parseQuoting runs parse on q, and again with the words it stops at
// quoted (quoteStoppedWord) or an index hint's KEY written INDEX
// (hintKeyAsIndex); the first error when none of that parses.
func parseQuoting[T any](q string, parse func(string) (T, error)) (T, error) {
	res, err := parse(q)
	first := err
	for range maxQuotedWords {
		if err == nil {
			return res, nil
		}
		next, ok := quoteStoppedWord(q, err)
		if !ok {
			if next, ok = hintKeyAsIndex(q, err); !ok {
				break
			}
		}
		q = next
		res, err = parse(q)
	}
	if err == nil {
		return res, nil
	}
	var zero T
	return zero, first
}

// asciiLower lowercases ASCII letters only, keeping byte offsets.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
