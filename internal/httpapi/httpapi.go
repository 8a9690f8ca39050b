// Package httpapi is the server's HTTP endpoint (miraj-server --http ADDR):
// Prometheus metrics and the health checks of load balancers, with the
// paths and answers of Patroni's REST API, so that an HAProxy, keepalived or
// Kubernetes set-up written for Patroni works unchanged:
//
//	GET /metrics   Prometheus text format (internal/metrics)
//	GET /health    200 while the server runs
//	GET /primary   200 on the writable primary, else 503 (also /master, /read-write, /leader)
//	GET /replica   200 on a secondary that streams from its primary and is
//	               not receiving a copy of a database, else 503; ?lag=N (bytes;
//	               kB, MB, GB) or ?lag=5s (a duration) refuses a secondary
//	               further behind
//	GET /read-only 200 on the primary or a streaming secondary
//	GET /cluster   SHOW CLUSTER STATUS as JSON
//
// Every check answers a JSON body describing the node, whatever its code.
// HEAD and OPTIONS are answered as GET (HAProxy's "option httpchk" sends
// OPTIONS by default). The Handler holds no goroutine; Serve runs the
// listener until its context ends.
package httpapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/miraj-db/miraj/internal/repl"
)

// Node is what the checks ask of the replication node (*repl.Node).
type Node interface {
	Role() repl.Role
	Writable() bool
	Streaming() bool
	Epoch() repl.Epoch
	NodeID() string
	PrimaryID() string
	Nodes() []repl.NodeRow
	Copies() []repl.CopyProgress
}

// Options are the endpoint's sources.
type Options struct {
	// Node is the cluster node; nil for a standalone server, which is
	// always "primary" (it takes writes) and never a replica.
	Node Node
	// ReadOnly reports @@read_only of a standalone server.
	ReadOnly func() bool
	// Metrics serves /metrics; nil: 404.
	Metrics http.Handler
	// Version is the server's version, in the JSON bodies.
	Version string
	Logger  *slog.Logger
}

// Handler returns the endpoint's routes.
func Handler(o Options) http.Handler {
	h := &handler{o: o}
	mux := http.NewServeMux()
	if o.Metrics != nil {
		mux.Handle("/metrics", o.Metrics)
	}
	mux.HandleFunc("/health", h.health)
	for _, p := range []string{"/primary", "/master", "/leader", "/read-write"} {
		mux.HandleFunc(p, h.primary)
	}
	mux.HandleFunc("/replica", h.replica)
	mux.HandleFunc("/read-only", h.readOnly)
	mux.HandleFunc("/cluster", h.cluster)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		h.health(w, r)
	})
	return mux
}

type handler struct{ o Options }

// status is the JSON body of every check.
type status struct {
	State       string   `json:"state"` // "running"
	Role        string   `json:"role"`  // Patroni's: primary, replica, fenced, promoting, standalone; log-store
	ClusterRole string   `json:"cluster_role"`
	NodeID      string   `json:"node_id,omitempty"`
	Primary     string   `json:"primary,omitempty"`
	Epoch       uint64   `json:"epoch"`
	Writable    bool     `json:"writable"`
	Streaming   bool     `json:"streaming"`
	LagBytes    *int64   `json:"lag_bytes,omitempty"`
	LagSeconds  *float64 `json:"lag_seconds,omitempty"`
	Version     string   `json:"server_version"`
	Reason      string   `json:"reason,omitempty"` // why a check answers 503
}

func (h *handler) status() status {
	s := status{State: "running", Version: h.o.Version}
	n := h.o.Node
	if n == nil {
		s.Role, s.ClusterRole = "standalone", "NONE"
		s.Writable = h.o.ReadOnly == nil || !h.o.ReadOnly()
		return s
	}
	role := n.Role()
	s.ClusterRole, s.NodeID, s.Primary, s.Epoch = string(role), n.NodeID(), n.PrimaryID(), uint64(n.Epoch())
	s.Writable = n.Writable()
	switch role {
	case repl.RolePrimary:
		s.Role = "primary"
	case repl.RoleSecondary:
		s.Role = "replica"
		s.Streaming = n.Streaming()
		for _, r := range n.Nodes() {
			if r.State == "SELF" {
				lag := r.LagBytes
				s.LagBytes, s.LagSeconds = &lag, r.LagSeconds
				if r.Role == string(repl.RoleLogStore) {
					// It holds the log, not the tables: never a
					// replica to read from.
					s.Role, s.ClusterRole = "log-store", r.Role
				}
				break
			}
		}
	case repl.RolePromoting:
		s.Role, s.ClusterRole = "promoting", string(repl.RoleSecondary)
	default:
		s.Role = strings.ToLower(string(role))
	}
	return s
}

func (h *handler) answer(w http.ResponseWriter, r *http.Request, ok bool, s status) {
	code := http.StatusOK
	if !ok {
		code = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if r.Method == http.MethodHead {
		return
	}
	json.NewEncoder(w).Encode(s)
}

func (h *handler) health(w http.ResponseWriter, r *http.Request) {
	h.answer(w, r, true, h.status())
}

func (h *handler) primary(w http.ResponseWriter, r *http.Request) {
	s := h.status()
	if !s.Writable {
		s.Reason = "not the writable primary"
	}
	h.answer(w, r, s.Writable, s)
}

func (h *handler) replica(w http.ResponseWriter, r *http.Request) {
	s := h.status()
	ok, reason := h.replicaOK(r, s)
	s.Reason = reason
	h.answer(w, r, ok, s)
}

// replicaOK decides /replica: a streaming secondary, within ?lag if given.
func (h *handler) replicaOK(r *http.Request, s status) (bool, string) {
	if s.Role != "replica" {
		return false, "not a secondary"
	}
	if !s.Streaming {
		return false, "not streaming from a primary"
	}
	// A database being copied to this node is not there yet: its reads
	// would fail (its lag does not count it).
	for _, c := range h.o.Node.Copies() {
		if c.Kind == "seed" && strings.EqualFold(c.Node, s.NodeID) {
			return false, "receiving a copy of database " + c.Database
		}
	}
	q := r.URL.Query().Get("lag")
	if q == "" {
		return true, ""
	}
	lim, err := ParseLag(q)
	if err != nil {
		return false, err.Error()
	}
	if lim.Seconds {
		secs := 0.0
		if s.LagSeconds != nil {
			secs = *s.LagSeconds
		}
		if secs > lim.Duration.Seconds() {
			return false, fmt.Sprintf("lag %.3fs above %v", secs, lim.Duration)
		}
		return true, ""
	}
	var b int64
	if s.LagBytes != nil {
		b = *s.LagBytes
	}
	if b > lim.Bytes {
		return false, fmt.Sprintf("lag %d bytes above %d", b, lim.Bytes)
	}
	return true, ""
}

func (h *handler) readOnly(w http.ResponseWriter, r *http.Request) {
	s := h.status()
	if s.Writable || s.Role == "standalone" {
		h.answer(w, r, true, s)
		return
	}
	ok, reason := h.replicaOK(r, s)
	s.Reason = reason
	h.answer(w, r, ok, s)
}

// clusterRow is a row of SHOW CLUSTER STATUS with its column names.
type clusterRow struct {
	NodeID         string     `json:"NODE_ID"`
	Address        string     `json:"ADDRESS"`
	Role           string     `json:"ROLE"`
	State          string     `json:"STATE"`
	Epoch          uint64     `json:"EPOCH"`
	LagBytes       int64      `json:"LAG_BYTES"`
	LagSeconds     *float64   `json:"LAG_SECONDS"`
	ConnectedSince *time.Time `json:"CONNECTED_SINCE"`
	LastError      string     `json:"LAST_ERROR"`
	Sync           *string    `json:"SYNC"`
}

// copyRow is a copy or catch-up under way: NODE is the node a copy goes
// to (or, for a catch-up, the peer it comes from).
type copyRow struct {
	Node     string    `json:"NODE"`
	Database string    `json:"DATABASE"`
	Kind     string    `json:"COPY"`
	Done     int64     `json:"BYTES_DONE"`
	Total    int64     `json:"BYTES_TOTAL"`
	Percent  float64   `json:"PERCENT"`
	Started  time.Time `json:"STARTED"`
}

func (h *handler) cluster(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if h.o.Node == nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]any{"reason": "not a cluster node", "members": []clusterRow{}})
		return
	}
	rows := []clusterRow{}
	for _, n := range h.o.Node.Nodes() {
		rows = append(rows, clusterRow{n.NodeID, n.Address, n.Role, n.State, n.Epoch, n.LagBytes, n.LagSeconds, n.ConnectedSince, n.LastError, n.Sync})
	}
	copies := []copyRow{}
	for _, c := range h.o.Node.Copies() {
		copies = append(copies, copyRow{c.Node, c.Database, strings.ToUpper(c.Kind), c.Done, c.Total, c.Percent(), c.Started})
	}
	json.NewEncoder(w).Encode(map[string]any{"node_id": h.o.Node.NodeID(), "primary": h.o.Node.PrimaryID(),
		"epoch": uint64(h.o.Node.Epoch()), "members": rows, "copies": copies})
}

// Lag is a ?lag= limit: bytes, or a duration when Seconds.
type Lag struct {
	Bytes    int64
	Duration time.Duration
	Seconds  bool
}

// ParseLag reads ?lag=: a byte count with an optional unit (B, kB, MB, GB;
// 1024-based, as Patroni's), or a Go duration (5s, 500ms, 1m).
func ParseLag(v string) (Lag, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return Lag{Bytes: n}, nil
	}
	lower := strings.ToLower(v)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"b", 1}} {
		if num, ok := strings.CutSuffix(lower, u.suffix); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64); err == nil && n >= 0 {
				return Lag{Bytes: n * u.mult}, nil
			}
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return Lag{Duration: d, Seconds: true}, nil
	}
	return Lag{}, fmt.Errorf("lag %q: want bytes (1048576, 16kB, 1MB) or a duration (5s, 500ms)", v)
}

// headerTimeout bounds how long a client may take to send its request
// headers: a health check is one short request.
const headerTimeout = 10 * time.Second

// Serve serves h on ln (with TLS when cfg is not nil) until ctx ends.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, cfg *tls.Config, log *slog.Logger) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, TLSConfig: cfg,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	var err error
	if cfg != nil {
		err = srv.ServeTLS(ln, "", "")
	} else {
		err = srv.Serve(ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}
