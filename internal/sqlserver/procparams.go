package sqlserver

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
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

// SetUserVariable sets a user variable as MySQL keeps one: an integer as
// a BIGINT (BIGINT UNSIGNED), a floating-point number as a DOUBLE,
// whatever the width of the value it was given (go-mysql-server kept the
// value's type: SET @n = 2 made @n a TINYINT).
func (s *Session) SetUserVariable(ctx *sql.Context, name string, value any, typ sql.Type) error {
	if value != nil && typ != nil {
		var wide sql.Type
		switch {
		case types.IsSigned(typ) && typ != types.Int64:
			wide = types.Int64
		case types.IsUnsigned(typ) && typ != types.Uint64:
			wide = types.Uint64
		case typ == types.Float32:
			wide = types.Float64
		}
		if wide != nil {
			if v, _, err := wide.Convert(ctx, value); err == nil {
				value, typ = v, wide
			}
		}
	}
	return s.BaseSession.SetUserVariable(ctx, name, value, typ)
}
