package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

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
