package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/config"
)

// --help shows the server's options alone, by group, each with its
// default; the flags the libraries register on Go's global set are
// neither shown nor taken.
func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if _, err := parseOptions([]string{"--help"}, &out, &errOut, func(string) string { return "" }); !errors.Is(err, errHelp) {
		t.Fatalf("--help: %v", err)
	}
	help := out.String()
	if errOut.Len() != 0 {
		t.Fatalf("--help wrote to stderr: %s", errOut.String())
	}
	libraryFlags := []string{"mysql_auth_server_static_file", "mysql_auth_server_static_string", "mysql_auth_static_reload_interval", "mysql_clientcert_auth_method"}
	for _, name := range libraryFlags {
		if flag.CommandLine.Lookup(name) == nil {
			t.Fatalf("vitess no longer registers -%s: the check below proves nothing for it", name)
		}
	}
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if strings.Contains(help, "-"+f.Name+" ") || strings.Contains(help, "-"+f.Name+"\n") {
			t.Errorf("--help shows the library flag -%s", f.Name)
		}
	})
	for _, g := range optionGroups {
		if !strings.Contains(help, "\n"+g.title+":\n") {
			t.Errorf("--help has no group %q", g.title)
		}
	}
	fs := newFlagSet(&options{}, func(string) string { return "" })
	if err := mustListAll(fs); err != nil {
		t.Fatal(err)
	}
	fs.VisitAll(func(f *flag.Flag) {
		var line string
		for _, l := range strings.Split(help, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "--"+f.Name+" ") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("--help does not show --%s", f.Name)
		} else if f.Name != "version" && !strings.Contains(line, "(default: ") {
			t.Errorf("--help gives no default for --%s: %s", f.Name, line)
		}
	})
	for _, want := range []string{"--ssl-cert FILE", "--require-secure-transport", "(default: 7007)", "(default: ROOT/miraj/server-cert.pem, made at the first start)"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}

	errOut.Reset()
	if _, err := parseOptions([]string{"-mysql_auth_server_static_file", "users.json"}, &out, &errOut, func(string) string { return "" }); !errors.Is(err, errUsage) {
		t.Fatalf("a library's flag: %v, want refused", err)
	}
	if !strings.Contains(errOut.String(), "flag provided but not defined: -mysql_auth_server_static_file") {
		t.Fatalf("stderr: %s", errOut.String())
	}
}

func TestOptions(t *testing.T) {
	env := func(k string) string {
		if k == "MIRAJ_ROOT_PASSWORD" {
			return "from-env"
		}
		return ""
	}
	var out, errOut bytes.Buffer
	o, err := parseOptions([]string{"--root", "/d", "--ssl-cert=c.pem", "-ssl-key", "k.pem", "--require-secure-transport", "--secure-file-priv="}, &out, &errOut, env)
	if err != nil {
		t.Fatal(err)
	}
	if o.root != "/d" || o.sslCert != "c.pem" || o.sslKey != "k.pem" || !o.requireSecureTransport || !o.ssl || o.port != 7007 {
		t.Fatalf("options %+v", o)
	}
	if !o.anyFile || o.rootPassword != "from-env" {
		t.Fatalf("--secure-file-priv=\"\" → any file %v; root password %q", o.anyFile, o.rootPassword)
	}
	if o, err := parseOptions([]string{"--ssl=false"}, &out, &errOut, env); err != nil || o.ssl || o.anyFile {
		t.Fatalf("--ssl=false: %+v, %v", o, err)
	}
	if _, err := parseOptions([]string{"--root", "/d", "extra"}, &out, &errOut, env); !errors.Is(err, errUsage) {
		t.Fatalf("a stray argument: %v", err)
	}
}

// --stream-transaction-mb: 16 unless given, 0 to 1048576, and it
// overrides cluster.toml's stream_transaction_mb.
func TestStreamTransactionMB(t *testing.T) {
	env := func(string) string { return "" }
	var out, errOut bytes.Buffer
	cluster := &config.Cluster{StreamTransactionMB: 4, StreamTransactionMBSet: true}
	o, err := parseOptions(nil, &out, &errOut, env)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.streamTransactionMB(nil); got != 16 {
		t.Errorf("default: %d, want 16", got)
	}
	if got := o.streamTransactionMB(cluster); got != 4 {
		t.Errorf("cluster.toml's 4: %d", got)
	}
	if got := o.streamTransactionMB(&config.Cluster{StreamTransactionMB: 16}); got != 16 {
		t.Errorf("cluster.toml without the key: %d, want 16", got)
	}
	o, err = parseOptions([]string{"--stream-transaction-mb=0"}, &out, &errOut, env)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.streamTransactionMB(cluster); got != 0 {
		t.Errorf("--stream-transaction-mb=0 over cluster.toml's 4: %d", got)
	}
	for _, bad := range []string{"-1", "1048577", "1.5"} {
		errOut.Reset()
		if _, err := parseOptions([]string{"--stream-transaction-mb", bad}, &out, &errOut, env); !errors.Is(err, errUsage) {
			t.Errorf("--stream-transaction-mb %s: %v, want refused", bad, err)
		}
		if !strings.Contains(errOut.String(), "stream-transaction-mb") {
			t.Errorf("--stream-transaction-mb %s: stderr %q", bad, errOut.String())
		}
	}
}
