package storage

import "github.com/miraj-db/miraj/internal/journal"

// Pacing a streamed transaction (stream.go). The frames a transaction
// streams go to followers in journal order, ahead of every commit appended
// after them: a small commit waits, for its followers' acknowledgement,
// for the streamed frames before it to cross the link and be written
// there. So a transaction streams no faster than its followers take it:
// before it appends its next frames, the pace function waits until a
// follower has written its previous ones (or gives up after a while).
// The large transaction waits; the small commits beside it find at most
// one chunk of it ahead of them. A follower too slow for the pace (the
// function gives up) leaves the rest of that transaction unpaced: flow
// control, not a limit on how fast the primary may write.

// SetStreamPace sets the function a streaming transaction of db calls
// before it appends its next frames, with the end of its frames so far:
// it returns true once a follower that counts for semi-synchronous commit
// has written them (or none counts), false when it gave up waiting. nil:
// no pace.
func (e *Engine) SetStreamPace(pace func(db *DB, upto journal.LSN) bool) {
	if pace == nil {
		e.pace.Store(nil)
		return
	}
	e.pace.Store(&pace)
}

// paceStream waits, if a pace is set, for db's followers to have written
// up to upto; false when they did not in time.
func (db *DB) paceStream(upto journal.LSN) bool {
	if db.eng == nil || upto == 0 {
		return true
	}
	if p := db.eng.pace.Load(); p != nil {
		return (*p)(db, upto)
	}
	return true
}
