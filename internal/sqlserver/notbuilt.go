package sqlserver

import (
	"context"
	"regexp"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// Statements MySQL knows and Miraj does not answer, which go-mysql-server's
// parser refused with 1064 (a syntax error, as if the text were wrong):
// they get 1235, saying what there is instead.
var notBuilt = []struct {
	words []string // the statement's first words
	what  string
}{
	{[]string{"SHOW", "ENGINE"}, "SHOW ENGINE … STATUS: Miraj's engine is its own (SHOW GLOBAL STATUS LIKE 'Miraj%', information_schema.MIRAJ_REPLICATION)"},
	{[]string{"SHOW", "PROFILE"}, "SHOW PROFILE: statement profiling"},
	{[]string{"SHOW", "PROFILES"}, "SHOW PROFILES: statement profiling"},
	{[]string{"HELP"}, "HELP: the server-side help tables"},
}

// storedFunctionRE matches the statements of stored functions (CREATE,
// DROP, SHOW CREATE FUNCTION; a CREATE with its DEFINER, as dumps write
// it), which go-mysql-server's parser does not know: storedfunc.go
// answers them.
var storedFunctionRE = regexp.MustCompile("(?is)^\\s*(?:create\\s+(?:or\\s+replace\\s+)?(?:definer\\s*=\\s*(?:'[^']*'|`[^`]*`|[^\\s@]+)(?:\\s*@\\s*(?:'[^']*'|`[^`]*`|[^\\s(]+))?(?:\\s*\\(\\s*\\))?\\s+)?(?:aggregate\\s+)?|drop\\s+|show\\s+create\\s+)function\\b")

// alterTableComment reports whether q's first statement is an ALTER TABLE
// that sets the table's comment (COMMENT [=] '…' as one of its changes,
// not a column's): go-mysql-server's parser reads the option and drops
// it, so the statement did nothing and said OK.
func alterTableComment(q string) bool {
	return alterTableChange(q, func(w []sqltext.Word, i int) bool {
		if w[i].Text != "COMMENT" {
			return false
		}
		j := i + 1
		if j < len(w) && !w[j].IsWord && w[j].Text == "=" {
			j++
		}
		return j < len(w) && w[j].Text == "'"
	})
}

// alterTableConvert reports whether q's first statement is an ALTER TABLE
// … CONVERT TO CHARACTER SET: go-mysql-server's parser reads it as a
// change of the table's default character set alone, leaving its columns
// as they are.
func alterTableConvert(q string) bool {
	return alterTableChange(q, func(w []sqltext.Word, i int) bool {
		return w[i].Text == "CONVERT" && i+1 < len(w) && w[i+1].Text == "TO"
	})
}

// alterTableChange reports whether q's first statement is an ALTER TABLE
// one of whose changes (at the top level, after a comma or the table's
// name) is is: is(w, i) looks at the change starting with word w[i].
func alterTableChange(q string, is func(w []sqltext.Word, i int) bool) bool {
	w := sqltext.Scan(q, true)
	i := 1
	for i < len(w) && i < 3 && w[i].IsWord && (w[i].Text == "ONLINE" || w[i].Text == "IGNORE") {
		i++
	}
	if len(w) == 0 || w[0].Text != "ALTER" || i >= len(w) || w[i].Text != "TABLE" {
		return false
	}
	i += 2 // TABLE and the table's name
	if i+1 < len(w) && w[i].Text == "." {
		i += 2
	}
	depth := 0
	for start := true; i < len(w); i++ {
		switch x := w[i]; {
		case !x.IsWord && x.Text == "(":
			depth++
		case !x.IsWord && x.Text == ")":
			depth--
		case depth > 0:
		case !x.IsWord && x.Text == ",":
			start = true
			continue
		case start && x.IsWord && is(w, i):
			return true
		}
		start = false
	}
	return false
}

// noBinaryLog are the statements that read the binary log, which a server
// without one (Miraj's journal is per database) answers with 1381, as
// MySQL's with log_bin OFF; go-mysql-server answered an empty list.
var noBinaryLog = [][]string{{"SHOW", "BINARY", "LOGS"}, {"SHOW", "MASTER", "LOGS"}, {"SHOW", "BINLOG", "EVENTS"}}

// leads reports whether q begins with the words kws.
func leads(q string, kws []string) bool {
	w := sqltext.NewReader(q)
	for _, kw := range kws {
		if !sqltext.IsKeyword(w.Next(), kw) {
			return false
		}
	}
	return true
}

// notBuiltStatement refuses the statement at the start of q if it is one
// of notBuilt, or reads the binary log (noBinaryLog).
func notBuiltStatement(q string) (bool, error) {
	for _, kws := range noBinaryLog {
		if leads(q, kws) {
			return true, mysql.NewSQLError(1381, "HY000", "You are not using binary logging")
		}
	}
	for _, nb := range notBuilt {
		if leads(q, nb.words) {
			return true, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'", nb.what)
		}
	}
	if alterTableComment(q) {
		return true, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'", "ALTER TABLE … COMMENT: a table's comment is the one CREATE TABLE gave it")
	}
	if alterTableConvert(q) {
		return true, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'", "ALTER TABLE … CONVERT TO CHARACTER SET: change the columns with MODIFY, and the table's default with ALTER TABLE … CHARACTER SET")
	}
	return false, nil
}

// notBuiltAnswer is answerHere's part for notBuilt: the statement's end
// does not matter, it is refused whole.
func (h protocolHandler) notBuiltAnswer(_ context.Context, q string) (int, bool, error) {
	if found, err := notBuiltStatement(q); found {
		return len(q), true, err
	}
	return 0, false, nil
}
