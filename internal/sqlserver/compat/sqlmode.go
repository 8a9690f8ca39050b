package compat

import (
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
)

// SQLMode is sql.LoadSqlMode without parsing the session's sql_mode at
// each call. go-mysql-server parses any mode string but its own default
// into a new map (about 0.9 µs and 632 bytes a call), and the server's
// default, with ERROR_FOR_DIVISION_BY_ZERO (setServerDefaults), is not its
// own: a compiled INSERT of an AUTO_INCREMENT 0 spent 5 % of the server's
// CPU and 19 % of its allocation there. The last string parsed and its
// modes are kept (a SqlMode is only read once made).
func SQLMode(ctx *sql.Context) *sql.SqlMode {
	v, err := ctx.Session.GetSessionVariable(ctx, sql.SqlModeSessionVar)
	s, ok := v.(string)
	if err != nil || !ok {
		return sql.LoadSqlMode(ctx) // its answer for a missing or odd value
	}
	if last := lastSQLMode.Load(); last != nil && last.text == s {
		return last.mode
	}
	m := sql.NewSqlModeFromString(s)
	lastSQLMode.Store(&parsedSQLMode{text: s, mode: m})
	return m
}

// parsedSQLMode is a sql_mode string and its modes.
type parsedSQLMode struct {
	text string
	mode *sql.SqlMode
}

var lastSQLMode atomic.Pointer[parsedSQLMode]
