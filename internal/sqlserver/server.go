package sqlserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/eventscheduler"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/atomicfile"
	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
	"github.com/miraj-db/miraj/internal/storage"
)

// Config is what a Server needs to start.
type Config struct {
	Root         string // data directory
	Bind         string // client address (default 127.0.0.1)
	Port         int    // client port (default 7007; 0 picks a free one)
	Policy       storage.SavePolicy
	SaveInterval time.Duration
	// KeepJournalBytes of journal are kept behind the newest checkpoint.
	KeepJournalBytes int64
	RootPassword     string
	Logger           *slog.Logger
	// FileDir is the folder of the files SELECT … INTO OUTFILE, LOAD DATA
	// INFILE and LOAD_FILE() may use (secure_file_priv; filedir.go):
	// ROOT/miraj/files when empty. AnyFile lets them use any file the
	// server can.
	FileDir string
	AnyFile bool
	// TLS is the client port's TLS (servertls.go).
	TLS TLSOptions
	// Observer, when set, receives the timings of client statements and
	// commits (observe.go).
	Observer Observer
	// Binlog is the binary log (binlog_server.go); off when not Enabled.
	Binlog BinlogOptions
	// StreamTransactionMB is the initial @@GLOBAL.stream_transaction_mb
	// (streams.go): MiB of journal frames past which a transaction is
	// written to the journal as it runs, 0 never; nil:
	// storage.DefaultStreamBytes.
	StreamTransactionMB *int64
}

// Server is a standalone Miraj server: storage, SQL engine and the MySQL
// protocol listener.
type Server struct {
	cfg      Config
	log      *slog.Logger
	storage  *storage.Engine
	engine   *sqle.Engine
	procs    *processList  // the engine's process list
	readLock *readLockGate // FLUSH TABLES WITH READ LOCK (readlock.go)
	tables   *tableGate    // LOCK TABLES (tablelock.go)
	// sm is go-mysql-server's session manager, once Run has made the
	// protocol server: the statements answered before the planner get
	// their session's context from it.
	sm *server.SessionManager
	// stop ends Run as its context's end would; SHUTDOWN calls
	// onShutdown instead when set (SetShutdown).
	stop       context.CancelFunc
	onShutdown func()
	listener   net.Listener
	accounts   string // file the accounts are persisted in
	acct       *accounts
	acctTLS    *accountTLS // the accounts' REQUIRE clauses (accounttls.go)
	points     *pointGets
	tls        *serverTLS // the client port's certificates (servertls.go)
	// sessions maps a connection id to its *Session, from the session's
	// creation to the connection's end: the protocol handler knows only
	// connections, and looks here for point lookups and status flags.
	sessions sync.Map
	// cluster is the replication node once SetCluster made the server
	// one (cluster.go).
	cluster clusterRef
	binlog  *binlogServer      // nil: no binary log (binlog_server.go)
	replica binlogReplicaState // binary log replica (binlog_replica_stmt.go)
}

// StateDir returns the folder of the server's own state under root.
func StateDir(root string) string { return filepath.Join(root, storage.ReservedDir) }

