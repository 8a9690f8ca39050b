package sqlserver

import (
	"bytes"
	"io"
	"math/rand"
	"net"
	"strings"
	"testing"
	"time"
)

// TestAdminFilterStream sends a client's stream through a clientConn over
// a loopback socket and reads it back as vitess would, in reads of random
// small sizes (so that headers and commands arrive in pieces): the
// commands answered here are gone and answered on the socket, those
// changed here are changed, and every other byte passes as it was.
func TestAdminFilterStream(t *testing.T) {
	big := bytes.Repeat([]byte{1, 0, 0, 0, comStatistics}, 200) // looks like commands, is a payload
	var sent, want bytes.Buffer
	stats := 0
	add := func(in, out []byte) {
		sent.Write(in)
		want.Write(out)
	}
	for i := 0; i < 200; i++ {
		q := packet(0, append([]byte{comQuery}, "SELECT 1"...)...)
		add(q, q)
		add(packet(0, comStatistics), nil)
		stats++
		ping := packet(0, 0x0e)
		add(ping, ping)
		add(packet(0, comRefresh, 0x2e), packet(0, append([]byte{comQuery}, "FLUSH LOGS, TABLES, HOSTS, THREADS"...)...))
		add(packet(0, comRefresh, 0x21), packet(0, append([]byte{comQuery}, "FLUSH PRIVILEGES, THREADS"...)...))
		add(packet(0, comShutdown), packet(0, append([]byte{comQuery}, "SHUTDOWN"...)...))
		add(packet(0, comShutdown, 0), packet(0, append([]byte{comQuery}, "SHUTDOWN"...)...))
		// Left to vitess: a flag with no FLUSH option, no flag, and
		// packets that are not commands (sequence numbers past 0).
		for _, p := range [][]byte{packet(0, comRefresh, 0x40), packet(0, comRefresh, 0), packet(1, comStatistics), packet(3, comRefresh, 0x2e), packet(0, comStatistics, 0)} {
			add(p, p)
		}
		if i%10 == 0 {
			add(packet(0, big...), packet(0, big...))
		}
		add(packet(0), packet(0))
	}
	add(packet(0, comStatistics), nil)
	stats++
	// The reader reads until the last byte it is to get: a command after
	// the last one answered here.
	add(packet(0, 0x0e), packet(0, 0x0e))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl := newClientListener(ln, true, nil)
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	nc, err := cl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	server := nc.(*clientConn)
	defer server.Close()
	// A stream the filter lost its place in may never give the reader
	// its bytes: end the test then, with what was read.
	watchdog := time.AfterFunc(20*time.Second, func() { server.Close(); client.Close() })
	defer watchdog.Stop()

	go func() {
		// Pieces of random sizes, some of one byte.
		rng := rand.New(rand.NewSource(1))
		b := sent.Bytes()
		for len(b) > 0 {
			n := min(len(b), 1+rng.Intn(9))
			if rng.Intn(4) == 0 {
				n = min(len(b), 1+rng.Intn(3000))
			}
			if _, err := client.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
			if rng.Intn(8) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	answers := make(chan []byte, 1)
	go func() {
		client.SetReadDeadline(time.Now().Add(30 * time.Second))
		var got []byte
		for range stats {
			head := make([]byte, 4)
			if _, err := io.ReadFull(client, head); err != nil {
				break
			}
			body := make([]byte, packetSize(head))
			if _, err := io.ReadFull(client, body); err != nil {
				break
			}
			if head[3] != 1 || !strings.HasPrefix(string(body), "Uptime: ") {
				t.Errorf("answer to COM_STATISTICS: sequence %d, %q", head[3], body)
			}
			got = append(got, body...)
		}
		answers <- got
	}()

	rng := rand.New(rand.NewSource(2))
	var got []byte
	for len(got) < want.Len() {
		p := make([]byte, 1+rng.Intn(7))
		if rng.Intn(5) == 0 {
			p = make([]byte, 16384)
		}
		n, err := server.Read(p)
		got = append(got, p[:n]...)
		if err != nil {
			t.Fatalf("read after %d of %d bytes: %v", len(got), want.Len(), err)
		}
	}
	if !bytes.Equal(got, want.Bytes()) {
		i := 0
		for i < len(got) && got[i] == want.Bytes()[i] {
			i++
		}
		t.Fatalf("stream differs from byte %d: got %q, want %q", i, got[i:min(len(got), i+40)], want.Bytes()[i:min(want.Len(), i+40)])
	}
	if a := <-answers; strings.Count(string(a), "Uptime: ") != stats {
		t.Errorf("%d answers to COM_STATISTICS, want %d: %q", strings.Count(string(a), "Uptime: "), stats, a)
	}
}

func TestRefreshStatement(t *testing.T) {
	for flags, want := range map[byte]string{
		0x01: "FLUSH PRIVILEGES",
		0x2e: "FLUSH LOGS, TABLES, HOSTS, THREADS",
		0x3f: "FLUSH PRIVILEGES, LOGS, TABLES, HOSTS, STATUS, THREADS",
		0x20: "FLUSH THREADS",
		0x00: "",
		0x40: "", // REFRESH_SLAVE
		0x82: "", // REFRESH_MASTER with another
	} {
		got, ok := refreshStatement(flags)
		if got != want || ok != (want != "") {
			t.Errorf("refreshStatement(%#x) = %q, %v; want %q", flags, got, ok, want)
		}
	}
}
