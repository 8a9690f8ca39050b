package sqlserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/mysql_db/serial"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/clienttls"
)

// The accounts' REQUIRE clauses (CREATE USER … REQUIRE, ALTER USER …
// REQUIRE), checked at login as MySQL checks them (sql_authentication.cc's
// check_ssl), with 1045 when a login does not meet its account's:
//
//	REQUIRE NONE       anything (MySQL's ssl_type '')
//	REQUIRE SSL        a TLS connection ('ANY')
//	REQUIRE X509       TLS and a client certificate, which the handshake
//	                   verified against --ssl-ca ('X509')
//	REQUIRE CIPHER 'c' TLS with cipher c (OpenSSL's name); with ISSUER or
//	  ISSUER 'i'       SUBJECT, a client certificate whose issuer and
//	  SUBJECT 's'      subject, written as X509_NAME_oneline writes them,
//	                   are exactly i and s ('SPECIFIED')
//
// go-mysql-server's accounts have no place for them, so they travel with
// the accounts file (and the accounts replication carries, which is its
// bytes) after go-mysql-server's own bytes, which it reads from their
// start and ends without looking past:
//
//	+------------------------------------------+
//	| go-mysql-server's accounts (flatbuffer)  |
//	+------------------------------------------+
//	| JSON: {"require":[{"user":…,"host":…,    |
//	|        "type":"X509",…}, …]}             |
//	+------------------------------------------+
//	| length of the JSON: uint32, little endian|
//	+------------------------------------------+
//	| "MIRAJREQ" (accountsTrailerMagic)        |
//	+------------------------------------------+
//
// A file without the trailer (written before, or with no REQUIRE at all)
// has every account at REQUIRE NONE. Each time the accounts are written,
// the clauses of accounts that are gone (DROP USER) are dropped.

// accountsTrailerMagic ends an accounts file that carries REQUIRE clauses.
const accountsTrailerMagic = "MIRAJREQ"

// maxAccountsTrailer bounds the JSON of the clauses read back: a few
// hundred bytes per account.
const maxAccountsTrailer = 64 << 20

// MySQL's ssl_type of an account.
const (
	requireNone      = ""
	requireSSL       = "ANY"
	requireX509      = "X509"
	requireSpecified = "SPECIFIED"
)

// tlsRequirement is an account's REQUIRE clause. The zero value is REQUIRE
// NONE.
type tlsRequirement struct {
	Type    string `json:"type"`
	Cipher  string `json:"cipher,omitempty"`
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
}

// requirementOf is the clause go-mysql-server's parser read.
func requirementOf(o *plan.TLSOptions) tlsRequirement {
	switch {
	case o == nil:
		return tlsRequirement{}
	case o.Cipher != "" || o.Issuer != "" || o.Subject != "":
		return tlsRequirement{Type: requireSpecified, Cipher: o.Cipher, Issuer: o.Issuer, Subject: o.Subject}
	case o.X509:
		return tlsRequirement{Type: requireX509}
	case o.SSL:
		return tlsRequirement{Type: requireSSL}
	}
	return tlsRequirement{}
}

// met reports whether a connection whose TLS is st (nil: in the clear)
// meets r.
func (r tlsRequirement) met(st *tls.ConnectionState) bool {
	switch r.Type {
	case requireNone:
		return true
	case requireSSL:
		return st != nil
	case requireX509:
		// The handshake verified any certificate the client sent.
		return st != nil && len(st.PeerCertificates) > 0
	case requireSpecified:
		if st == nil || r.Cipher != "" && clienttls.CipherName(st.CipherSuite) != r.Cipher {
			return false
		}
		if r.Issuer == "" && r.Subject == "" {
			return true
		}
		if len(st.PeerCertificates) == 0 {
			return false
		}
		leaf := st.PeerCertificates[0]
		if r.Issuer != "" {
			if n, err := clienttls.OneLine(leaf.RawIssuer); err != nil || n != r.Issuer {
				return false
			}
		}
		if r.Subject != "" {
			if n, err := clienttls.OneLine(leaf.RawSubject); err != nil || n != r.Subject {
				return false
			}
		}
		return true
	}
	panic(fmt.Sprintf("sqlserver: REQUIRE of type %q", r.Type))
}

// text is the clause as SHOW CREATE USER writes it.
func (r tlsRequirement) text() string {
	switch r.Type {
	case requireSSL:
		return "REQUIRE SSL"
	case requireX509:
		return "REQUIRE X509"
	case requireSpecified:
		var parts []string
		for _, p := range []struct{ name, v string }{{"ISSUER", r.Issuer}, {"SUBJECT", r.Subject}, {"CIPHER", r.Cipher}} {
			if p.v != "" {
				parts = append(parts, p.name+" "+sqlString(p.v))
			}
		}
		return "REQUIRE " + strings.Join(parts, " ")
	}
	return "REQUIRE NONE"
}

// accountTLS holds the accounts' clauses. Safe for concurrent use; the
// accounts' writes are serialized by go-mysql-server's editor, under which
// the persister calls trailer.
type accountTLS struct {
	mu struct {
		sync.Mutex
		byAccount map[mysql_db.UserPrimaryKey]tlsRequirement
	}
}

