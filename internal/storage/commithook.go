package storage

// CommitHook is told of each commit made on this engine (not of what a
// secondary applies from its primary, nor of journal replay): the binary
// log (internal/binlog) builds its group from it.
//
// Committed runs under the database's commit lock, after the commit's
// frames are journaled and before it is published, so that hooks see the
// commits of a database in their order. ops are the commit's changes
// (full row images), cat the catalog it produces (table definitions; not
// to be kept), note what the committing session attached (Tx.SetNote,
// RowChange.Note). It must not block on other commits and cannot fail the
// commit, which is decided.
type CommitHook interface {
	Committed(db *DB, ops []*Op, cat *Catalog, note any)
}

// SetCommitHook installs h (nil: none). With none, a commit pays one
// atomic read.
func (e *Engine) SetCommitHook(h CommitHook) {
	if h == nil {
		e.commitHook.Store(nil)
		return
	}
	e.commitHook.Store(&h)
}

// SetNote attaches v to the transaction's commit for the commit hook.
func (tx *Tx) SetNote(v any) { tx.note = v }

// hookLocked calls the engine's commit hook, if any. Called with the
// commit lock held.
func (db *DB) hookLocked(ops []*Op, cat *Catalog, note any) {
	if db.eng == nil {
		return
	}
	if h := db.eng.commitHook.Load(); h != nil {
		(*h).Committed(db, ops, cat, note)
	}
}
