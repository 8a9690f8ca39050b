package sqlserver

import (
	"errors"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
)

// toSQLError turns a storage error into the MySQL error a client expects,
// from this one table. A *mysql.SQLError is returned as is: wrapping it
// would turn it into 1105 on the wire.
func toSQLError(err error) error {
	if err == nil {
		return nil
	}
	var sqlErr *mysql.SQLError
	if errors.As(err, &sqlErr) {
		return sqlErr
	}
	switch {
	case errors.Is(err, storage.ErrReadOnly):
		return errReadOnly()
	case errors.Is(err, storage.ErrConflict):
		return mysql.NewSQLError(mysql.ERLockDeadlock, mysql.SSLockDeadlock,
			"Deadlock found when trying to get lock; try restarting transaction")
	case errors.Is(err, storage.ErrNoTable):
		return mysql.NewSQLError(mysql.ERNoSuchTable, mysql.SSUnknownTable, "%s", err.Error())
	case errors.Is(err, storage.ErrTableExists):
		return mysql.NewSQLError(mysql.ERTableExists, "42S01", "%s", err.Error())
	case errors.Is(err, journal.ErrFailed):
		return mysql.NewSQLError(1026, mysql.SSUnknownSQLState, "journal write failed: %v", err)
	}
	var dup *storage.DuplicateError
	if errors.As(err, &dup) {
		return mysql.NewSQLError(mysql.ERDupEntry, mysql.SSConstraintViolation,
			"Duplicate entry '%v' for key '%s.%s'", fmt.Sprint(dup.Key...), dup.Table, dup.Index)
	}
	return err
}

func typesUint64(ctx *sql.Context, v any) (uint64, sql.ConvertInRange, error) {
	out, inRange, err := types.Uint64.Convert(ctx, v)
	if err != nil {
		return 0, inRange, err
	}
	return out.(uint64), inRange, nil
}
