package config

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// rawFile mirrors cluster.toml. Pointers tell "absent" from "zero".
type rawFile struct {
	Node    *rawNode    `toml:"node"`
	Cluster *rawCluster `toml:"cluster"`
}

type rawNode struct {
	ID        *string `toml:"id"`
	Listen    *string `toml:"listen"`
	Advertise *string `toml:"advertise"`
	Upstream  *string `toml:"upstream"`
	Kind      *string `toml:"kind"`
}

type rawCluster struct {
	Name               *string   `toml:"name"`
	Seeds              *[]string `toml:"seeds"`
	TLSCert            *string   `toml:"tls_cert"`
	TLSKey             *string   `toml:"tls_key"`
	TLSCA              *string   `toml:"tls_ca"`
	TLSCRL             *string   `toml:"tls_crl"`
	Members            *[]string `toml:"members"`
	Ack                *string   `toml:"ack"`
	JournalRetentionMB *int64    `toml:"journal_retention_mb"`
	MaxPromotionLagMB  *int64    `toml:"max_promotion_lag_mb"`
	PromotionCatchupMB *int64    `toml:"promotion_catchup_mb"`
	SyncCommit         *string   `toml:"sync_commit"`
	SyncReplicas       *int64    `toml:"sync_replicas"`
	SyncTimeoutMS      *int64    `toml:"sync_timeout_ms"`
	SyncTimeoutAction  *string   `toml:"sync_timeout_action"`
	Mode               *string   `toml:"mode"`
	ElectionTimeoutMS  *int64    `toml:"election_timeout_ms"`
	FragmentTimeoutMS  *int64    `toml:"fragment_timeout_ms"`
	TestHooks          *bool     `toml:"test_hooks"`
	// StreamTransactionMB is an integer: a fraction of a MiB is
	// refused as a wrong type (the variable takes integers too).
	StreamTransactionMB *int64 `toml:"stream_transaction_mb"`
}

// Parse validates the content of a cluster.toml. name is used in messages
// (normally the path), baseDir is the folder relative TLS paths are resolved
// against, clientPort the server's client port. Parse touches no file: see
// Load for the checks of the TLS files.
func Parse(name string, data []byte, baseDir string, clientPort int) (*Cluster, []string, error) {
	var raw rawFile
	var warnings []string
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	err := dec.Decode(&raw)
	var strict *toml.StrictMissingError
	switch {
	case errors.As(err, &strict):
		for i := range strict.Errors {
			de := &strict.Errors[i]
			line, _ := de.Position()
			warnings = append(warnings, fmt.Sprintf("config: %s:%d: unknown key %s ignored (%s)",
				name, line, strings.Join(de.Key(), "."), allowedKeys(de.Key())))
		}
		// Strict mode stops at the unknown keys: decode again, leniently.
		raw = rawFile{}
		if err := toml.Unmarshal(data, &raw); err != nil {
			return nil, warnings, decodeError(name, err)
		}
	case err != nil:
		return nil, warnings, decodeError(name, err)
	}
	v := validator{name: name, lines: keyLines(data), baseDir: baseDir, clientPort: clientPort}
	c := v.validate(&raw)
	warnings = append(warnings, v.warnings...)
	if len(v.errs) > 0 {
		return nil, warnings, errors.Join(v.errs...)
	}
	return c, warnings, nil
}

// nodeKeys and clusterKeys are the keys of §17.2.1, listed in warnings.
var (
	nodeKeys    = []string{"id", "listen", "advertise", "upstream", "kind"}
	clusterKeys = []string{"name", "seeds", "tls_cert", "tls_key", "tls_ca", "tls_crl",
		"members", "ack", "journal_retention_mb", "max_promotion_lag_mb",
		"promotion_catchup_mb", "sync_commit", "sync_replicas", "sync_timeout_ms",
		"sync_timeout_action", "mode", "election_timeout_ms", "fragment_timeout_ms",
		"test_hooks", "stream_transaction_mb"}
)

func allowedKeys(key toml.Key) string {
	if len(key) > 1 {
		switch key[0] {
		case "node":
			return "allowed in [node]: " + strings.Join(nodeKeys, ", ")
		case "cluster":
			return "allowed in [cluster]: " + strings.Join(clusterKeys, ", ")
		}
	}
	return "allowed tables: [node] and [cluster]"
}

// decodeError turns a go-toml error (syntax, or a value of the wrong type)
// into an *Error with the line the library reports.
func decodeError(name string, err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		msg := de.Error()
		if m := tomlKind.FindStringSubmatch(msg); m != nil {
			// Say it in the file's terms, not the Go struct's.
			msg = fmt.Sprintf("wrong type: %s, got a TOML %s", typeHint(de.Key()), m[1])
		}
		return &Error{File: name, Line: line, Key: strings.Join(de.Key(), "."), Msg: msg}
	}
	return &Error{File: name, Msg: err.Error()}
}

var tomlKind = regexp.MustCompile(`cannot decode TOML (\w+)`)

// typeHint says what type a key takes, for decode errors.
func typeHint(key toml.Key) string {
	if len(key) == 0 {
		return "[node] and [cluster] must be tables"
	}
	switch key[len(key)-1] {
	case "seeds", "members":
		return "expected an array of strings"
	case "journal_retention_mb", "max_promotion_lag_mb", "promotion_catchup_mb", "stream_transaction_mb",
		"sync_replicas", "sync_timeout_ms", "election_timeout_ms", "fragment_timeout_ms":
		return "expected an integer"
	case "test_hooks":
		return "expected true or false"
	case "node", "cluster":
		return "expected a table"
	default:
		return "expected a quoted string"
	}
}

// keyLines maps "table.key" (and "table" for headers) to the 1-based line
// where it first appears, so semantic errors can point at the file. The
// document has already been decoded successfully, so a parse error here only
// shortens the map.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	table := ""
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = joinKey(e.Key())
			if _, ok := lines[table]; !ok {
				lines[table] = lineOf(&p, e.Key())
			}
		case unstable.KeyValue:
			full := joinKey(e.Key())
			if table != "" {
				full = table + "." + full
			}
			if _, ok := lines[full]; !ok {
				lines[full] = lineOf(&p, e.Key())
			}
		}
	}
	return lines
}

func joinKey(it unstable.Iterator) string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return strings.Join(parts, ".")
}

func lineOf(p *unstable.Parser, it unstable.Iterator) int {
	if !it.Next() {
		return 0
	}
	n := it.Node()
	if n.Raw.Length == 0 && n.Raw.Offset == 0 {
		return 0
	}
	return p.Shape(n.Raw).Start.Line
}
