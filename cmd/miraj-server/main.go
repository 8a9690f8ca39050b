// Command miraj-server is the Miraj SQL server: MySQL protocol on the client
// port, in-memory tables made durable by a journal per database.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/miraj-db/miraj/internal/clienttls"
	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/liblog"
	"github.com/miraj-db/miraj/internal/metrics"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/sqlserver"
	"github.com/miraj-db/miraj/internal/storage"
)

func main() {
	err := run(os.Args[1:])
	switch {
	case errors.Is(err, errHelp):
	case errors.Is(err, errUsage):
		os.Exit(2) // said on stderr already
	case err != nil:
		fmt.Fprintln(os.Stderr, "miraj-server:", err)
		os.Exit(1)
	}
}

// libLogInterval: a library's line of one cause is logged at most once in
// this interval, with the count of those held back.
const libLogInterval = 10 * time.Second

func run(args []string) error {
	o, err := parseOptions(args, os.Stdout, os.Stderr, os.Getenv)
	if err != nil {
		return err
	}
	if o.showVersion {
		fmt.Println("miraj-server", sqlserver.Version)
		return nil
	}

	pol, err := storage.ParseSavePolicy(o.policy)
	if err != nil {
		return fmt.Errorf("--save-policy: %w", err)
	}
	if o.intervalMS <= 0 {
		return fmt.Errorf("--save-interval-ms must be positive, got %d", o.intervalMS)
	}
	if err := os.MkdirAll(sqlserver.StateDir(o.root), 0o700); err != nil {
		return err
	}
	var out io.Writer = os.Stderr
	if o.log {
		f, err := os.OpenFile(filepath.Join(sqlserver.StateDir(o.root), "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		out = io.MultiWriter(os.Stderr, f)
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(log)
	// What the protocol and SQL libraries print goes to the same log, one
	// line per cause per interval.
	libLog := liblog.Install(log, libLogInterval)
	libCtx, stopLibLog := context.WithCancel(context.Background())
	defer stopLibLog()
	go libLog.Run(libCtx)
	cfgPath := o.clusterConfig
	if cfgPath == "" {
		if p, ok := config.DefaultPath(); ok {
			cfgPath = p
		}
	}
	var cluster *config.Cluster
	if cfgPath != "" {
		cl, warnings, err := config.Load(cfgPath, o.port)
		for _, w := range warnings {
			log.Warn("cluster configuration", "warning", w)
		}
		if err != nil {
			return err
		}
		cluster = cl
	}

	pacing, paced, err := heapFloorSetting(o.gcMinHeapMB, o.gcGrowth, os.Getenv, log)
	if err != nil {
		return err
	}
	if paced {
		startHeapFloor(pacing)
	}

	if o.pprofAddr != "" {
		// Where goroutines wait (channels, locks, the group commit) and
		// which mutexes are contended: /debug/pprof/block and /mutex.
		runtime.SetBlockProfileRate(int((20 * time.Microsecond).Nanoseconds()))
		runtime.SetMutexProfileFraction(20)
		go func() {
			if err := http.ListenAndServe(o.pprofAddr, nil); err != nil {
				log.Error("pprof endpoint stopped", "addr", o.pprofAddr, "err", err)
			}
		}()
	}

	// --http: the metrics observe the server from its start; the
	// endpoint opens once the server (and the cluster node) exist.
	mon := &monitored{}
	var observer sqlserver.Observer
	var reg *metrics.Metrics
	if o.httpAddr != "" {
		reg = newMetrics(mon)
		observer = reg
	} else if o.httpTLS || o.httpCert != "" || o.httpKey != "" || o.httpCA != "" {
		return fmt.Errorf("--http-tls, --http-cert, --http-key and --http-ca need --http ADDR")
	}

	binlogOpts, err := o.binlog.config()
	if err != nil {
		return err
	}
	streamMB := o.streamTransactionMB(cluster)
	srv, err := sqlserver.New(sqlserver.Config{Binlog: binlogOpts, Root: o.root, Bind: o.bind, Port: o.port, Policy: pol, Observer: observer,
		SaveInterval: time.Duration(o.intervalMS) * time.Millisecond, KeepJournalBytes: o.keepMB << 20, StreamTransactionMB: &streamMB,
		RootPassword: o.rootPassword, Logger: log, FileDir: o.fileDir, AnyFile: o.anyFile,
		TLS: sqlserver.TLSOptions{Disabled: !o.ssl, RequireSecureTransport: o.requireSecureTransport,
			Files: clienttls.Files{Cert: o.sslCert, Key: o.sslKey, CA: o.sslCA, CRL: o.sslCRL}}})
	if err != nil {
		return err
	}
	mon.srv = srv
	if err := srv.Listen(); err != nil {
		srv.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	srv.SetShutdown(stop) // SHUTDOWN stops the server as SIGTERM does
	defer stop()
	if cluster == nil {
		if o.httpAddr != "" {
			if err := startHTTP(ctx, o, nil, mon, reg, log); err != nil {
				srv.Close()
				return err
			}
		}
		return srv.Run(ctx)
	}
	var logStore *repl.LogStore
	if cluster.Node.Kind == config.KindLogStore {
		// A log-store node keeps the replicated journals apart from the
		// engine, which holds no replicated database.
		if logStore, err = openLogStore(o.root, srv, log); err != nil {
			srv.Close()
			return err
		}
		defer logStore.Close()
	}
	node, err := repl.New(repl.Options{Config: cluster, Storage: srv.Storage(), StateDir: sqlserver.StateDir(o.root),
		Accounts: srv.ClusterAccounts(), Logger: log, LogStore: logStore})
	if err != nil {
		srv.Close()
		return err
	}
	if err := srv.SetCluster(node); err != nil {
		return err
	}
	// The inter-node port is opened before the server reports ready: a
	// node that cannot take its cluster address stops here rather than
	// run on as a server no peer can reach.
	if err := node.Listen(); err != nil {
		srv.Close()
		return err
	}
	mon.node = node
	if o.httpAddr != "" {
		if err := startHTTP(ctx, o, cluster, mon, reg, log); err != nil {
			srv.Close()
			return err
		}
	}
	// Shutdown order: replication stops first, then the server, whose
	// last act is the checkpoint of every database.
	nodeCtx, stopNode := context.WithCancel(context.Background())
	srvCtx, stopSrv := context.WithCancel(context.Background())
	nodeDone := make(chan error, 1)
	nodeFailed := make(chan error, 1)
	go func() {
		err := node.Run(nodeCtx)
		if err != nil && nodeCtx.Err() == nil {
			// Replication stopped on its own: the server stops too
			// instead of serving as a node cut off from its cluster.
			log.Error("cluster replication stopped", "err", err)
			nodeFailed <- err
			stopSrv()
		}
		nodeDone <- err
	}()
	go func() {
		<-ctx.Done()
		stopNode()
		<-nodeDone
		stopSrv()
	}()
	err = srv.Run(srvCtx)
	stopNode()
	select {
	case nerr := <-nodeFailed:
		return fmt.Errorf("cluster replication stopped: %w", nerr)
	default:
		return err
	}
}

// openLogStore opens a log-store node's journals in DIR/miraj/logstore.
func openLogStore(root string, srv *sqlserver.Server, log *slog.Logger) (*repl.LogStore, error) {
	if dbs := srv.Storage().Databases(); len(dbs) > 0 {
		return nil, fmt.Errorf("node.kind = \"log-store\": the data directory holds %d database(s) with tables (%s first): a log-store node keeps journals only; start it on an empty data directory", len(dbs), dbs[0].Name())
	}
	// The node gives the store its quarantine (repl.New).
	ls, err := repl.OpenLogStore(repl.LogStoreOptions{Dir: filepath.Join(sqlserver.StateDir(root), repl.LogStoreDir), Logger: log}, srv.ClusterAccounts())
	if err != nil {
		return nil, err
	}
	return ls, nil
}
