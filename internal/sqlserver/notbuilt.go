package sqlserver

import (
	"context"

	"github.com/dolthub/vitess/go/mysql"
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

// notBuiltStatement refuses the statement at the start of q if it is one
// of notBuilt.
func notBuiltStatement(q string) (bool, error) {
	for _, nb := range notBuilt {
		w := words{s: q}
		match := true
		for _, kw := range nb.words {
			if !isKeyword(w.next(), kw) {
				match = false
				break
			}
		}
		if match {
			return true, mysql.NewSQLError(mysql.ERNotSupportedYet, "42000", "This version of MySQL doesn't yet support '%s'", nb.what)
		}
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
