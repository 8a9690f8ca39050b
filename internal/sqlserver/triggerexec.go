package sqlserver

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
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

// triggerState is a session's state of the INSERT with triggers being
// built.
type triggerState struct {
	// building: the trigger executor adminExec is having built (its own
	// call lets go-mysql-server build it).
	building sql.Node
	// wrapInsert: the INSERT under the trigger executor is built without
	// its wrapper, kept in wrapper.
	wrapInsert bool
	wrapper    *insertErrors
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
	logic := n.Right()
	if n.TriggerTime == plan.AfterTrigger || !setsAnything(logic) {
		// The trigger's statements restore LAST_INSERT_ID() (a SET
		// NEW.col of a BEFORE trigger hands its row on and must stay
		// the top node).
		logic = &keepInsertID{child: logic}
	}
	wrapped, err := n.WithChildren(n.Left(), logic)
	if err != nil {
		return nil, err
	}
	prev := s.trig
	// The outermost executor over the INSERT takes its wrapper.
	owner := !prev.wrapInsert && insertUnder(n.Left()) != nil
	s.trig = triggerState{building: wrapped, wrapInsert: prev.wrapInsert || owner, wrapper: prev.wrapper}
	iter, err := x.exec.Build(ctx, wrapped, row)
	w, still := s.trig.wrapper, s.trig.wrapInsert
	s.trig = prev
	if !owner {
		s.trig.wrapper, s.trig.wrapInsert = w, still
	}
	if err != nil {
		return nil, err
	}
	if owner && w != nil {
		return w.WithChildIter(iter), nil
	}
	return iter, nil
}

// setsAnything reports whether a trigger's logic has a SET statement.
func setsAnything(n sql.Node) bool {
	found := false
	transform.Inspect(n, func(c sql.Node) bool {
		if _, ok := c.(*plan.Set); ok {
			found = true
		}
		return !found
	})
	return found
}

// keepInsertID is a trigger's logic whose execution leaves the session's
// LAST_INSERT_ID() as it found it.
type keepInsertID struct {
	child sql.Node
}

var _ sql.Node = (*keepInsertID)(nil)

func (k *keepInsertID) Resolved() bool       { return k.child.Resolved() }
func (k *keepInsertID) String() string       { return k.child.String() }
func (k *keepInsertID) Schema() sql.Schema   { return k.child.Schema() }
func (k *keepInsertID) Children() []sql.Node { return []sql.Node{k.child} }
func (k *keepInsertID) IsReadOnly() bool     { return k.child.IsReadOnly() }
func (k *keepInsertID) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(k, len(children), 1)
	}
	return &keepInsertID{child: children[0]}, nil
}

func (k *keepInsertID) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, k.child)
}

func (x adminExec) keepInsertID(ctx *sql.Context, k *keepInsertID, row sql.Row) (sql.RowIter, error) {
	id := ctx.Session.GetLastQueryInfoInt(sql.LastInsertId)
	iter, err := x.exec.Build(ctx, k.child, row)
	if err != nil {
		return nil, err
	}
	return &keepInsertIDIter{RowIter: iter, id: id}, nil
}

type keepInsertIDIter struct {
	sql.RowIter
	id int64
}

func (it *keepInsertIDIter) Close(ctx *sql.Context) error {
	ctx.Session.SetLastQueryInfoInt(sql.LastInsertId, it.id)
	return it.RowIter.Close(ctx)
}
