package sqlserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/go-sql-driver/mysql"

	"github.com/miraj-db/miraj/internal/clienttls"
	"github.com/miraj-db/miraj/internal/pki"
	"github.com/miraj-db/miraj/internal/pki/pkitest"
)

var tlsConfigs atomic.Int64

// tlsOpen connects as user over TLS with cfg (registered with the driver
// under a name of its own).
func tlsOpen(t *testing.T, s *Server, cfg *tls.Config, user, pass string) *sql.DB {
	t.Helper()
	name := fmt.Sprintf("miraj-test-%d", tlsConfigs.Add(1))
	if err := mysql.RegisterTLSConfig(name, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mysql.DeregisterTLSConfig(name) })
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.TLSConfig = user, pass, "tcp", s.Addr().String(), name
	c.AllowNativePasswords = true
	c.Timeout = 10 * time.Second
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	d.SetMaxIdleConns(0)
	t.Cleanup(func() { d.Close() })
	return d
}

// caPool is a pool holding the certificates of a PEM file.
func caPool(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		t.Fatalf("%s: no certificate", path)
	}
	return pool
}

// statusOf is one row of SHOW STATUS LIKE name, read on a connection of
// its own.
func statusOf(t *testing.T, db *sql.DB, name string) (string, error) {
	t.Helper()
	var n, v string
	err := db.QueryRow("SHOW STATUS LIKE '"+name+"'").Scan(&n, &v)
	return v, err
}

// sqlErr checks that err is MySQL error code with sqlState.
func sqlErr(t *testing.T, what string, err error, code uint16, sqlState string) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code || string(me.SQLState[:]) != sqlState {
		t.Fatalf("%s: %v, want %d (%s)", what, err, code, sqlState)
	}
}

// Without certificates the server makes a self-signed pair at its first
// start: a client that verifies the server against its ca.pem connects,
// and its session says which protocol and cipher; a connection in the
// clear says nothing.
func TestTLSSelfSigned(t *testing.T) {
	s, open := startServer(t)
	dir := StateDir(s.cfg.Root)
	for _, f := range []string{clienttls.AutoCAFile, clienttls.AutoCAKey, clienttls.AutoCertFile, clienttls.AutoKeyFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("self-signed pair: %v", err)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, clienttls.AutoKeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("server-key.pem: mode %v, %v", st.Mode().Perm(), err)
	}
	secure := tlsOpen(t, s, &tls.Config{RootCAs: caPool(t, filepath.Join(dir, clienttls.AutoCAFile)), ServerName: "127.0.0.1"}, "root", "")
	if v, err := statusOf(t, secure, "Ssl_version"); err != nil || v != "TLSv1.3" {
		t.Fatalf("Ssl_version over TLS: %q, %v", v, err)
	}
	if v, err := statusOf(t, secure, "Ssl_cipher"); err != nil || !strings.HasPrefix(v, "TLS_") {
		t.Fatalf("Ssl_cipher over TLS: %q, %v", v, err)
	}
	tls12 := tlsOpen(t, s, &tls.Config{RootCAs: caPool(t, filepath.Join(dir, clienttls.AutoCAFile)), ServerName: "127.0.0.1", MaxVersion: tls.VersionTLS12}, "root", "")
	if v, err := statusOf(t, tls12, "Ssl_cipher"); err != nil || !strings.HasPrefix(v, "ECDHE-ECDSA-") {
		t.Fatalf("Ssl_cipher over TLS 1.2: %q, %v", v, err)
	}
	plain := open("root", "", "")
	for _, name := range []string{"Ssl_version", "Ssl_cipher"} {
		if v, err := statusOf(t, plain, name); err != nil || v != "" {
			t.Fatalf("%s in the clear: %q, %v", name, v, err)
		}
	}
	var have, version, cert string
	if err := secure.QueryRow("SELECT @@have_ssl, @@tls_version, @@ssl_cert").Scan(&have, &version, &cert); err != nil {
		t.Fatal(err)
	}
	if have != "YES" || version != "TLSv1.2,TLSv1.3" || cert != filepath.Join(dir, clienttls.AutoCertFile) {
		t.Fatalf("@@have_ssl %q, @@tls_version %q, @@ssl_cert %q", have, version, cert)
	}
	// Statements, results and prepared statements go through as in the
	// clear.
	if _, err := secure.Exec("CREATE DATABASE d"); err != nil {
		t.Fatal(err)
	}
	if _, err := secure.Exec("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(100))"); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 100)
	for i := 0; i < 50; i++ {
		if _, err := secure.Exec("INSERT INTO d.t VALUES (?, ?)", i, long); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	var total int
	if err := secure.QueryRow("SELECT COUNT(*), SUM(LENGTH(v)) FROM d.t WHERE id >= ?", 0).Scan(&n, &total); err != nil || n != 50 || total != 5000 {
		t.Fatalf("rows over TLS: %d, %d bytes, %v", n, total, err)
	}
	// SET GLOBAL of the TLS settings Miraj does not use is refused.
	for _, q := range []string{"SET GLOBAL tls_version = 'TLSv1.3'", "SET GLOBAL ssl_cipher = 'AES128-SHA'", "SET GLOBAL tls_ciphersuites = 'TLS_AES_128_GCM_SHA256'"} {
		_, err := secure.Exec(q)
		sqlErr(t, q, err, 1238, "HY000")
	}
}

