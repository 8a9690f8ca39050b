package sqlserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/clienttls"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
)

// The client port's TLS, as MySQL 8 has it:
//
//   - the certificates of --ssl-cert, --ssl-key, --ssl-ca and --ssl-crl, or
//     without them a self-signed pair made in the data directory at the
//     first start (MySQL's auto_generate_certs), or none (--ssl=false:
//     have_ssl DISABLED);
//   - @@have_ssl, @@ssl_cert, @@ssl_key, @@ssl_ca, @@ssl_crl (settable: the
//     files ALTER INSTANCE RELOAD TLS loads), @@tls_version (TLSv1.2 and 1.3,
//     read-only), and the TLS variables Miraj does not use (ssl_capath,
//     ssl_cipher, tls_ciphersuites…) read-only, so that setting one is
//     refused (1238) rather than ignored;
//   - @@require_secure_transport: a connection in the clear gets 3159 after
//     its handshake response (tlsconn.go), logged once per client host per
//     minute; ON is refused (3075) while TLS is off;
//   - ALTER INSTANCE RELOAD TLS: new connections use the files the
//     variables name; files that cannot serve are refused (3889) and the
//     certificates in force stay;
//   - Ssl_version and Ssl_cipher in the session's status (statusvars.go);
//   - the accounts' REQUIRE clauses, checked at login (accounttls.go).

// TLSOptions are the client port's TLS options.
type TLSOptions struct {
	// Files are the certificates; none: the self-signed pair of the state
	// folder, made at the first start.
	Files clienttls.Files
	// Disabled: no TLS is offered (have_ssl DISABLED) until ALTER
	// INSTANCE RELOAD TLS puts certificates in force.
	Disabled bool
	// RequireSecureTransport is @@require_secure_transport at start.
	RequireSecureTransport bool
	// Now is the clock of the certificates' checks and of the logs' pace;
	// nil: time.Now.
	Now func() time.Time
}

// refusalLogInterval is how often a client host's refused connections
// (require_secure_transport, failed TLS handshakes) are logged: one line a
// minute, however often it retries.
const refusalLogInterval = time.Minute

// serverTLS is the server's side of the client port's TLS: the
// certificates in force, and the logs of refused connections. config and
// the log methods are called from every connection's goroutine; reload
// from the session that runs ALTER INSTANCE RELOAD TLS.
type serverTLS struct {
	log *slog.Logger
	now func() time.Time
	// material is the certificates in force; nil: TLS off.
	material atomic.Pointer[clienttls.Material]
	// files are the files at start, the variables' first values.
	files clienttls.Files
	// reloading serializes ALTER INSTANCE RELOAD TLS.
	reloading sync.Mutex
	// plainRefused, handshakeFailures and badHandshakes pace the log.
	plainRefused, handshakeFailures, badHandshakes *hostLog
}

// newServerTLS loads the certificates of o (or makes the self-signed pair
// in stateDir). A file that cannot serve stops the start-up: the error
// names it and why.
func newServerTLS(o TLSOptions, stateDir, bind string, log *slog.Logger) (*serverTLS, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	t := &serverTLS{log: log, now: now, plainRefused: newHostLog(refusalLogInterval, now),
		handshakeFailures: newHostLog(refusalLogInterval, now), badHandshakes: newHostLog(refusalLogInterval, now)}
	files := o.Files
	switch {
	case o.Disabled:
		if files != (clienttls.Files{}) {
			return nil, fmt.Errorf("%w: --ssl=false with --ssl-cert, --ssl-key, --ssl-ca or --ssl-crl: give one or the other", clienttls.ErrUsage)
		}
		log.Warn("client TLS disabled (--ssl=false): have_ssl is DISABLED and clients connect in the clear")
		return t, nil
	case files.Cert == "" && files.Key == "" && (files.CA != "" || files.CRL != ""):
		return nil, fmt.Errorf("%w: --ssl-ca and --ssl-crl need --ssl-cert and --ssl-key (without the four, the server makes its own self-signed pair)", clienttls.ErrUsage)
	case files == (clienttls.Files{}):
		f, made, err := clienttls.Auto(stateDir, clienttls.NamesFor(Version), autoHosts(bind))
		if err != nil {
			return nil, err
		}
		files = f
		if made {
			log.Info("client TLS: made a self-signed CA and server certificate (give ca.pem to clients that verify the server)",
				"ca", files.CA, "cert", files.Cert, "key", files.Key)
		} else {
			log.Info("client TLS: using the self-signed certificates made at the first start", "ca", files.CA, "cert", files.Cert, "key", files.Key)
		}
	}
	m, err := clienttls.Load(files, now())
	if err != nil {
		return nil, err
	}
	t.files = files
	t.material.Store(m)
	t.logInForce("client TLS on", m)
	return t, nil
}

