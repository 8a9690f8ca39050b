package sqlserver

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// The triggers of the rows a REPLACE deletes and an INSERT … ON DUPLICATE
// KEY UPDATE updates. go-mysql-server fired only a table's INSERT
// triggers for both: a REPLACE deleted the rows in its way without their
// DELETE triggers, and the row an INSERT … ON DUPLICATE KEY UPDATE
// updated fired the AFTER INSERT trigger (on the row as it was) instead of
// the UPDATE triggers. As in MySQL, a REPLACE's row now fires BEFORE
// INSERT, then for each row deleted BEFORE DELETE and AFTER DELETE, then
// AFTER INSERT (on the row inserted); a row of INSERT … ON DUPLICATE KEY
// UPDATE fires BEFORE INSERT, then AFTER INSERT if it was inserted, or
// BEFORE UPDATE (which may change the new row) and AFTER UPDATE if it
// met a duplicate.
//
// The DELETE (UPDATE) triggers are planned as go-mysql-server plans them
// for a DELETE (UPDATE) of the table, and the table's editor runs them
// around the deletes (updates) the statement makes.

// rowTriggers are the DELETE or UPDATE triggers of the table a REPLACE or
// INSERT … ON DUPLICATE KEY UPDATE writes.
type rowTriggers struct {
	x       adminExec
	replace bool       // DELETE triggers of a REPLACE; UPDATE triggers otherwise
	sch     sql.Schema // the INSERT's (insertErrors.sch): which statement
	width   int
	before  []*plan.TriggerExecutor // in firing order
	after   []*plan.TriggerExecutor
}

func rowTriggersKey(db, table string) string { return strings.ToLower(db + "." + table) }

// rowTriggers plans the DELETE or UPDATE triggers of INSERT n (built as
// it) for the table's editor.
func (x adminExec) rowTriggers(ctx *sql.Context, s *Session, n *plan.InsertInto, it *insertErrors) error {
	if (!n.IsReplace && len(n.OnDupExprs) == 0) || x.srv == nil || n.Database() == nil {
		return nil
	}
	ins, err := plan.GetInsertable(n.Destination)
	if err != nil {
		return nil
	}
	db, table := n.Database().Name(), ins.Name()
	key := rowTriggersKey(db, table)
	delete(s.trig.rows, key)
	event := "UPDATE"
	if n.IsReplace {
		event = "DELETE"
	}
	tdb, ok := n.Database().(sql.TriggerDatabase)
	if !ok {
		return nil
	}
	defs, err := tdb.GetTriggers(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, def := range defs {
		if e, t, ok := triggerEventTable(def.CreateStatement); ok && e == event && strings.EqualFold(t, table) {
			found = true
		}
	}
	if !found || len(it.sch) == 0 {
		return nil
	}
	q := fmt.Sprintf("DELETE FROM %s.%s", sqltext.QuoteIdent(db), sqltext.QuoteIdent(table))
	if !n.IsReplace {
		c := sqltext.QuoteIdent(it.sch[0].Name)
		q = fmt.Sprintf("UPDATE %s.%s SET %s = %s", sqltext.QuoteIdent(db), sqltext.QuoteIdent(table), c, c)
	}
	planned, err := x.srv.engine.AnalyzeQuery(ctx, q)
	if err != nil {
		return err
	}
	rt := &rowTriggers{x: x, replace: n.IsReplace, sch: it.sch, width: len(it.sch)}
	// Outer executors are met first; the innermost fires first.
	transform.Inspect(planned, func(c sql.Node) bool {
		if te, ok := c.(*plan.TriggerExecutor); ok {
			if te.TriggerTime == plan.BeforeTrigger {
				rt.before = append([]*plan.TriggerExecutor{te}, rt.before...)
			} else {
				rt.after = append([]*plan.TriggerExecutor{te}, rt.after...)
			}
		}
		return true
	})
	if len(rt.before)+len(rt.after) == 0 {
		return nil
	}
	if s.trig.rows == nil {
		s.trig.rows = map[string]*rowTriggers{}
	}
	s.trig.rows[key] = rt
	return nil
}

// triggerEventTable returns the event (INSERT, UPDATE, DELETE) and table
// of a CREATE TRIGGER statement.
func triggerEventTable(stmt string) (event, table string, ok bool) {
	_, table, _, _, ok = triggerOn(stmt)
	if !ok {
		return "", "", false
	}
	w := sqltext.Scan(stmt, true)
	seen := false
	for i := 0; i+1 < len(w); i++ {
		if w[i].IsWord && w[i].Text == "TRIGGER" {
			seen = true
			continue
		}
		if seen && w[i].IsWord && w[i+1].IsWord && w[i+1].Text == "ON" {
			switch w[i].Text {
			case "INSERT", "UPDATE", "DELETE":
				return w[i].Text, table, true
			}
		}
	}
	return "", "", false
}

// active returns the table's triggers of the session's INSERT being run,
// nil when there are none.
func activeRowTriggers(s *Session, t *Table, replace bool) *rowTriggers {
	if s == nil || len(s.trig.rows) == 0 || s.ins.row == nil || s.ins.row.replace != replace || t.db == nil {
		return nil
	}
	rt := s.trig.rows[rowTriggersKey(t.db.Name(), t.Name())]
	if rt == nil || rt.replace != replace || len(s.ins.row.sch) == 0 || &s.ins.row.sch[0] != &rt.sch[0] {
		return nil
	}
	return rt
}

// replaceTriggers returns the DELETE triggers of the REPLACE that deletes
// a row of t.
func replaceTriggers(s *Session, t *Table) *rowTriggers { return activeRowTriggers(s, t, true) }

// upsertTriggers returns the UPDATE triggers of the INSERT … ON DUPLICATE
// KEY UPDATE that updates a row of t.
func upsertTriggers(s *Session, t *Table) *rowTriggers { return activeRowTriggers(s, t, false) }

// delete deletes row with do between its BEFORE and AFTER DELETE triggers.
func (rt *rowTriggers) delete(ctx *sql.Context, row sql.Row, do func(*sql.Context, sql.Row) error) error {
	for _, te := range rt.before {
		if _, err := runTrigger(ctx, rt.x, te, te.Right(), row); err != nil {
			return err
		}
	}
	if err := do(ctx, row); err != nil {
		return err
	}
	for _, te := range rt.after {
		if _, err := runTrigger(ctx, rt.x, te, te.Right(), row); err != nil {
			return err
		}
	}
	return nil
}

// update updates old to new with do between the BEFORE and AFTER UPDATE
// triggers; a BEFORE trigger's SET NEW.col changes the row written.
func (rt *rowTriggers) update(ctx *sql.Context, old, new sql.Row, do func(*sql.Context, sql.Row, sql.Row) error) error {
	for _, te := range rt.before {
		both := append(append(sql.Row{}, old...), new...)
		out, err := runTrigger(ctx, rt.x, te, te.Right(), both)
		if err != nil {
			return err
		}
		switch len(out) {
		case 2 * rt.width:
			new = out[rt.width:]
		case rt.width:
			new = out
		}
	}
	if err := do(ctx, old, new); err != nil {
		return err
	}
	both := append(append(sql.Row{}, old...), new...)
	for _, te := range rt.after {
		if _, err := runTrigger(ctx, rt.x, te, te.Right(), both); err != nil {
			return err
		}
	}
	return nil
}
