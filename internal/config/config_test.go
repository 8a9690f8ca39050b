package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// base is a valid cluster.toml; cases edit it with replace.
const base = `[node]
id = "n1"
listen = "0.0.0.0:7107"
advertise = "10.0.0.1:7107"

[cluster]
name = "gestium-prod"
seeds = ["10.0.0.1:7107", "10.0.0.2:7107"]
tls_cert = "node.pem"
tls_key = "node-key.pem"
tls_ca = "cluster-ca.pem"
members = ["n1", "n2", "n3"]
`

func parse(t *testing.T, doc string) (*Cluster, []string, error) {
	t.Helper()
	return Parse("cluster.toml", []byte(doc), "/etc/miraj", DefaultClientPort)
}

func TestParseValidDefaults(t *testing.T) {
	c, warnings, err := parse(t, base)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	want := Cluster{
		File:               "cluster.toml",
		Node:               Node{ID: "n1", Listen: "0.0.0.0:7107", Advertise: "10.0.0.1:7107", Kind: KindFull},
		Name:               "gestium-prod",
		Seeds:              []string{"10.0.0.1:7107", "10.0.0.2:7107"},
		TLSCert:            filepath.Join("/etc/miraj", "node.pem"),
		TLSKey:             filepath.Join("/etc/miraj", "node-key.pem"),
		TLSCA:              filepath.Join("/etc/miraj", "cluster-ca.pem"),
		Members:            []string{"n1", "n2", "n3"},
		Ack:                AckWritten,
		JournalRetentionMB: 1024,
		MaxPromotionLagMB:  0,
		PromotionCatchupMB: 64,
		SyncCommit:         SyncOff,
		SyncReplicas:       1,
		SyncTimeout:        10 * time.Second,
		SyncTimeoutAction:  TimeoutFallback,
		Mode:               ModeManual,
		ElectionTimeout:    3 * time.Second,
		FragmentTimeout:    30 * time.Second,

		StreamTransactionMB: 16,
	}
	if got := *c; !equalCluster(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if p := c.Peers(); len(p) != 1 || p[0] != "10.0.0.2:7107" {
		t.Fatalf("Peers = %q", p)
	}
	if !c.IsMember("N2") || c.IsMember("n4") {
		t.Fatal("IsMember must be case-insensitive and exact")
	}
	if c.KnownMembers() != 3 {
		t.Fatalf("KnownMembers = %d", c.KnownMembers())
	}
}

func equalCluster(a, b Cluster) bool {
	return reflect.DeepEqual(a, b)
}

func TestParseAllKeys(t *testing.T) {
	doc := base + `tls_crl = "/abs/cluster-crl.pem"
ack = "durable"
journal_retention_mb = 0
max_promotion_lag_mb = 10
promotion_catchup_mb = 0
sync_commit = "received"
sync_replicas = 2
sync_timeout_ms = 1
sync_timeout_action = "wait"
mode = "manual"
election_timeout_ms = 600000
fragment_timeout_ms = 100
test_hooks = true
stream_transaction_mb = 0
`
	c, warnings, err := parse(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "test hooks are enabled") {
		t.Fatalf("warnings: %q", warnings)
	}
	if c.TLSCRL != "/abs/cluster-crl.pem" || c.Ack != AckDurable || c.JournalRetentionMB != 0 ||
		c.MaxPromotionLagMB != 10 || c.PromotionCatchupMB != 0 || c.SyncCommit != SyncReceived ||
		c.SyncReplicas != 2 || c.SyncTimeout != time.Millisecond || c.SyncTimeoutAction != TimeoutWait ||
		c.ElectionTimeout != 10*time.Minute || c.FragmentTimeout != 100*time.Millisecond || !c.TestHooks ||
		!c.SyncCommitSet || !c.SyncTimeoutActionSet || c.StreamTransactionMB != 0 || !c.StreamTransactionMBSet {
		t.Fatalf("got %+v", c)
	}
}

func TestParseRaftDefaults(t *testing.T) {
	c, _, err := parse(t, strings.Replace(base, `seeds = ["10.0.0.1:7107", "10.0.0.2:7107"]`,
		`seeds = ["10.0.0.1:7107", "10.0.0.2:7107", "10.0.0.3:7107"]`, 1)+"mode = \"raft\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.SyncCommit != SyncMajority || c.SyncTimeoutAction != TimeoutError || c.SyncCommitSet {
		t.Fatalf("raft defaults: %+v", c)
	}
}

// TestParseRules has one case per validation rule; the error must name the
// file, the line, the key and what is allowed.
func TestParseRules(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want []string // substrings of the error
	}{
		{"syntax error", "[node\n", []string{"cluster.toml:1:"}},
		{"wrong type", strings.Replace(base, `listen = "0.0.0.0:7107"`, `listen = 7107`, 1),
			[]string{"cluster.toml:3:", "[node] listen", "expected a quoted string"}},
		{"missing node table", base[strings.Index(base, "[cluster]"):], []string{"missing [node] table"}},
		{"missing cluster table", base[:strings.Index(base, "[cluster]")], []string{"missing [cluster] table"}},
		{"id required", strings.Replace(base, `id = "n1"`, ``, 1), []string{"cluster.toml:1:", "[node] id: required"}},
		{"id syntax", strings.Replace(base, `id = "n1"`, `id = "n-1"`, 1),
			[]string{"cluster.toml:2:", "[node] id", `character '-' not allowed: use letters, digits, _ and $`}},
		{"id too long", strings.Replace(base, `id = "n1"`, `id = "`+strings.Repeat("a", 65)+`"`, 1),
			[]string{"cluster.toml:2:", "65 characters: at most 64 allowed"}},
		{"listen required", strings.Replace(base, `listen = "0.0.0.0:7107"`, ``, 1), []string{"[node] listen: required"}},
		{"listen syntax", strings.Replace(base, `listen = "0.0.0.0:7107"`, `listen = "7107"`, 1),
			[]string{"cluster.toml:3:", "not a host:port address"}},
		{"listen port range", strings.Replace(base, `listen = "0.0.0.0:7107"`, `listen = "0.0.0.0:70000"`, 1),
			[]string{"cluster.toml:3:", `port "70000": allowed 1 to 65535`}},
		{"listen is client port", strings.Replace(base, `listen = "0.0.0.0:7107"`, `listen = "0.0.0.0:7007"`, 1),
			[]string{"cluster.toml:3:", "port 7007 is the client port"}},
		{"advertise wildcard", strings.Replace(base, `advertise = "10.0.0.1:7107"`, `advertise = "0.0.0.0:7107"`, 1),
			[]string{"cluster.toml:4:", "[node] advertise", "wildcard"}},
		{"advertise needed for wildcard listen", strings.Replace(base, `advertise = "10.0.0.1:7107"`, ``, 1),
			[]string{"[node] advertise: required because listen", "0.0.0.0 is refused"}},
		{"upstream not a seed", strings.Replace(base, `advertise = "10.0.0.1:7107"`, `advertise = "10.0.0.1:7107"
upstream = "10.0.0.9:7107"`, 1), []string{"cluster.toml:5:", "[node] upstream", "not one of cluster.seeds"}},
		{"upstream is self", strings.Replace(base, `advertise = "10.0.0.1:7107"`, `advertise = "10.0.0.1:7107"
upstream = "10.0.0.1:7107"`, 1), []string{"cluster.toml:5:", "[node] upstream", "this node's own address"}},
		{"kind unknown", strings.Replace(base, `advertise = "10.0.0.1:7107"`, `advertise = "10.0.0.1:7107"
kind = "witness"`, 1), []string{"cluster.toml:5:", "[node] kind", "witness", "log-store"}},
		{"name required", strings.Replace(base, `name = "gestium-prod"`, ``, 1), []string{"cluster.toml:6:", "[cluster] name: required"}},
		{"name empty", strings.Replace(base, `name = "gestium-prod"`, `name = ""`, 1), []string{"cluster.toml:7:", "empty cluster name"}},
		{"seed syntax", strings.Replace(base, `"10.0.0.2:7107"]`, `"10.0.0.2"]`, 1),
			[]string{"cluster.toml:8:", "[cluster] seeds", `"10.0.0.2": not a host:port`}},
		{"tls_cert required", strings.Replace(base, `tls_cert = "node.pem"`, ``, 1), []string{"[cluster] tls_cert: required"}},
		{"tls_key required", strings.Replace(base, `tls_key = "node-key.pem"`, ``, 1), []string{"[cluster] tls_key: required"}},
		{"tls_ca required", strings.Replace(base, `tls_ca = "cluster-ca.pem"`, ``, 1), []string{"[cluster] tls_ca: required"}},
		{"tls path empty", strings.Replace(base, `tls_ca = "cluster-ca.pem"`, `tls_ca = ""`, 1),
			[]string{"cluster.toml:11:", "[cluster] tls_ca: empty path"}},
		{"members without self", strings.Replace(base, `members = ["n1", "n2", "n3"]`, `members = ["n2", "n3"]`, 1),
			[]string{"cluster.toml:12:", "[cluster] members", `must contain this node's id "n1"`}},
		{"members syntax", strings.Replace(base, `members = ["n1", "n2", "n3"]`, `members = ["n1", "n 2"]`, 1),
			[]string{"cluster.toml:12:", `"n 2": character ' ' not allowed`}},
		{"ack enum", base + `ack = "fsync"`, []string{"cluster.toml:13:", "[cluster] ack", `allowed values are "written" or "durable"`}},
		{"sync_commit enum", base + `sync_commit = "on"`,
			[]string{"cluster.toml:13:", `allowed values are "off", "received", "applied" or "majority"`}},
		{"sync_timeout_action enum", base + `sync_timeout_action = "retry"`,
			[]string{"cluster.toml:13:", `allowed values are "fallback", "error" or "wait"`}},
		{"mode enum", base + `mode = "auto"`, []string{"cluster.toml:13:", `allowed values are "manual" or "raft"`}},
		{"journal_retention_mb negative", base + `journal_retention_mb = -1`,
			[]string{"cluster.toml:13:", "[cluster] journal_retention_mb: -1 is out of range: allowed 0 to"}},
		{"max_promotion_lag_mb negative", base + `max_promotion_lag_mb = -5`, []string{"max_promotion_lag_mb: -5 is out of range"}},
		{"promotion_catchup_mb negative", base + `promotion_catchup_mb = -5`, []string{"promotion_catchup_mb: -5 is out of range"}},
		{"sync_replicas zero", base + `sync_replicas = 0`, []string{"sync_replicas: 0 is out of range: allowed 1 to"}},
		{"sync_timeout_ms zero", base + `sync_timeout_ms = 0`, []string{"sync_timeout_ms: 0 is out of range: allowed 1 to"}},
		{"election_timeout_ms low", base + `election_timeout_ms = 499`,
			[]string{"cluster.toml:13:", "election_timeout_ms: 499 is out of range: allowed 500 to 600000"}},
		{"election_timeout_ms high", base + `election_timeout_ms = 600001`, []string{"allowed 500 to 600000"}},
		{"fragment_timeout_ms low", base + `fragment_timeout_ms = 99`, []string{"fragment_timeout_ms: 99 is out of range: allowed 100 to 3600000"}},
		{"fragment_timeout_ms high", base + `fragment_timeout_ms = 3600001`, []string{"allowed 100 to 3600000"}},
		{"test_hooks type", base + `test_hooks = "yes"`, []string{"cluster.toml:13:", "expected true or false"}},
		{"stream_transaction_mb negative", base + `stream_transaction_mb = -1`,
			[]string{"cluster.toml:13:", "[cluster] stream_transaction_mb: -1 is out of range: allowed 0 to 1048576"}},
		{"stream_transaction_mb too large", base + `stream_transaction_mb = 1048577`, []string{"cluster.toml:13:", "allowed 0 to 1048576"}},
		{"stream_transaction_mb fraction", base + `stream_transaction_mb = 0.5`,
			[]string{"cluster.toml:13:", "[cluster] stream_transaction_mb", "expected an integer, got a TOML float"}},
		{"stream_transaction_mb text", base + `stream_transaction_mb = "16"`,
			[]string{"cluster.toml:13:", "[cluster] stream_transaction_mb", "expected an integer, got a TOML string"}},
		{"raft without self in seeds", strings.Replace(base, `"10.0.0.1:7107", `, ``, 1) + `mode = "raft"`,
			[]string{"cluster.toml:8:", "[cluster] seeds", `must contain this node's advertised address "10.0.0.1:7107"`}},
		{"raft with one seed", strings.Replace(base, `, "10.0.0.2:7107"`, ``, 1) + `mode = "raft"`,
			[]string{"[cluster] seeds", "at least two members"}},
		{"raft without seeds", strings.Replace(base, `seeds = ["10.0.0.1:7107", "10.0.0.2:7107"]`, ``, 1) + `mode = "raft"`,
			[]string{"cluster.toml:6:", "must contain this node's advertised address"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parse(t, tc.doc)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseWarnings(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want string
	}{
		{"unknown key in node", strings.Replace(base, `id = "n1"`, "id = \"n1\"\nport = 3", 1),
			"cluster.toml:3: unknown key node.port ignored (allowed in [node]: id, listen, advertise, upstream, kind)"},
		{"unknown key in cluster", base + "tls_crl_path = \"x\"\n", "cluster.toml:13: unknown key cluster.tls_crl_path ignored"},
		{"unknown table", base + "[extra]\nx = 1\n", "unknown key extra ignored (allowed tables: [node] and [cluster])"},
		{"members absent", strings.Replace(base, `members = ["n1", "n2", "n3"]`, ``, 1),
			"[cluster] members: not set: any node holding a certificate from the cluster authority is admitted"},
		{"duplicate member", strings.Replace(base, `"n3"]`, `"N1"]`, 1), `"N1" listed twice`},
		{"duplicate seed", strings.Replace(base, `"10.0.0.2:7107"]`, `"10.0.0.1:7107"]`, 1), `"10.0.0.1:7107" listed twice`},
		{"raft with two members", base + `mode = "raft"`, "two members: accepted, but no failure is tolerated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, warnings, err := parse(t, tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			joined := strings.Join(warnings, "\n")
			if !strings.Contains(joined, tc.want) {
				t.Fatalf("warnings %q\ndo not contain %q", joined, tc.want)
			}
		})
	}
}

func TestParseAdvertiseDefaultsToListen(t *testing.T) {
	doc := strings.Replace(strings.Replace(base, `advertise = "10.0.0.1:7107"`, ``, 1),
		`listen = "0.0.0.0:7107"`, `listen = "10.0.0.1:7107"`, 1)
	c, _, err := parse(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	if c.Node.Advertise != "10.0.0.1:7107" {
		t.Fatalf("advertise = %q", c.Node.Advertise)
	}
}

func TestParseOtherClientPort(t *testing.T) {
	doc := strings.Replace(base, `listen = "0.0.0.0:7107"`, `listen = "0.0.0.0:7007"`, 1)
	if _, _, err := Parse("cluster.toml", []byte(doc), "/", 3306); err != nil {
		t.Fatalf("port 7007 with client port 3306: %v", err)
	}
}

func TestCheckID(t *testing.T) {
	for _, ok := range []string{"n1", "N_1", "a$b", "é1", strings.Repeat("x", 64)} {
		if err := CheckID(ok); err != nil {
			t.Errorf("CheckID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "n-1", "n 1", "n.1", "n/1", strings.Repeat("x", 65), "\xff"} {
		if err := CheckID(bad); err == nil {
			t.Errorf("CheckID(%q) accepted", bad)
		}
	}
}
