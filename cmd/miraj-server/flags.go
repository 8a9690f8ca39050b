package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/miraj-db/miraj/internal/config"
)

// options are the server's command-line options. They are parsed on a flag
// set of their own: the libraries the server links register theirs on Go's
// global set (vitess: -mysql_auth_server_static_file, …), which the server
// neither reads nor shows.
type options struct {
	root, bind   string
	port         int
	log          bool
	rootPassword string
	fileDir      string
	anyFile      bool // --secure-file-priv="" given: any file
	showVersion  bool

	policy      string
	intervalMS  int
	keepMB      int64
	gcMinHeapMB int
	gcGrowth    int
	streamMB    int64
	streamMBSet bool // --stream-transaction-mb given

	ssl                    bool
	sslCert, sslKey        string
	sslCA, sslCRL          string
	requireSecureTransport bool

	clusterConfig string
	pprofAddr     string

	httpAddr          string
	httpTLS           bool
	httpCert, httpKey string
	httpCA            string

	binlog binlogFlags // binlogflags.go
}

// optionGroup is a heading of --help and the options under it, in order.
type optionGroup struct {
	title string
	names []string
}

var optionGroups = []optionGroup{
	{"Server", []string{"root", "bind", "port", "log", "root-password", "secure-file-priv", "version"}},
	{"Client TLS", []string{"ssl", "ssl-cert", "ssl-key", "ssl-ca", "ssl-crl", "require-secure-transport"}},
	{"Storage", []string{"save-policy", "save-interval-ms", "journal-keep-mb", "stream-transaction-mb"}},
	{"Memory", []string{"gc-min-heap-mb", "gc-heap-growth-percent"}},
	{"Cluster", []string{"cluster-config"}},
	{"Binary log", binlogOptionNames},
	{"HTTP", []string{"http", "http-tls", "http-cert", "http-key", "http-ca", "pprof"}},
}

// defaultTexts say what an option does when not given, where its zero
// value would not.
var defaultTexts = map[string]string{
	"root-password":    "$MIRAJ_ROOT_PASSWORD, else empty",
	"secure-file-priv": "ROOT/miraj/files",
	"ssl-cert":         "ROOT/miraj/server-cert.pem, made at the first start",
	"ssl-key":          "ROOT/miraj/server-key.pem, made at the first start",
	"ssl-ca":           "ROOT/miraj/ca.pem with the made pair, else none",
	"ssl-crl":          "none",
	"cluster-config":   "cluster.toml next to the executable, if present",
	"pprof":            "off",
	"http":             "off",
	"http-cert":        "none",
	"http-key":         "none",
	"http-ca":          "none",
	"journal-keep-mb":  "0",
	"version":          "",
}

// errHelp: --help was asked for, and shown. errUsage: an option was
// wrong, and said so on stderr.
var (
	errHelp  = errors.New("help shown")
	errUsage = errors.New("bad option")
)

// parseOptions reads args (without the program's name). --help prints the
// options to stdout and returns errHelp; a bad option is reported on
// stderr.
func parseOptions(args []string, stdout, stderr io.Writer, getenv func(string) string) (*options, error) {
	o := &options{}
	fs := newFlagSet(o, getenv)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printOptions(stdout, fs)
			return nil, errHelp
		}
		fmt.Fprintln(stderr, "miraj-server --help lists the options")
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q: options start with --\nmiraj-server --help lists the options\n", fs.Arg(0))
		return nil, fmt.Errorf("%w: argument %q", errUsage, fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "secure-file-priv" && o.fileDir == "" {
			o.anyFile = true
		}
		if f.Name == "stream-transaction-mb" {
			o.streamMBSet = true
		}
	})
	if o.streamMB < 0 || o.streamMB > config.MaxStreamTransactionMB {
		fmt.Fprintf(stderr, "--stream-transaction-mb %d is out of range: allowed 0 to %d\n", o.streamMB, config.MaxStreamTransactionMB)
		return nil, fmt.Errorf("%w: --stream-transaction-mb %d", errUsage, o.streamMB)
	}
	return o, nil
}

// streamTransactionMB is the server's initial @@GLOBAL.stream_transaction_mb:
// --stream-transaction-mb when given, else cluster.toml's
// stream_transaction_mb (c may be nil: a standalone server), else the
// default.
func (o *options) streamTransactionMB(c *config.Cluster) int64 {
	if !o.streamMBSet && c != nil && c.StreamTransactionMBSet {
		return c.StreamTransactionMB
	}
	return o.streamMB
}

