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
	for _, e := range n.Exprs {
		sf, ok := e.(*expression.SetField)
		if !ok {
			continue
		}
		sv, ok := sf.LeftChild.(*expression.SystemVar)
		if !ok || !strings.EqualFold(sv.Name, "transaction_isolation") && !strings.EqualFold(sv.Name, "tx_isolation") {
			continue
		}
		v, err := sf.RightChild.Eval(ctx, nil)
		if err != nil {
			return nil // the assignment reports it
		}
		s, ok := v.(string)
		if !ok {
			continue
		}
		switch level := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", "-")); level {
		case "SERIALIZABLE":
			return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
				"This version of MySQL doesn't yet support 'SERIALIZABLE isolation: Miraj runs every transaction in snapshot isolation (REPEATABLE READ)'")
		case "READ-COMMITTED", "READ-UNCOMMITTED":
			ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet,
				Message: fmt.Sprintf("Isolation level %s is not used: Miraj runs every transaction in snapshot isolation (REPEATABLE READ)", level)})
		}
	}
	return nil
}