// certExpiryWarning is how long before its end a certificate in force is
// said to expire soon.
const certExpiryWarning = 30 * 24 * time.Hour

func (t *serverTLS) logInForce(msg string, m *clienttls.Material) {
	t.log.Info(msg, "cert", m.Files.Cert, "key", m.Files.Key, "ca", m.Files.CA, "crl", m.Files.CRL,
		"subject", m.Leaf.Subject.String(), "not_after", m.Leaf.NotAfter.UTC().Format(time.RFC3339), "tls_version", clienttls.Versions)
	if left := m.Leaf.NotAfter.Sub(t.now()); left < certExpiryWarning {
		t.log.Warn("the client port's certificate expires soon", "cert", m.Files.Cert, "not_after", m.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
}

// autoHosts are the names of the self-signed server certificate: the
// loopback names, the machine's name and the bound address.
func autoHosts(bind string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, err := os.Hostname(); err == nil && h != "" && h != "localhost" {
		hosts = append(hosts, h)
	}
	if ip := net.ParseIP(bind); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		hosts = append(hosts, ip.String())
	}
	return hosts
}

// config is the configuration a new connection is served with; nil while
// TLS is off.
func (t *serverTLS) config() *tls.Config {
	if m := t.material.Load(); m != nil {
		return m.Config()
	}
	return nil
}

func (t *serverTLS) on() bool { return t.material.Load() != nil }

// handshakeTimeout is connect_timeout, which bounds a TLS handshake.
func (t *serverTLS) handshakeTimeout() time.Duration {
	if _, v, ok := sql.SystemVariables.GetGlobal("connect_timeout"); ok {
		if n, ok := v.(int64); ok && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return defaultConnectTimeout
}

// handshakeFailed logs a client's failed TLS handshake (a client offering
// only TLS 1.0 or 1.1, a client certificate of another authority or
// revoked), once a minute per host.
func (t *serverTLS) handshakeFailed(peer net.Addr, err error) {
	if host := clientHost(peer); t.handshakeFailures.allow(host) {
		t.log.Warn("client connection refused: TLS handshake failed", "host", host, "err", err)
	}
}

// badHandshake logs a handshake response refused (handshake.go), once a
// minute per host.
func (t *serverTLS) badHandshake(peer net.Addr, err error) {
	if host := clientHost(peer); t.badHandshakes.allow(host) {
		t.log.Warn("client connection refused: bad handshake (error 1043)", "host", host, "err", err)
	}
}

// refusesPlain reports whether a connection in the clear from peer, whose
// handshake response is pkt, is refused (require_secure_transport), and
// logs the refusal once a minute per host.
func (t *serverTLS) refusesPlain(peer net.Addr, pkt []byte) bool {
	_, v, ok := sql.SystemVariables.GetGlobal("require_secure_transport")
	if !ok || !boolValue(v) {
		return false
	}
	if host := clientHost(peer); t.plainRefused.allow(host) {
		t.log.Warn("client connection refused: require_secure_transport is ON and the client did not use TLS (logged once a minute per host)",
			"host", host, "user", responseUser(pkt))
	}
	return true
}

// responseUser is the user name of a handshake response (HandshakeResponse41:
// capabilities, max packet, charset and 23 reserved bytes, then the name),
// "" when pkt holds none.
func responseUser(pkt []byte) string {
	const at = 4 + 32
	if len(pkt) <= at {
		return ""
	}
	name := pkt[at:]
	if i := strings.IndexByte(string(name), 0); i >= 0 {
		return string(name[:i])
	}
	return ""
}

// errPacketAt is the error packet of err with sequence number seq.
func errPacketAt(seq byte, err *mysql.SQLError) []byte {
	p := errorPacket(err)
	p[3] = seq
	return p
}

// hostLog paces the log of refused connections: one line per client host
// and interval.
type hostLog struct {
	interval time.Duration
	now      func() time.Time
	mu       struct {
		sync.Mutex
		last map[string]time.Time
	}
}

// maxHostLogEntries bounds the hosts remembered: past it the entries older
// than the interval go, and if none are, all do (more lines, never fewer).
const maxHostLogEntries = 4096

func newHostLog(interval time.Duration, now func() time.Time) *hostLog {
	h := &hostLog{interval: interval, now: now}
	h.mu.last = map[string]time.Time{}
	return h
}

// allow reports whether an event of host is logged now.
func (h *hostLog) allow(host string) bool {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if last, ok := h.mu.last[host]; ok && now.Sub(last) < h.interval {
		return false
	}
	if len(h.mu.last) >= maxHostLogEntries {
		for k, at := range h.mu.last {
			if now.Sub(at) >= h.interval {
				delete(h.mu.last, k)
			}
		}
		if len(h.mu.last) >= maxHostLogEntries {
			clear(h.mu.last)
		}
	}
	h.mu.last[host] = now
	return true
}

// The TLS variables of MySQL that Miraj does not use: read-only, so that
// setting one is refused rather than taken and ignored.
var unusedTLSVariables = []string{"ssl_capath", "ssl_crlpath", "ssl_cipher", "tls_ciphersuites", "ssl_fips_mode",
	"ssl_session_cache_mode", "ssl_session_cache_timeout", "admin_ssl_ca", "admin_ssl_capath", "admin_ssl_cert",
	"admin_ssl_cipher", "admin_ssl_crl", "admin_ssl_crlpath", "admin_ssl_key", "admin_tls_ciphersuites", "admin_tls_version"}

// liveTLS is the TLS of the server whose variables are registered (the
// last made in the process): @@have_ssl reads it.
var liveTLS atomic.Pointer[serverTLS]

// haveSSL is @@have_ssl: YES while the client port has certificates in
// force.
func haveSSL() string {
	if t := liveTLS.Load(); t != nil && t.on() {
		return "YES"
	}
	return "DISABLED"
}

// registerVariables adds the TLS variables, with t's files and options.
func (t *serverTLS) registerVariables(o TLSOptions) error {
	liveTLS.Store(t)
	global := sql.GetMysqlScope(sql.SystemVariableScope_Global)
	have := func() (any, error) { return haveSSL(), nil }
	file := func(name, value string) sql.SystemVariable {
		return &sql.MysqlSystemVariable{Name: name, Scope: global, Dynamic: true, Type: types.NewSystemStringType(name), Default: value}
	}
	vars := []sql.SystemVariable{
		&sql.MysqlSystemVariable{Name: "have_ssl", Scope: global, Type: types.NewSystemStringType("have_ssl"), Default: "DISABLED", ValueFunction: have},
		&sql.MysqlSystemVariable{Name: "have_openssl", Scope: global, Type: types.NewSystemStringType("have_openssl"), Default: "DISABLED", ValueFunction: have},
		file("ssl_cert", t.files.Cert), file("ssl_key", t.files.Key), file("ssl_ca", t.files.CA), file("ssl_crl", t.files.CRL),
		&sql.MysqlSystemVariable{Name: "tls_version", Scope: global, Type: types.NewSystemStringType("tls_version"), Default: clienttls.Versions},
		&sql.MysqlSystemVariable{Name: "require_secure_transport", Scope: global, Dynamic: true,
			Type: types.NewSystemBoolType("require_secure_transport"), Default: int8(0),
			// Called under go-mysql-server's lock of the variables: it
			// reads none of them.
			NotifyChanged: func(_ *sql.Context, _ sql.SystemVariableScope, v sql.SystemVarValue) error {
				if boolValue(v.Val) && !t.on() {
					return mysqlerr.ErrNoSecureTransports()
				}
				return nil
			}},
	}
	for _, name := range unusedTLSVariables {
		sv, _, ok := sql.SystemVariables.GetGlobal(name)
		if !ok {
			continue
		}
		if mv, ok := sv.(*sql.MysqlSystemVariable); ok {
			ro := *mv
			ro.Dynamic = false
			vars = append(vars, &ro)
		}
	}
	sql.SystemVariables.AddSystemVariables(vars)
	if o.RequireSecureTransport {
		if err := sql.SystemVariables.SetGlobal(sql.NewEmptyContext(), "require_secure_transport", int8(1)); err != nil {
			var se *mysql.SQLError
			if errors.As(err, &se) {
				return fmt.Errorf("--require-secure-transport: %s", se.Message)
			}
			return fmt.Errorf("--require-secure-transport: %w", err)
		}
	}
	return nil
}

// globalString is a string system variable's global value.
func globalString(name string) string {
	_, v, ok := sql.SystemVariables.GetGlobal(name)
	if !ok || v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// reload puts in force the files @@ssl_cert, @@ssl_key, @@ssl_ca and
// @@ssl_crl name now, for the connections that come next (those open keep
// theirs). Files that cannot serve are refused with the reason, and the
// certificates in force stay.
func (t *serverTLS) reload() error {
	t.reloading.Lock()
	defer t.reloading.Unlock()
	files := clienttls.Files{Cert: globalString("ssl_cert"), Key: globalString("ssl_key"), CA: globalString("ssl_ca"), CRL: globalString("ssl_crl")}
	m, err := clienttls.Load(files, t.now())
	if err != nil {
		reason := err.Error()
		var fe *clienttls.FileError
		if errors.As(err, &fe) {
			reason = fmt.Sprintf("%s %s: %v", fe.Var, fe.Path, fe.Err)
		}
		t.log.Warn("ALTER INSTANCE RELOAD TLS refused: the certificates in force stay", "err", reason)
		return mysqlerr.ErrTLSSetup(reason)
	}
	t.material.Store(m)
	t.logInForce("client TLS reloaded (ALTER INSTANCE RELOAD TLS): new connections use", m)
	return nil
}

// alterInstanceRE matches ALTER INSTANCE RELOAD TLS [FOR CHANNEL name]
// [NO ROLLBACK ON ERROR].
var alterInstanceRE = regexp.MustCompile(`(?is)^\s*alter\s+instance\s+reload\s+tls(?:\s+for\s+channel\s+(\w+))?(\s+no\s+rollback\s+on\s+error)?\s*;?\s*$`)

// needReloadTLS: ALTER INSTANCE RELOAD TLS needs CONNECTION_ADMIN, as in
// MySQL 8 (or SUPER).
var needReloadTLS = requirement{static: []sql.PrivilegeType{sql.PrivilegeType_Super}, dynamic: []string{"connection_admin"}, text: "CONNECTION_ADMIN"}

// alterInstance runs ALTER INSTANCE RELOAD TLS, which go-mysql-server's
// parser does not know. FOR CHANNEL mysql_main is the client port (the
// only one: there is no administrative port, mysql_admin); NO ROLLBACK ON
// ERROR, which would leave the port without TLS when the files cannot
// serve, is refused (1235): the certificates in force always stay.
func (h protocolHandler) alterInstance(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	stmt, end, ok := firstStatement(q, whole)
	if !ok {
		return 0, false, nil
	}
	m := alterInstanceRE.FindStringSubmatch(stmt)
	if m == nil {
		return 0, false, nil
	}
	sctx, err := h.srv.sm.NewContextWithQuery(ctx, c, stmt)
	if err != nil {
		return end, true, err
	}
	sql.IncrementStatusVariable(sctx, "Questions", 1)
	g := grants{db: h.srv.engine.Analyzer.Catalog.MySQLDb}
	if !g.meets(sctx, needReloadTLS) {
		return end, true, g.refuse(needReloadTLS)
	}
	switch {
	case m[1] != "" && !strings.EqualFold(m[1], "mysql_main"):
		return end, true, errUserOption("ALTER INSTANCE RELOAD TLS FOR CHANNEL " + m[1] + ": the client port (mysql_main) is the only channel")
	case m[2] != "":
		return end, true, errUserOption("ALTER INSTANCE RELOAD TLS … NO ROLLBACK ON ERROR: the certificates in force stay when new ones cannot serve")
	}
	return end, true, h.srv.tls.reload()
}