// A client offering only TLS 1.0 or 1.1 is refused in the handshake;
// the greeting offers TLS.
func TestTLSOldVersionsRefused(t *testing.T) {
	s, _ := startServer(t)
	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		conn, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		greeting := readTestPacket(t, conn)
		end := strings.IndexByte(string(greeting), 0)
		caps := binary.LittleEndian.Uint16(greeting[end+1+4+8+1:])
		if caps&uint16(mysql_CLIENT_SSL) == 0 {
			t.Fatalf("greeting's capabilities %#x: no CLIENT_SSL", caps)
		}
		req := make([]byte, 32)
		binary.LittleEndian.PutUint32(req, 0x200|0x8000|mysql_CLIENT_SSL) // protocol 41, secure connection, SSL
		if _, err := conn.Write(append([]byte{32, 0, 0, 1}, req...)); err != nil {
			t.Fatal(err)
		}
		c := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, MinVersion: v, MaxVersion: v})
		if err := c.Handshake(); err == nil || !strings.Contains(err.Error(), "protocol version") {
			t.Fatalf("client of %s only: %v, want refused", clienttls.VersionName(v), err)
		}
	}
}

const mysql_CLIENT_SSL = 0x800

func readTestPacket(t *testing.T, r io.Reader) []byte {
	t.Helper()
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, int(head[0])|int(head[1])<<8|int(head[2])<<16)
	if _, err := io.ReadFull(r, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// require_secure_transport: a connection in the clear is refused with
// 3159, once the server has TLS; without TLS it cannot be set (3075).
func TestRequireSecureTransport(t *testing.T) {
	s, open := startServer(t)
	root := open("root", "", "")
	if _, err := root.Exec("SET GLOBAL require_secure_transport = ON"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gsqlSetGlobal("require_secure_transport", int8(0)) })
	plain := open("root", "", "")
	err := plain.Ping()
	sqlErr(t, "a connection in the clear", err, 3159, "HY000")
	if !strings.Contains(err.Error(), "Connections using insecure transport are prohibited while --require_secure_transport=ON.") {
		t.Fatalf("3159's text: %v", err)
	}
	secure := tlsOpen(t, s, &tls.Config{RootCAs: caPool(t, filepath.Join(StateDir(s.cfg.Root), clienttls.AutoCAFile)), ServerName: "127.0.0.1"}, "root", "")
	if _, err := secure.Exec("SET GLOBAL require_secure_transport = OFF"); err != nil {
		t.Fatalf("over TLS: %v", err)
	}
	if err := open("root", "", "").Ping(); err != nil {
		t.Fatalf("in the clear once OFF: %v", err)
	}

	_, open2 := startServerWith(t, Config{TLS: TLSOptions{Disabled: true}})
	off := open2("root", "", "")
	var have string
	if err := off.QueryRow("SELECT @@have_ssl").Scan(&have); err != nil || have != "DISABLED" {
		t.Fatalf("@@have_ssl without TLS: %q, %v", have, err)
	}
	_, err = off.Exec("SET GLOBAL require_secure_transport = ON")
	sqlErr(t, "require_secure_transport=ON without TLS", err, 3075, "HY000")
}

