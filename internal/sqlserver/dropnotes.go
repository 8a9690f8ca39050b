package sqlserver

import (
	"regexp"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
)

// DROP PROCEDURE IF EXISTS and DROP TRIGGER IF EXISTS of one that does not
// exist succeed with a note in MySQL: 1305 (PROCEDURE db.p does not exist)
// and 1360 (Trigger does not exist). go-mysql-server said nothing.

// ifExistsRE finds IF EXISTS in a DROP statement.
var ifExistsRE = regexp.MustCompile(`(?i)^\s*DROP\s+(?:PROCEDURE|TRIGGER)\s+IF\s+EXISTS\b`)

// noteMissingProcedure notes 1305 for DROP PROCEDURE IF EXISTS of a
// procedure of db that does not exist.
func noteMissingProcedure(ctx *sql.Context, db, name string) {
	if ctx == nil || ctx.Session == nil || !ifExistsRE.MatchString(ctx.Query()) {
		return
	}
	// The name as the statement writes it, with its database.
	full := mysqlerr.Context{DB: db, Query: ctx.Query()}.ProcedureName(name)
	ctx.Session.Warn(&sql.Warning{Level: "Note", Code: 1305, Message: "PROCEDURE " + full + " does not exist"})
}

// noteMissingTrigger notes 1360 for DROP TRIGGER IF EXISTS of a trigger
// that does not exist.
func noteMissingTrigger(ctx *sql.Context) {
	if ctx == nil || ctx.Session == nil || !ifExistsRE.MatchString(ctx.Query()) {
		return
	}
	ctx.Session.Warn(&sql.Warning{Level: "Note", Code: 1360, Message: "Trigger does not exist"})
}
