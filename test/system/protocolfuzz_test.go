package system

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Client capability flags (MySQL's include/mysql_com.h).
const (
	capLongPassword     = 0x00000001
	capConnectWithDB    = 0x00000008
	capProtocol41       = 0x00000200
	capSSL              = 0x00000800
	capSecureConnection = 0x00008000
	capMultiStatements  = 0x00010000
	capPluginAuth       = 0x00080000
	capConnectAttrs     = 0x00100000
	capLenencAuthData   = 0x00200000
)

// handshakeResponse is a well-formed HandshakeResponse41 payload for root
// without a password.
func handshakeResponse(flags uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, flags)
	b = binary.LittleEndian.AppendUint32(b, 1<<24)
	b = append(b, 45)
	b = append(b, make([]byte, 23)...)
	b = append(b, "root\x00"...)
	b = append(b, 0) // auth response: empty (1-byte or lenenc length)
	if flags&capConnectWithDB != 0 {
		b = append(b, "mysql\x00"...)
	}
	if flags&capPluginAuth != 0 {
		b = append(b, "mysql_native_password\x00"...)
	}
	return b
}

func packetOf(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// readPacket reads one packet (seq, payload).
func readPacket(r io.Reader) (byte, []byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	p := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	_, err := io.ReadFull(r, p)
	return h[3], p, err
}

// errCode is the error number of an ERR packet's payload (0: not one).
func errCode(p []byte) int {
	if len(p) < 3 || p[0] != 0xff {
		return 0
	}
	return int(binary.LittleEndian.Uint16(p[1:3]))
}

// Malformed handshake responses — every truncation of a good one, random
// mutations, lengths that point past the packet — are answered with error
// 1043 (Bad handshake), over TLS too, and never make the listener panic;
// then random command packets after a good login. Throughout, the server
// answers; every line the libraries print (vitess, go-mysql-server) is in
// server.log as on stderr, rate-limited, and no stack trace is printed.
func TestMalformedPacketsAreRefusedAndLogged(t *testing.T) {
	root := t.TempDir()
	s := newServer(t, root)
	logPath := filepath.Join(root, "miraj", "server.log")
	st, _ := os.Stat(logPath)
	logBefore := st.Size()

	// send sends one handshake response payload at seq 1 and returns the
	// error code of the answer (0: OK or another packet, -1: none).
	send := func(payload []byte) int {
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, _, err := readPacket(c); err != nil {
			t.Fatalf("greeting: %v", err)
		}
		c.Write(packetOf(1, payload))
		_, p, err := readPacket(c)
		if err != nil {
			return -1
		}
		return errCode(p)
	}
	good := handshakeResponse(capLongPassword | capProtocol41 | capSecureConnection | capPluginAuth | capConnectWithDB | capMultiStatements)
	if code := send(good); code != 0 {
		t.Fatalf("a good handshake response: error %d", code)
	}
	codes := map[int]int{}
	// Every truncation past the fixed part, and within it.
	for n := 0; n < len(good); n++ {
		code := send(good[:n])
		codes[code]++
		if code != 1043 {
			t.Errorf("handshake response cut at %d of %d bytes: answer %d, want error 1043", n, len(good), code)
		}
	}
	// Lengths that point past the packet: 1-byte and lenenc auth lengths.
	fixedUser := len(good) - len("\x00mysql\x00mysql_native_password\x00")
	for _, tc := range []struct {
		name    string
		payload []byte
	}{
		{"auth length 200", append(append([]byte{}, good[:fixedUser]...), 200, 'x')},
		{"lenenc auth length 2^63", append(append(handshakeResponse(capProtocol41 | capLenencAuthData)[:37], 0xfe), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)},
		{"lenenc auth length cut", append(handshakeResponse(capProtocol41 | capLenencAuthData)[:37], 0xfd, 1)},
		{"database not terminated", append(append([]byte{}, good[:fixedUser+1]...), "mysql"...)},
		{"no protocol 4.1", handshakeResponse(capSecureConnection)},
	} {
		if code := send(tc.payload); code != 1043 {
			t.Errorf("%s: answer %d, want error 1043", tc.name, code)
		}
	}
	// Random mutations of a good response: whatever the answer, no panic.
	rng := rand.New(rand.NewPCG(57, 1))
	for i := 0; i < 300; i++ {
		p := append([]byte{}, good...)
		for k := rng.IntN(4) + 1; k > 0; k-- {
			p[rng.IntN(len(p))] = byte(rng.IntN(256))
		}
		if rng.IntN(3) == 0 {
			p = p[:32+rng.IntN(len(p)-32)]
		}
		codes[send(p)]++
	}
	// The same, inside TLS: SSL request, TLS handshake, then a response cut
	// after its fixed part (sequence 2).
	func() {
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		readPacket(c)
		c.Write(packetOf(1, handshakeResponse(capProtocol41 | capSSL | capSecureConnection)[:32]))
		tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
		if err := tc.Handshake(); err != nil {
			t.Fatalf("TLS: %v", err)
		}
		tc.Write(packetOf(2, good[:40]))
		seq, p, err := readPacket(tc)
		if err != nil || errCode(p) != 1043 || seq != 3 {
			t.Errorf("over TLS, a cut handshake response: seq %d, answer %d (%v), want error 1043 at seq 3", seq, errCode(p), err)
		}
	}()

	dial := func() net.Conn { return loginRoot(t, s.addr, good) }
	// Commands that made the listener panic are answered with MySQL's
	// errors, and the connection goes on.
	for _, tc := range []struct {
		name string
		cmd  []byte
		want int // error code; 0: OK
	}{
		{"COM_RESET_CONNECTION first", []byte{0x1f}, 0},
		{"COM_STMT_RESET of an unknown statement", []byte{0x1a, 7, 0, 0, 0}, 1243},
		{"COM_STMT_RESET cut short", []byte{0x1a, 7}, 1835},
		{"COM_BINLOG_DUMP_GTID", append([]byte{0x1e, 0, 0, 1, 0, 0, 0, 0, 0}, make([]byte, 12)...), 1047},
		{"COM_REGISTER_REPLICA", []byte{0x15, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 1047},
	} {
		c := dial()
		c.Write(packetOf(0, tc.cmd))
		_, p, err := readPacket(c)
		if code := errCode(p); err != nil || code != tc.want || tc.want == 0 && p[0] != 0 {
			t.Errorf("%s: answer %x (error %d), %v; want %d", tc.name, p, code, err, tc.want)
		}
		c.Write(packetOf(0, []byte("\x03SELECT 1")))
		if _, p, err := readPacket(c); err != nil || errCode(p) != 0 {
			t.Errorf("%s: the next statement fails: %x %v", tc.name, p, err)
		}
		c.Close()
	}

	// After a good login: random command packets (not COM_SHUTDOWN,
	// COM_PROCESS_KILL or COM_QUIT, which mean what they say).
	cmds := []byte{0x02, 0x03, 0x04, 0x05, 0x06, 0x0d, 0x0e, 0x11, 0x12, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1e, 0x1f}
	for i := 0; i < 200; i++ {
		c := dial()
		if rng.IntN(2) == 0 {
			// A prepared statement, so that the statement commands
			// sometimes name one that exists (id 1).
			c.Write(packetOf(0, []byte("\x16SELECT ?")))
			for {
				_, p, err := readPacket(c)
				if err != nil || len(p) > 0 && (p[0] == 0xff || p[0] == 0xfe && len(p) < 9) {
					break
				}
			}
		}
		for k := 0; k < 3; k++ {
			body := []byte{cmds[rng.IntN(len(cmds))]}
			for j := rng.IntN(40); j > 0; j-- {
				body = append(body, byte(rng.IntN(256)))
			}
			if _, err := c.Write(packetOf(0, body)); err != nil {
				break
			}
			// Some commands have no answer (COM_STMT_CLOSE,
			// COM_STMT_SEND_LONG_DATA): wait a little, not the deadline.
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if _, _, err := readPacket(c); err != nil {
				break
			}
		}
		c.Close()
	}

	// The server answers.
	db := s.open("")
	if v := one(t, db, "SELECT 1"); v != "1" {
		t.Fatalf("SELECT 1 after the packets: %q", v)
	}
	out := s.output()
	logged, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "goroutine ") || strings.Contains(out, "panic.go:") {
		t.Errorf("a stack trace on stderr:\n%s", out)
	}
	if strings.Contains(string(logged), "caught panic") {
		t.Errorf("the listener caught a panic:\n%s", grepLines(string(logged), "caught panic"))
	}
	refused := strings.Count(string(logged), "bad handshake (error 1043)")
	if refused < 1 || refused > 2 {
		t.Errorf("%d lines of refused handshakes in server.log, want 1 (once a minute per host)", refused)
	}
	// Every library line on stderr is in server.log.
	var lib, panics int
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "source=vitess") && !strings.Contains(line, "source=go-mysql-server") {
			continue
		}
		lib++
		if strings.Contains(line, "caught panic") {
			panics++
		}
		if !strings.Contains(string(logged), line) {
			t.Errorf("a library line on stderr, not in server.log:\n%s", line)
		}
	}
	t.Logf("handshake answers (error code: count; -1 none, 0 not an error): %v", codes)
	t.Logf("library lines logged: %d (caught panics: %d); server.log grew by %d bytes", lib, panics, int64(len(logged))-logBefore)
}

// lineReader hands out one line per Read: the driver sends each Read as
// one packet of the file (go-sql-driver's LOAD DATA LOCAL).
type lineReader struct{ lines []string }

func (r *lineReader) Read(p []byte) (int, error) {
	if len(r.lines) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.lines[0])
	r.lines = r.lines[1:]
	return n, nil
}

// A file sent by LOAD DATA LOCAL whose packets wrap to sequence number 0
// and then begin with the bytes of COM_STMT_RESET, COM_REGISTER_REPLICA
// and COM_BINLOG_DUMP_GTID is loaded whole: none of its packets is taken
// for a command.
func TestLoadDataLocalPacketsThatLookLikeCommands(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "SET GLOBAL local_infile = 1")
	mustExec(t, db, "CREATE DATABASE shop")
	mustExec(t, db, "CREATE TABLE shop.f (id INT PRIMARY KEY, v VARCHAR(20))")
	const lines = 1000
	var ls []string
	want := map[int]string{}
	for i := 0; i < lines; i++ {
		v := "row"
		// The file's packets count from 2: packet i has sequence number
		// (2+i) % 256, 0 for i = 254, 510, 766.
		switch i {
		case 254:
			v = "\x1a\x07\x00\x00\x00row"
		case 510:
			v = "\x15\x02row"
		case 766:
			v = "\x1e\x00\x00row"
		}
		want[i] = v
		ls = append(ls, fmt.Sprintf("%s\t%d\n", v, i))
	}
	mysql.RegisterReaderHandler("wrapping", func() io.Reader { return &lineReader{lines: ls} })
	defer mysql.DeregisterReaderHandler("wrapping")
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.ExecContext(context.Background(), "LOAD DATA LOCAL INFILE 'Reader::wrapping' INTO TABLE shop.f (v, id)")
	if err != nil {
		t.Fatalf("LOAD DATA LOCAL: %v", err)
	}
	if n, _ := res.RowsAffected(); n != lines {
		t.Errorf("%d rows loaded, want %d", n, lines)
	}
	for _, i := range []int{254, 510, 766} {
		if got := one(t, db, fmt.Sprintf("SELECT HEX(v) FROM shop.f WHERE id = %d", i)); got != strings.ToUpper(hex.EncodeToString([]byte(want[i]))) {
			t.Errorf("row %d: %s, want %x", i, got, want[i])
		}
	}
}

// loginRoot connects to addr and logs in as root, without a password, with
// the handshake response good; the connection has a 5 s deadline.
func loginRoot(t *testing.T, addr string, good []byte) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	readPacket(c)
	c.Write(packetOf(1, good))
	seq, p, err := readPacket(c)
	if err == nil && len(p) > 0 && p[0] == 0xfe {
		c.Write(packetOf(seq+1, nil)) // auth switch: empty password
		_, p, err = readPacket(c)
	}
	if err != nil || len(p) == 0 || p[0] != 0 {
		t.Fatalf("login: %v %x", err, p)
	}
	return c
}
