package config

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of §17.2.1 and a few of our own.
const (
	// maxIDChars: a node id is a Miraj identifier, at most 64 characters.
	maxIDChars = 64
	// maxNameBytes: the cluster name travels in every handshake; it is a
	// label, and bounding it bounds the hello frame.
	maxNameBytes = 255
	// minElectionTimeoutMS and maxElectionTimeoutMS: §17.2.1 range.
	minElectionTimeoutMS = 500
	maxElectionTimeoutMS = 600_000
	// minFragmentTimeoutMS and maxFragmentTimeoutMS: §17.2.1 range.
	minFragmentTimeoutMS = 100
	maxFragmentTimeoutMS = 3_600_000
	// maxSyncTimeoutMS: the spec only says ≥ 1; the value seeds a 32-bit
	// system variable like MySQL's other *_timeout variables.
	maxSyncTimeoutMS = 1<<31 - 1
	// maxMB: sizes in MiB are turned into byte counts; 2^30 MiB (1 PiB)
	// keeps every product far from int64 overflow.
	maxMB = 1 << 30
	// maxListEntries: seeds and members name cluster nodes; a list longer
	// than this is a mistake, and the connection limits scale with it.
	maxListEntries = 1024
)

// Defaults of §17.2.1.
const (
	defaultJournalRetentionMB = 1024
	defaultPromotionCatchupMB = 64
	defaultSyncReplicas       = 1
	defaultSyncTimeoutMS      = 10_000
	defaultElectionTimeoutMS  = 3000
	defaultFragmentTimeoutMS  = 30_000
)

type validator struct {
	name       string
	lines      map[string]int
	baseDir    string
	clientPort int
	errs       []error
	warnings   []string
}

