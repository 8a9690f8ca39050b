// Package system runs the real miraj-server binary and talks to it over the
// MySQL protocol, as a user would.
package system

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

var serverBin, pkiBin, quarantineBin string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("test/system: the system tests run the real binaries; not in the fast tier (-short)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "miraj-system-")
	if err != nil {
		panic(err)
	}
	serverBin = filepath.Join(dir, "miraj-server")
	pkiBin = filepath.Join(dir, "miraj-cluster-pki")
	quarantineBin = filepath.Join(dir, "miraj-quarantine")
	build := exec.Command("go", "build", "-o", dir, "github.com/miraj-db/miraj/cmd/miraj-server", "github.com/miraj-db/miraj/cmd/miraj-cluster-pki",
		"github.com/miraj-db/miraj/cmd/miraj-quarantine")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		panic(fmt.Sprintf("build: %v", err))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is one miraj-server process.
type server struct {
	t    *testing.T
	root string
	args []string
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
}

var readyRE = regexp.MustCompile(`msg="miraj server ready" addr=(\S+)`)

const startTimeout = 60 * time.Second

func newServer(t *testing.T, root string, args ...string) *server {
	t.Helper()
	s := &server{t: t, root: root, args: args}
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.kill() })
	return s
}

// start launches the process and waits for its ready line (port 0: the
// kernel picks a free port, read back from the log).
func (s *server) start() error {
	s.mu.Lock()
	s.out.Reset()
	s.mu.Unlock()
	args := append([]string{"--root", s.root, "--port", "0"}, s.args...)
	s.cmd = exec.Command(serverBin, args...)
	pr, pw := io.Pipe()
	s.cmd.Stdout, s.cmd.Stderr = pw, pw
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.out.WriteString(line + "\n")
			s.mu.Unlock()
			if m := readyRE.FindStringSubmatch(line); m != nil {
				select {
				case ready <- m[1]:
				default:
				}
			}
		}
	}()
	go func() {
		err := s.cmd.Wait()
		pw.Close()
		s.done <- err
	}()
	select {
	case s.addr = <-ready:
		return nil
	case err := <-s.done:
		s.done <- err
		return fmt.Errorf("miraj-server exited before ready (%v):\n%s", err, s.output())
	case <-time.After(startTimeout):
		return fmt.Errorf("miraj-server not ready after %v:\n%s", startTimeout, s.output())
	}
}

func (s *server) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// kill9 kills the process as a crash would.
func (s *server) kill() {
	if s.cmd != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.done
		s.cmd = nil
	}
}

// stop asks for a clean shutdown (SIGTERM) and waits for it.
func (s *server) stop() {
	s.t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Fatalf("clean shutdown: %v\n%s", err, s.output())
		}
	case <-time.After(60 * time.Second):
		s.t.Fatal("no shutdown after SIGTERM")
	}
	s.cmd = nil
}

func (s *server) restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *server) dsn(user, pass, db string) string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = user, pass, "tcp", s.addr, db
	c.AllowNativePasswords = true
	c.Timeout = 10 * time.Second
	return c.FormatDSN()
}

func (s *server) open(db string) *sql.DB {
	s.t.Helper()
	d, err := sql.Open("mysql", s.dsn("root", "", db))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { d.Close() })
	return d
}

func mustExec(t *testing.T, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) {
	t.Helper()
	if _, err := q.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func queryString(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out bytes.Buffer
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if i > 0 {
				out.WriteByte(' ')
			}
			if v.Valid {
				out.WriteString(v.String)
			} else {
				out.WriteString("NULL")
			}
		}
		out.WriteByte(';')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// mysqlError returns the MySQL error number and SQLSTATE of err.
func mysqlError(err error) (uint16, string) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number, string(me.SQLState[:])
	}
	return 0, ""
}

// waitFor polls cond until it is true or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
