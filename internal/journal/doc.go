// Package journal is a database's append-only log of frames.
//
// Each database has one Log in its own folder, made of segment files named
// after the LSN of their first byte. A frame is a header (length, type,
// CRC-32C) and a payload; its LSN is its byte position in the log, so a copy
// that holds the same bytes has the same LSNs. The journal knows two frame
// types, FrameCommit and FrameAbort, the ends of a transaction; storage
// defines the others (and puts the transaction's id in every payload).
//
// Concurrency: Append, SyncTo, End, Durable, Start, Read and RemoveBefore are
// safe to call from any goroutine. The Log starts no goroutine: SyncTo callers
// take turns doing the fsync (group commit), and a periodic save policy is a
// loop owned by the caller. AppendDeferred, for a caller that calls SyncTo
// next, leaves the write(2) to whoever next needs the bytes in the file (the
// group's fsync, a reader, a roll): commits that share an fsync share one
// write too, made outside the caller's commit lock. That write holds the
// log's writer lock, not the lock appends take: commits go on appending
// (under their database's commit lock) while the group's bytes go to the
// disk, and the next group's fsync takes theirs.
//
// Recovery: Open reads the log from the checkpoint's LSN, cuts a torn tail
// (a damaged frame with no valid frame after it) and the frames of a
// transaction with no commit marker, and logs both. Damage anywhere else is a
// *CorruptError (errors.Is(err, ErrCorrupt)) naming the file and offset.
//
//	l, err := journal.Open(journal.Options{Dir: dir})
//	buf := journal.AppendFrame(nil, myType, payload)
//	buf = journal.AppendFrame(buf, journal.FrameCommit, nil)
//	_, end, err := l.Append(buf)
//	err = l.SyncTo(ctx, end) // durable: acknowledge the commit
package journal
