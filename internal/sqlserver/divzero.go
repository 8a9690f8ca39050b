package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
)

// ERROR_FOR_DIVISION_BY_ZERO. go-mysql-server takes the sql_mode but
// does nothing with it: a division by zero (/, DIV, MOD, %) is NULL with
// Warning 1365 everywhere, so INSERT INTO t VALUES (1/0) stored NULL in
// any mode. MySQL, with the mode on in a strict mode and without IGNORE,
// refuses an INSERT or UPDATE whose values divide by zero (1365, Division
// by 0) and writes nothing; a SELECT still gets NULL and the warning, as
// does a write without the mode, without a strict mode, or with IGNORE.
// The values of INSERT rows (insertRows, numtext.go) and of UPDATE and ON
// DUPLICATE KEY UPDATE assignments (checkAssignments) are checked here.

// erDivisionByZero is MySQL's ER_DIVISION_BY_ZERO, SQLSTATE 22012.
const erDivisionByZero = 1365

// refusesDivisionByZero reports whether the statement's writes refuse a
// division by zero: ERROR_FOR_DIVISION_BY_ZERO in a strict mode, without
// IGNORE.
func refusesDivisionByZero(ctx *sql.Context, ignore bool) bool {
	return refusesBadValues(ctx, ignore) && compat.SQLMode(ctx).ModeEnabled("ERROR_FOR_DIVISION_BY_ZERO")
}

// divisionByZero is MySQL's 1365 when a warning of a division by zero
// came after the session's first before warnings; nil otherwise.
func divisionByZero(ctx *sql.Context, before uint16) error {
	n := ctx.Session.WarningCount()
	if n <= before {
		return nil
	}
	// Warnings lists the newest first.
	for i, w := range ctx.Session.Warnings() {
		if i >= int(n-before) {
			break
		}
		if w.Code == erDivisionByZero {
			return mysql.NewSQLError(erDivisionByZero, "22012", "Division by 0")
		}
	}
	return nil
}

// divisionChecked is an assignment's value whose division by zero is
// refused (divisionByZero).
type divisionChecked struct{ sql.Expression }

func (d *divisionChecked) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	before := ctx.Session.WarningCount()
	v, err := d.Expression.Eval(ctx, row)
	if err == nil {
		err = divisionByZero(ctx, before)
	}
	return v, err
}

func (d *divisionChecked) Children() []sql.Expression { return []sql.Expression{d.Expression} }

func (d *divisionChecked) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &divisionChecked{children[0]}, nil
}

func (d *divisionChecked) String() string { return d.Expression.String() }
