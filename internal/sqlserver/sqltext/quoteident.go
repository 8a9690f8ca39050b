package sqltext

import "strings"

// QuoteIdent is name as a quoted identifier: in backquotes, its own
// backquotes doubled.
func QuoteIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// UnquoteIdent is a quoted identifier's name: without its backquotes, its
// doubled backquotes single.
func UnquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}
