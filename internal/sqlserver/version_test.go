package sqlserver

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestServerNamesItself checks that the server announces one version, Miraj's
// (spec: 8.0.40-miraj-1.0.0), in the handshake a client reads first, in
// VERSION() and in the variables, and not go-mysql-server's own.
func TestServerNamesItself(t *testing.T) {
	s, open := startServer(t)

	// The handshake: packet header (4 bytes), protocol version 10, then the
	// server version, NUL-terminated.
	c, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	head := make([]byte, 4)
	if _, err := io.ReadFull(c, head); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(head[0])|int(head[1])<<8|int(head[2])<<16)
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	end := bytes.IndexByte(body[1:], 0)
	if body[0] != 10 || end < 0 {
		t.Fatalf("handshake: protocol %d, body %q", body[0], body)
	}
	if got := string(body[1 : 1+end]); got != Version {
		t.Errorf("handshake announces %q, want %q", got, Version)
	}

	db := open("root", "", "")
	for q, want := range map[string]string{
		"SELECT VERSION()":                Version,
		"SELECT @@version":                Version,
		"SELECT @@global.version_comment": "Miraj",
	} {
		var got string
		if err := db.QueryRow(q).Scan(&got); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", q, got, want)
		}
	}
	var name, value string
	if err := db.QueryRow("SHOW VARIABLES LIKE 'version'").Scan(&name, &value); err != nil {
		t.Fatal(err)
	}
	if value != Version {
		t.Errorf("SHOW VARIABLES LIKE 'version' = %q, want %q", value, Version)
	}

	// Where the server is: what tools read to find its port and files.
	_, port, _ := net.SplitHostPort(s.Addr().String())
	host, _ := os.Hostname()
	var gotPort, gotProto int
	var bind, dir, gotHost, sock string
	if err := db.QueryRow("SELECT @@port, @@bind_address, @@datadir, @@hostname, @@protocol_version, @@socket").Scan(&gotPort, &bind, &dir, &gotHost, &gotProto, &sock); err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs(s.cfg.Root)
	if strconv.Itoa(gotPort) != port || bind != "127.0.0.1" || dir != root+"/" || gotHost != host || gotProto != 10 || sock != "" {
		t.Errorf("@@port, @@bind_address, @@datadir, @@hostname, @@protocol_version, @@socket = %d %q %q %q %d %q; want %s %q %q %q 10 \"\"",
			gotPort, bind, dir, gotHost, gotProto, sock, port, "127.0.0.1", root+"/", host)
	}
	// Read-only, as in MySQL.
	if _, err := db.Exec("SET GLOBAL version = '1'"); err == nil {
		t.Error("SET GLOBAL version succeeded")
	}
}
