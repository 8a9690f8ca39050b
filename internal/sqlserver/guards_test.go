package sqlserver

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// filterPair is a clientConn over loopback and its client's socket.
func filterPair(t *testing.T) (*clientConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := newClientListener(ln, true, nil).Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); nc.Close() })
	client.SetDeadline(time.Now().Add(20 * time.Second))
	return nc.(*clientConn), client
}

// The commands that make vitess panic are answered in the stream (and
// taken out of it); a known statement's reset, and every packet of a file
// being sent (LOAD DATA LOCAL, whose sequence numbers wrap to 0), pass.
func TestGuardedCommands(t *testing.T) {
	reset := func(id uint32) []byte {
		return packet(0, binary.LittleEndian.AppendUint32([]byte{comStmtReset}, id)...)
	}
	register := packet(0, comRegisterReplica, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	dump := packet(0, comBinlogDumpGTID, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0)
	ping := packet(0, 0x0e)
	for _, tc := range []struct {
		name     string
		inFile   bool
		sent     [][]byte
		passed   [][]byte
		answered []int // error codes, in order
	}{
		{"commands", false, [][]byte{reset(1), reset(2), packet(0, comStmtReset, 2), register, dump, ping},
			[][]byte{reset(1), ping}, []int{1243, 1835, 1047, 1047}},
		{"a file's packets", true, [][]byte{reset(2), register, dump, ping}, [][]byte{reset(2), register, dump, ping}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, client := filterPair(t)
			server.admin.stmtKnown = func(id uint32) bool { return id == 1 }
			server.admin.noBinlog = true
			server.admin.inFile.Store(tc.inFile)
			client.Write(bytes.Join(tc.sent, nil))
			want := bytes.Join(tc.passed, nil)
			got := make([]byte, len(want))
			if _, err := io.ReadFull(server, got); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("passed %x, %v; want %x", got, err, want)
			}
			for _, code := range tc.answered {
				head := make([]byte, 4)
				if _, err := io.ReadFull(client, head); err != nil {
					t.Fatal(err)
				}
				body := make([]byte, packetSize(head))
				io.ReadFull(client, body)
				if body[0] != 0xff || int(binary.LittleEndian.Uint16(body[1:3])) != code || head[3] != 1 {
					t.Errorf("answer %x (sequence %d), want error %d at sequence 1", body, head[3], code)
				}
			}
		})
	}
}
