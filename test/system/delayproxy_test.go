package system

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// delayProxy listens on 127.0.0.1 and forwards each connection to target,
// delivering every chunk delay after it arrived, in order, in both
// directions: a link with delay of one-way latency (a far site). It is
// plain TCP: the TLS of the nodes' links passes through it unchanged.
func delayProxy(t *testing.T, target string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			go delayCopy(out, in, delay)
			go delayCopy(in, out, delay)
		}
	}()
	return l.Addr().String()
}

// delayCopy copies src to dst, each chunk written delay after it was read.
func delayCopy(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		due  time.Time
		data []byte
	}
	q := make(chan chunk, 4096)
	go func() {
		defer dst.Close()
		for c := range q {
			time.Sleep(time.Until(c.due))
			if _, err := dst.Write(c.data); err != nil {
				src.Close()
				for range q {
				}
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{due: time.Now().Add(delay), data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			if err != io.EOF {
				src.Close()
			}
			close(q)
			return
		}
	}
}
