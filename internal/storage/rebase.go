package storage

// Rebasing: READ COMMITTED. A transaction normally reads the snapshot it
// took once (REPEATABLE READ, snapshot isolation). Under READ COMMITTED
// the SQL layer calls Rebase before each statement: the transaction's
// snapshot becomes the newest committed catalog, and its own writes are
// applied again over it, so the statement reads what others committed
// since, with the transaction's own changes on top.
//
// Only the view changes. What the transaction's writes depend on (the
// row versions recorded when each was made, tableTouch) stays as it was,
// so its commit is checked exactly as before: a row it wrote that another
// commit changed since it wrote it is still a conflict (ErrConflict),
// first committer wins. Nothing reaches the journal here.
//
// A rebase is skipped, the view left as it is, when
//
//   - the transaction changed a definition (DDL): its view of that table
//     is its own, and the commit checks the table as a whole;
//   - it is doomed (deferred.go), or a commit since changed a row it
//     wrote (the check its commit makes fails): its writes no longer fit
//     the newest rows, and its commit will fail anyway;
//   - its writes do not apply over the newest rows (a unique key another
//     commit took meanwhile): the commit will report it.
//
// Cost: the writes are applied once more at each rebase when a commit
// changed the database since the previous one, so a long READ COMMITTED
// transaction of many writes pays for them at each statement.

// Rebase moves the transaction's snapshot to the newest committed catalog,
// keeping its own writes, and reports whether it did (see above). A
// deferred transaction that has not taken its snapshot has nothing to
// move: it takes the newest one when it first reads.
func (tx *Tx) Rebase() bool {
	if tx.done || tx.doomed != nil {
		return false
	}
	if tx.base == nil {
		return true
	}
	for _, tt := range tx.touched {
		if tt.ddl {
			return false
		}
	}
	cur := tx.db.frozen().cat
	if cur == tx.base {
		return true
	}
	if !tx.baseOwned && cur.seq == tx.base.seq && cur.defs == tx.base.defs {
		return true // no commit since the snapshot
	}
	tx.materialize()
	if err := tx.checkLocked(cur, nil); err != nil {
		return false
	}
	var work *applier
	if len(tx.ops) > 0 {
		work = newApplier(cur, pendingVer, tx.db.bind)
		for _, op := range tx.ops {
			if err := work.apply(op); err != nil {
				return false
			}
		}
	}
	tx.base, tx.work, tx.late = cur, work, true
	tx.baseOwned, tx.baseTables, tx.fresh = false, nil, nil
	tx.latest = latestCache{}
	tx.rebases++
	return true
}
