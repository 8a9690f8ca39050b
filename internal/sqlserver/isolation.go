package sqlserver

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/storage"
)

// Isolation levels. A transaction's level is transaction_isolation as it
// was when the transaction began (SET TRANSACTION ISOLATION LEVEL without
// a scope sets it for the next transaction alone):
//
//   - REPEATABLE READ (the default): snapshot isolation. The transaction
//     reads the databases as they were at its first statement on each,
//     plus its own writes; a write to a row another transaction committed
//     a change to since is refused at commit (1213, first committer
//     wins), where InnoDB would make the second writer wait for the row
//     lock and then write over the newest row.
//   - READ COMMITTED: each statement reads the newest commits, plus the
//     transaction's own writes (storage.Tx.Rebase, called at the
//     statement's first use of each database). Write conflicts are
//     refused at commit as under REPEATABLE READ.
//   - READ UNCOMMITTED gives READ COMMITTED, with a warning: no
//     transaction ever reads another's uncommitted rows.
//   - SERIALIZABLE is refused (1235): snapshot isolation is weaker (two
//     transactions may each read what the other writes and both commit),
//     and a client that asks for it relies on more.

// checkIsolation refuses or warns about the isolation levels n sets.
func checkIsolation(ctx *sql.Context, n *plan.Set) error {
	isolation := func(name string) bool { return name == "transaction_isolation" || name == "tx_isolation" }
	return eachStringSet(ctx, n, isolation, func(_, s string) error {
		switch level := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", "-")); level {
		case "SERIALIZABLE":
			return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
				"This version of MySQL doesn't yet support 'SERIALIZABLE isolation: Miraj runs a transaction in snapshot isolation (REPEATABLE READ) or READ COMMITTED'")
		case "READ-UNCOMMITTED":
			ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet,
				Message: "Isolation level READ-UNCOMMITTED gives READ-COMMITTED: Miraj never reads rows another transaction has not committed"})
		}
		return nil
	})
}

// readCommittedLevel reports whether the session's transaction_isolation
// is READ-COMMITTED or READ-UNCOMMITTED: a transaction that begins now
// reads the newest commits at each statement.
func (s *Session) readCommittedLevel() bool {
	v, err := s.BaseSession.GetSessionVariable(nil, "transaction_isolation")
	if err != nil {
		return false
	}
	l, _ := v.(string)
	return strings.EqualFold(l, "READ-COMMITTED") || strings.EqualFold(l, "READ-UNCOMMITTED")
}

// statementSnapshot marks, as a client's statement begins, every database
// of a READ COMMITTED transaction for a new snapshot, which the
// statement's first use of that database takes (dbTx).
func (s *Session) statementSnapshot() {
	t := s.txn
	if t == nil || !t.readCommitted || len(t.dbs) == 0 {
		return
	}
	if t.stale == nil {
		t.stale = make(map[string]bool, len(t.dbs))
	}
	for key := range t.dbs {
		t.stale[key] = true
	}
}

// eachStringSet calls fn with the name (in lower case) and the value of
// each system variable of those want that n sets to a string, and returns
// fn's first error. A value that does not evaluate ends the calls without
// an error: the assignment reports it.
func eachStringSet(ctx *sql.Context, n *plan.Set, want func(name string) bool, fn func(name, value string) error) error {
	for _, e := range n.Exprs {
		sf, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		sv, ok := sf.LeftChild.(*expression.SystemVar)
		if !ok || !want(strings.ToLower(sv.Name)) {
			continue
		}
		v, err := sf.RightChild.Eval(ctx, nil)
		if err != nil {
			return nil
		}
		if s, ok := v.(string); ok {
			if err := fn(strings.ToLower(sv.Name), s); err != nil {
				return err
			}
		}
	}
	return nil
}

// unusedVariables are variables a SET changes with no effect on Miraj,
// and why; a SET of one warns (1235). when says which values warn (nil:
// any).
var unusedVariables = map[string]struct {
	why  string
	when func(v any) bool
}{
	"general_log":             {"Miraj keeps no general query log", truthy},
	"slow_query_log":          {"Miraj keeps no slow query log", truthy},
	"innodb_buffer_pool_size": {"Miraj has no buffer pool: every table is held in memory", nil},
	"query_cache_type":        {"Miraj has no query cache", nil},
	"query_cache_size":        {"Miraj has no query cache", nil},
}

// truthy reports whether a SET value turns a switch on.
func truthy(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.EqualFold(x, "ON") || x == "1"
	case bool:
		return x
	case int64:
		return x != 0
	case int8:
		return x != 0
	case int:
		return x != 0
	}
	return false
}

// warnUnused warns about the variables n sets that Miraj does not use.
func warnUnused(ctx *sql.Context, n *plan.Set) {
	for _, e := range n.Exprs {
		sf, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		sv, ok := sf.LeftChild.(*expression.SystemVar)
		if !ok {
			continue
		}
		u, ok := unusedVariables[strings.ToLower(sv.Name)]
		if !ok {
			continue
		}
		if u.when != nil {
			v, err := sf.RightChild.Eval(ctx, nil)
			if err != nil || !u.when(v) {
				continue
			}
		}
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet,
			Message: fmt.Sprintf("%s is set and not used: %s", strings.ToLower(sv.Name), u.why)})
	}
}

// fresh moves tx, the transaction's part in database key, to the newest
// commits if the statement under way has not yet (statementSnapshot).
func (t *txn) fresh(key string, tx *storage.Tx) {
	if t.stale[key] {
		delete(t.stale, key)
		tx.Rebase()
	}
}