// New opens the data directory (recovering every database) and prepares the
// SQL engine. It listens on nothing yet.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Bind == "" {
		cfg.Bind = "127.0.0.1"
	}
	if err := os.MkdirAll(StateDir(cfg.Root), 0o700); err != nil {
		return nil, err
	}
	// Certificates first: a file that cannot serve stops the start-up
	// before the databases are recovered.
	tlsState, err := newServerTLS(cfg.TLS, StateDir(cfg.Root), cfg.Bind, cfg.Logger)
	if err != nil {
		return nil, err
	}
	st, err := storage.Open(storage.Options{Root: cfg.Root, Policy: cfg.Policy, SaveInterval: cfg.SaveInterval,
		KeepBytes: cfg.KeepJournalBytes, Bind: tabledef.Bind, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, storage: st, tls: tlsState, accounts: filepath.Join(StateDir(cfg.Root), "accounts.bin")}
	s.acct = &accounts{path: s.accounts}
	s.acctTLS = newAccountTLS()
	s.points = newPointGets(s)
	provider := &Provider{engine: st, srv: s}
	a := newAnalyzerBuilder(provider).Build()
	g := grants{db: a.Catalog.MySQLDb}
	a.Catalog.AuthHandler = authorization{AuthorizationHandler: a.Catalog.AuthHandler, grants: g}
	a.Catalog.StatsProvider = analyzeStats{a.Catalog.StatsProvider}
	ax := adminExec{grants: g, exec: &execBuilder{}, srv: s}
	a.ExecBuilder = rowexec.NewOverrideBuilder(ax)
	ax.exec.NodeExecBuilder = a.ExecBuilder
	a.Catalog.InfoSchema = wrapInfoSchema(a.Catalog.InfoSchema, g, s)
	a.Catalog.RegisterFunction(sql.NewEmptyContext(), serverFunctions...)
	s.engine = sqle.New(a, nil)
	provider.runner = s.engine
	Install()
	s.procs = newProcessList()
	s.readLock = newReadLockGate()
	s.tables = newTableGate(func(fn func(uint32, *Session) bool) {
		s.sessions.Range(func(k, v any) bool { return fn(k.(uint32), v.(*Session)) })
	}, func(q string) footprint { return footprintReader{srv: s}.statement(q) })
	s.procs.onKill = func(id uint32) {
		s.readLock.interrupt(id)
		s.tables.interrupt(id)
	}
	s.engine.ProcessList = s.procs
	a.Catalog.RegisterFunction(sql.NewEmptyContext(), checksumFunction(a.Catalog, g))
	a.Catalog.RegisterFunction(sql.NewEmptyContext(), checksumLabelFunction(a.Catalog))
	s.engine.Parser = newParser(s.engine.Parser, &s.cluster)
	a.Catalog.RegisterFunction(sql.NewEmptyContext(), positionWaitFunction(st))
	a.Catalog.RegisterFunction(sql.NewEmptyContext(), binlogReplicaFunctions...)
	statusEngine.Store(st)
	if err := setServerDefaults(); err != nil {
		st.Close()
		return nil, err
	}
	if err := setStreamDefault(cfg.StreamTransactionMB); err != nil {
		st.Close()
		return nil, err
	}
	if err := s.tls.registerVariables(cfg.TLS); err != nil {
		st.Close()
		return nil, err
	}
	if dir, err := setFileDir(cfg); err != nil {
		st.Close()
		return nil, err
	} else if dir == "" {
		cfg.Logger.Warn("secure_file_priv is empty: SELECT … INTO OUTFILE, LOAD DATA INFILE and LOAD_FILE() may read and write any file the server can")
	}
	if err := s.loadAccounts(); err != nil {
		st.Close()
		return nil, err
	}
	if err := s.openBinlog(); err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

// Storage returns the storage engine.
func (s *Server) Storage() *storage.Engine { return s.storage }

// Engine returns the SQL engine.
func (s *Server) Engine() *sqle.Engine { return s.engine }

// NewSession makes a session outside any connection (tools and tests).
func (s *Server) NewSession() *Session {
	sess := newSession(sql.NewBaseSession(), s.storage)
	sess.cluster = &s.cluster
	return sess
}

func (s *Server) sessionBuilder(ctx context.Context, conn *mysql.Conn, addr string) (sql.Session, error) {
	host, user := "", ""
	if u, ok := conn.UserData.(sql.MysqlConnectionUser); ok {
		host, user = u.Host, u.User
	}
	client := sql.Client{Address: host, User: user, Capabilities: conn.Capabilities}
	sess := newSession(sql.NewBaseSessionWithClientServer(addr, client, conn.ConnectionID), s.storage)
	sess.mysql = true
	sess.cluster = &s.cluster
	sess.observer = s.cfg.Observer
	sess.client = clientOf(conn.Conn)
	sess.readLock = s.readLock
	sess.tables = s.tables
	if conn.Capabilities&clientInteractive != 0 {
		// An interactive client waits interactive_timeout, as in MySQL.
		if _, v, ok := sql.SystemVariables.GetGlobal("interactive_timeout"); ok {
			sess.BaseSession.SetSessionVariable(sql.NewEmptyContext(), "wait_timeout", v)
		}
	}
	sess.noteWaitTimeout(sql.NewEmptyContext())
	s.sessions.Store(conn.ConnectionID, sess)
	// go-mysql-server names the connection's user in the process list
	// only when a default database is chosen; KILL's and SHOW
	// PROCESSLIST's checks need it from the start.
	s.engine.ProcessList.ConnectionReady(sess)
	return sess, nil
}

// setServerDefaults makes the server's defaults MySQL 8's: utf8mb4 with the
// case-insensitive utf8mb4_0900_ai_ci collation, lc_time_names en_US, a
// sql_mode with ERROR_FOR_DIVISION_BY_ZERO (divzero.go; MySQL 8's also has
// NO_ZERO_DATE and NO_ZERO_IN_DATE, which are not built); and names the
// server
// (@@version and @@version_comment are read-only, set here once).
func setServerDefaults() error {
	if err := sql.SystemVariables.AssignValues(buildVariables()); err != nil {
		return fmt.Errorf("system variables of the build: %w", err)
	}
	ctx := sql.NewEmptyContext()
	for name, v := range map[string]any{
		"collation_server":     defaultCollation.Name(),
		"collation_database":   defaultCollation.Name(),
		"collation_connection": defaultCollation.Name(),
		"character_set_server": "utf8mb4",
		"lc_time_names":        "en_US", // go-mysql-server's is empty
		"sql_mode":             "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
	} {
		if err := sql.SystemVariables.SetGlobal(ctx, name, v); err != nil {
			return fmt.Errorf("system variable %s: %w", name, err)
		}
	}
	return nil
}

// accountPersister writes the accounts file atomically (temp file, fsync,
// rename), with the accounts' REQUIRE clauses after go-mysql-server's data
// (accounttls.go), and counts the changes, so replication knows to send
// them.
type accountPersister struct {
	path string
	acct *accounts
	tls  *accountTLS
}

func (p accountPersister) Persist(ctx *sql.Context, data []byte) error {
	data, err := p.tls.withTrailer(data)
	if err != nil {
		return err
	}
	if err := p.write(data); err != nil {
		return err
	}
	if p.acct != nil {
		p.acct.version.Add(1)
	}
	return nil
}

func (p accountPersister) write(data []byte) error {
	return atomicfile.Write(p.path, data, 0o600)
}

// loadAccounts restores users and grants, or creates root@localhost and
// root@127.0.0.1 on first start.
func (s *Server) loadAccounts() error {
	db := s.engine.Analyzer.Catalog.MySQLDb
	ctx := sql.NewContext(context.Background(), sql.WithSession(s.NewSession()))
	data, err := os.ReadFile(s.accounts)
	switch {
	case err == nil:
		gms, reqs, err := splitAccountsFile(data)
		if err != nil {
			return fmt.Errorf("accounts %s: %w", s.accounts, err)
		}
		if err := db.LoadData(ctx, gms); err != nil {
			return fmt.Errorf("accounts %s: %w", s.accounts, err)
		}
		s.acctTLS.replace(reqs)
		db.SetEnabled(true)
	case errors.Is(err, os.ErrNotExist):
		if s.cfg.RootPassword == "" {
			s.log.Warn("root accounts created with an empty password: set --root-password or MIRAJ_ROOT_PASSWORD")
		}
		ed := db.Editor()
		db.AddSuperUser(ed, "root", "localhost", s.cfg.RootPassword)
		db.AddSuperUser(ed, "root", "127.0.0.1", s.cfg.RootPassword)
		db.SetPersister(accountPersister{path: s.accounts, acct: s.acct, tls: s.acctTLS})
		err := db.Persist(ctx, ed)
		ed.Close()
		if err != nil {
			return fmt.Errorf("accounts %s: %w", s.accounts, err)
		}
		s.log.Info("root accounts created", "users", "root@localhost, root@127.0.0.1")
	default:
		return fmt.Errorf("accounts %s: %w", s.accounts, err)
	}
	db.SetPersister(accountPersister{path: s.accounts, acct: s.acct, tls: s.acctTLS})
	return nil
}

// Listen opens the client port.
func (s *Server) Listen() error {
	l, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Bind, strconv.Itoa(s.cfg.Port)))
	if err != nil {
		return err
	}
	s.listener = l
	return nil
}

// SetShutdown makes the SHUTDOWN statement call fn instead of ending Run
// itself: a cluster node stops its replication before its server, as on
// SIGTERM. Call before Run.
func (s *Server) SetShutdown(fn func()) { s.onShutdown = fn }

// Addr returns the client address once listening.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Run serves clients until ctx ends, then shuts down cleanly: stops the
// listener, checkpoints every database and closes the journals.
func (s *Server) Run(ctx context.Context) error {
	ctx, s.stop = context.WithCancel(ctx) // SHUTDOWN (shutdown.go) ends it too
	defer s.stop()
	if s.listener == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	clientsOf := newClientListener(s.listener, true, s.tls)
	srv, err := server.NewServer(server.Config{Protocol: "tcp", Version: Version, Listener: clientsOf, Address: s.listener.Addr().String(), ProtocolListenerFactory: s.listenerFactory},
		s.engine, sql.NewContext, s.sessionBuilder, nil)
	if err != nil {
		return err
	}
	s.sm = srv.SessionManager()
	if err := s.announceListener(); err != nil {
		return err
	}
	// Events run as root, in a session of their own each time.
	if err := s.engine.InitializeEventScheduler(func() (*sql.Context, error) {
		sess := newSession(sql.NewBaseSessionWithClientServer("", sql.Client{User: "root", Address: "localhost"}, 0), s.storage)
		sess.readLock = s.readLock
		sess.tables = s.tables
		sess.cluster = &s.cluster
		return sql.NewContext(context.Background(), sql.WithSession(sess)), nil
	}, eventscheduler.SchedulerOn, 1); err != nil {
		return fmt.Errorf("event scheduler: %w", err)
	}
	bg, stopBG := context.WithCancel(context.Background())
	bgDone := make(chan error, 1)
	go func() { bgDone <- s.storage.Run(bg) }()
	replicaDone := s.runBinlogReplica(bg)
	go reapIdle(bg, clientsOf, s.log)
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Start() }()
	s.log.Info("miraj server ready", "addr", s.listener.Addr().String(), "root", s.cfg.Root, "save_policy", s.cfg.Policy.String(), "version", Version)
	var serveErr error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
		s.endBinlogDumps() // binlog_server.go
		srv.Close()
		<-serveDone
	case serveErr = <-serveDone:
	}
	stopBG()
	<-replicaDone
	<-bgDone
	s.closeBinlog()
	if err := s.storage.Close(); err != nil {
		s.log.Error("shutdown checkpoint failed", "err", err)
		return err
	}
	s.log.Info("shutdown complete")
	return serveErr
}

// Close releases the storage without serving (for tools and tests that
// did not call Run).
func (s *Server) Close() error {
	s.closeBinlog()
	return s.storage.Close()
}

// groupByRule is go-mysql-server's check of ONLY_FULL_GROUP_BY, which a
// client session does not run: groupby.go checks its statements as MySQL
// does (go-mysql-server's refused SELECT * … GROUP BY the primary key,
// and passed most of what MySQL refuses).
var groupByRule = validationRule("validateGroupBy")

// validationRule returns go-mysql-server's validation rule of that name
// (its ids are not exported).
func validationRule(name string) analyzer.Rule {
	for _, r := range analyzer.DefaultValidationRules {
		if r.Id.String() == name {
			return r
		}
	}
	panic("sqlserver: go-mysql-server has no " + name + " rule")
}

// notForClients runs an analyzer rule for the sessions of
// go-mysql-server's engine suites only.
func notForClients(rule analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		if compat.FromClient(ctx) {
			return n, transform.SameTree, nil
		}
		return rule(ctx, a, n, scope, sel, qFlags)
	}
}

// replaceAggRule is go-mysql-server's rule that answers MIN or MAX of the
// primary key's first column by ORDER BY … LIMIT 1: over no rows it
// returns no row, where MySQL returns one row of NULL. Its id is not
// exported; it is found by name.
func replaceAggRule() analyzer.RuleId {
	for id := analyzer.RuleId(0); id < 200; id++ {
		if id.String() == "replaceAgg" {
			return id
		}
	}
	panic("sqlserver: go-mysql-server has no replaceAgg rule")
}
