package repl

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
)

// Replica is the follower side's storage: where a follower puts the log
// and the copies it is sent, whoever sends them (its primary, or a relay).
// The core asks for it in Ready.Ops (OpAppend, OpSeedBegin, OpSeedInstall,
// OpDrop) and hears how it went through Appended, Applied, SeedInstalled
// and OpDone; a driver carries the operations out on a Replica. A
// secondary's is its storage engine (EngineReplica); a node that keeps
// the log without applying it implements the same operations on a
// journal alone.
type Replica interface {
	// Write puts frames into db's journal at LSN at, fsync'd first when
	// durable, and returns the journal's end: what the follower
	// acknowledges as written.
	Write(ctx context.Context, db string, at journal.LSN, frames []byte, durable bool) (journal.LSN, error)
	// Apply applies what Write wrote of db (what it acknowledges as
	// applied).
	Apply(db string) error
	// SetAside takes db out of service and keeps it whole in quarantine
	// (what diverges from the primary's history begins at LSN from), and
	// returns the folder it went to.
	SetAside(db string, from journal.LSN, reason string) (string, error)
	// Install replaces (or creates) db with a copy read from r, and
	// returns the LSN the copy is at.
	Install(db string, r io.Reader) (journal.LSN, error)
	// Drop removes db (its primary dropped it); a database not there is
	// no error.
	Drop(db string) error
	// Has reports whether db is here.
	Has(db string) bool
}

// EngineReplica is a secondary's Replica: its storage engine, and its
// quarantine.
type EngineReplica struct {
	Eng        *storage.Engine
	Quarantine *Quarantine
	// Keeper says where the node stands, for a quarantine report.
	Keeper func() Keeper
}

var _ Replica = EngineReplica{}

func (r EngineReplica) database(name string) (*storage.DB, error) {
	db, ok := r.Eng.Database(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", storage.ErrNoDatabase, name)
	}
	return db, nil
}

func (r EngineReplica) Write(ctx context.Context, name string, at journal.LSN, frames []byte, durable bool) (journal.LSN, error) {
	db, err := r.database(name)
	if err != nil {
		return 0, err
	}
	return db.WriteReplicated(ctx, at, frames, durable)
}

func (r EngineReplica) Apply(name string) error {
	db, err := r.database(name)
	if err != nil {
		return err
	}
	return db.ApplyReplicated()
}

func (r EngineReplica) SetAside(name string, from journal.LSN, reason string) (string, error) {
	db, err := r.database(name)
	if err != nil {
		return "", err
	}
	return r.Quarantine.Database(r.Keeper(), r.Eng, db, from, reason)
}

func (r EngineReplica) Install(name string, src io.Reader) (journal.LSN, error) {
	db, err := r.Eng.InstallSeed(name, src)
	if err != nil {
		return 0, err
	}
	return db.LSN(), nil
}

func (r EngineReplica) Has(name string) bool { _, ok := r.Eng.Database(name); return ok }

func (r EngineReplica) Drop(name string) error {
	if err := r.Eng.DropDatabase(name); err != nil && !errors.Is(err, storage.ErrNoDatabase) {
		return err
	}
	return nil
}
