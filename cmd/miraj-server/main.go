// Command miraj-server is the Miraj SQL server: MySQL protocol on the client
// port, in-memory tables made durable by a journal per database.
package main

import (
	"context"
	"flag"
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

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/sqlserver"
	"github.com/miraj-db/miraj/internal/storage"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "miraj-server:", err)
		os.Exit(1)
	}
}

func run() error {
	root := flag.String("root", "./data", "data directory (created if absent)")
	port := flag.Int("port", 7007, "client port (MySQL protocol)")
	bindAddr := flag.String("bind", "127.0.0.1", "client address to listen on")
	logOn := flag.Bool("log", true, "write the server log to ROOT/miraj/server.log as well as stderr")
	policy := flag.String("save-policy", "commit", "when commits reach the disk: commit, periodic or manual")
	interval := flag.Int("save-interval-ms", 1000, "fsync interval of the periodic save policy, in milliseconds")
	keepMB := flag.Int64("journal-keep-mb", 0, "journal kept behind the newest checkpoint, in MiB")
	clusterConfig := flag.String("cluster-config", "", "cluster configuration file (cluster.toml)")
	rootPassword := flag.String("root-password", os.Getenv("MIRAJ_ROOT_PASSWORD"), "password of root@localhost and root@127.0.0.1 when they are created (first start)")
	gcMinHeapMB := flag.Int("gc-min-heap-mb", 256, "minimum heap: the garbage collector lets the heap grow to this size (MiB) before it collects; 0: Go's default pacing (also when GOGC or GOMEMLIMIT is set)")
	gcGrowth := flag.Int("gc-heap-growth-percent", 15, "past the minimum heap, the garbage collector runs once the heap has grown by this share of the live heap (Go's GOGC)")
	pprofAddr := flag.String("pprof", "", "serve Go's profiling endpoints (net/http/pprof) on this address, e.g. 127.0.0.1:6060; off by default")
	showVersion := flag.Bool("version", false, "print the server version and exit")
	fileDir := flag.String("secure-file-priv", "", "folder of the files SELECT … INTO OUTFILE, LOAD DATA INFILE and LOAD_FILE() may use (default ROOT/miraj/files); set to \"\" to allow any file the server can reach")
	flag.Parse()
	anyFile := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "secure-file-priv" && *fileDir == "" {
			anyFile = true
		}
	})

	if *showVersion {
		fmt.Println("miraj-server", sqlserver.Version)
		return nil
	}

	pol, err := storage.ParseSavePolicy(*policy)
	if err != nil {
		return fmt.Errorf("--save-policy: %w", err)
	}
	if *interval <= 0 {
		return fmt.Errorf("--save-interval-ms must be positive, got %d", *interval)
	}
	if err := os.MkdirAll(sqlserver.StateDir(*root), 0o700); err != nil {
		return err
	}
	var out io.Writer = os.Stderr
	if *logOn {
		f, err := os.OpenFile(filepath.Join(sqlserver.StateDir(*root), "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		out = io.MultiWriter(os.Stderr, f)
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(log)
	cfgPath := *clusterConfig
	if cfgPath == "" {
		if p, ok := config.DefaultPath(); ok {
			cfgPath = p
		}
	}
	var cluster *config.Cluster
	if cfgPath != "" {
		cl, warnings, err := config.Load(cfgPath, *port)
		for _, w := range warnings {
			log.Warn("cluster configuration", "warning", w)
		}
		if err != nil {
			return err
		}
		cluster = cl
	}

	pacing, paced, err := heapFloorSetting(*gcMinHeapMB, *gcGrowth, os.Getenv, log)
	if err != nil {
		return err
	}
	if paced {
		startHeapFloor(pacing)
	}

	if *pprofAddr != "" {
		// Where goroutines wait (channels, locks, the group commit) and
		// which mutexes are contended: /debug/pprof/block and /mutex.
		runtime.SetBlockProfileRate(int((20 * time.Microsecond).Nanoseconds()))
		runtime.SetMutexProfileFraction(20)
		go func() {
			if err := http.ListenAndServe(*pprofAddr, nil); err != nil {
				log.Error("pprof endpoint stopped", "addr", *pprofAddr, "err", err)
			}
		}()
	}

	srv, err := sqlserver.New(sqlserver.Config{Root: *root, Bind: *bindAddr, Port: *port, Policy: pol,
		SaveInterval: time.Duration(*interval) * time.Millisecond, KeepJournalBytes: *keepMB << 20,
		RootPassword: *rootPassword, Logger: log, FileDir: *fileDir, AnyFile: anyFile})
	if err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		srv.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	srv.SetShutdown(stop) // SHUTDOWN stops the server as SIGTERM does
	defer stop()
	if cluster == nil {
		return srv.Run(ctx)
	}
	node, err := repl.New(repl.Options{Config: cluster, Storage: srv.Storage(), StateDir: sqlserver.StateDir(*root),
		Accounts: srv.ClusterAccounts(), Logger: log})
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