func newAccountTLS() *accountTLS {
	a := &accountTLS{}
	a.mu.byAccount = map[mysql_db.UserPrimaryKey]tlsRequirement{}
	return a
}

// get is the clause of account k (REQUIRE NONE when it has none).
func (a *accountTLS) get(k mysql_db.UserPrimaryKey) tlsRequirement {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mu.byAccount[k]
}

// set gives the accounts ks clause r, and returns the function that puts
// their clauses back as they were (for a write of the accounts that
// fails).
func (a *accountTLS) set(r tlsRequirement, ks ...mysql_db.UserPrimaryKey) (undo func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	before := map[mysql_db.UserPrimaryKey]tlsRequirement{}
	for _, k := range ks {
		before[k] = a.mu.byAccount[k]
		a.setLocked(k, r)
	}
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		for k, r := range before {
			a.setLocked(k, r)
		}
	}
}

func (a *accountTLS) setLocked(k mysql_db.UserPrimaryKey, r tlsRequirement) {
	if r.Type == requireNone {
		delete(a.mu.byAccount, k)
		return
	}
	a.mu.byAccount[k] = r
}

// moved gives the clause of from to to (RENAME USER), with its undo.
func (a *accountTLS) moved(from, to mysql_db.UserPrimaryKey) (undo func()) {
	r := a.get(from)
	undoTo := a.set(r, to)
	undoFrom := a.set(tlsRequirement{}, from)
	return func() { undoFrom(); undoTo() }
}

// trailerEntry is a clause in the accounts file.
type trailerEntry struct {
	User string `json:"user"`
	Host string `json:"host"`
	tlsRequirement
}

// withTrailer is go-mysql-server's accounts data followed by the clauses
// of the accounts it holds; the others are forgotten.
func (a *accountTLS) withTrailer(data []byte) ([]byte, error) {
	keys, err := accountKeys(data)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	var entries []trailerEntry
	for k, r := range a.mu.byAccount {
		if !keys[k] {
			delete(a.mu.byAccount, k)
			continue
		}
		entries = append(entries, trailerEntry{User: k.User, Host: k.Host, tlsRequirement: r})
	}
	a.mu.Unlock()
	if len(entries) == 0 {
		return data, nil
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].User != entries[j].User {
			return entries[i].User < entries[j].User
		}
		return entries[i].Host < entries[j].Host
	})
	js, err := json.Marshal(struct {
		Require []trailerEntry `json:"require"`
	}{entries})
	if err != nil {
		return nil, err
	}
	out := append(bytes.Clone(data), js...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(js)))
	out = append(out, accountsTrailerMagic...)
	if back, _, err := splitAccountsFile(out); err != nil || !bytes.Equal(back, data) {
		panic(fmt.Sprintf("sqlserver: accounts trailer does not read back: %v", err))
	}
	return out, nil
}

// errAccountsTrailer is an accounts file whose trailer cannot be read.
var errAccountsTrailer = errors.New("sqlserver: accounts file: damaged REQUIRE clauses")

// splitAccountsFile splits an accounts file into go-mysql-server's data
// and the clauses after it.
func splitAccountsFile(data []byte) ([]byte, map[mysql_db.UserPrimaryKey]tlsRequirement, error) {
	reqs := map[mysql_db.UserPrimaryKey]tlsRequirement{}
	if !bytes.HasSuffix(data, []byte(accountsTrailerMagic)) {
		return data, reqs, nil
	}
	end := len(data) - len(accountsTrailerMagic)
	if end < 4 {
		return nil, nil, errAccountsTrailer
	}
	n := int(binary.LittleEndian.Uint32(data[end-4 : end]))
	if n > maxAccountsTrailer || n > end-4 {
		return nil, nil, fmt.Errorf("%w: %d bytes of clauses in a file of %d", errAccountsTrailer, n, len(data))
	}
	start := end - 4 - n
	var t struct {
		Require []trailerEntry `json:"require"`
	}
	if err := json.Unmarshal(data[start:end-4], &t); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errAccountsTrailer, err)
	}
	for _, e := range t.Require {
		switch e.Type {
		case requireSSL, requireX509, requireSpecified:
		default:
			return nil, nil, fmt.Errorf("%w: REQUIRE of type %q for '%s'@'%s'", errAccountsTrailer, e.Type, e.User, e.Host)
		}
		reqs[mysql_db.UserPrimaryKey{User: e.User, Host: e.Host}] = e.tlsRequirement
	}
	return data[:start], reqs, nil
}

// replace puts in the clauses of a file read (start-up, or the accounts a
// secondary receives).
func (a *accountTLS) replace(reqs map[mysql_db.UserPrimaryKey]tlsRequirement) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mu.byAccount = reqs
}

