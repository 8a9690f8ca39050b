package sqlserver

import (
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// MySQL's counts of the previous statement's conditions: @@warning_count
// (its errors, warnings and notes) and @@error_count (its errors: 1 when
// it failed), and SHOW COUNT(*) WARNINGS / ERRORS, which read them.
// go-mysql-server knows neither (1105 "Unknown system variable"). The
// protocol handler notes them at the end of each statement
// (afterCommand, fixError); a statement reads those of the one before it.
//
// They are known to the planner through liveRegistry (cluster.go) and read
// from the session (Session.GetSessionVariable), but kept out of the
// registry's lists: SHOW VARIABLES does not show them (MySQL's does), as
// go-mysql-server's own suites expect of its variables.

const (
	varWarningCount = "warning_count"
	varErrorCount   = "error_count"
)

// diagnosticsVariables are the two variables' definitions: session only,
// read only (1238 on SET).
var diagnosticsVariables = map[string]sql.SystemVariable{}

func init() {
	for _, name := range []string{varWarningCount, varErrorCount} {
		diagnosticsVariables[name] = &sql.MysqlSystemVariable{Name: name, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Session),
			Type: types.NewSystemUintType(name, 0, 65535), Default: uint64(0)}
	}
}

// isDiagnosticStatement reports whether q reads the conditions of the
// statement before it.
func isDiagnosticStatement(q string) bool {
	w := sqltext.NewReader(q)
	switch first := w.Next(); {
	case sqltext.IsKeyword(first, "SHOW"):
		second := w.Next()
		return sqltext.IsKeyword(second, "WARNINGS") || sqltext.IsKeyword(second, "ERRORS") || sqltext.IsKeyword(second, "COUNT")
	case sqltext.IsKeyword(first, "GET"):
		return true // GET [CURRENT | STACKED] DIAGNOSTICS
	}
	return false
}

// noteDiagnostics records, at the end of a statement, its warnings for the
// next statement's @@warning_count (fixError adds its error).
func (s *Session) noteDiagnostics() {
	if !s.diag.running {
		s.diag.prevWarnings, s.diag.prevErrors = uint64(len(s.Warnings())), 0
	}
}

// noteFailed records that the statement failed with err: one error, which
// SHOW WARNINGS lists (Level "Error") until the next statement, as MySQL's
// does.
func (s *Session) noteFailed(err error) {
	code, msg := mysql.ERUnknownError, "unknown error: "+err.Error()
	if se, ok := err.(*mysql.SQLError); ok { // as the listener writes it
		code, msg = se.Num, se.Message
	}
	s.Warn(&sql.Warning{Level: "Error", Code: code, Message: msg})
	s.diag.prevWarnings, s.diag.prevErrors = uint64(len(s.Warnings())), 1
}

// diagnosticsVariable returns @@warning_count or @@error_count.
func (s *Session) diagnosticsVariable(name string) (uint64, bool) {
	switch {
	case strings.EqualFold(name, varWarningCount):
		return s.diag.prevWarnings, true
	case strings.EqualFold(name, varErrorCount):
		return s.diag.prevErrors, true
	}
	return 0, false
}

// showCountRE matches SHOW COUNT(*) WARNINGS and SHOW COUNT(*) ERRORS.
var showCountRE = regexp.MustCompile(`(?is)^\s*show\s+count\s*\(\s*\*\s*\)\s+(warnings|errors)\s*(?:;|$)`)

// diagnosticsRewrite turns SHOW COUNT(*) WARNINGS (ERRORS) at the start of
// q into the SELECT of @@session.warning_count (error_count), MySQL's
// column name included.
func diagnosticsRewrite(q string) (string, bool) {
	if len(q) < 4 || !strings.EqualFold(sqltext.FirstWord(q), "SHOW") {
		return "", false
	}
	m := showCountRE.FindStringSubmatchIndex(q)
	if m == nil {
		return "", false
	}
	name := varWarningCount
	if strings.EqualFold(q[m[2]:m[3]], "errors") {
		name = varErrorCount
	}
	return "SELECT @@session." + name + q[m[1]:], true
}

// diagState is a session's conditions of its previous statement.
type diagState struct {
	// prevWarnings and prevErrors are the previous statement's
	// conditions: @@warning_count and @@error_count.
	prevWarnings, prevErrors uint64
	// running: the statement under way reads those conditions (SHOW
	// WARNINGS …) and leaves them as they are.
	running bool
}
