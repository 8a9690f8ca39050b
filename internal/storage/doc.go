// Package storage holds Miraj's databases in memory and makes them durable
// through each database's journal.
//
// A database's state is a Catalog: its tables (a copy-on-write B-tree for
// the primary key or row number, one per secondary index), views, triggers,
// procedures and options. A committed Catalog that anyone may hold is
// immutable: readers load it with one atomic pointer read and freeze it
// (Snapshot, Begin), and a transaction's snapshot is that pointer. A
// committed Catalog that no one froze can be taken over by the next commit
// that only writes rows (CommitRow, an autocommit write by key, or a
// transaction of row writes): it waits for the
// short readers inside DB.Read to leave, changes the trees in place instead
// of copying the paths it writes, and publishes the next Catalog; no one
// reads the one taken over again (db.go, "Reading the committed catalog").
//
// Every change is an Op, and one function, applier.apply, turns ops into
// table state: a transaction's own view of its writes, a commit, a
// checkpoint being loaded, journal replay at recovery and, on a secondary,
// the primary's frames all go through it.
//
// Transactions (Tx) have snapshot isolation; Tx.Rebase moves a
// transaction's snapshot to the newest commit, its own writes applied
// again on top, which READ COMMITTED does at each statement (rebase.go).
// A commit takes the database's
// commit lock, checks that no row or definition the transaction wrote was
// committed by another transaction since its snapshot (ErrConflict
// otherwise), applies the ops to a copy of the committed catalog (which
// also checks unique keys), appends the frames to the journal, publishes
// the new catalog, releases the lock, and waits for the fsync the save
// policy asks for; concurrent commits share fsyncs. Under the commit
// policy the append only queues the frames (journal.AppendDeferred): the
// commit that does the group's fsync writes them all in one write(2),
// outside the lock. A table whose committed
// version is still the one the transaction began from, and which it only
// wrote rows of or reindexed, needs neither the check nor the second
// apply: its version in the transaction's view becomes the committed one,
// its new rows stamped with the commit's sequence (Tx.adoptable), and an
// index a reindex added is built once. The journal frames are the same
// either way.
//
// Rows of a table keyed by one integer column compare by that integer,
// read in place from the row's encoding without boxing it. An index over
// one integer column of such a table (or of one keyed by row number) holds
// each row's key and primary key as two integers, not the row
// (secondary.go), packed into one 64-bit integer when both are INT or
// smaller (entries.go): an update of other columns does not touch it. An
// index added to a table is built from its sorted entries, its nodes
// holding no unused memory. A
// row whose values are all numbers, strings, byte strings or NULLs keeps
// them as one byte string in the journal's row encoding (row.go): no
// boxed values, nothing for the garbage collector to follow, and the
// journal frame is a copy of it. Callers read values through Row.Values,
// Row.Value and the other accessors, never a row's own slice.
//
// Row locks (locks.go, lockread.go) serve SELECT … FOR UPDATE / FOR SHARE
// and make UPDATE and DELETE wait for them: an engine-wide lock manager
// with waits, timeouts and deadlock detection, in memory only (never
// journaled). A locking read reads the latest committed version of a row
// and keeps it in the transaction's view, so that the transaction's write
// of it does not conflict at commit. A LockOwner's locks are released when
// its transaction ends.
//
// Concurrency: Engine and DB methods are safe for concurrent use; a Tx is
// used by one goroutine at a time. The Engine owns no goroutine until Run,
// which does the periodic fsyncs and checkpoints until its context ends.
//
//	e, err := storage.Open(storage.Options{Root: dir, Bind: bind})
//	db, err := e.CreateDatabase("shop", nil)
//	tx := db.Begin()
//	tx.CreateTable(def)
//	tx.Insert("items", []any{int64(1), "apple"})
//	err = tx.Commit(ctx)
package storage