// The refusals of connections in the clear are logged once a minute per
// host.
func TestHostLogPace(t *testing.T) {
	now := time.Unix(1000, 0)
	h := newHostLog(time.Minute, func() time.Time { return now })
	if !h.allow("10.0.0.1") || h.allow("10.0.0.1") || !h.allow("10.0.0.2") {
		t.Fatal("first event of each host logged, the second not")
	}
	now = now.Add(59 * time.Second)
	if h.allow("10.0.0.1") {
		t.Fatal("logged again within the minute")
	}
	now = now.Add(time.Second)
	if !h.allow("10.0.0.1") {
		t.Fatal("not logged again after a minute")
	}
	for i := 0; i < maxHostLogEntries+10; i++ {
		h.allow(fmt.Sprintf("host%d", i))
	}
	if n := len(h.mu.last); n > maxHostLogEntries {
		t.Fatalf("%d hosts remembered, bound %d", n, maxHostLogEntries)
	}
}

// certFiles makes an authority, a server certificate for 127.0.0.1 and
// client certificates for the names given.
func certFiles(t *testing.T, clients ...string) (*pki.CA, pkitest.Node, map[string]tls.Certificate) {
	t.Helper()
	ca := pkitest.NewCA(t, "client")
	server := pkitest.Issue(t, ca, "server")
	out := map[string]tls.Certificate{}
	for _, name := range clients {
		n := pkitest.Issue(t, ca, name)
		c, err := tls.LoadX509KeyPair(n.Cert, n.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = c
	}
	return ca, server, out
}

// REQUIRE SSL, X509, SUBJECT, ISSUER and CIPHER are enforced at login
// (1045 when not met), shown by SHOW CREATE USER, changed by ALTER USER …
// REQUIRE and kept across a restart.
func TestAccountRequire(t *testing.T) {
	ca, server, certs := certFiles(t, "alice", "bob")
	root := t.TempDir()
	cfg := Config{Root: root, TLS: TLSOptions{Files: clienttls.Files{Cert: server.Cert, Key: server.Key, CA: server.CA}}}
	s, stop := startAt(t, cfg)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	with := func(name string) *tls.Config {
		cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
		if c, ok := certs[name]; ok {
			cfg.Certificates = []tls.Certificate{c}
		}
		return cfg
	}
	suite := func(id uint16) *tls.Config {
		return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{id}}
	}
	admin := plainOpen(t, s, "root", "")
	issuer := "/CN=Miraj cluster authority client"
	for _, q := range []string{
		"CREATE USER ssl_user@'%' IDENTIFIED BY 'pw' REQUIRE SSL",
		"CREATE USER x509_user@'%' IDENTIFIED BY 'pw' REQUIRE X509",
		"CREATE USER alice_only@'%' IDENTIFIED BY 'pw' REQUIRE SUBJECT '/CN=alice' AND ISSUER '" + issuer + "'",
		"CREATE USER cipher_user@'%' IDENTIFIED BY 'pw' REQUIRE CIPHER 'ECDHE-ECDSA-AES256-GCM-SHA384'",
		"CREATE USER later@'%' IDENTIFIED BY 'pw'",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	check := func(s *Server) {
		t.Helper()
		cases := []struct {
			user   string
			tls    *tls.Config // nil: in the clear
			allows bool
		}{
			{"ssl_user", nil, false},
			{"ssl_user", with(""), true},
			{"x509_user", with(""), false},
			{"x509_user", with("alice"), true},
			{"alice_only", with("bob"), false},
			{"alice_only", with("alice"), true},
			{"alice_only", nil, false},
			{"cipher_user", with(""), false},
			{"cipher_user", suite(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256), false},
			{"cipher_user", suite(tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384), true},
			{"later", nil, false}, // ALTER USER … REQUIRE SSL below
			{"later", with(""), true},
		}
		for _, c := range cases {
			var db *sql.DB
			if c.tls == nil {
				db = plainOpen(t, s, c.user, "pw")
			} else {
				db = tlsOpen(t, s, c.tls, c.user, "pw")
			}
			err := db.Ping()
			if c.allows && err != nil {
				t.Fatalf("%s (TLS %v, certificate %v): %v", c.user, c.tls != nil, c.tls != nil && len(c.tls.Certificates) > 0, err)
			}
			if !c.allows {
				sqlErr(t, fmt.Sprintf("%s (TLS %v)", c.user, c.tls != nil), err, 1045, "28000")
				if want := "Access denied for user '" + c.user + "'@'127.0.0.1' (using password: YES)"; !strings.Contains(err.Error(), want) {
					t.Fatalf("%s: %v, want %q", c.user, err, want)
				}
			}
		}
	}
	if _, err := admin.Exec("ALTER USER later@'%' REQUIRE SSL"); err != nil {
		t.Fatal(err)
	}
	check(s)
	var text string
	if err := admin.QueryRow("SHOW CREATE USER alice_only@'%'").Scan(&text); err != nil {
		t.Fatal(err)
	}
	if want := "REQUIRE ISSUER '" + issuer + "' SUBJECT '/CN=alice' PASSWORD EXPIRE"; !strings.Contains(text, want) {
		t.Fatalf("SHOW CREATE USER: %s, want %q", text, want)
	}
	if _, err := admin.Exec("ALTER USER nobody@'%' REQUIRE X509"); err == nil {
		t.Fatal("ALTER USER of an account that does not exist")
	} else {
		sqlErr(t, "ALTER USER of an account that does not exist", err, 1396, "HY000")
	}
	// RENAME USER takes the clause along; DROP USER forgets it.
	for _, q := range []string{"CREATE USER gone@'%' IDENTIFIED BY 'pw' REQUIRE SSL", "RENAME USER gone@'%' TO moved@'%'", "DROP USER moved@'%'", "CREATE USER moved@'%' IDENTIFIED BY 'pw'"} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := plainOpen(t, s, "moved", "pw").Ping(); err != nil {
		t.Fatalf("an account made again after DROP USER keeps the dropped one's REQUIRE: %v", err)
	}
	stop()
	s2, _ := startAt(t, cfg)
	check(s2)
	admin2 := plainOpen(t, s2, "root", "")
	if _, err := admin2.Exec("ALTER USER ssl_user@'%' REQUIRE NONE"); err != nil {
		t.Fatal(err)
	}
	if err := plainOpen(t, s2, "ssl_user", "pw").Ping(); err != nil {
		t.Fatalf("REQUIRE NONE in the clear: %v", err)
	}
	// The clauses travel in the accounts file.
	data, err := os.ReadFile(filepath.Join(StateDir(root), "accounts.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, reqs, err := splitAccountsFile(data); err != nil || len(reqs) != 4 {
		t.Fatalf("clauses in the accounts file: %v, %v", reqs, err)
	}
}

// startAt runs a Server of cfg (its Root as given) until stop or the
// test's end.
func startAt(t *testing.T, cfg Config) (*Server, func()) {
	t.Helper()
	keepServerDefaults(t)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return s, stop
}

func plainOpen(t *testing.T, s *Server, user, pass string) *sql.DB {
	t.Helper()
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr = user, pass, "tcp", s.Addr().String()
	c.AllowNativePasswords = true
	d, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	d.SetMaxIdleConns(0)
	t.Cleanup(func() { d.Close() })
	return d
}

// caching_sha2_password, MySQL 8 clients' default, logs in over TLS (the
// password in full, encrypted); in the clear it has no way to.
func TestCachingSha2OverTLS(t *testing.T) {
	s, open := startServer(t)
	admin := open("root", "", "")
	if _, err := admin.Exec("CREATE USER sha@'%' IDENTIFIED WITH caching_sha2_password BY 'secret'"); err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{RootCAs: caPool(t, filepath.Join(StateDir(s.cfg.Root), clienttls.AutoCAFile)), ServerName: "127.0.0.1"}
	if err := tlsOpen(t, s, cfg, "sha", "secret").Ping(); err != nil {
		t.Fatalf("caching_sha2_password over TLS: %v", err)
	}
	sqlErr(t, "caching_sha2_password over TLS, wrong password", tlsOpen(t, s, cfg, "sha", "wrong").Ping(), 1045, "28000")
	if err := plainOpen(t, s, "sha", "secret").Ping(); err == nil {
		t.Fatal("caching_sha2_password in the clear: logged in")
	}
}

// ALTER INSTANCE RELOAD TLS puts the files the variables name in force for
// new connections; files that cannot serve are refused (3889) and the
// pair in force stays.
func TestReloadTLS(t *testing.T) {
	ca := pkitest.NewCA(t, "client")
	first := pkitest.Issue(t, ca, "first")
	second := pkitest.Issue(t, ca, "second")
	s, _ := startServerWith(t, Config{TLS: TLSOptions{Files: clienttls.Files{Cert: first.Cert, Key: first.Key, CA: first.CA}}})
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	served := func() string {
		t.Helper()
		var cn string
		cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", VerifyConnection: func(cs tls.ConnectionState) error {
			cn = cs.PeerCertificates[0].Subject.CommonName
			return nil
		}}
		if err := tlsOpen(t, s, cfg, "root", "").Ping(); err != nil {
			t.Fatal(err)
		}
		return cn
	}
	if cn := served(); cn != "first" {
		t.Fatalf("served %q, want first", cn)
	}
	admin := plainOpen(t, s, "root", "")
	held, err := admin.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	exec := func(q string) error {
		_, err := held.ExecContext(context.Background(), q)
		return err
	}
	if err := exec(fmt.Sprintf("SET GLOBAL ssl_cert = '%s', GLOBAL ssl_key = '%s'", second.Cert, first.Key)); err != nil {
		t.Fatal(err)
	}
	err = exec("ALTER INSTANCE RELOAD TLS")
	sqlErr(t, "reload of a key that is not the certificate's", err, 3889, "HY000")
	if !strings.Contains(err.Error(), "ssl_key "+first.Key) {
		t.Fatalf("3889's reason: %v", err)
	}
	if cn := served(); cn != "first" {
		t.Fatalf("after a failed reload, served %q, want first", cn)
	}
	if err := exec(fmt.Sprintf("SET GLOBAL ssl_key = '%s'", second.Key)); err != nil {
		t.Fatal(err)
	}
	if err := exec("ALTER INSTANCE RELOAD TLS"); err != nil {
		t.Fatal(err)
	}
	if cn := served(); cn != "second" {
		t.Fatalf("after the reload, served %q, want second", cn)
	}
	sqlErr(t, "NO ROLLBACK ON ERROR", exec("ALTER INSTANCE RELOAD TLS NO ROLLBACK ON ERROR"), 1235, "42000")
	if _, err := admin.Exec("CREATE USER plain@'%'"); err != nil {
		t.Fatal(err)
	}
	_, err = plainOpen(t, s, "plain", "").Exec("ALTER INSTANCE RELOAD TLS")
	sqlErr(t, "ALTER INSTANCE RELOAD TLS without CONNECTION_ADMIN", err, 1227, "42000")
}

