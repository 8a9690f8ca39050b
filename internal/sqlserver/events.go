package sqlserver

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

// Events (CREATE EVENT) are stored like views and procedures: the
// definition as go-mysql-server gives it, in the journal.

const objEvent = "event"

var _ sql.EventDatabase = (*Database)(nil)

// eventsVersion changes whenever any event changes, so the scheduler knows
// to reload.
var eventsVersion atomic.Uint64

func decodeEvent(data []byte) (sql.EventDefinition, error) {
	var ed sql.EventDefinition
	err := json.Unmarshal(data, &ed)
	return ed, err
}

func (d *Database) GetEvent(ctx *sql.Context, name string) (sql.EventDefinition, bool, error) {
	o, ok := d.tx(ctx).Catalog().Object(objEvent, name)
	if !ok {
		return sql.EventDefinition{}, false, nil
	}
	ed, err := decodeEvent(o.Data)
	return ed, err == nil, err
}

// eventsToken tells the scheduler when to reload: events changed, or the
// node's role did (events run only on a primary, §17.7).
type eventsToken struct {
	version uint64
	role    string
}

func (d *Database) GetEvents(ctx *sql.Context) ([]sql.EventDefinition, any, error) {
	token := eventsToken{version: eventsVersion.Load(), role: currentRole()}
	if token.role == "SECONDARY" {
		return nil, token, nil // a secondary never runs events
	}
	var out []sql.EventDefinition
	for _, o := range d.tx(ctx).Catalog().Objects(objEvent) {
		ed, err := decodeEvent(o.Data)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, ed)
	}
	return out, token, nil
}

func (d *Database) putEvent(ctx *sql.Context, ed sql.EventDefinition) error {
	b, err := json.Marshal(ed)
	if err != nil {
		return err
	}
	eventsVersion.Add(1)
	return d.tx(ctx).PutObject(objEvent, ed.Name, b)
}

func (d *Database) SaveEvent(ctx *sql.Context, ed sql.EventDefinition) (bool, error) {
	if _, ok := d.tx(ctx).Catalog().Object(objEvent, ed.Name); ok {
		return false, sql.ErrEventAlreadyExists.New(ed.Name)
	}
	return ed.Status == sql.EventStatus_Enable.String(), d.putEvent(ctx, ed)
}

func (d *Database) DropEvent(ctx *sql.Context, name string) error {
	tx := d.tx(ctx)
	if _, ok := tx.Catalog().Object(objEvent, name); !ok {
		return sql.ErrEventDoesNotExist.New(name)
	}
	eventsVersion.Add(1)
	return tx.DeleteObject(objEvent, name)
}

func (d *Database) UpdateEvent(ctx *sql.Context, originalName string, ed sql.EventDefinition) (bool, error) {
	tx := d.tx(ctx)
	if _, ok := tx.Catalog().Object(objEvent, originalName); !ok {
		return false, sql.ErrEventDoesNotExist.New(originalName)
	}
	if !strings.EqualFold(originalName, ed.Name) {
		if _, taken := tx.Catalog().Object(objEvent, ed.Name); taken {
			return false, sql.ErrEventAlreadyExists.New(ed.Name)
		}
	}
	if err := tx.DeleteObject(objEvent, originalName); err != nil {
		return false, err
	}
	return ed.Status == sql.EventStatus_Enable.String(), d.putEvent(ctx, ed)
}

func (d *Database) UpdateLastExecuted(ctx *sql.Context, name string, at time.Time) error {
	ed, ok, err := d.GetEvent(ctx, name)
	if err != nil || !ok {
		return err
	}
	ed.LastExecuted = at
	return d.putEvent(ctx, ed)
}

func (d *Database) NeedsToReloadEvents(ctx *sql.Context, token any) (bool, error) {
	t, ok := token.(eventsToken)
	return !ok || t != (eventsToken{version: eventsVersion.Load(), role: currentRole()}), nil
}