func (v *validator) fail(key, format string, args ...any) {
	v.errs = append(v.errs, &Error{File: v.name, Line: v.lineOf(key), Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) warn(key, format string, args ...any) {
	e := &Error{File: v.name, Line: v.lineOf(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	v.warnings = append(v.warnings, e.Error())
}

// lineOf returns the key's line, else its table's line, else 0.
func (v *validator) lineOf(key string) int {
	if l, ok := v.lines[key]; ok {
		return l
	}
	table, _, _ := strings.Cut(key, ".")
	return v.lines[table]
}

func (v *validator) validate(raw *rawFile) *Cluster {
	c := &Cluster{File: v.name}
	n := raw.Node
	if n == nil {
		n = &rawNode{}
		v.fail("node", "missing [node] table (required keys: id, listen)")
	}
	cl := raw.Cluster
	if cl == nil {
		cl = &rawCluster{}
		v.fail("cluster", "missing [cluster] table (required keys: name, tls_cert, tls_key, tls_ca)")
	}

	// [node]
	if n.ID == nil {
		if raw.Node != nil {
			v.fail("node.id", "required: the node identifier (letters, digits, _ and $, at most %d characters)", maxIDChars)
		}
	} else if err := CheckID(*n.ID); err != nil {
		v.fail("node.id", "%q: %v", *n.ID, err)
	} else {
		c.Node.ID = *n.ID
	}
	listenHost := ""
	if n.Listen == nil {
		if raw.Node != nil {
			v.fail("node.listen", "required: host:port of the inter-node listener (a port other than the client port %d)", v.clientPort)
		}
	} else if host, port, err := splitAddr(*n.Listen); err != nil {
		v.fail("node.listen", "%q: %v", *n.Listen, err)
	} else if port == v.clientPort {
		v.fail("node.listen", "%q: port %d is the client port; the inter-node port must be a different one", *n.Listen, port)
	} else {
		c.Node.Listen = *n.Listen
		listenHost = host
	}
	switch {
	case n.Advertise != nil:
		host, _, err := splitAddr(*n.Advertise)
		switch {
		case err != nil:
			v.fail("node.advertise", "%q: %v", *n.Advertise, err)
		case isWildcard(host):
			v.fail("node.advertise", "%q: a wildcard address (0.0.0.0, ::) cannot be reached by peers; give an address they can reach, which the node certificate carries in its SAN", *n.Advertise)
		default:
			c.Node.Advertise = *n.Advertise
		}
	case c.Node.Listen != "" && isWildcard(listenHost):
		v.fail("node.advertise", "required because listen %q is a wildcard address: give the host:port peers can reach (0.0.0.0 is refused)", c.Node.Listen)
	default:
		c.Node.Advertise = c.Node.Listen
	}

	// [cluster]
	if cl.Name == nil {
		if raw.Cluster != nil {
			v.fail("cluster.name", "required: the cluster name (same on every node)")
		}
	} else if err := checkName(*cl.Name); err != nil {
		v.fail("cluster.name", "%q: %v", *cl.Name, err)
	} else {
		c.Name = *cl.Name
	}
	if cl.Seeds != nil {
		c.Seeds = v.seeds(*cl.Seeds)
	}
	c.TLSCert = v.path("cluster.tls_cert", cl.TLSCert, true, raw.Cluster != nil, "this node's certificate (PEM)")
	c.TLSKey = v.path("cluster.tls_key", cl.TLSKey, true, raw.Cluster != nil, "this node's private key (PEM)")
	c.TLSCA = v.path("cluster.tls_ca", cl.TLSCA, true, raw.Cluster != nil, "the cluster authority's certificate (PEM)")
	c.TLSCRL = v.path("cluster.tls_crl", cl.TLSCRL, false, false, "")
	if cl.Members == nil {
		if raw.Cluster != nil {
			v.warn("cluster.members", "not set: any node holding a certificate from the cluster authority is admitted")
		}
	} else {
		c.Members = v.members(*cl.Members, c.Node.ID)
	}

	defAck := string(AckWritten)
	if cl.Mode != nil && strings.EqualFold(*cl.Mode, string(ModeRaft)) {
		// Raft mode (§17.9.4): a MAJORITY write is in the log of a
		// majority, on disk: secondaries fsync before acknowledging.
		defAck = string(AckDurable)
	}
	c.Ack = Ack(v.enum("cluster.ack", cl.Ack, defAck, "written", "durable"))
	c.JournalRetentionMB = v.intRange("cluster.journal_retention_mb", cl.JournalRetentionMB, defaultJournalRetentionMB, 0, maxMB)
	c.MaxPromotionLagMB = v.intRange("cluster.max_promotion_lag_mb", cl.MaxPromotionLagMB, 0, 0, maxMB)
	c.PromotionCatchupMB = v.intRange("cluster.promotion_catchup_mb", cl.PromotionCatchupMB, defaultPromotionCatchupMB, 0, maxMB)
	c.Mode = Mode(v.enum("cluster.mode", cl.Mode, string(ModeManual), "manual", "raft"))
	defCommit, defAction := string(SyncOff), string(TimeoutFallback)
	if c.Mode == ModeRaft {
		defCommit, defAction = string(SyncMajority), string(TimeoutError)
	}
	c.SyncCommit = SyncCommit(v.enum("cluster.sync_commit", cl.SyncCommit, defCommit, "off", "received", "applied", "majority"))
	c.SyncCommitSet = cl.SyncCommit != nil
	c.SyncReplicas = v.intRange("cluster.sync_replicas", cl.SyncReplicas, defaultSyncReplicas, 1, maxListEntries)
	c.SyncTimeout = ms(v.intRange("cluster.sync_timeout_ms", cl.SyncTimeoutMS, defaultSyncTimeoutMS, 1, maxSyncTimeoutMS))
	c.SyncTimeoutAction = TimeoutAction(v.enum("cluster.sync_timeout_action", cl.SyncTimeoutAction, defAction, "fallback", "error", "wait"))
	c.SyncTimeoutActionSet = cl.SyncTimeoutAction != nil
	c.ElectionTimeout = ms(v.intRange("cluster.election_timeout_ms", cl.ElectionTimeoutMS, defaultElectionTimeoutMS, minElectionTimeoutMS, maxElectionTimeoutMS))
	c.FragmentTimeout = ms(v.intRange("cluster.fragment_timeout_ms", cl.FragmentTimeoutMS, defaultFragmentTimeoutMS, minFragmentTimeoutMS, maxFragmentTimeoutMS))
	if cl.TestHooks != nil {
		c.TestHooks = *cl.TestHooks
		if c.TestHooks {
			v.warn("cluster.test_hooks", "test hooks are enabled: never in production")
		}
	}

	c.StreamTransactionMB = v.intRange("cluster.stream_transaction_mb", cl.StreamTransactionMB, DefaultStreamTransactionMB, 0, MaxStreamTransactionMB)
	c.StreamTransactionMBSet = cl.StreamTransactionMB != nil

	if n.Upstream != nil {
		v.upstream(c, *n.Upstream)
	}
	c.Node.Kind = Kind(v.enum("node.kind", n.Kind, string(KindFull), string(KindFull), string(KindLogStore)))
	if c.Mode == ModeRaft {
		v.raft(c)
	}
	return c
}

// upstream checks node.upstream: one of the seeds (it is dialled and
// verified as they are), not this node.
func (v *validator) upstream(c *Cluster, up string) {
	if _, _, err := splitAddr(up); err != nil {
		v.fail("node.upstream", "%q: %v", up, err)
		return
	}
	if c.Node.Advertise != "" && sameAddr(up, c.Node.Advertise) {
		v.fail("node.upstream", "%q is this node's own address: give the seed of the secondary to stream from", up)
		return
	}
	for _, s := range c.Seeds {
		if sameAddr(s, up) {
			c.Node.Upstream = s
			return
		}
	}
	v.fail("node.upstream", "%q is not one of cluster.seeds: the upstream is a member this node reaches by its seed address", up)
}

// raft checks the raft-mode rules on seeds (§17.2.1, §17.9.1): the voting
// members are the seeds, which must contain this node's advertised address
// and have at least two entries.
func (v *validator) raft(c *Cluster) {
	if c.Node.Advertise == "" {
		return // already reported
	}
	found := false
	for _, s := range c.Seeds {
		if sameAddr(s, c.Node.Advertise) {
			found = true
		}
	}
	switch {
	case !found:
		v.fail("cluster.seeds", "mode = \"raft\": seeds are the voting members and must contain this node's advertised address %q", c.Node.Advertise)
	case len(c.Seeds) < 2:
		v.fail("cluster.seeds", "mode = \"raft\": seeds must list at least two members (this node included), got %d", len(c.Seeds))
	case len(c.Seeds) == 2:
		v.warn("cluster.seeds", "mode = \"raft\" with two members: accepted, but no failure is tolerated")
	}
	if c.Ack == AckWritten {
		v.warn("cluster.ack", "mode = \"raft\" with ack = \"written\": a MAJORITY write acknowledged before the secondaries' fsync can be lost if a majority of the members lose power at once")
	}
	if c.Node.Upstream != "" {
		v.fail("node.upstream", "mode = \"raft\": a member streams from the leader; upstream (a cascade) is not available in raft mode")
	}
}

func (v *validator) seeds(list []string) []string {
	if len(list) > maxListEntries {
		v.fail("cluster.seeds", "%d entries: at most %d allowed", len(list), maxListEntries)
		return nil
	}
	var out []string
	for _, s := range list {
		host, _, err := splitAddr(s)
		if err != nil {
			v.fail("cluster.seeds", "%q: %v", s, err)
			continue
		}
		if isWildcard(host) {
			v.fail("cluster.seeds", "%q: a wildcard address cannot be dialled; give the peer's advertised host:port", s)
			continue
		}
		dup := false
		for _, o := range out {
			if sameAddr(o, s) {
				dup = true
			}
		}
		if dup {
			v.warn("cluster.seeds", "%q listed twice: duplicate ignored", s)
			continue
		}
		out = append(out, s)
	}
	return out
}

func (v *validator) members(list []string, self string) []string {
	if len(list) > maxListEntries {
		v.fail("cluster.members", "%d entries: at most %d allowed", len(list), maxListEntries)
		return nil
	}
	out := make([]string, 0, len(list))
	hasSelf := false
	for _, m := range list {
		if err := CheckID(m); err != nil {
			v.fail("cluster.members", "%q: %v", m, err)
			continue
		}
		dup := false
		for _, o := range out {
			if strings.EqualFold(o, m) {
				dup = true
			}
		}
		if dup {
			v.warn("cluster.members", "%q listed twice: duplicate ignored", m)
			continue
		}
		if strings.EqualFold(m, self) {
			hasSelf = true
		}
		out = append(out, m)
	}
	if self != "" && !hasSelf {
		v.fail("cluster.members", "must contain this node's id %q (members are the admitted nodes, this one included)", self)
	}
	return out
}

func (v *validator) path(key string, p *string, required, tablePresent bool, what string) string {
	if p == nil {
		if required && tablePresent {
			v.fail(key, "required: %s, path relative to the folder of cluster.toml", what)
		}
		return ""
	}
	if strings.TrimSpace(*p) == "" {
		v.fail(key, "empty path: name a file (relative to the folder of cluster.toml)")
		return ""
	}
	if strings.ContainsRune(*p, 0) {
		v.fail(key, "path contains a NUL byte")
		return ""
	}
	if filepath.IsAbs(*p) {
		return filepath.Clean(*p)
	}
	return filepath.Join(v.baseDir, *p)
}

func (v *validator) enum(key string, s *string, def string, allowed ...string) string {
	if s == nil {
		return def
	}
	for _, a := range allowed {
		if strings.EqualFold(*s, a) {
			return a
		}
	}
	v.fail(key, "%q: allowed values are %s", *s, quoteList(allowed))
	return def
}

func (v *validator) intRange(key string, n *int64, def, lo, hi int64) int64 {
	if n == nil {
		return def
	}
	if *n < lo || *n > hi {
		v.fail(key, "%d is out of range: allowed %d to %d", *n, lo, hi)
		return def
	}
	return *n
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// CheckID validates a node identifier: letters, digits, _ and $, at most 64
// characters (§17.2.1). Identifiers compare case-insensitively.
func CheckID(id string) error {
	if id == "" {
		return fmt.Errorf("empty identifier: use letters, digits, _ and $")
	}
	if !utf8.ValidString(id) {
		return fmt.Errorf("not valid UTF-8")
	}
	if n := utf8.RuneCountInString(id); n > maxIDChars {
		return fmt.Errorf("%d characters: at most %d allowed", n, maxIDChars)
	}
	for _, r := range id {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '$') {
			return fmt.Errorf("character %q not allowed: use letters, digits, _ and $", r)
		}
	}
	return nil
}

func checkName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("empty cluster name")
	}
	if len(name) > maxNameBytes {
		return fmt.Errorf("%d bytes: at most %d allowed", len(name), maxNameBytes)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("not valid UTF-8")
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("control character %q not allowed", r)
		}
	}
	return nil
}

// splitAddr parses host:port with a numeric port in 1–65535.
func splitAddr(addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("not a host:port address (%v)", errText(err))
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("port %q: allowed 1 to 65535", portStr)
	}
	if strings.ContainsAny(host, " \t/") {
		return "", 0, fmt.Errorf("host %q is not a host name or IP address", host)
	}
	return host, port, nil
}

func errText(err error) string {
	if ae, ok := err.(*net.AddrError); ok {
		return ae.Err
	}
	return err.Error()
}

func isWildcard(host string) bool {
	if host == "" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsUnspecified()
}

// sameAddr compares host:port addresses: hosts case-insensitively (IP
// addresses in canonical form), ports numerically.
func sameAddr(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return strings.EqualFold(a, b)
	}
	na, _ := strconv.Atoi(pa)
	nb, _ := strconv.Atoi(pb)
	if na != nb {
		return false
	}
	ia, e1 := netip.ParseAddr(ha)
	ib, e2 := netip.ParseAddr(hb)
	if e1 == nil && e2 == nil {
		return ia.Unmap() == ib.Unmap()
	}
	return strings.EqualFold(ha, hb)
}