// The accounts file's trailer reads back, is ignored by a reader that
// does not know it, and a damaged one is an error.
func TestAccountsTrailer(t *testing.T) {
	if _, reqs, err := splitAccountsFile([]byte("gms data")); err != nil || len(reqs) != 0 {
		t.Fatalf("file without clauses: %v, %v", reqs, err)
	}
	bad := append([]byte("gms"), []byte(`{"require":[{"user":"a","host":"%","type":"BOGUS"}]}`)...)
	bad = binary.LittleEndian.AppendUint32(bad, uint32(len(bad)-3))
	bad = append(bad, accountsTrailerMagic...)
	if _, _, err := splitAccountsFile(bad); !errors.Is(err, errAccountsTrailer) {
		t.Fatalf("clause of an unknown type: %v", err)
	}
	short := append([]byte{0xff, 0xff, 0xff, 0x00}, accountsTrailerMagic...)
	if _, _, err := splitAccountsFile(short); !errors.Is(err, errAccountsTrailer) {
		t.Fatalf("length past the file: %v", err)
	}
}

func gsqlSetGlobal(name string, v any) {
	gsql.SystemVariables.SetGlobal(gsql.NewEmptyContext(), name, v)
}

// A client that asks for TLS and then sends nothing is dropped after
// connect_timeout.
func TestTLSHandshakeTimeout(t *testing.T) {
	s, open := startServer(t)
	if _, err := open("root", "", "").Exec("SET GLOBAL connect_timeout = 2"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gsqlSetGlobal("connect_timeout", int64(10)) })
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	readTestPacket(t, conn)
	req := make([]byte, 32)
	binary.LittleEndian.PutUint32(req, 0x200|0x8000|mysql_CLIENT_SSL)
	if _, err := conn.Write(append([]byte{32, 0, 0, 1}, req...)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled TLS handshake: %v after %v, want the connection closed", err, time.Since(start))
	}
}

