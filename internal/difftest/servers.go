package difftest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// startTimeout bounds how long a server may take to accept connections.
const startTimeout = 90 * time.Second

var readyRE = regexp.MustCompile(`msg="miraj server ready" addr=\S+:(\d+)`)

// StartMiraj starts a miraj-server on a fresh data directory under work
// (port 0: the kernel picks a free one, read back from its ready line) and
// returns its port. bin is the binary to run; empty builds ./cmd/miraj-server
// into work first. The server is stopped when the test ends; its log is
// work/miraj.log.
func StartMiraj(t testing.TB, ctx context.Context, work, bin string) int {
	t.Helper()
	if bin == "" {
		bin = filepath.Join(work, "miraj-server")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/miraj-db/miraj/cmd/miraj-server")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build miraj-server: %v\n%s", err, out)
		}
	}
	logf, err := os.Create(filepath.Join(work, "miraj.log"))
	if err != nil {
		t.Fatal(err)
	}
	// Files anywhere, as the private MariaDB's (--no-defaults: an empty
	// secure_file_priv): the corpus loads files beside it.
	cmd := exec.Command(bin, "--root", filepath.Join(work, "miraj"), "--port", "0", "--log=false", "--secure-file-priv=")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() { stop(t, "miraj-server", cmd, done) })
	ready := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if m := readyRE.FindStringSubmatch(sc.Text()); m != nil {
				p, _ := strconv.Atoi(m[1])
				select {
				case ready <- p:
				default:
				}
			}
		}
		logf.Close()
	}()
	select {
	case p := <-ready:
		return p
	case err := <-done:
		done <- err
		t.Fatalf("miraj-server exited before it was ready (%v): see %s", err, logf.Name())
	case <-time.After(startTimeout):
		t.Fatalf("miraj-server not ready after %v", startTimeout)
	}
	return 0
}

// StartMariaDB starts a private mariadbd as bench/lib.sh's
// start_private_mariadb does: --no-defaults (nothing of /etc/mysql), its own
// datadir, socket and pid file under work, a free port on 127.0.0.1. The
// sql_mode is MySQL 8's default, which is what Miraj follows.
func StartMariaDB(t testing.TB, ctx context.Context, mariadbd, work string) int {
	t.Helper()
	return StartMariaDBArgs(t, ctx, mariadbd, work)
}

// StartMariaDBArgs is StartMariaDB with more options for mariadbd, given
// last so that they override the defaults (--log-bin over --skip-log-bin).
func StartMariaDBArgs(t testing.TB, ctx context.Context, mariadbd, work string, extra ...string) int {
	t.Helper()
	dir := filepath.Join(work, "mariadb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	install := exec.CommandContext(ctx, "mariadb-install-db", "--no-defaults", "--datadir="+filepath.Join(dir, "data"),
		"--user=root", "--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	port := FreePort(t)
	cmd := exec.Command(mariadbd, "--no-defaults", "--user=root", "--datadir="+filepath.Join(dir, "data"), "--tmpdir="+dir,
		"--socket="+filepath.Join(dir, "mysqld.sock"), "--pid-file="+filepath.Join(dir, "mysqld.pid"),
		"--log-error="+filepath.Join(dir, "error.log"), "--port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--skip-name-resolve", "--skip-log-bin", "--innodb-buffer-pool-size=32M",
		"--sql-mode=ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci", "--default-time-zone=+00:00")
	cmd.Args = append(cmd.Args, extra...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { stop(t, "mariadbd", cmd, done) })
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := mysql.Connect(ctx, &mysql.ConnParams{Host: "127.0.0.1", Port: port, Uname: "root"})
		if err == nil {
			c.Close()
			return port
		}
		select {
		case err := <-done:
			done <- err
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("mariadbd exited before it was ready (%v):\n%s", err, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mariadbd not ready after %v: %v", startTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FreePort picks a port that is free now, below the kernel's ephemeral
// range (32768+) so that an outgoing connection cannot take it between
// this check and mariadbd's bind (as bench/lib.sh does).
func FreePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			l.Close()
			return p
		}
	}
	t.Fatal("no free port in 20000-32000")
	return 0
}

// stopTimeout bounds a clean shutdown before the process is killed.
const stopTimeout = 60 * time.Second

func stop(t testing.TB, name string, cmd *exec.Cmd, done chan error) {
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(stopTimeout):
		t.Logf("%s did not stop in %v: killing it", name, stopTimeout)
		cmd.Process.Kill()
		<-done
	}
}

// FindMariaDB returns the path of mariadbd, or "" when MariaDB is not installed.
func FindMariaDB() string {
	if p, err := exec.LookPath("mariadbd"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/mariadbd"); err == nil {
		if _, err := exec.LookPath("mariadb-install-db"); err == nil {
			return "/usr/sbin/mariadbd"
		}
	}
	return ""
}
