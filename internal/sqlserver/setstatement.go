package sqlserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// SET STATEMENT var = value [, var = value …] FOR statement (MariaDB): the
// session variables take the values for the one statement, then return to
// what they were, whether it succeeded or not. The parser does not know
// the syntax: the text protocol's handler splits it off.

var setStatementStart = regexp.MustCompile(`(?is)^\s*set\s+statement\s+`)

// assignmentName is the variable an assignment sets, with an optional
// @@session. / @@ prefix (an explicit @@global. is refused, as in MariaDB).
var assignmentName = regexp.MustCompile("(?is)^\\s*(@@(?:session\\.|local\\.)?)?`?([a-z_][a-z0-9_$]*)`?\\s*(?::=|=)")

type setStatement struct {
	names []string // variables, lower case, in order
	set   string   // SET @@session.x = …, … for them
	inner string   // the statement after FOR
}

// splitSetStatement recognises SET STATEMENT … FOR …; ok is false for any
// other statement, and err reports a malformed one (1064).
func splitSetStatement(q string) (st setStatement, ok bool, err error) {
	loc := setStatementStart.FindStringIndex(q)
	if loc == nil {
		return st, false, nil
	}
	rest := q[loc[1]:]
	assignments, inner, found := splitAtFor(rest)
	if !found || strings.TrimSpace(inner) == "" {
		return st, true, errSetStatementSyntax(q)
	}
	var parts []string
	for _, a := range splitTopLevel(assignments, ',') {
		m := assignmentName.FindStringSubmatchIndex(a)
		if m == nil {
			return st, true, errSetStatementSyntax(q)
		}
		name := strings.ToLower(a[m[4]:m[5]])
		st.names = append(st.names, name)
		parts = append(parts, "@@session."+name+" = "+strings.TrimSpace(a[m[1]:]))
	}
	st.set = "SET " + strings.Join(parts, ", ")
	st.inner = inner
	return st, true, nil
}

func errSetStatementSyntax(q string) error {
	return mysql.NewSQLError(mysql.ERParseError, "42000",
		"You have an error in your SQL syntax; SET STATEMENT takes var = value [, …] FOR statement: %s", strings.TrimSpace(q))
}

// scanTopLevel calls at for each byte of s outside quotes and parentheses,
// until at returns true; it returns that byte's index, or -1.
func scanTopLevel(s string, at func(i int) bool) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '`' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && at(i):
			return i
		}
	}
	return -1
}

// splitAtFor finds the keyword FOR outside quotes and parentheses.
func splitAtFor(s string) (before, after string, ok bool) {
	i := scanTopLevel(s, func(i int) bool {
		return i+3 <= len(s) && strings.EqualFold(s[i:i+3], "for") &&
			(i == 0 || !sqltext.IsWordByte(s[i-1])) && (i+3 == len(s) || !sqltext.IsWordByte(s[i+3]))
	})
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+3:], true
}

// splitTopLevel splits s at sep outside quotes and parentheses.
func splitTopLevel(s string, sep byte) []string {
	var out []string
	for {
		i := scanTopLevel(s, func(i int) bool { return s[i] == sep })
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// savedVariables are session values to put back after the statement.
type savedVariables struct {
	vals    map[string]any
	syncOwn bool
}

func (s *Session) saveVariables(names []string) (savedVariables, error) {
	sv := savedVariables{vals: map[string]any{}, syncOwn: s.syncOwn}
	ctx := sql.NewContext(context.Background(), sql.WithSession(s))
	for _, name := range names {
		if sys, _, ok := sql.SystemVariables.GetGlobal(name); !ok || sys.IsGlobalOnly() {
			continue // unknown or global only: the SET refuses it
		}
		v, err := s.BaseSession.GetSessionVariable(ctx, name)
		if err != nil {
			continue // unknown or global only: the SET reports it
		}
		sv.vals[name] = v
	}
	return sv, nil
}

func (s *Session) restoreVariables(sv savedVariables) {
	ctx := sql.NewContext(context.Background(), sql.WithSession(s))
	for name, v := range sv.vals {
		if err := s.BaseSession.SetSessionVariable(ctx, name, v); err != nil {
			panic(fmt.Sprintf("sqlserver: SET STATEMENT: %s back to %v: %v", name, v, err))
		}
	}
	s.syncOwn = sv.syncOwn
}

// withStatementVariables runs run (the statement after FOR) with st's
// assignments in force, and puts the variables back afterwards.
func (h protocolHandler) withStatementVariables(ctx context.Context, c *mysql.Conn, st setStatement, run func(inner string) error) error {
	// The session is made here if this is the connection's first
	// statement.
	if _, err := h.srv.sm.NewContextWithQuery(ctx, c, st.set); err != nil {
		return err
	}
	s := h.srv.session(c.ConnectionID)
	if s == nil {
		return fmt.Errorf("SET STATEMENT: no session for connection %d", c.ConnectionID)
	}
	saved, err := s.saveVariables(st.names)
	if err != nil {
		return err
	}
	defer s.restoreVariables(saved)
	if err := h.Handler.ComQuery(ctx, c, st.set, func(*sqltypes.Result, bool) error { return nil }); err != nil {
		return err
	}
	return run(st.inner)
}

// withSetStatement runs q with query, the statement after FOR with its
// variables in force when q is a SET STATEMENT.
func (h protocolHandler) withSetStatement(ctx context.Context, c *mysql.Conn, q string, query func(string) error) error {
	st, ok, err := splitSetStatement(q)
	switch {
	case err != nil:
		return err
	case ok:
		return h.withStatementVariables(ctx, c, st, query)
	}
	return query(q)
}
