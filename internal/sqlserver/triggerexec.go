package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// An INSERT into a table with an AFTER INSERT trigger: go-mysql-server
// plans it as a trigger executor over the INSERT, and counts the rows of
// the OK packet only when the INSERT's own iterator lies right under the
// trigger's. adminExec wraps an INSERT's iterator in insertErrors (MySQL's
// error texts, the OK packet's info), which hid it: the client received
// the inserted rows as a result set instead of an OK packet (drivers and
// ORMs fail on it: Exec's RowsAffected and LastInsertId). Here the
// INSERT under a trigger is built unwrapped, and its wrapper goes around
// the trigger executor instead.
//
// A trigger's statements leave LAST_INSERT_ID() as it was (MySQL restores
// it when the trigger ends): a trigger's INSERT into a log table with an
// AUTO_INCREMENT column changed the value the client read after the
// statement.

// triggerState is a session's state of the writes with triggers being
// built and run.
type triggerState struct {
	// building: the trigger executor adminExec is having built (its own
	// call lets go-mysql-server build it).
	building sql.Node
	// wrapInsert: the INSERT under the trigger executor is built without
	// its wrapper, kept in wrapper.
	wrapInsert bool
	wrapper    *insertErrors
	// rows: the DELETE triggers of a REPLACE's table, the UPDATE
	// triggers of an INSERT … ON DUPLICATE KEY UPDATE's (by lower-case
	// db.table; triggerrows.go).
	rows map[string]*rowTriggers
}

// insertUnder returns the INSERT a chain of trigger executors wraps (AFTER
// INSERT triggers), or nil.
func insertUnder(n sql.Node) *plan.InsertInto {
	for {
		switch c := n.(type) {
		case *plan.TriggerExecutor:
			n = c.Left()
		case *plan.InsertInto:
			return c
		default:
			return nil
		}
	}
}

// triggerExecutor builds a trigger executor (nil, nil: go-mysql-server's
// way).
func (x adminExec) triggerExecutor(ctx *sql.Context, n *plan.TriggerExecutor, row sql.Row) (sql.RowIter, error) {
	s, ok := ctx.Session.(*Session)
	if !ok || !s.mysql || s.trig.building == sql.Node(n) {
		return nil, nil
	}
	if n.TriggerTime == plan.BeforeTrigger {
		// Each row of the child runs the trigger, which hands it on
		// (changed by a SET NEW.col).
		child, err := x.exec.Build(ctx, n.Left(), row)
		if err != nil {
			return nil, err
		}
		return &beforeTriggerIter{child: child, x: x, te: n}, nil
	}
	under := insertUnder(n.Left())
	// The trigger's statements restore LAST_INSERT_ID().
	k := &keepInsertID{child: n.Right(), te: n}
	if under != nil {
		k.width = len(under.Destination.Schema())
		k.replace, k.upsert = under.IsReplace, len(under.OnDupExprs) > 0
	}
	var logic sql.Node = k
	wrapped, err := n.WithChildren(n.Left(), logic)
	if err != nil {
		return nil, err
	}
	prevBuilding, prevWrap, prevWrapper := s.trig.building, s.trig.wrapInsert, s.trig.wrapper
	// The outermost executor over the INSERT takes its wrapper.
	owner := !prevWrap && under != nil
	s.trig.building, s.trig.wrapInsert = wrapped, prevWrap || owner
	iter, err := x.exec.Build(ctx, wrapped, row)
	w := s.trig.wrapper
	s.trig.building = prevBuilding
	if owner {
		s.trig.wrapInsert, s.trig.wrapper = prevWrap, prevWrapper
	}
	if err != nil {
		return nil, err
	}
	if owner && w != nil {
		return w.WithChildIter(iter), nil
	}
	return iter, nil
}

// beforeTriggerIter runs a BEFORE trigger on each row of its child and
// hands on the row the trigger leaves.
type beforeTriggerIter struct {
	child sql.RowIter
	x     adminExec
	te    *plan.TriggerExecutor
}

func (it *beforeTriggerIter) Next(ctx *sql.Context) (sql.Row, error) {
	r, err := it.child.Next(ctx)
	if err != nil {
		return nil, err
	}
	out, err := runTrigger(ctx, it.x, it.te, it.te.Right(), r)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return r, nil
	}
	return out, nil
}

func (it *beforeTriggerIter) Close(ctx *sql.Context) error { return it.child.Close(ctx) }

// ownNode is a node of Miraj's own that adminExec builds.
type ownNode interface {
	buildWith(ctx *sql.Context, x adminExec, row sql.Row) (sql.RowIter, error)
}