// The clauses travel with the accounts replication carries: a secondary
// that installs them refuses what the primary refuses.
func TestAccountRequireReplicated(t *testing.T) {
	primary, openPrimary := startServer(t)
	if _, err := openPrimary("root", "", "").Exec("CREATE USER tls_only@'%' IDENTIFIED BY 'pw' REQUIRE SSL"); err != nil {
		t.Fatal(err)
	}
	secondary, openSecondary := startServer(t)
	if err := openSecondary("tls_only", "pw", "").Ping(); err == nil || !strings.Contains(err.Error(), "1045") {
		t.Fatalf("before the accounts arrive: %v, want 1045 (no such account)", err)
	}
	if err := secondary.ClusterAccounts().Install(primary.ClusterAccounts().Data()); err != nil {
		t.Fatal(err)
	}
	sqlErr(t, "REQUIRE SSL in the clear on the secondary", openSecondary("tls_only", "pw", "").Ping(), 1045, "28000")
	cfg := &tls.Config{RootCAs: caPool(t, filepath.Join(StateDir(secondary.cfg.Root), clienttls.AutoCAFile)), ServerName: "127.0.0.1"}
	if err := tlsOpen(t, secondary, cfg, "tls_only", "pw").Ping(); err != nil {
		t.Fatalf("REQUIRE SSL over TLS on the secondary: %v", err)
	}
}

