package sqlserver

import (
	"bytes"
	"context"
	"testing"
)

// okPacket is an OK packet as vitess writes it with info: '#' where the
// info's length belongs.
func okPacket(seq byte, affected, insertID uint64, info string) []byte {
	payload := append([]byte{0}, lenEncInt(affected)...)
	payload = append(payload, lenEncInt(insertID)...)
	payload = append(payload, 2, 0, 0, 0, '#')
	payload = append(payload, info...)
	return append([]byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}, payload...)
}

func TestOKInfoPatch(t *testing.T) {
	info := "Statement prepared"
	fix := func(affected, insertID uint64) *okInfoFix {
		head := append([]byte{0}, lenEncInt(affected)...)
		head = append(head, lenEncInt(insertID)...)
		return &okInfoFix{hashAt: 4 + len(head) + 4, size: len(head) + 5 + len(info), payload: head, tail: append([]byte{'#'}, info...), put: []byte{byte(len(info))}}
	}

	// The packet alone, and after the rows of an earlier result in the
	// same write: the '#' becomes the length, nothing else changes.
	for _, lead := range [][]byte{nil, okPacket(1, 0, 0, "#"+info+"x")} {
		p := append(append([]byte{}, lead...), okPacket(2, 300, 7, info)...)
		orig := bytes.Clone(p)
		got, ok := fix(300, 7).patch(p)
		if !ok {
			t.Fatalf("lead %d bytes: the packet is not found", len(lead))
		}
		if !bytes.Equal(p, orig) {
			t.Fatal("patch changed the caller's bytes")
		}
		want := bytes.Clone(orig)
		want[bytes.LastIndexByte(want, '#')] = byte(len(info))
		if !bytes.Equal(got, want) {
			t.Fatalf("lead %d bytes: got %q, want %q", len(lead), got, want)
		}
	}

	// Bytes that hold the info but not as that packet are left alone:
	// other counts, another length, a row that ends with the same text.
	for name, p := range map[string][]byte{
		"other affected rows": okPacket(1, 5, 7, info),
		"longer info":         okPacket(1, 300, 7, info+"!"),
		"a row":               append([]byte{20, 0, 0, 3}, append([]byte{19, '#'}, info...)...),
	} {
		if _, ok := fix(300, 7).patch(p); ok {
			t.Errorf("%s: patched", name)
		}
	}
}

// TestOKWarningsPatch puts a prepared statement's warning count in its OK
// packet, which vitess writes with 0, and leaves other packets alone.
func TestOKWarningsPatch(t *testing.T) {
	packet := func(affected, insertID uint64, flags, warnings uint16) []byte {
		payload := append([]byte{0}, lenEncInt(affected)...)
		payload = append(payload, lenEncInt(insertID)...)
		payload = append(payload, byte(flags), byte(flags>>8), byte(warnings), byte(warnings>>8))
		return append([]byte{byte(len(payload)), 0, 0, 1}, payload...)
	}
	got, ok := okWarningsFix(300, 7, 2, 258).patch(packet(300, 7, 2, 0))
	if want := packet(300, 7, 2, 258); !ok || !bytes.Equal(got, want) {
		t.Fatalf("got %v (%v), want %v", got, ok, want)
	}
	for name, p := range map[string][]byte{
		"other affected rows": packet(5, 7, 2, 0),
		"other flags":         packet(300, 7, 3, 0),
		"a count already":     packet(300, 7, 2, 1),
	} {
		if _, ok := okWarningsFix(300, 7, 2, 258).patch(p); ok {
			t.Errorf("%s: patched", name)
		}
	}
}

// TestOKInfoFixesTogether corrects the OK packets of several statements
// written at once (a multi-statement query).
func TestOKInfoFixesTogether(t *testing.T) {
	var fs okInfoFixes
	infos := []string{"Records: 2  Duplicates: 0  Warnings: 0", "Rows matched: 1  Changed: 1  Warnings: 0"}
	var p []byte
	for i, info := range infos {
		head := []byte{0, byte(2 - i), 0}
		fs.add(&okInfoFix{hashAt: 4 + len(head) + 4, size: len(head) + 5 + len(info), payload: head, tail: append([]byte{'#'}, info...), put: []byte{byte(len(info))}})
		p = append(p, okPacket(byte(i+1), uint64(2-i), 0, info)...)
	}
	got := fs.apply(p)
	if n := bytes.Count(got, []byte{'#'}); n != 0 {
		t.Fatalf("%d packets left with '#': %q", n, got)
	}
	if len(fs.pending) != 0 {
		t.Fatalf("%d fixes still pending", len(fs.pending))
	}
}

// TestOKInfoPreparedLeavesNoFix runs prepared UPDATEs, whose OK packets
// (COM_STMT_EXECUTE's) carry no info: no correction is left waiting on
// the connection for a packet that never comes, which every later write
// would look for again.
func TestOKInfoPreparedLeavesNoFix(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	c := dbConn(t, db)
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)", "INSERT INTO d.t VALUES (1, 0)"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatal(q, ": ", err)
		}
	}
	for i := range 10 {
		// Arguments: go-sql-driver prepares the statement on the server.
		if _, err := c.ExecContext(ctx, "UPDATE d.t SET v = ? WHERE id = ?", i+1, 1); err != nil {
			t.Fatal(err)
		}
	}
	// The text protocol's OK packet with info is still corrected.
	if _, err := c.ExecContext(ctx, "UPDATE d.t SET v = 0 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	// The package's tests run one at a time: the open connections are
	// this test's.
	pending := 0
	clients.Lock()
	for cc := range clients.open {
		pending += int(cc.okFixes.n.Load())
	}
	clients.Unlock()
	if pending != 0 {
		t.Fatalf("%d OK packet corrections left waiting on the connection, want 0", pending)
	}
}
