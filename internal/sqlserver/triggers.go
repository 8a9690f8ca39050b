package sqlserver

import (
	"encoding/json"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// A trigger belongs to its table. go-mysql-server v0.20 drops a table's
// triggers with DROP TABLE but leaves them behind at RENAME TABLE / ALTER
// TABLE … RENAME, naming a table that no longer exists: every statement
// that reads the triggers afterwards (information_schema.TRIGGERS, SHOW
// TRIGGERS, a dump, even DROP TABLE of another table) failed with 1146.
// Here a rename moves the triggers to the new name, as MySQL does, and a
// trigger whose table is gone (left by an older version) is not served.

// triggerOn locates the table of a CREATE TRIGGER statement: its database
// (empty when unqualified) and name, unquoted, and the span of the table
// reference in stmt.
func triggerOn(stmt string) (db, table string, start, end int, ok bool) {
	w := sqltext.Scan(stmt, true)
	seenTrigger := false
	for i := 0; i+1 < len(w); i++ {
		if w[i].IsWord && w[i].Text == "TRIGGER" {
			seenTrigger = true
			continue
		}
		if !seenTrigger || !w[i].IsWord || w[i].Text != "ON" || i == 0 {
			continue
		}
		switch w[i-1].Text {
		case "INSERT", "UPDATE", "DELETE":
		default:
			continue
		}
		first := w[i+1]
		if !first.IsWord {
			return "", "", 0, 0, false
		}
		name := sqltext.UnquoteIdent(stmt[first.Start:first.End])
		start, end = first.Start, first.End
		if i+3 < len(w) && w[i+2].Text == "." && w[i+3].IsWord {
			db, name = name, sqltext.UnquoteIdent(stmt[w[i+3].Start:w[i+3].End])
			end = w[i+3].End
		}
		return db, name, start, end, true
	}
	return "", "", 0, 0, false
}

// triggerTable returns the table of trigger def in database d, and whether
// the trigger names one.
func (d *Database) triggerTable(def sql.TriggerDefinition) (string, bool) {
	db, table, _, _, ok := triggerOn(def.CreateStatement)
	if !ok || (db != "" && !strings.EqualFold(db, d.Name())) {
		return "", false
	}
	return table, true
}

// renameTriggers moves the triggers of table from to table to.
func (d *Database) renameTriggers(ctx *sql.Context, from, to string) error {
	tx := d.tx(ctx)
	for _, o := range tx.Catalog().Objects(objTrigger) {
		var def sql.TriggerDefinition
		if err := json.Unmarshal(o.Data, &def); err != nil {
			return err
		}
		db, table, start, end, ok := triggerOn(def.CreateStatement)
		if !ok || !strings.EqualFold(table, from) || (db != "" && !strings.EqualFold(db, d.Name())) {
			continue
		}
		ref := sqltext.QuoteIdent(to)
		if db != "" {
			ref = sqltext.QuoteIdent(db) + "." + ref
		}
		def.CreateStatement = def.CreateStatement[:start] + ref + def.CreateStatement[end:]
		b, err := json.Marshal(def)
		if err != nil {
			return err
		}
		if err := tx.PutObject(objTrigger, o.Name, b); err != nil {
			return err
		}
	}
	return nil
}

// oneDatabase is the catalog seen by an information_schema reader that
// perDatabase runs for one database.
type oneDatabase struct {
	sql.Catalog
	db sql.Database
}

func (c oneDatabase) AllDatabases(*sql.Context) []sql.Database { return []sql.Database{c.db} }

// perDatabaseTables are the information_schema tables whose reader parses
// stored statements (triggers, views, routines, events) in the session's
// current database: a statement naming its tables unqualified failed with
// "no database selected" or 1146 in another database (TRIGGERS), or was
// left out without a word (VIEWS).
var perDatabaseTables = map[string]bool{"triggers": true, "views": true, "routines": true, "events": true, "parameters": true}

// perDatabase wraps such a reader: each database's rows are read with that
// database current.
func perDatabase(read func(*sql.Context, sql.Catalog) (sql.RowIter, error)) func(*sql.Context, sql.Catalog) (sql.RowIter, error) {
	return func(ctx *sql.Context, cat sql.Catalog) (sql.RowIter, error) {
		prev := sessionOf(ctx).BaseSession.GetCurrentDatabase()
		defer ctx.SetCurrentDatabase(prev)
		var rows []sql.Row
		for _, db := range cat.AllDatabases(ctx) {
			ctx.SetCurrentDatabase(db.Name())
			it, err := read(ctx, oneDatabase{Catalog: cat, db: db})
			if err != nil {
				return nil, err
			}
			more, err := sql.RowIterToRows(ctx, it)
			if err != nil {
				return nil, err
			}
			rows = append(rows, more...)
		}
		return sql.RowsToRowIter(rows...), nil
	}
}

// actionOrders numbers information_schema.TRIGGERS' ACTION_ORDER per table,
// event and timing, as MySQL does: go-mysql-server numbered the triggers
// of an event and timing across all the tables of a database (the second
// table's AFTER INSERT trigger was 2). Its rows come grouped by event and
// timing, each group in firing order.
func actionOrders(read func(*sql.Context, sql.Catalog) (sql.RowIter, error)) func(*sql.Context, sql.Catalog) (sql.RowIter, error) {
	return func(ctx *sql.Context, cat sql.Catalog) (sql.RowIter, error) {
		it, err := read(ctx, cat)
		if err != nil {
			return nil, err
		}
		rows, err := sql.RowIterToRows(ctx, it)
		if err != nil {
			return nil, err
		}
		next := map[[4]string]int64{}
		for _, r := range rows {
			if len(r) < 12 {
				continue
			}
			// EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, EVENT_MANIPULATION,
			// ACTION_TIMING.
			var k [4]string
			for i, c := range []int{5, 6, 3, 11} {
				k[i], _ = r[c].(string)
			}
			k[0], k[1] = strings.ToLower(k[0]), strings.ToLower(k[1])
			next[k]++
			r[7] = next[k]
		}
		return sql.RowsToRowIter(rows...), nil
	}
}