// A server started without TLS offers it once ALTER INSTANCE RELOAD TLS
// has put certificates in force.
func TestReloadTurnsTLSOn(t *testing.T) {
	ca := pkitest.NewCA(t, "client")
	n := pkitest.Issue(t, ca, "server")
	s, open := startServerWith(t, Config{TLS: TLSOptions{Disabled: true}})
	admin := open("root", "", "")
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	if err := tlsOpen(t, s, cfg, "root", "").Ping(); err == nil || !strings.Contains(err.Error(), "TLS requested but server does not support TLS") {
		t.Fatalf("TLS on a server started without it: %v", err)
	}
	conn, err := admin.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{fmt.Sprintf("SET GLOBAL ssl_cert = '%s', GLOBAL ssl_key = '%s'", n.Cert, n.Key), "ALTER INSTANCE RELOAD TLS"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	secure := tlsOpen(t, s, cfg, "root", "")
	if v, err := statusOf(t, secure, "Ssl_cipher"); err != nil || v == "" {
		t.Fatalf("Ssl_cipher after the reload: %q, %v", v, err)
	}
	var have string
	if err := secure.QueryRow("SELECT @@have_ssl").Scan(&have); err != nil || have != "YES" {
		t.Fatalf("@@have_ssl after the reload: %q, %v", have, err)
	}
}
