// Command miraj-cluster-pki creates a cluster's certificate authority, signs
// node certificates and revokes them (spec §17.2.2, §17.2.4). It is
// independent of the server and needs no openssl.
//
//	miraj-cluster-pki init-ca --name NAME --out DIR [--days 3650] [--force]
//	miraj-cluster-pki issue-node (--ca DIR | --ca-cert F --ca-key F) --id ID --san IP|DNS [--san …] --out DIR [--days 825] [--force]
//	miraj-cluster-pki revoke (ID | --cert F) (--ca DIR | --ca-cert F --ca-key F) [--out F] [--days 365]
//	miraj-cluster-pki crl (--ca DIR | --ca-cert F --ca-key F) [--out F] [--days 365]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/miraj-db/miraj/internal/pki"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  miraj-cluster-pki init-ca --name NAME --out DIR [--days 3650] [--force]
  miraj-cluster-pki issue-node (--ca DIR | --ca-cert FILE --ca-key FILE) --id ID --san IP|DNS [--san ...] --out DIR [--days 825] [--force]
  miraj-cluster-pki revoke (ID | --cert FILE) (--ca DIR | --ca-cert FILE --ca-key FILE) [--out FILE] [--days 365]
  miraj-cluster-pki crl (--ca DIR | --ca-cert FILE --ca-key FILE) [--out FILE] [--days 365]
`

// errUsage is returned for a command line that cannot be run.
var errUsage = errors.New("miraj-cluster-pki: bad usage")

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "init-ca":
		err = initCA(args[1:], stdout)
	case "issue-node":
		err = issueNode(args[1:], stdout)
	case "revoke":
		err = revoke(args[1:], stdout)
	case "crl":
		err = crl(args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		if errors.Is(err, errUsage) {
			fmt.Fprint(stderr, usage)
			return 2
		}
		return 1
	}
	return 0
}

// parse parses flags anywhere on the line (revoke n3 --ca pki) and returns
// the positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

type caFlags struct{ dir, cert, key string }

func (c *caFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.dir, "ca", "", "authority folder made by init-ca")
	fs.StringVar(&c.cert, "ca-cert", "", "authority certificate (instead of --ca)")
	fs.StringVar(&c.key, "ca-key", "", "authority private key (instead of --ca)")
}

func (c *caFlags) load(cmd string) (*pki.CA, error) {
	switch {
	case c.dir != "" && (c.cert != "" || c.key != ""):
		return nil, fmt.Errorf("%w: %s: give --ca or --ca-cert/--ca-key, not both", errUsage, cmd)
	case c.dir != "":
		return pki.LoadCADir(c.dir)
	case c.cert != "" && c.key != "":
		return pki.LoadCA(c.cert, c.key)
	default:
		return nil, fmt.Errorf("%w: %s: --ca DIR (or --ca-cert and --ca-key) is required", errUsage, cmd)
	}
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func initCA(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("init-ca", flag.ContinueOnError)
	name := fs.String("name", "", "cluster name")
	out := fs.String("out", "", "output folder")
	days := fs.Int("days", pki.DefaultCADays, "validity in days")
	force := fs.Bool("force", false, "overwrite existing files")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *name == "" || *out == "" {
		return fmt.Errorf("%w: init-ca needs --name and --out", errUsage)
	}
	ca, err := pki.InitCA(pki.InitOptions{Name: *name, Dir: *out, Days: *days, Force: *force})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "authority %q created: %s, %s (valid until %s); keep %s off the nodes\n",
		ca.Cert.Subject.CommonName, filepath.Join(*out, pki.CACertFile), filepath.Join(*out, pki.CAKeyFile),
		ca.Cert.NotAfter.Format("2006-01-02"), pki.CAKeyFile)
	return nil
}

func issueNode(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("issue-node", flag.ContinueOnError)
	var cf caFlags
	cf.register(fs)
	var sans multi
	id := fs.String("id", "", "node id (certificate common name)")
	fs.Var(&sans, "san", "IP address or DNS name of the node (repeatable)")
	out := fs.String("out", "", "output folder")
	days := fs.Int("days", pki.DefaultNodeDays, "validity in days")
	force := fs.Bool("force", false, "overwrite existing files")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *id == "" || *out == "" || len(sans) == 0 {
		return fmt.Errorf("%w: issue-node needs --id, at least one --san and --out", errUsage)
	}
	ca, err := cf.load("issue-node")
	if err != nil {
		return err
	}
	cert, err := ca.IssueNode(pki.NodeOptions{ID: *id, SANs: sans, Days: *days, OutDir: *out, Force: *force})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "node %s: %s, %s, %s (serial %X, valid until %s)\n", *id,
		filepath.Join(*out, pki.NodeCertFile), filepath.Join(*out, pki.NodeKeyFile), filepath.Join(*out, pki.CACertFile),
		cert.SerialNumber, cert.NotAfter.Format("2006-01-02"))
	return nil
}

func revoke(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("revoke", flag.ContinueOnError)
	var cf caFlags
	cf.register(fs)
	certPath := fs.String("cert", "", "revoke this one certificate")
	out := fs.String("out", "", "revocation list path (default: <ca folder>/cluster-crl.pem)")
	days := fs.Int("days", pki.DefaultCRLDays, "next-update date, in days")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	id := ""
	switch {
	case len(pos) == 1 && *certPath == "":
		id = pos[0]
	case len(pos) == 0 && *certPath != "":
	default:
		return fmt.Errorf("%w: revoke needs a node id or --cert FILE", errUsage)
	}
	ca, err := cf.load("revoke")
	if err != nil {
		return err
	}
	entries, err := ca.Revoke(pki.RevokeOptions{ID: id, CertPath: *certPath, Out: *out, Days: *days})
	if err != nil {
		return err
	}
	for _, e := range entries {
		fmt.Fprintf(stdout, "revoked: serial %X, node %s\n", e.Serial, e.Node)
	}
	if len(entries) == 0 {
		fmt.Fprintln(stdout, "already revoked")
	}
	fmt.Fprintf(stdout, "revocation list written: %s\n", crlPath(ca, *out))
	return nil
}

func crl(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("crl", flag.ContinueOnError)
	var cf caFlags
	cf.register(fs)
	out := fs.String("out", "", "revocation list path (default: <ca folder>/cluster-crl.pem)")
	days := fs.Int("days", pki.DefaultCRLDays, "next-update date, in days")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: crl takes no argument", errUsage)
	}
	ca, err := cf.load("crl")
	if err != nil {
		return err
	}
	list, err := ca.WriteCRL(*out, *days)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revocation list written: %s (%d revoked, next update %s)\n", crlPath(ca, *out),
		len(list.RevokedCertificateEntries), list.NextUpdate.Format("2006-01-02"))
	return nil
}

func crlPath(ca *pki.CA, out string) string {
	if out != "" {
		return out
	}
	return filepath.Join(ca.Dir, pki.CRLFile)
}
