package sqltext

import (
	"strings"
	"unicode"
)

// IsKeyword reports whether word is kw, ignoring case (kw is upper case).
func IsKeyword(word, kw string) bool { return len(word) == len(kw) && strings.EqualFold(word, kw) }

// Reader reads the leading Reader of a statement's text (IsWordByte), past
// white space and comments.
type Reader struct{ Rest string } // the text not read yet

// NewReader returns a Reader of s.
func NewReader(s string) Reader { return Reader{Rest: s} }

// Next returns the Next word, or "" when something else comes first (a
// quote, an operator, the end).
func (w *Reader) Next() string {
	w.SkipSpace()
	i := 0
	for i < len(w.Rest) && IsWordByte(w.Rest[i]) {
		i++
	}
	word := w.Rest[:i]
	w.Rest = w.Rest[i:]
	return word
}

// SkipAssignment skips "= value" (DEFINER = 'u'@'h', ALGORITHM = MERGE):
// the '=' and the text up to the next white space.
func (w *Reader) SkipAssignment() {
	w.SkipSpace()
	if len(w.Rest) > 0 && w.Rest[0] == '=' {
		w.Rest = w.Rest[1:]
	}
	w.SkipSpace()
	i := 0
	for i < len(w.Rest) && !IsSpace(w.Rest[i]) {
		i++
	}
	w.Rest = w.Rest[i:]
}

// SkipSpace skips white space, /* … */ comments (not /*! … */, whose text
// MySQL runs), -- and # comments, and an opening parenthesis.
func (w *Reader) SkipSpace() {
	for len(w.Rest) > 0 {
		switch c := w.Rest[0]; {
		case IsSpace(c), c == '(':
			w.Rest = w.Rest[1:]
		case strings.HasPrefix(w.Rest, "/*!"):
			w.Rest = w.Rest[3:]
			for len(w.Rest) > 0 && w.Rest[0] >= '0' && w.Rest[0] <= '9' {
				w.Rest = w.Rest[1:] // the version
			}
		case strings.HasPrefix(w.Rest, "/*"):
			end := strings.Index(w.Rest[2:], "*/")
			if end < 0 {
				w.Rest = ""
				return
			}
			w.Rest = w.Rest[2+end+2:]
		case c == '#', strings.HasPrefix(w.Rest, "-- "):
			end := strings.IndexByte(w.Rest, '\n')
			if end < 0 {
				w.Rest = ""
				return
			}
			w.Rest = w.Rest[end+1:]
		default:
			return
		}
	}
}

func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// IsWordByte reports whether c is part of a word (ASCII letters, digits, _ and $).
func IsWordByte(c byte) bool {
	return c == '_' || c == '$' || c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))
}
