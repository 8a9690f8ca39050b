package system

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	mpki "github.com/miraj-db/miraj/internal/pki"
	"github.com/miraj-db/miraj/internal/pki/pkitest"
)

var tlsConfigNames atomic.Int64

// openTLS connects to s as user over TLS, verifying the server's
// certificate (and 127.0.0.1 in it) against the CA file ca.
func (s *server) openTLS(t *testing.T, ca, user, pass, db string) *sql.DB {
	t.Helper()
	data, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		t.Fatalf("%s: no certificate", ca)
	}
	name := fmt.Sprintf("system-%d", tlsConfigNames.Add(1))
	if err := mysql.RegisterTLSConfig(name, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mysql.DeregisterTLSConfig(name) })
	c, err := mysql.ParseDSN(s.dsn(user, pass, db))
	if err != nil {
		t.Fatal(err)
	}
	c.TLSConfig = name
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// statusValue is the session's value of status variable name.
func statusValue(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var n, v string
	if err := db.QueryRow("SHOW STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
		t.Fatalf("SHOW STATUS LIKE '%s': %v", name, err)
	}
	return v
}

// mariadbClient is the mariadb command, or the test is skipped (failed
// under MIRAJ_REQUIRE_CLIENTS=1).
func mariadbClient(t *testing.T, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	requireClient(t, name, "apt-get install -y mariadb-client", err == nil)
	return bin
}

// runMariaDB runs a MariaDB client tool against s as user and returns its
// output and whether it succeeded.
func runMariaDB(t *testing.T, bin string, s *server, user string, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	out, err := toolCommand(ctx, t, bin, s, user, args...).CombinedOutput()
	return string(out), err == nil
}

var cipherRE = regexp.MustCompile(`(?m)^Ssl_cipher\t(\S+)$`)

