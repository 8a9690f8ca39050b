package sqlserver

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/storage"
)

// InProcess is the SQL layer over a storage engine without accounts, a
// listener or a go-mysql-server engine of its own: for code that builds its
// own engine around our provider and sessions, such as go-mysql-server's
// enginetest harness.
type InProcess struct {
	storage  *storage.Engine
	provider *Provider
	stopBG   context.CancelFunc
	bgDone   chan error
	once     sync.Once
}

// InProcessOptions configure OpenInProcess.
type InProcessOptions struct {
	Root         string
	Policy       storage.SavePolicy
	SaveInterval time.Duration // SavePeriodic: time between fsyncs
	Logger       *slog.Logger
	// DefaultCollation of a database created without one (default: MySQL
	// 8's utf8mb4_0900_ai_ci, as the server).
	DefaultCollation sql.CollationID
}

// OpenInProcess opens (or creates) the data directory opts.Root and starts
// the storage engine's background work (periodic fsyncs, checkpoints); Close
// stops it.
func OpenInProcess(opts InProcessOptions) (*InProcess, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := os.MkdirAll(StateDir(opts.Root), 0o700); err != nil {
		return nil, err
	}
	st, err := storage.Open(storage.Options{Root: opts.Root, Policy: opts.Policy, SaveInterval: opts.SaveInterval,
		Bind: tabledef.Bind, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	Install()
	ctx, cancel := context.WithCancel(context.Background())
	p := &InProcess{storage: st, provider: &Provider{engine: st, collation: opts.DefaultCollation}, stopBG: cancel, bgDone: make(chan error, 1)}
	go func() { p.bgDone <- st.Run(ctx) }()
	return p, nil
}

// Storage returns the storage engine.
func (p *InProcess) Storage() *storage.Engine { return p.storage }

// Provider returns the database provider to give go-mysql-server.
func (p *InProcess) Provider() *Provider { return p.provider }

// NewSession wraps base in a session whose transactions are storage
// transactions of this engine.
func (p *InProcess) NewSession(base *sql.BaseSession) *Session {
	return newSession(base, p.storage)
}

// Close stops the background work, checkpoints every database and closes
// the journals. It is safe to call more than once.
func (p *InProcess) Close() error {
	var err error
	p.once.Do(func() {
		p.stopBG()
		<-p.bgDone
		err = p.storage.Close()
	})
	return err
}
