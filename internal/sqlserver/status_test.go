package sqlserver

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// flagNames spells the session's status bits as a driver reads them.
func flagNames(f uint16) string {
	var names []string
	for _, b := range []struct {
		bit  uint16
		name string
	}{{statusInTrans, "IN_TRANS"}, {statusAutocommit, "AUTOCOMMIT"}, {statusInTransReadOnly, "IN_TRANS_READONLY"}} {
		if f&b.bit != 0 {
			names = append(names, b.name)
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, "|")
}

// handshakeFlags reads the status flags of the server's first packet
// (HandshakeV10: protocol version, NUL-terminated server version,
// connection id (4), auth data (8), filler (1), capabilities (2),
// character set (1), status flags (2), …).
func handshakeFlags(t *testing.T, addr string) uint16 {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(c, p); err != nil {
		t.Fatal(err)
	}
	i := 1
	for i < len(p) && p[i] != 0 {
		i++
	}
	i += 1 + 4 + 8 + 1 + 2 + 1
	if p[0] != 10 || i+2 > len(p) {
		t.Fatalf("not a HandshakeV10 packet: %x", p)
	}
	return binary.LittleEndian.Uint16(p[i:])
}

// The flags of the handshake and of the packet that ends each statement
// say what the session is doing: drivers decide by them whether to send
// SET autocommit, COMMIT and ROLLBACK at all.
func TestStatusFlagsFollowTheSession(t *testing.T) {
	s, _ := startServer(t)
	addr := s.Addr().String()
	if got := flagNames(handshakeFlags(t, addr)); got != "AUTOCOMMIT" {
		t.Fatalf("handshake flags %s, want AUTOCOMMIT", got)
	}
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	connect := func(t *testing.T, deprecateEOF bool) *mysql.Conn {
		c, err := mysql.Connect(context.Background(), &mysql.ConnParams{Host: host, Port: port, Uname: "root",
			DisableClientDeprecateEOF: !deprecateEOF})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	exec := func(t *testing.T, c *mysql.Conn, q string) (uint16, error) {
		t.Helper()
		_, st, err := c.ExecuteFetchMulti(context.Background(), q, 1000, false)
		return uint16(st), err
	}
	setup := connect(t, true)
	for _, q := range []string{"CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY, v INT)", "INSERT INTO f.t VALUES (1, 10)"} {
		if _, err := exec(t, setup, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// One session, statement by statement. A result set ends with an EOF
	// packet, or an OK packet when the client asked for CLIENT_DEPRECATE_EOF:
	// both carry the flags.
	script := []struct{ q, want string }{
		{"SELECT 1", "AUTOCOMMIT"},
		{"UPDATE f.t SET v = v + 1", "AUTOCOMMIT"},
		{"START TRANSACTION", "IN_TRANS|AUTOCOMMIT"},
		{"UPDATE f.t SET v = v + 1", "IN_TRANS|AUTOCOMMIT"},
		{"SELECT * FROM f.t", "IN_TRANS|AUTOCOMMIT"},
		{"COMMIT", "AUTOCOMMIT"},
		{"BEGIN", "IN_TRANS|AUTOCOMMIT"},
		{"ROLLBACK", "AUTOCOMMIT"},
		{"START TRANSACTION READ ONLY", "IN_TRANS|AUTOCOMMIT|IN_TRANS_READONLY"},
		{"SELECT * FROM f.t", "IN_TRANS|AUTOCOMMIT|IN_TRANS_READONLY"},
		{"COMMIT", "AUTOCOMMIT"},
		// Autocommit off: as in MySQL, the transaction shows once a
		// statement touched a table, and ends with COMMIT or ROLLBACK.
		{"SET autocommit = 0", "-"},
		{"SELECT 1", "-"},
		{"SELECT * FROM f.t", "IN_TRANS"},
		{"COMMIT", "-"},
		{"UPDATE f.t SET v = v + 1", "IN_TRANS"},
		{"ROLLBACK", "-"},
		{"INSERT INTO f.t VALUES (2, 20)", "IN_TRANS"},
		// DDL commits implicitly.
		{"CREATE TABLE f.u (id INT PRIMARY KEY)", "-"},
		{"INSERT INTO f.t VALUES (3, 30)", "IN_TRANS"},
		// Autocommit back on commits the open transaction, as in MySQL.
		{"SET autocommit = 1", "AUTOCOMMIT"},
		{"SET autocommit = 0", "-"},
		{"START TRANSACTION", "IN_TRANS"},
		{"INSERT INTO f.t VALUES (4, 40)", "IN_TRANS"},
		{"SET autocommit = 1", "AUTOCOMMIT"},
	}
	for _, deprecateEOF := range []bool{true, false} {
		t.Run("deprecate_eof="+strconv.FormatBool(deprecateEOF), func(t *testing.T) {
			c := connect(t, deprecateEOF)
			exec(t, setup, "DELETE FROM f.t WHERE id > 1")
			exec(t, setup, "DROP TABLE IF EXISTS f.u")
			for i, step := range script {
				f, err := exec(t, c, step.q)
				if err != nil {
					t.Fatalf("step %d %q: %v", i, step.q, err)
				}
				if got := flagNames(f); got != step.want {
					t.Fatalf("step %d %q: flags %s, want %s", i, step.q, got, step.want)
				}
			}
			// Rows 2 to 4 were committed (by DDL, by autocommit back on).
			r, err := setup.ExecuteFetch("SELECT COUNT(*) FROM f.t WHERE id IN (2, 3, 4)", 1, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Rows[0][0].ToString(); got != "3" {
				t.Fatalf("rows 2 to 4 committed: %s, want 3", got)
			}
		})
	}

	// A transaction that loses a write conflict at commit is over: 1213,
	// then neither IN_TRANS nor a stale snapshot. The same when the commit
	// is the implicit one of SET autocommit = 1, which then fails and
	// leaves autocommit off.
	for _, end := range []string{"COMMIT", "SET autocommit = 1"} {
		t.Run("conflict at "+end, func(t *testing.T) {
			a, b := connect(t, true), connect(t, true)
			for _, q := range []string{"SET autocommit = 0", "UPDATE f.t SET v = 100 WHERE id = 1"} {
				if _, err := exec(t, a, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if _, err := exec(t, b, "UPDATE f.t SET v = v + 1 WHERE id = 1"); err != nil {
				t.Fatal(err)
			}
			_, err := exec(t, a, end)
			if se, ok := err.(*mysql.SQLError); !ok || se.Num != 1213 {
				t.Fatalf("%s after a conflicting commit: %v, want error 1213", end, err)
			}
			f, err := exec(t, a, "SELECT 1")
			if err != nil {
				t.Fatal(err)
			}
			if got := flagNames(f); got != "-" {
				t.Fatalf("flags after the failed %s: %s, want - (autocommit off, no transaction)", end, got)
			}
			r, err := a.ExecuteFetch("SELECT @@autocommit, COUNT(*) FROM f.t WHERE v = 100", 1, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Rows[0][0].ToString() + " " + r.Rows[0][1].ToString(); got != "0 0" {
				t.Fatalf("@@autocommit and rows with the loser's v after the failed %s: %s, want 0 0", end, got)
			}
			exec(t, a, "ROLLBACK")
		})
	}
}
