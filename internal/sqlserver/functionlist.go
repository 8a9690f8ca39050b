package sqlserver

import (
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
)

// serverFunctions are the functions the server adds to go-mysql-server's
// catalog: MySQL's that go-mysql-server v0.20 does not have, the typed
// literals (DATE '…'), the quantified comparisons (ANY, ALL), and the
// helpers the server's rewrites call (the assignment of a user variable
// inside an expression, NTH_VALUE's arguments).
var serverFunctions = slices.Concat(funcs.Functions, funcs.MoreFunctions, rules.QuantifiedFunctions, funcs.TypedLiterals, []sql.Function{
	sql.Function2{Name: rules.AssignFunction, Fn: rules.NewAssign},
	sql.Function2{Name: rules.NthFunction, Fn: rules.NewNthArgs},
})

// Function gives MySQL's version of a function go-mysql-server has in
// another form (sql.FunctionProvider; the catalog asks it first).
func (p *Provider) Function(ctx *sql.Context, name string) (sql.Function, bool) {
	if f, ok := funcs.Overridden[strings.ToLower(name)]; ok {
		return f, ok
	}
	return p.storedFunction(ctx, name) // storedfunc.go
}
