package sqlserver

import "github.com/dolthub/go-mysql-server/sql"

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
	words := scanWords(q, false)
	k := blanker{q: q}
	delayed := ""
	for i, w := range words {
		if !w.word {
			continue
		}
		switch w.text {
		case "SELECT":
			for j := i + 1; j < len(words) && words[j].word; j++ {
				switch words[j].text {
				case "HIGH_PRIORITY", "SQL_SMALL_RESULT", "SQL_BIG_RESULT":
					k.blank(words[j].start, words[j].end)
					continue
				case "DISTINCTROW":
					k.blank(words[j].start, words[j].end)
					copy(k.b[words[j].start:], "DISTINCT")
					continue
				case "ALL", "DISTINCT", "STRAIGHT_JOIN", "SQL_CALC_FOUND_ROWS", "SQL_NO_CACHE", "SQL_CACHE", "SQL_BUFFER_RESULT":
					continue
				}
				break
			}
		case "INSERT", "REPLACE", "UPDATE":
			if i > 0 && !(words[i-1].text == ";" || words[i-1].text == "(") {
				continue // ON DUPLICATE KEY UPDATE, a trigger's INSERT event…
			}
			for j := i + 1; j < len(words) && words[j].word; j++ {
				switch x := words[j].text; {
				case x == "LOW_PRIORITY", x == "HIGH_PRIORITY" && w.text == "INSERT":
					k.blank(words[j].start, words[j].end)
					continue
				case x == "DELAYED" && (w.text == "INSERT" || w.text == "REPLACE"):
					k.blank(words[j].start, words[j].end)
					delayed = w.text
					continue
				case x == "IGNORE":
					continue
				}
				break
			}
		case "SHOW":
			if i+2 < len(words) && words[i+1].text == "STORAGE" && words[i+2].text == "ENGINES" {
				k.blank(words[i+1].start, words[i+1].end) // SHOW [STORAGE] ENGINES
			}
		case "USE", "FORCE", "IGNORE":
			if end, ok := droppedHint(words, i); ok {
				k.blank(w.start, end)
			}
		}
	}
	return k.text(), delayed
}

// droppedHint reports whether words[i] starts an index hint the parser
// does not read (one naming PRIMARY, naming no index, or with FOR …),
// and where it ends.
func droppedHint(words []sqlWord, i int) (int, bool) {
	j := i + 1
	if j >= len(words) || !words[j].word || (words[j].text != "INDEX" && words[j].text != "KEY") {
		return 0, false
	}
	j++
	hasFor := false
	if j < len(words) && words[j].word && words[j].text == "FOR" {
		hasFor = true
		for j++; j < len(words) && words[j].word && words[j].text != "("; j++ {
		}
	}
	if j >= len(words) || words[j].text != "(" {
		return 0, false
	}
	named, primary := 0, false
	for j++; j < len(words) && words[j].text != ")"; j++ {
		if words[j].word {
			named++
			primary = primary || words[j].text == "PRIMARY"
		}
	}
	if j >= len(words) {
		return 0, false
	}
	if !hasFor && !primary && named > 0 {
		return 0, false
	}
	return words[j].end, true
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
	if indexFold(q, "DELETE") < 0 || indexFold(q, "QUICK") < 0 && indexFold(q, "IGNORE") < 0 && indexFold(q, "LOW_PRIORITY") < 0 {
		return q
	}
	words := scanWords(q, false)
	k := blanker{q: q}
	for i, w := range words {
		if !w.word || w.text != "DELETE" {
			continue
		}
		for j := i + 1; j < len(words) && words[j].word; j++ {
			x := words[j].text
			if x != "LOW_PRIORITY" && x != "QUICK" && x != "IGNORE" {
				break
			}
			k.blank(words[j].start, words[j].end)
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
