package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/miraj-db/miraj/internal/clienttls"
	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/httpapi"
	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/metrics"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/sqlserver"
	"github.com/miraj-db/miraj/internal/storage"
)

// monitored is what --http reads: the server, and the cluster node once
// made (nil for a standalone server). Both are set before the endpoint
// opens.
type monitored struct {
	srv  *sqlserver.Server
	node *repl.Node
}

// newMetrics makes the metrics registry over m.
func newMetrics(m *monitored) *metrics.Metrics {
	return metrics.New(metrics.Source{
		Status:     func() []metrics.Value { return m.srv.StatusValues() },
		GroupSizes: func() journal.GroupSizes { return m.srv.Storage().Counts().GroupSizes },
		Role: func() string {
			if m.node == nil {
				return "NONE"
			}
			if r := m.node.Role(); r != repl.RolePromoting {
				return string(r)
			}
			return string(repl.RoleSecondary)
		},
		Epoch: func() uint64 {
			if m.node == nil {
				return 0
			}
			return uint64(m.node.Epoch())
		},
		Nodes: func() []repl.NodeRow {
			if m.node == nil {
				return nil
			}
			return m.node.Nodes()
		},
		Streams: func() map[string][]storage.StreamInfo { return m.srv.Streams() },
		Replication: func() []repl.ReplRow {
			if m.node == nil {
				return nil
			}
			return m.node.Replication()
		},
		Copies: func() []repl.CopyProgress {
			if m.node == nil {
				return nil
			}
			return m.node.Copies()
		},
	})
}

// httpTLS is --http's TLS configuration: nil for plain HTTP.
func httpTLS(o *options, cluster *config.Cluster) (*tls.Config, error) {
	cert, key := o.httpCert, o.httpKey
	switch {
	case cert != "" || key != "":
		if cert == "" || key == "" {
			return nil, fmt.Errorf("--http-cert and --http-key go together")
		}
	case o.httpTLS && cluster != nil:
		cert, key = cluster.TLSCert, cluster.TLSKey
	case o.httpTLS:
		cert, key = o.sslCert, o.sslKey
		if cert == "" {
			dir := sqlserver.StateDir(o.root)
			cert, key = filepath.Join(dir, clienttls.AutoCertFile), filepath.Join(dir, clienttls.AutoKeyFile)
		}
	case o.httpCA != "":
		return nil, fmt.Errorf("--http-ca needs TLS: --http-tls or --http-cert")
	default:
		return nil, nil
	}
	m, err := clienttls.Load(clienttls.Files{Cert: cert, Key: key}, time.Now())
	if err != nil {
		return nil, fmt.Errorf("--http TLS: %w", err)
	}
	cfg := m.Config().Clone()
	cfg.MinVersion = tls.VersionTLS12
	if o.httpCA != "" {
		pem, err := os.ReadFile(o.httpCA)
		if err != nil {
			return nil, fmt.Errorf("--http-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--http-ca %s: no PEM certificate", o.httpCA)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// startHTTP opens --http and serves it until ctx ends; the address taken
// is logged ("http endpoint ready").
func startHTTP(ctx context.Context, o *options, cluster *config.Cluster, m *monitored, reg *metrics.Metrics, log *slog.Logger) error {
	cfg, err := httpTLS(o, cluster)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.httpAddr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", o.httpAddr, err)
	}
	opts := httpapi.Options{Metrics: reg.Handler(), Version: sqlserver.Version, Logger: log, ReadOnly: m.srv.ReadOnly}
	if m.node != nil {
		opts.Node = m.node
	}
	scheme := "http"
	if cfg != nil {
		scheme = "https"
	}
	log.Info("http endpoint ready", "addr", ln.Addr().String(), "scheme", scheme)
	go func() {
		if err := httpapi.Serve(ctx, ln, httpapi.Handler(opts), cfg, log); err != nil {
			log.Error("http endpoint stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return nil
}
