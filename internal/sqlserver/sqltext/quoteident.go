package sqltext

import "strings"

// QuoteIdent is name as a quoted identifier: in backquotes, its own
// backquotes doubled.
func QuoteIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }
