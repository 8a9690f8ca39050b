package sqlserver

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
)

// Isolation levels. Every Miraj transaction runs in snapshot isolation
// (README, "Transactions"), which is what REPEATABLE READ gives in MySQL
// for reads, with write conflicts refused at commit (1213). A SET of
// transaction_isolation (or SET TRANSACTION ISOLATION LEVEL, which
// go-mysql-server turns into one) to another level is not carried out,
// and says so:
//
//   - SERIALIZABLE is refused (1235): snapshot isolation is weaker (two
//     transactions may each read what the other writes and both commit),
//     and a client that asks for it relies on more;
//   - READ COMMITTED and READ UNCOMMITTED are accepted, with a warning:
//     the transaction's reads stay those of its snapshot.

// checkIsolation refuses or warns about the isolation levels n sets.
func checkIsolation(ctx *sql.Context, n *plan.Set) error {
	isolation := func(name string) bool { return name == "transaction_isolation" || name == "tx_isolation" }
	return eachStringSet(ctx, n, isolation, func(_, s string) error {
		switch level := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", "-")); level {
		case "SERIALIZABLE":
			return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
				"This version of MySQL doesn't yet support 'SERIALIZABLE isolation: Miraj runs every transaction in snapshot isolation (REPEATABLE READ)'")
		case "READ-COMMITTED", "READ-UNCOMMITTED":
			ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet,
				Message: fmt.Sprintf("Isolation level %s is not used: Miraj runs every transaction in snapshot isolation (REPEATABLE READ)", level)})
		}
		return nil
	})
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
