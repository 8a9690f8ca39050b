package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// MySQL's statements take modifiers go-mysql-server's parser does not
// know, which change nothing in an engine of row versions without table
// locks (MySQL ignores them for InnoDB too): SELECT HIGH_PRIORITY,
// SQL_SMALL_RESULT, SQL_BIG_RESULT; INSERT, REPLACE and UPDATE
// LOW_PRIORITY (and INSERT HIGH_PRIORITY); INSERT DELAYED, which MySQL
// runs as an INSERT with a warning. DISTINCTROW is DISTINCT; SHOW STORAGE
// ENGINES is SHOW ENGINES. An index hint naming PRIMARY, naming no index
// or saying what it is FOR is dropped (a hint steers the plan, never the
// answer). A statement the parser refuses is read again with these blanked
// (blankModifiers): the same length, so the parser's positions hold.
// DELETE's modifiers are blanked before the first reading
// (blankDeleteModifiers): the parser takes DELETE QUICK FROM t for a
// statement of its own.

// blankModifiers returns q with the modifiers of its statements blanked,
// and the statement (INSERT or REPLACE) it held with DELAYED, if any.
func blankModifiers(q string) (string, string) {
	words := sqltext.Scan(q, false)
	k := blanker{q: q}
	delayed := ""
	for i, w := range words {
		if !w.IsWord {
			continue
		}
		switch w.Text {
		case "SELECT":
			for j := i + 1; j < len(words) && words[j].IsWord; j++ {
				switch words[j].Text {
				case "HIGH_PRIORITY", "SQL_SMALL_RESULT", "SQL_BIG_RESULT":
					k.blank(words[j].Start, words[j].End)
					continue
				case "DISTINCTROW":
					k.blank(words[j].Start, words[j].End)
					copy(k.b[words[j].Start:], "DISTINCT")
					continue
				case "ALL", "DISTINCT", "STRAIGHT_JOIN", "SQL_CALC_FOUND_ROWS", "SQL_NO_CACHE", "SQL_CACHE", "SQL_BUFFER_RESULT":
					continue
				}
				break
			}
		case "INSERT", "REPLACE", "UPDATE":
			if i > 0 && !(words[i-1].Text == ";" || words[i-1].Text == "(") {
				continue // ON DUPLICATE KEY UPDATE, a trigger's INSERT event…
			}
			for j := i + 1; j < len(words) && words[j].IsWord; j++ {
				switch x := words[j].Text; {
				case x == "LOW_PRIORITY", x == "HIGH_PRIORITY" && w.Text == "INSERT":
					k.blank(words[j].Start, words[j].End)
					continue
				case x == "DELAYED" && (w.Text == "INSERT" || w.Text == "REPLACE"):
					k.blank(words[j].Start, words[j].End)
					delayed = w.Text
					continue
				case x == "IGNORE":
					continue
				}
				break
			}
		case "SHOW":
			if i+2 < len(words) && words[i+1].Text == "STORAGE" && words[i+2].Text == "ENGINES" {
				k.blank(words[i+1].Start, words[i+1].End) // SHOW [STORAGE] ENGINES
			}
		case "USE", "FORCE", "IGNORE":
			if end, ok := droppedHint(words, i); ok {
				k.blank(w.Start, end)
			}
		}
	}
	return k.text(), delayed
}

// droppedHint reports whether words[i] starts an index hint the parser
// does not read (one naming PRIMARY, naming no index, or with FOR …),
// and where it ends.
func droppedHint(words []sqltext.Word, i int) (int, bool) {
	j := i + 1
	if j >= len(words) || !words[j].IsWord || (words[j].Text != "INDEX" && words[j].Text != "KEY") {
		return 0, false
	}
	j++
	hasFor := false
	if j < len(words) && words[j].IsWord && words[j].Text == "FOR" {
		hasFor = true
		for j++; j < len(words) && words[j].IsWord && words[j].Text != "("; j++ {
		}
	}
	if j >= len(words) || words[j].Text != "(" {
		return 0, false
	}
	named, primary := 0, false
	for j++; j < len(words) && words[j].Text != ")"; j++ {
		if words[j].IsWord {
			named++
			primary = primary || words[j].Text == "PRIMARY"
		}
	}
	if j >= len(words) {
		return 0, false
	}
	if !hasFor && !primary && named > 0 {
		return 0, false
	}
	return words[j].End, true
}

// blankDeleteModifiers returns q with the modifiers of its DELETE
// statements blanked: LOW_PRIORITY and QUICK, which change nothing here,
// and IGNORE, which the parser does not take; an error the statement meets
// (a foreign key's) then fails it rather than becoming a warning. MySQL
// reads QUICK and IGNORE after DELETE as modifiers, never as a table's
// name; DELETE is a reserved word, and where it is not a statement's (ON
// DELETE, GRANT DELETE, a trigger's event) these words do not follow it.
// A stored program's DELETE statements are read the same way.
func blankDeleteModifiers(q string) string {
	if sqltext.IndexFold(q, "DELETE") < 0 || sqltext.IndexFold(q, "QUICK") < 0 && sqltext.IndexFold(q, "IGNORE") < 0 && sqltext.IndexFold(q, "LOW_PRIORITY") < 0 {
		return q
	}
	words := sqltext.Scan(q, false)
	k := blanker{q: q}
	for i, w := range words {
		if !w.IsWord || w.Text != "DELETE" {
			continue
		}
		for j := i + 1; j < len(words) && words[j].IsWord; j++ {
			x := words[j].Text
			if x != "LOW_PRIORITY" && x != "QUICK" && x != "IGNORE" {
				break
			}
			k.blank(words[j].Start, words[j].End)
		}
	}
	return k.text()
}

// warnDelayed notes that the session's statement is an INSERT (or
// REPLACE) DELAYED, which its execution warns of (the warnings of parsing
// are cleared before the statement runs).
func warnDelayed(ctx *sql.Context, delayed string) {
	if ctx == nil || delayed == "" {
		return
	}
	if s, ok := ctx.Session.(*Session); ok {
		s.delayed = delayed
	}
}

// takeDelayed warns, as MySQL does, that the INSERT (or REPLACE) DELAYED
// ctx runs is an INSERT (ER_WARN_LEGACY_SYNTAX_CONVERTED).
func (s *Session) takeDelayed(ctx *sql.Context) {
	if s.delayed != "" {
		ctx.Warn(3005, "%s DELAYED is no longer supported. The statement was converted to %s.", s.delayed, s.delayed)
		s.delayed = ""
	}
}
