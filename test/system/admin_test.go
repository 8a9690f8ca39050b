package system

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runAdmin runs mariadb-admin (mysqladmin) as user against s and returns
// its output (standard output and error) and whether it succeeded.
func runAdmin(t *testing.T, bin string, s *server, user string, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dumpTimeout)
	defer cancel()
	out, err := toolCommand(ctx, t, bin, s, user, args...).CombinedOutput()
	return string(out), err == nil
}

// TestAdminTool runs mariadb-admin's commands that use the protocol's
// COM_STATISTICS and COM_REFRESH, and the mysql client's status command,
// against a server process.
func TestAdminTool(t *testing.T) {
	admin, err := exec.LookPath("mariadb-admin")
	requireClient(t, "mariadb-admin", "apt-get install -y mariadb-client", err == nil)
	client, err := exec.LookPath("mariadb")
	requireClient(t, "mariadb", "apt-get install -y mariadb-client", err == nil)

	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE d")
	mustExec(t, db, "CREATE TABLE d.t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO d.t VALUES (1)")

	statusRE := regexp.MustCompile(`^Uptime: \d+  Threads: \d+  Questions: \d+  Slow queries: \d+  Opens: \d+  Flush tables: \d+  Open tables: \d+  Queries per second avg: \d+\.\d{3}\n$`)
	out, ok := runAdmin(t, admin, s, "root", "status")
	if !ok || !statusRE.MatchString(out) {
		t.Errorf("mariadb-admin status: ok=%v %q", ok, out)
	}
	out, ok = runAdmin(t, admin, s, "root", "version")
	if !ok || !strings.Contains(out, "Server version\t\t8.0.40-miraj-1.0.0\n") || !strings.Contains(out, "Uptime:") || !strings.Contains(out, "Threads: ") {
		t.Errorf("mariadb-admin version: ok=%v %q", ok, out)
	}
	// Several commands in one connection, in order: each answered once.
	out, ok = runAdmin(t, admin, s, "root", "ping", "status", "refresh", "flush-threads", "status", "flush-status", "ping")
	if !ok || strings.Count(out, "mysqld is alive") != 2 || strings.Count(out, "Uptime: ") != 2 {
		t.Errorf("mariadb-admin ping status refresh flush-threads status flush-status ping: ok=%v %q", ok, out)
	}

	// COM_REFRESH is FLUSH: it needs RELOAD; COM_STATISTICS needs nothing.
	mustExec(t, db, "CREATE USER plain@'%'")
	out, ok = runAdmin(t, admin, s, "plain", "refresh")
	if ok || !strings.Contains(out, "RELOAD") {
		t.Errorf("mariadb-admin refresh without RELOAD: ok=%v %q", ok, out)
	}
	out, ok = runAdmin(t, admin, s, "plain", "flush-threads")
	if ok || !strings.Contains(out, "RELOAD") {
		t.Errorf("mariadb-admin flush-threads without RELOAD: ok=%v %q", ok, out)
	}
	if out, ok = runAdmin(t, admin, s, "plain", "status"); !ok || !statusRE.MatchString(out) {
		t.Errorf("mariadb-admin status without privileges: ok=%v %q", ok, out)
	}

	// COM_SHUTDOWN is SHUTDOWN: it needs the SHUTDOWN privilege.
	if out, ok = runAdmin(t, admin, s, "plain", "shutdown"); ok || !strings.Contains(out, "SHUTDOWN privilege") {
		t.Errorf("mariadb-admin shutdown without the privilege: ok=%v %q", ok, out)
	}

	// The client's status command asks for the same line; the connection
	// goes on afterwards.
	out, ok = runAdmin(t, client, s, "root", "-e", "status; SELECT COUNT(*) FROM d.t")
	if !ok || !strings.Contains(out, "Server version:\t\t8.0.40-miraj-1.0.0 Miraj\n") || !strings.Contains(out, "Threads: ") ||
		strings.Contains(out, "not implemented") || !strings.HasSuffix(out, "COUNT(*)\n1\n") {
		t.Errorf("mariadb -e status: ok=%v %q", ok, out)
	}

	// mariadb-admin shutdown stops the server as SIGTERM does: the process
	// ends with 0, the data kept.
	if out, ok := runAdmin(t, admin, s, "root", "shutdown"); !ok {
		t.Fatalf("mariadb-admin shutdown: %q", out)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("server after mariadb-admin shutdown: %v\n%s", err, s.output())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("server still running 60 s after mariadb-admin shutdown")
	}
	s.cmd = nil
	if !strings.Contains(s.output(), "shutdown requested by SHUTDOWN") {
		t.Errorf("the log does not say who asked for the shutdown:\n%s", s.output())
	}
	again := newServer(t, s.root)
	if got := queryString(t, again.open(""), "SELECT COUNT(*) FROM d.t"); got != "1;" {
		t.Errorf("rows after the restart: %s", got)
	}
}