// Without certificates the server makes a self-signed CA and server pair
// in ROOT/miraj at its first start, says so, and uses the same pair at the
// next start. The mariadb client verifies the server against ca.pem, and
// its session says which cipher; mariadb-admin's commands that vitess does
// not know are answered over TLS too.
func TestTLSSelfSignedPair(t *testing.T) {
	root := t.TempDir()
	s := newServer(t, root)
	if out := s.output(); !strings.Contains(out, "client TLS: made a self-signed CA and server certificate") {
		t.Fatalf("the first start does not say it made the pair:\n%s", out)
	}
	dir := filepath.Join(root, "miraj")
	for _, f := range []string{"ca.pem", "ca-key.pem", "server-cert.pem", "server-key.pem"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, "key.pem") && st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	cert, err := os.ReadFile(filepath.Join(dir, "server-cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.pem")

	client := mariadbClient(t, "mariadb")
	out, ok := runMariaDB(t, client, s, "root", "--ssl-verify-server-cert", "--ssl-ca="+ca, "-N", "-B", "-e", "SHOW STATUS LIKE 'Ssl_cipher'")
	if m := cipherRE.FindStringSubmatch(out); !ok || m == nil {
		t.Fatalf("mariadb --ssl-verify-server-cert --ssl-ca: ok=%v %q", ok, out)
	}
	out, ok = runMariaDB(t, client, s, "root", "--skip-ssl", "-N", "-B", "-e", "SHOW STATUS LIKE 'Ssl_cipher'")
	if !ok || strings.TrimSpace(out) != "Ssl_cipher" {
		t.Fatalf("mariadb --skip-ssl: the session should have no cipher: ok=%v %q", ok, out)
	}
	other := pkitest.NewCA(t, "other")
	out, ok = runMariaDB(t, client, s, "root", "--ssl-verify-server-cert", "--ssl-ca="+filepath.Join(other.Dir, mpki.CACertFile), "-e", "SELECT 1")
	if ok {
		t.Fatalf("mariadb verifying the server against another CA connected: %q", out)
	}
	admin := mariadbClient(t, "mariadb-admin")
	out, ok = runMariaDB(t, admin, s, "root", "--ssl", "--ssl-ca="+ca, "status")
	if !ok || !strings.HasPrefix(out, "Uptime: ") {
		t.Fatalf("mariadb-admin status over TLS: ok=%v %q", ok, out)
	}
	if v := statusValue(t, s.openTLS(t, ca, "root", "", ""), "Ssl_version"); v != "TLSv1.3" {
		t.Fatalf("Ssl_version %q", v)
	}

	s.stop()
	s.restart()
	if out := s.output(); !strings.Contains(out, "client TLS: using the self-signed certificates made at the first start") {
		t.Fatalf("the second start does not say it uses the pair made before:\n%s", out)
	}
	again, err := os.ReadFile(filepath.Join(dir, "server-cert.pem"))
	if err != nil || !bytes.Equal(again, cert) {
		t.Fatalf("the second start changed server-cert.pem (%v)", err)
	}
	if v := statusValue(t, s.openTLS(t, ca, "root", "", ""), "Ssl_cipher"); v == "" {
		t.Fatal("no cipher after the restart")
	}
}

// Certificates that cannot serve stop the start-up: a non-zero exit and
// one line naming the option, the file and why.
func TestTLSStartupRefusals(t *testing.T) {
	ca := pkitest.NewCA(t, "client")
	good := pkitest.Issue(t, ca, "server")
	other := pkitest.Issue(t, ca, "other")
	unsigned := pkitest.Issue(t, pkitest.NewCA(t, "stranger"), "server")
	issueAt := func(at time.Time, days int) pkitest.Node {
		c := pkitest.NewCA(t, "dated")
		c.Now = func() time.Time { return at }
		dir := t.TempDir()
		if _, err := c.IssueNode(mpki.NodeOptions{ID: "dated", SANs: []string{"127.0.0.1"}, Days: days, OutDir: dir}); err != nil {
			t.Fatal(err)
		}
		return pkitest.Node{Cert: filepath.Join(dir, mpki.NodeCertFile), Key: filepath.Join(dir, mpki.NodeKeyFile)}
	}
	expired := issueAt(time.Now().AddDate(0, 0, -30), 1)
	early := issueAt(time.Now().AddDate(0, 0, 10), 0)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	folder := t.TempDir()

	cases := []struct {
		name string
		args []string
		want string // the whole line, after "miraj-server: "
	}{
		{"key of another certificate", []string{"--ssl-cert", good.Cert, "--ssl-key", other.Key},
			"--ssl-key " + other.Key + ": clienttls: private key does not match the certificate " + good.Cert},
		{"expired", []string{"--ssl-cert", expired.Cert, "--ssl-key", expired.Key},
			"--ssl-cert " + expired.Cert + ": clienttls: certificate expired on "},
		{"not yet valid", []string{"--ssl-cert", early.Cert, "--ssl-key", early.Key},
			"--ssl-cert " + early.Cert + ": clienttls: certificate not yet valid before "},
		{"CA that did not sign it", []string{"--ssl-cert", unsigned.Cert, "--ssl-key", unsigned.Key, "--ssl-ca", good.CA},
			"--ssl-cert " + unsigned.Cert + ": clienttls: certificate not signed by the authority " + good.CA},
		{"unreadable certificate", []string{"--ssl-cert", missing, "--ssl-key", good.Key},
			"--ssl-cert " + missing + ": open: no such file or directory"},
		{"unreadable key", []string{"--ssl-cert", good.Cert, "--ssl-key", folder},
			"--ssl-key " + folder + ": read: is a directory"},
		{"certificate without key", []string{"--ssl-cert", good.Cert},
			"clienttls: options missing: --ssl-cert and --ssl-key go together"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
			defer cancel()
			args := append([]string{"--root", t.TempDir(), "--port", "0", "--log=false"}, c.args...)
			out, err := exec.CommandContext(ctx, serverBin, args...).CombinedOutput()
			if err == nil {
				t.Fatalf("started:\n%s", out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "miraj-server: "+c.want) {
				t.Fatalf("output:\n%s\nwant one line starting %q", out, "miraj-server: "+c.want)
			}
		})
	}
}

// With a CA, an account that REQUIRE X509 logs in with a client
// certificate the CA signed and is refused (1045) without one; with
// require_secure_transport=ON a client in the clear gets 3159.
func TestTLSClientCertificatesAndSecureTransport(t *testing.T) {
	ca := pkitest.NewCA(t, "client")
	server := pkitest.Issue(t, ca, "server")
	alice := pkitest.Issue(t, ca, "alice")
	s := newServer(t, t.TempDir(), "--ssl-cert", server.Cert, "--ssl-key", server.Key, "--ssl-ca", server.CA)
	admin := s.open("")
	mustExec(t, admin, "CREATE USER cert_user@'%' IDENTIFIED BY 'pw' REQUIRE X509")
	mustExec(t, admin, "GRANT SELECT ON *.* TO cert_user@'%'")
	client := mariadbClient(t, "mariadb")
	tlsArgs := []string{"--ssl-verify-server-cert", "--ssl-ca=" + server.CA, "-ppw"}

	out, ok := runMariaDB(t, client, s, "cert_user", append(tlsArgs, "--ssl-cert="+alice.Cert, "--ssl-key="+alice.Key, "-N", "-B", "-e", "SELECT CURRENT_USER()")...)
	if !ok || strings.TrimSpace(out) != "cert_user@%" {
		t.Fatalf("REQUIRE X509 with alice's certificate: ok=%v %q", ok, out)
	}
	out, ok = runMariaDB(t, client, s, "cert_user", append(tlsArgs, "-e", "SELECT 1")...)
	if ok || !strings.Contains(out, "ERROR 1045 (28000): Access denied for user 'cert_user'@'127.0.0.1' (using password: YES)") {
		t.Fatalf("REQUIRE X509 without a certificate: ok=%v %q", ok, out)
	}

	mustExec(t, admin, "SET GLOBAL require_secure_transport = ON")
	out, ok = runMariaDB(t, client, s, "root", "--skip-ssl", "-e", "SELECT 1")
	if ok || !strings.Contains(out, "ERROR 3159 (HY000): Connections using insecure transport are prohibited while --require_secure_transport=ON.") {
		t.Fatalf("a client in the clear under require_secure_transport=ON: ok=%v %q", ok, out)
	}
	out, ok = runMariaDB(t, client, s, "root", "--ssl-verify-server-cert", "--ssl-ca="+server.CA, "-N", "-B", "-e", "SELECT @@require_secure_transport")
	if !ok || strings.TrimSpace(out) != "1" {
		t.Fatalf("a client over TLS under require_secure_transport=ON: ok=%v %q", ok, out)
	}
	if n := strings.Count(s.output(), "require_secure_transport is ON and the client did not use TLS"); n != 1 {
		t.Fatalf("the refusal is logged %d times, want once:\n%s", n, s.output())
	}
	// A second refusal within the minute is not logged again.
	runMariaDB(t, client, s, "root", "--skip-ssl", "-e", "SELECT 1")
	if n := strings.Count(s.output(), "require_secure_transport is ON and the client did not use TLS"); n != 1 {
		t.Fatalf("the second refusal is logged too (%d lines)", n)
	}
}

// --help shows the server's options and none of the libraries' flags.
func TestServerHelp(t *testing.T) {
	out, err := exec.Command(serverBin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	for _, want := range []string{"Server:", "Client TLS:", "Storage:", "Cluster:", "--ssl-cert FILE", "--port PORT"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if strings.Contains(string(out), "mysql_") {
		t.Errorf("--help shows a library's flag:\n%s", out)
	}
	out, err = exec.Command(serverBin, "-mysql_auth_server_static_string", "{}").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "flag provided but not defined") {
		t.Fatalf("a library's flag: %v\n%s", err, out)
	}
}
