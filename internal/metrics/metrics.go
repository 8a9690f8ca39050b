// Package metrics is the server's Prometheus registry (served at /metrics by
// internal/httpapi). It holds two kinds of metric:
//
//   - histograms the SQL layer observes as statements and commits end
//     (Statement, Commit), safe to call from any goroutine;
//   - values read at each scrape from what SHOW STATUS and SHOW CLUSTER
//     STATUS show (Source): the Miraj_* status counters, connections, the
//     journal's commits, fsyncs and group-commit sizes, each node's lag,
//     each database's positions, the progress of a copy or catch-up, and
//     the transactions open in each database's journal (large
//     transactions that stream, information_schema.MIRAJ_STREAMS).
//     Nothing is kept twice: a scrape reads the same counters SHOW STATUS
//     reads, so the two agree.
//
// A Metrics is made once per server; it starts no goroutine.
package metrics

import (
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/repl"
	"github.com/miraj-db/miraj/internal/storage"
)

// Value is one status variable: a count (uint64, int64) or a gauge
// (float64), as SHOW GLOBAL STATUS shows it.
type Value = repl.SyncStatusVar

// Source is what a scrape reads. Every field may be nil: a standalone
// server has no Nodes, Replication or Copies.
type Source struct {
	// Status returns the exported status variables (Miraj_*,
	// Threads_connected, Connections…).
	Status func() []Value
	// GroupSizes returns the group commit's fsyncs by size.
	GroupSizes func() journal.GroupSizes
	// Role is @@cluster_role (NONE outside a cluster).
	Role func() string
	// Epoch is @@cluster_epoch.
	Epoch func() uint64
	// Nodes, Replication: SHOW CLUSTER STATUS and
	// information_schema.MIRAJ_REPLICATION.
	Nodes       func() []repl.NodeRow
	Replication func() []repl.ReplRow
	// Copies: the copies (seeding) and catch-ups under way.
	Copies func() []repl.CopyProgress
	// Streams: each open database's transactions open in its journal
	// (information_schema.MIRAJ_STREAMS), an empty list for a database
	// without any.
	Streams func() map[string][]storage.StreamInfo
}

// Metrics is the registry and the histograms the server observes.
type Metrics struct {
	reg        *prometheus.Registry
	statements *prometheus.HistogramVec
	commits    *prometheus.HistogramVec
}

// latencyBuckets: 50 µs (a point select in process) to about 13 s (a
// semi-synchronous commit that waits for its timeout), doubling.
var latencyBuckets = prometheus.ExponentialBuckets(50e-6, 2, 19)

// New makes the registry: the histograms, the scrape-time collector over
// src, and Go's runtime and process collectors.
func New(src Source) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.statements = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "miraj_statement_duration_seconds",
		Help:    "Time from a client statement's arrival to its end, by kind (the Com_ counter it counts in, without Com_: select, insert, update, commit…).",
		Buckets: latencyBuckets,
	}, []string{"kind"})
	m.commits = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "miraj_commit_duration_seconds",
		Help:    "Time a writing transaction's commit took, journal fsync and semi-synchronous wait included, by kind: autocommit (a statement's own transaction) or transaction (COMMIT of START TRANSACTION or autocommit=0).",
		Buckets: latencyBuckets,
	}, []string{"kind"})
	m.reg.MustRegister(m.statements, m.commits, &collector{src: src},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Statement records a client statement of kind (its Com_ counter) that took d.
func (m *Metrics) Statement(kind string, d time.Duration) {
	m.statements.WithLabelValues(strings.ToLower(strings.TrimPrefix(kind, "Com_"))).Observe(d.Seconds())
}

// Commit records a commit of kind ("autocommit" or "transaction") that took d.
func (m *Metrics) Commit(kind string, d time.Duration) {
	m.commits.WithLabelValues(kind).Observe(d.Seconds())
}

// Handler serves the registry in Prometheus' text format (or OpenMetrics,
// as the scraper asks).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Registry is the registry itself, for tests that gather it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }
