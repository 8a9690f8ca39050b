package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FileName is the name Miraj looks for next to the executable when no
// --cluster-config is given (§17.2.1).
const FileName = "cluster.toml"

// DefaultClientPort is the MySQL-protocol port of miraj-server; the
// inter-node port must differ from it.
const DefaultClientPort = 7007

// maxFileBytes bounds what Load reads: a real cluster.toml is a few hundred
// bytes, and a huge file is a mistake (wrong path) we should not slurp.
const maxFileBytes = 1 << 20

// ErrInvalid marks every validation error of a cluster.toml; test it with
// errors.Is. The concrete errors are *Error values, possibly joined.
var ErrInvalid = errors.New("config: invalid cluster configuration")

// Error is one problem found in a cluster.toml.
type Error struct {
	File string // the file as named by the caller
	Line int    // 1-based; 0 when the key is absent from the file
	Key  string // "table.key", e.g. "cluster.election_timeout_ms"; may be empty
	Msg  string // what is wrong and what is allowed
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		table, key, ok := strings.Cut(e.Key, ".")
		if ok {
			fmt.Fprintf(&b, "[%s] %s: ", table, key)
		} else {
			fmt.Fprintf(&b, "%s: ", e.Key)
		}
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap lets errors.Is(err, ErrInvalid) hold.
func (e *Error) Unwrap() error { return ErrInvalid }

// Ack is what a secondary must have done before acknowledging a batch.
type Ack string

// Ack values (cluster.ack).
const (
	AckWritten Ack = "written"
	AckDurable Ack = "durable"
)

// SyncCommit is the initial @@GLOBAL.cluster_sync_commit (§17.8).
type SyncCommit string

// SyncCommit values (cluster.sync_commit).
const (
	SyncOff      SyncCommit = "off"
	SyncReceived SyncCommit = "received"
	SyncApplied  SyncCommit = "applied"
	SyncMajority SyncCommit = "majority"
)

// TimeoutAction is the initial @@GLOBAL.cluster_sync_timeout_action.
type TimeoutAction string

// TimeoutAction values (cluster.sync_timeout_action).
const (
	TimeoutFallback TimeoutAction = "fallback"
	TimeoutError    TimeoutAction = "error"
	TimeoutWait     TimeoutAction = "wait"
)

// Mode says how the primary is chosen.
type Mode string

// Mode values (cluster.mode).
const (
	ModeManual Mode = "manual"
	ModeRaft   Mode = "raft"
)

// Node is the [node] table.
type Node struct {
	ID        string // valid identifier, at most 64 characters
	Listen    string // host:port of the inter-node listener
	Advertise string // host:port peers use to reach us; never a wildcard
	// Upstream: the seed this node streams from as a secondary (a
	// cascade), instead of the primary; "" for the primary.
	Upstream string
	// Kind: KindFull (tables and journals) or KindLogStore (journals
	// only: a log-store node).
	Kind Kind
}

// Kind is node.kind.
type Kind string

const (
	KindFull     Kind = "full"
	KindLogStore Kind = "log-store"
)

// Cluster is a validated cluster.toml. Paths are absolute or relative to the
// working directory (they were resolved against the file's folder).
type Cluster struct {
	File string // the file it was read from, as named by the caller

	Node Node

	Name string
	// Seeds are the peer addresses, deduplicated, in file order. They may
	// include this node's own advertised address (required in raft mode);
	// Peers() leaves it out.
	Seeds   []string
	TLSCert string
	TLSKey  string
	TLSCA   string
	TLSCRL  string // "" when absent
	// Members is nil when the key is absent (any node of the authority is
	// admitted). When set it contains Node.ID.
	Members []string

	Ack                  Ack
	JournalRetentionMB   int64
	MaxPromotionLagMB    int64 // 0: unlimited
	PromotionCatchupMB   int64 // 0: no retention
	SyncCommit           SyncCommit
	SyncReplicas         int64
	SyncTimeout          time.Duration
	SyncTimeoutAction    TimeoutAction
	Mode                 Mode
	ElectionTimeout      time.Duration
	FragmentTimeout      time.Duration
	TestHooks            bool
	SyncCommitSet        bool // sync_commit was given explicitly
	SyncTimeoutActionSet bool // sync_timeout_action was given explicitly
	// StreamTransactionMB is the initial @@GLOBAL.stream_transaction_mb:
	// MiB of journal frames past which a transaction is written to the
	// journal while it runs (0: never). See docs/large-transactions.md.
	StreamTransactionMB    int64
	StreamTransactionMBSet bool // stream_transaction_mb was given explicitly
}

// Bounds of stream_transaction_mb, the same in cluster.toml, on the
// command line and for the system variable.
const (
	// DefaultStreamTransactionMB is storage.DefaultStreamBytes in MiB.
	DefaultStreamTransactionMB = 16
	// MaxStreamTransactionMB: 1 TiB. A transaction's ops are held in
	// memory until its commit, so a threshold past this never applies;
	// the bound keeps the byte count far from overflow.
	MaxStreamTransactionMB = 1 << 20
)

// Peers returns the seeds other than this node's advertised address.
func (c *Cluster) Peers() []string {
	out := make([]string, 0, len(c.Seeds))
	for _, s := range c.Seeds {
		if !sameAddr(s, c.Node.Advertise) {
			out = append(out, s)
		}
	}
	return out
}

// IsMember reports whether id is admitted: always true without a members
// list; otherwise a case-insensitive match (§17.2.3).
func (c *Cluster) IsMember(id string) bool {
	if c.Members == nil {
		return true
	}
	for _, m := range c.Members {
		if strings.EqualFold(m, id) {
			return true
		}
	}
	return false
}

// KnownMembers is the number of nodes the connection limits are sized for:
// the members list when set, otherwise the distinct seeds plus this node.
func (c *Cluster) KnownMembers() int {
	if c.Members != nil {
		return len(c.Members)
	}
	n := len(c.Peers())
	return n + 1
}

// Load reads and validates the cluster.toml at path. clientPort is the
// server's MySQL-protocol port (DefaultClientPort unless --port says
// otherwise). Beyond Parse, Load checks that the TLS files can be read and
// that the certificate matches the key; a certificate that names another
// node, or lacks the advertised address in its SAN, is a warning (peers will
// refuse the node, §17.2.3). On error the server must refuse to start.
func Load(path string, clientPort int) (*Cluster, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: open %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	n := len(data)
	if err != nil {
		return nil, nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	if n > maxFileBytes {
		return nil, nil, &Error{File: path, Msg: fmt.Sprintf("file larger than %d bytes", maxFileBytes)}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %s: %w", path, err)
	}
	c, warnings, err := Parse(path, data[:n], filepath.Dir(abs), clientPort)
	if err != nil {
		return nil, warnings, err
	}
	more, err := checkFiles(c, data[:n])
	warnings = append(warnings, more...)
	if err != nil {
		return nil, warnings, err
	}
	return c, warnings, nil
}

// DefaultPath returns cluster.toml next to the running executable, and
// whether that file exists. Without it, the server is not a cluster node.
func DefaultPath() (string, bool) {
	exe, err := os.Executable()
	if err != nil {
		return "", false
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	p := filepath.Join(filepath.Dir(exe), FileName)
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return p, false
	}
	return p, true
}
