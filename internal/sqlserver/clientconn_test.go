package sqlserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// echoServer answers each line a client sends with the line and the mode
// its connection read it in ("blocking" or "poller"). ended receives each
// connection's read error once it ends.
type echoServer struct {
	ln    *clientListener
	conns chan *clientConn
	ended chan error
}

func newEchoServer(t *testing.T, maxBlocking int64) *echoServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: newClientListener(l, false), conns: make(chan *clientConn, 8), ended: make(chan error, 8)}
	s.ln.maxBlocking = maxBlocking
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			cc := c.(*clientConn)
			s.conns <- cc
			go s.serve(cc)
		}
	}()
	return s
}

func (s *echoServer) serve(c *clientConn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			c.Close()
			s.ended <- err
			return
		}
		mode := "poller"
		if c.blocking {
			mode = "blocking"
		}
		if _, err := fmt.Fprintf(c, "%s %s\n", strings.TrimSuffix(line, "\n"), mode); err != nil {
			c.Close()
			s.ended <- err
			return
		}
	}
}

type echoClient struct {
	net.Conn
	r *bufio.Reader
}

func (s *echoServer) dial(t *testing.T) (*echoClient, *clientConn) {
	c, err := net.Dial("tcp", s.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &echoClient{Conn: c, r: bufio.NewReader(c)}, <-s.conns
}

// ask sends line and returns the mode the server read it in.
func (c *echoClient) ask(t *testing.T, line string) string {
	t.Helper()
	if _, err := fmt.Fprintf(c, "%s\n", line); err != nil {
		t.Fatal(err)
	}
	got, err := c.r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	got = strings.TrimSuffix(got, "\n")
	mode := got[strings.LastIndexByte(got, ' ')+1:]
	if want := line + " " + mode; got != want {
		t.Fatalf("answer %.40q..., want %.40q...", got, want)
	}
	return mode
}

// waitEnded waits for a served connection to end (a hang fails the test).
func (s *echoServer) waitEnded(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.ended:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the server's read did not return")
		return nil
	}
}

// A lone connection reads in blocking mode; once there are more than
// maxBlocking, each goes back to the poller at its next read, and a lone
// survivor returns to blocking mode. Every byte arrives either way.
func TestClientConnModes(t *testing.T) {
	s := newEchoServer(t, 1)
	a, _ := s.dial(t)
	if m := a.ask(t, "1"); m != "blocking" {
		t.Fatalf("a lone connection reads in %s mode", m)
	}
	big := strings.Repeat("x", 1<<20)
	if m := a.ask(t, big); m != "blocking" {
		t.Fatalf("1 MiB read in %s mode", m)
	}

	b, _ := s.dial(t)
	if m := b.ask(t, "2"); m != "poller" {
		t.Fatalf("a second connection reads in %s mode", m)
	}
	// a's read was already waiting in blocking mode; the one after it
	// goes through the poller.
	a.ask(t, "3")
	if m := a.ask(t, "4"); m != "poller" {
		t.Fatalf("with two connections open, the first reads in %s mode", m)
	}
	if m := a.ask(t, big); m != "poller" {
		t.Fatalf("1 MiB read in %s mode", m)
	}

	b.Close()
	if err := s.waitEnded(t); err != io.EOF {
		t.Fatalf("closed by its client: %v, want EOF", err)
	}
	a.ask(t, "5")
	if m := a.ask(t, "6"); m != "blocking" {
		t.Fatalf("alone again, a connection reads in %s mode", m)
	}
}

// Closing a connection from another goroutine (KILL) ends a read blocked in
// the kernel, and its client sees the connection end.
func TestClientConnCloseWakesBlockedRead(t *testing.T) {
	for _, max := range []int64{1, 0} {
		s := newEchoServer(t, max)
		a, ca := s.dial(t)
		mode := a.ask(t, "1")
		if want := map[int64]string{1: "blocking", 0: "poller"}[max]; mode != want {
			t.Fatalf("maxBlocking %d: read in %s mode, want %s", max, mode, want)
		}
		// The server's next read is waiting for a line that never comes.
		if err := ca.Close(); err != nil {
			t.Fatalf("%s: close: %v", mode, err)
		}
		if err := s.waitEnded(t); err == nil {
			t.Fatalf("%s: read after close succeeded", mode)
		}
		a.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := a.r.ReadByte(); err != io.EOF {
			t.Fatalf("%s: the client reads %v, want EOF", mode, err)
		}
		if n := s.ln.open.Load(); n != 0 {
			t.Fatalf("%s: %d connections counted open after close", mode, n)
		}
	}
}