// accountKeys are the accounts of go-mysql-server's accounts data.
func accountKeys(data []byte) (keys map[mysql_db.UserPrimaryKey]bool, err error) {
	keys = map[mysql_db.UserPrimaryKey]bool{}
	if len(data) == 0 {
		return keys, nil
	}
	defer func() {
		if r := recover(); r != nil {
			keys, err = nil, fmt.Errorf("sqlserver: accounts data unreadable: %v", r)
		}
	}()
	db := serial.GetRootAsMySQLDb(data, 0)
	u := new(serial.User)
	for i := 0; i < db.UserLength(); i++ {
		if db.User(u, i) {
			keys[mysql_db.UserPrimaryKey{User: string(u.User()), Host: string(u.Host())}] = true
		}
	}
	for i := 0; i < db.SuperUserLength(); i++ {
		if db.SuperUser(u, i) {
			keys[mysql_db.UserPrimaryKey{User: string(u.User()), Host: string(u.Host())}] = true
		}
	}
	return keys, nil
}

// requireRE matches ALTER USER [IF EXISTS] account [, account …] REQUIRE
// clause.
var requireRE = regexp.MustCompile(`(?is)^\s*alter\s+user\s+(if\s+exists\s+)?(.+?)\s+require\s+(.+?)\s*;?\s*$`)

// alterUserRequire runs ALTER USER … REQUIRE, which go-mysql-server's
// parser does not know: the accounts get the clause for their next logins
// (connections open stay). It needs CREATE USER (1227); an account that
// does not exist is 1396, unless IF EXISTS. Other clauses in the same
// statement (IDENTIFIED BY …) are the parser's (1064): give them in a
// statement of their own.
func (h protocolHandler) alterUserRequire(ctx context.Context, c *mysql.Conn, q string, whole bool) (int, bool, error) {
	stmt, end, ok := firstStatement(q, whole)
	if !ok {
		return 0, false, nil
	}
	m := requireRE.FindStringSubmatch(stmt)
	if m == nil {
		return 0, false, nil
	}
	req, ok := parseRequire(m[3])
	if !ok {
		return 0, false, nil // the parser's 1064
	}
	var accounts []mysql_db.UserPrimaryKey
	for _, spec := range splitAccounts(m[2]) {
		a, ok := parseAccount(spec)
		if !ok {
			return 0, false, nil
		}
		accounts = append(accounts, a)
	}
	sctx, g, err := h.accountChange(ctx, c, stmt)
	if err != nil {
		return end, true, err
	}
	ed := g.db.Editor()
	defer ed.Close()
	var failed []string
	var found []mysql_db.UserPrimaryKey
	for _, a := range accounts {
		if u, ok := ed.GetUser(a); !ok || u.IsRole {
			failed = append(failed, accountText(a))
			continue
		}
		found = append(found, a)
	}
	if len(failed) > 0 && m[1] == "" {
		return end, true, mysql.NewSQLError(1396, "HY000", "Operation ALTER USER failed for %s", strings.Join(failed, ","))
	}
	undo := h.srv.acctTLS.set(req, found...)
	if err := g.db.Persist(sctx, ed); err != nil {
		undo()
		return end, true, err
	}
	return end, true, nil
}

// parseRequire reads a REQUIRE clause: NONE, SSL, X509, or CIPHER,
// ISSUER and SUBJECT with their strings, each once, AND between them
// optional.
func parseRequire(s string) (tlsRequirement, bool) {
	toks, ok := requireTokens(s)
	if !ok || len(toks) == 0 {
		return tlsRequirement{}, false
	}
	if len(toks) == 1 && !toks[0].quoted {
		switch strings.ToUpper(toks[0].text) {
		case "NONE":
			return tlsRequirement{}, true
		case "SSL":
			return tlsRequirement{Type: requireSSL}, true
		case "X509":
			return tlsRequirement{Type: requireX509}, true
		}
		return tlsRequirement{}, false
	}
	r := tlsRequirement{Type: requireSpecified}
	seen := map[string]bool{}
	for i := 0; i < len(toks); {
		kw := strings.ToUpper(toks[i].text)
		if toks[i].quoted {
			return tlsRequirement{}, false
		}
		if kw == "AND" && i > 0 {
			i++
			continue
		}
		if i+1 >= len(toks) || !toks[i+1].quoted || seen[kw] {
			return tlsRequirement{}, false
		}
		seen[kw] = true
		v := toks[i+1].text
		switch kw {
		case "CIPHER":
			r.Cipher = v
		case "ISSUER":
			r.Issuer = v
		case "SUBJECT":
			r.Subject = v
		default:
			return tlsRequirement{}, false
		}
		i += 2
	}
	return r, true
}

// requireToken is a word or a quoted string (unquoted) of a REQUIRE
// clause.
type requireToken struct {
	text   string
	quoted bool
}

func requireTokens(s string) ([]requireToken, bool) {
	var out []requireToken
	for i := 0; i < len(s); {
		switch ch := s[i]; {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
		case ch == '\'' || ch == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
					b.WriteByte(s[j])
					continue
				}
				if s[j] == ch {
					if j+1 < len(s) && s[j+1] == ch {
						b.WriteByte(ch)
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, false
			}
			out = append(out, requireToken{text: b.String(), quoted: true})
			i = j + 1
		default:
			j := i
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
				j++
			}
			if j == i {
				return nil, false
			}
			out = append(out, requireToken{text: s[i:j]})
			i = j
		}
	}
	return out, true
}
