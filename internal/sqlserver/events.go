package sqlserver

import (
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

// We have no events yet (nothing would run them: the server starts no event
// scheduler). Database still implements sql.EventDatabase, with no events,
// because go-mysql-server's privilege wrapper answers GetEvents with an
// error for a database without it: information_schema.EVENTS and SHOW
// EVENTS failed with "database 'x' doesn't support events".
var _ sql.EventDatabase = (*Database)(nil)

func (d *Database) GetEvent(ctx *sql.Context, name string) (sql.EventDefinition, bool, error) {
	return sql.EventDefinition{}, false, nil
}

func (d *Database) GetEvents(ctx *sql.Context) ([]sql.EventDefinition, interface{}, error) {
	return nil, nil, nil
}

func (d *Database) SaveEvent(ctx *sql.Context, ed sql.EventDefinition) (bool, error) {
	return false, sql.ErrEventsNotSupported.New(d.Name())
}

func (d *Database) DropEvent(ctx *sql.Context, name string) error {
	return sql.ErrEventDoesNotExist.New(name)
}

func (d *Database) UpdateEvent(ctx *sql.Context, originalName string, ed sql.EventDefinition) (bool, error) {
	return false, sql.ErrEventsNotSupported.New(d.Name())
}

func (d *Database) UpdateLastExecuted(ctx *sql.Context, eventName string, lastExecuted time.Time) error {
	return nil
}

func (d *Database) NeedsToReloadEvents(ctx *sql.Context, token interface{}) (bool, error) {
	return false, nil
}