// newFlagSet defines the options, into o.
func newFlagSet(o *options, getenv func(string) string) *flag.FlagSet {
	fs := flag.NewFlagSet("miraj-server", flag.ContinueOnError)
	fs.Usage = func() {} // parseOptions shows --help, on stdout

	fs.StringVar(&o.root, "root", "./data", "data directory `DIR` (created if absent)")
	fs.StringVar(&o.bind, "bind", "127.0.0.1", "client `ADDRESS` to listen on")
	fs.IntVar(&o.port, "port", 7007, "client `PORT` (MySQL protocol); 0 picks a free port, printed in the log")
	fs.BoolVar(&o.log, "log", true, "write the server log to ROOT/miraj/server.log as well as stderr")
	fs.StringVar(&o.rootPassword, "root-password", getenv("MIRAJ_ROOT_PASSWORD"), "`PASSWORD` of root@localhost and root@127.0.0.1 when they are created (first start)")
	fs.StringVar(&o.fileDir, "secure-file-priv", "", "the one `DIR` whose files SELECT … INTO OUTFILE, LOAD DATA INFILE and LOAD_FILE() may use; \"\" allows any file the server can reach")
	fs.BoolVar(&o.showVersion, "version", false, "print the server version and exit")

	fs.BoolVar(&o.ssl, "ssl", true, "offer TLS on the client port; --ssl=false: clients connect in the clear (@@have_ssl DISABLED)")
	fs.StringVar(&o.sslCert, "ssl-cert", "", "the server's certificate `FILE` (PEM; intermediates after it), with --ssl-key")
	fs.StringVar(&o.sslKey, "ssl-key", "", "the certificate's private key `FILE` (PEM, not encrypted)")
	fs.StringVar(&o.sslCA, "ssl-ca", "", "`FILE` of authorities (PEM): one must have signed the server's certificate; client certificates are verified against them")
	fs.StringVar(&o.sslCRL, "ssl-crl", "", "revocation list `FILE` (PEM) of the --ssl-ca authority: client certificates it lists are refused")
	fs.BoolVar(&o.requireSecureTransport, "require-secure-transport", false, "refuse connections in the clear (error 3159); @@require_secure_transport")

	fs.StringVar(&o.policy, "save-policy", "commit", "`POLICY`, when commits reach the disk: commit, periodic or manual")
	fs.IntVar(&o.intervalMS, "save-interval-ms", 1000, "fsync interval of the periodic save policy, in milliseconds (`MS`)")
	fs.Int64Var(&o.keepMB, "journal-keep-mb", 0, "journal kept behind the newest checkpoint, in MiB (`N`)")
	fs.Int64Var(&o.streamMB, "stream-transaction-mb", config.DefaultStreamTransactionMB, "a transaction streams to the journal (and to followers) as it runs once its frames pass `N` MiB, a DDL that rebuilds a table at once; 0: only at commit (initial @@GLOBAL.stream_transaction_mb; overrides cluster.toml's stream_transaction_mb)")

	fs.IntVar(&o.gcMinHeapMB, "gc-min-heap-mb", 256, "minimum heap in MiB (`N`): the garbage collector lets the heap grow to this size before it collects; 0: Go's default pacing (also when GOGC or GOMEMLIMIT is set)")
	fs.IntVar(&o.gcGrowth, "gc-heap-growth-percent", 15, "past the minimum heap, the garbage collector runs once the heap has grown by `N` % of the live heap (Go's GOGC)")

	fs.StringVar(&o.clusterConfig, "cluster-config", "", "cluster configuration `FILE` (cluster.toml): makes the server a cluster node")
	fs.StringVar(&o.httpAddr, "http", "", "serve /metrics (Prometheus), /health, /primary, /replica, /read-only and /cluster on `ADDRESS`, e.g. 127.0.0.1:8008 (port 0: a free port, printed in the log)")
	fs.BoolVar(&o.httpTLS, "http-tls", false, "serve --http over TLS with the node's certificate (cluster.toml's tls_cert and tls_key), or outside a cluster the client port's (--ssl-cert, --ssl-key or the pair made in ROOT/miraj)")
	fs.StringVar(&o.httpCert, "http-cert", "", "certificate `FILE` (PEM) of --http: serves it over TLS, with --http-key")
	fs.StringVar(&o.httpKey, "http-key", "", "private key `FILE` (PEM) of --http-cert")
	fs.StringVar(&o.httpCA, "http-ca", "", "authorities `FILE` (PEM): --http over TLS asks every client for a certificate they signed")
	fs.StringVar(&o.pprofAddr, "pprof", "", "serve Go's profiling endpoints (net/http/pprof) on `ADDRESS`, e.g. 127.0.0.1:6060")
	defineBinlogFlags(fs, &o.binlog)
	return fs
}

// printOptions writes --help: the options by group, each with its value's
// kind, what it does and its default.
func printOptions(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, "Usage: miraj-server [options]")
	fmt.Fprintln(w, "\nThe Miraj SQL server: MySQL protocol on the client port. Options take one or two dashes.")
	for _, g := range optionGroups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, name := range g.names {
			f := fs.Lookup(name)
			if f == nil {
				panic("miraj-server: --help names an option not defined: " + name)
			}
			kind, usage := flag.UnquoteUsage(f)
			if kind != "" {
				kind = " " + kind
			}
			def, ok := defaultTexts[name]
			if !ok {
				def = f.DefValue
			}
			if def != "" {
				usage += " (default: " + def + ")"
			}
			fmt.Fprintf(tw, "  --%s%s\t%s\n", name, kind, usage)
		}
		tw.Flush()
	}
}

// mustListAll checks that --help lists every option of fs once.
func mustListAll(fs *flag.FlagSet) error {
	listed := map[string]int{}
	for _, g := range optionGroups {
		for _, n := range g.names {
			listed[n]++
		}
	}
	var bad []string
	fs.VisitAll(func(f *flag.Flag) {
		if listed[f.Name] != 1 {
			bad = append(bad, f.Name)
		}
		delete(listed, f.Name)
	})
	for n := range listed {
		bad = append(bad, n)
	}
	if len(bad) > 0 {
		return fmt.Errorf("options not listed once by --help: %s", strings.Join(bad, ", "))
	}
	return nil
}
