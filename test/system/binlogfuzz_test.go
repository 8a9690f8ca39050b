package system

import (
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The replication commands of a server with a binary log, well formed and
// not: each gets an answer (or the dump it asked for), never a panic.
func TestBinlogCommandsMalformed(t *testing.T) {
	root := t.TempDir()
	s := newServer(t, root, "--log-bin", "--max-binlog-size", "4096")
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE f")
	mustExec(t, db, "CREATE TABLE f.t (id INT PRIMARY KEY, v TEXT)")
	mustExec(t, db, "INSERT INTO f.t VALUES (1, REPEAT('a', 5000))")
	good := handshakeResponse(capLongPassword | capProtocol41 | capSecureConnection | capPluginAuth | capConnectWithDB | capMultiStatements)
	dial := func() net.Conn { return loginRoot(t, s.addr, good) }
	for _, tc := range []struct {
		name string
		cmd  []byte
		want int // error code; 0: OK, -2: an event (0x00 packet)
	}{
		{"COM_REGISTER_SLAVE cut short", []byte{0x15, 2, 0}, 1835},
		{"COM_REGISTER_SLAVE host length past the end", []byte{0x15, 2, 0, 0, 0, 200, 'h'}, 1835},
		{"COM_REGISTER_SLAVE", []byte{0x15, 2, 0, 0, 0, 1, 'h', 0, 0, 0x0c, 0x0c, 0, 0, 0, 0, 1, 0, 0, 0}, 0},
		{"COM_BINLOG_DUMP cut short", []byte{0x12, 4, 0}, 1835},
		{"COM_BINLOG_DUMP of a file not in the index", append([]byte{0x12, 4, 0, 0, 0, 0, 0, 2, 0, 0, 0}, "nope.000009"...), 1236},
		{"COM_BINLOG_DUMP from the first file", []byte{0x12, 4, 0, 0, 0, 0, 0, 2, 0, 0, 0}, -2},
		{"COM_BINLOG_DUMP_GTID (MySQL's)", append([]byte{0x1e, 0, 0, 1, 0, 0, 0, 0, 0}, make([]byte, 12)...), 1047},
	} {
		c := dial()
		c.Write(packetOf(0, tc.cmd))
		_, p, err := readPacket(c)
		code := errCode(p)
		switch {
		case err != nil:
			t.Errorf("%s: no answer: %v", tc.name, err)
		case tc.want == -2 && (len(p) < 20 || p[0] != 0 || p[5] != 4):
			t.Errorf("%s: %x, want the fake Rotate event", tc.name, p)
		case tc.want >= 0 && code != tc.want:
			t.Errorf("%s: answer %x (error %d), want %d", tc.name, p, code, tc.want)
		}
		c.Close()
	}
	// Random bodies of the three commands.
	rng := rand.New(rand.NewPCG(56, 2))
	for i := 0; i < 150; i++ {
		c := dial()
		body := []byte{[]byte{0x12, 0x15, 0x1e}[rng.IntN(3)]}
		for j := rng.IntN(40); j > 0; j-- {
			body = append(body, byte(rng.IntN(256)))
		}
		c.Write(packetOf(0, body))
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		readPacket(c)
		c.Close()
	}
	if v := one(t, db, "SELECT COUNT(*) FROM f.t"); v != "1" {
		t.Fatalf("after the packets: %q", v)
	}
	logged, err := os.ReadFile(filepath.Join(root, "miraj", "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(logged), "caught panic") || strings.Contains(s.output(), "goroutine ") {
		t.Errorf("a panic:\n%s", grepLines(string(logged), "caught panic"))
	}
}
