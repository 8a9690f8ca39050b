package sqlserver

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// A procedure's parameters live in the session while a CALL runs
// (go-mysql-server keeps them there by name). go-mysql-server's session
// never forgets one, and a later CALL reuses the old one, type and all:
// CALL p(4) with p(x INT) then CALL q('hey') with q(x VARCHAR(5)) failed
// with "could not convert hey to any numerical type". The session here
// keeps them for one client statement (forgetProcParams at the next).

// NewStoredProcParam adds the parameter name, or returns the one the
// statement under way already holds.
func (s *Session) NewStoredProcParam(name string, p *sql.StoredProcParam) *sql.StoredProcParam {
	name = strings.ToLower(name)
	if old, ok := s.procParams[name]; ok {
		return old
	}
	if s.procParams == nil {
		s.procParams = map[string]*sql.StoredProcParam{}
	}
	s.procParams[name] = p
	return p
}

// GetStoredProcParam returns the parameter name, nil if there is none.
func (s *Session) GetStoredProcParam(name string) *sql.StoredProcParam {
	return s.procParams[strings.ToLower(name)]
}

// SetStoredProcParam sets the parameter name to val.
func (s *Session) SetStoredProcParam(name string, val any) error {
	p := s.GetStoredProcParam(name)
	if p == nil {
		return fmt.Errorf("variable `%s` could not be found", name)
	}
	p.SetValue(val)
	return nil
}

// forgetProcParams drops the parameters of the session's last statement.
func (s *Session) forgetProcParams() {
	if len(s.procParams) > 0 {
		clear(s.procParams)
	}
}