// keepInsertID is a trigger's logic, run on the row of the write that
// fired it. Its execution leaves the session's LAST_INSERT_ID() and the
// state of the write as it found them. Under an INSERT its row is the
// one inserted: go-mysql-server hands an AFTER INSERT trigger of a REPLACE
// the row deleted and the row inserted (the trigger read NEW from the row
// deleted), and of an INSERT … ON DUPLICATE KEY UPDATE the row updated,
// whose trigger is an UPDATE trigger (triggerrows.go), not this one. It
// has no children: go-mysql-server's executor does not put its row into
// the logic, runTrigger does with the right row.
type keepInsertID struct {
	child sql.Node
	te    *plan.TriggerExecutor
	// width: the INSERT's row width (0: not under an INSERT).
	width           int
	replace, upsert bool
}

var _ sql.Node = (*keepInsertID)(nil)

func (k *keepInsertID) Resolved() bool       { return k.child.Resolved() }
func (k *keepInsertID) String() string       { return k.child.String() }
func (k *keepInsertID) Schema() sql.Schema   { return k.child.Schema() }
func (k *keepInsertID) Children() []sql.Node { return nil }
func (k *keepInsertID) IsReadOnly() bool     { return k.child.IsReadOnly() }
func (k *keepInsertID) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(k, len(children), 0)
	}
	return k, nil
}

func (k *keepInsertID) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, k.child)
}

func (k *keepInsertID) buildWith(ctx *sql.Context, x adminExec, row sql.Row) (sql.RowIter, error) {
	if k.width > 0 && len(row) == 2*k.width {
		if k.upsert {
			return sql.RowsToRowIter(), nil // a row updated: no INSERT trigger
		}
		if k.replace {
			row = row[k.width:]
		}
	}
	out, err := runTrigger(ctx, x, k.te, k.child, row)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return sql.RowsToRowIter(), nil
	}
	return sql.RowsToRowIter(out), nil
}

// oneRow is a node of one row: the row a trigger runs on.
type oneRow struct {
	row sql.Row
	sch sql.Schema
}

var _ sql.Node = (*oneRow)(nil)

func (o *oneRow) Resolved() bool       { return true }
func (o *oneRow) String() string       { return "OneRow" }
func (o *oneRow) Schema() sql.Schema   { return o.sch }
func (o *oneRow) Children() []sql.Node { return nil }
func (o *oneRow) IsReadOnly() bool     { return true }
func (o *oneRow) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(o, len(children), 0)
	}
	return o, nil
}

func (o *oneRow) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 7
}

func (o *oneRow) buildWith(*sql.Context, adminExec, sql.Row) (sql.RowIter, error) {
	return sql.RowsToRowIter(o.row), nil
}

// runTrigger runs a trigger's logic on row, as go-mysql-server's trigger
// executor te does, and returns the row it hands on (a BEFORE trigger's
// SET NEW.col changes it). LAST_INSERT_ID() and the state of the write
// that fired the trigger are as they were after it.
func runTrigger(ctx *sql.Context, x adminExec, te *plan.TriggerExecutor, logic sql.Node, row sql.Row) (sql.Row, error) {
	s := ctx.Session.(*Session)
	id := ctx.Session.GetLastQueryInfoInt(sql.LastInsertId)
	saved := saveWriteState(s)
	defer func() {
		ctx.Session.SetLastQueryInfoInt(sql.LastInsertId, id)
		saved.restore(s)
	}()
	node := plan.NewTriggerExecutor(&oneRow{row: row, sch: te.Left().Schema()}, logic, te.TriggerEvent, te.TriggerTime, te.TriggerDefinition)
	prev := s.trig.building
	s.trig.building = node
	iter, err := x.exec.Build(ctx, node, row)
	s.trig.building = prev
	if err != nil {
		return nil, err
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return rows[len(rows)-1], nil
}

// writeState is the state of a session's INSERT that a trigger's own
// statements change (not the INSERT being built, nor its source).
type writeState struct {
	row                                            *insertErrors
	calls, sameReplaced, replaceDups, replaceExtra int
	deleteCounts                                   deleteCounts
}

func saveWriteState(s *Session) writeState {
	return writeState{row: s.ins.row, calls: s.ins.calls, sameReplaced: s.ins.sameReplaced,
		replaceDups: s.ins.replaceDups, replaceExtra: s.ins.replaceExtra, deleteCounts: s.del.counts}
}

func (w writeState) restore(s *Session) {
	s.ins.row, s.ins.calls, s.ins.sameReplaced = w.row, w.calls, w.sameReplaced
	s.ins.replaceDups, s.ins.replaceExtra, s.del.counts = w.replaceDups, w.replaceExtra, w.deleteCounts
}
