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
	if old, ok := s.rt.params[name]; ok {
		return old
	}
	if s.rt.params == nil {
		s.rt.params = map[string]*sql.StoredProcParam{}
	}
	s.rt.params[name] = p
	return p
}

// GetStoredProcParam returns the parameter name, nil if there is none.
func (s *Session) GetStoredProcParam(name string) *sql.StoredProcParam {
	return s.rt.params[strings.ToLower(name)]
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
	if len(s.rt.params) > 0 {
		clear(s.rt.params)
	}
}
