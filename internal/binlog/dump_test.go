package binlog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// dumpAll runs a dump until it has sent n events (then cancels it) and
// returns them.
func dumpAll(t *testing.T, l *Log, req DumpRequest, n int) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out [][]byte
	err := l.Dump(ctx, req, func(ev []byte) error {
		out = append(out, append([]byte(nil), ev...))
		if len(out) == n {
			cancel()
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if len(out) < n {
		t.Fatalf("%d events sent, want %d", len(out), n)
	}
	return out
}

func types(evs [][]byte) []EventType {
	out := make([]EventType, len(evs))
	for i, ev := range evs {
		out[i] = EventType(ev[4])
	}
	return out
}

// The stream as vitess' MariaDB parser reads it: the GTID start skips the
// groups the replica has, the row events decode against their Table_map,
// footers are removed for a replica that does not read them, and a
// heartbeat comes when nothing is written.
func TestDumpParsedByVitess(t *testing.T) {
	l, err := Open(Options{Dir: t.TempDir(), ServerID: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	writeSome(t, l, 2) // 0-4-1 (DDL), 0-4-2, 0-4-3; the writer's server id is 1
	// After 0-1-2: the DDL and the first rows group are skipped.
	evs := dumpAll(t, l, DumpRequest{UseGTID: true, GTID: Position{0: {Domain: 0, Server: 1, Seq: 2}}, ChecksumAware: true}, 9)
	want := []EventType{RotateEvent, FormatDescriptionEvent, GTIDListEvent, BinlogCheckpointEvent, GTIDEvent, TableMapEvent, WriteRowsEventV1, UpdateRowsEventV1, XIDEvent}
	for i, ty := range types(evs) {
		if ty != want[i] {
			t.Fatalf("events %v, want %v", types(evs), want)
		}
	}
	fde := mysql.NewMariadbBinlogEvent(evs[1])
	f, err := fde.Format()
	if err != nil || f.ChecksumAlgorithm != mysql.BinlogChecksumAlgCRC32 {
		t.Fatalf("Format_description: %+v %v", f, err)
	}
	parse := func(b []byte) mysql.BinlogEvent {
		whole := mysql.NewMariadbBinlogEvent(b)
		if !whole.IsValid() {
			t.Fatalf("invalid event %x", b)
		}
		ev, _, err := whole.StripChecksum(f)
		if err != nil {
			t.Fatalf("checksum: %v", err)
		}
		return ev
	}
	g, _, err := parse(evs[4]).GTID(f)
	if err != nil || g.String() != "0-1-3" {
		t.Fatalf("GTID %v %v", g, err)
	}
	tm, err := parse(evs[5]).TableMap(f)
	if err != nil || tm.Database != "shop" || tm.Name != "items" || len(tm.Types) != 5 {
		t.Fatalf("Table_map %+v %v", tm, err)
	}
	rows, err := parse(evs[6]).Rows(f, tm)
	if err != nil || len(rows.Rows) != 1 {
		t.Fatalf("rows %+v %v", rows, err)
	}
	up, err := parse(evs[7]).Rows(f, tm)
	if err != nil || len(up.Rows) != 1 || len(up.Rows[0].Identify) == 0 || len(up.Rows[0].Data) == 0 {
		t.Fatalf("update rows %+v %v", up, err)
	}

	// A replica that reads no footers: each event 4 bytes shorter, its
	// size field saying so.
	plain := dumpAll(t, l, DumpRequest{UseGTID: true, GTID: Position{0: {Server: 1, Seq: 2}}}, 9)
	for i := range plain {
		if i == 1 {
			if fdeChecksum(plain[1]) != ChecksumOff {
				t.Fatal("Format_description still announces CRC32 to a replica without checksums")
			}
			continue
		}
		h, _ := ParseHeader(plain[i])
		if len(plain[i]) != len(evs[i])-ChecksumSize || int(h.Size) != len(plain[i]) {
			t.Fatalf("event %d: %d bytes (size %d), with footers %d", i, len(plain[i]), h.Size, len(evs[i]))
		}
	}

	// By position: from the Gtid of the last group; then a heartbeat
	// while nothing is written.
	all, err := l.Events("", 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-5] // Gtid, Table_map, Write, Update, Xid
	if last.Type != GTIDEvent {
		t.Fatalf("event at %d is %v", last.Pos, last.Type)
	}
	evs = dumpAll(t, l, DumpRequest{File: last.File, Pos: last.Pos, ChecksumAware: true, Heartbeat: 50 * time.Millisecond}, 8)
	if ty := types(evs); ty[2] != GTIDEvent || ty[6] != XIDEvent || ty[7] != HeartbeatEvent {
		t.Fatalf("from %d: %v", last.Pos, ty)
	}
	if h, _ := ParseHeader(evs[1]); h.NextPos != 0 {
		t.Fatalf("Format_description sent mid-file moves the replica to %d", h.NextPos)
	}
	if err := VerifyChecksum(evs[7]); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	// Not the start of an event.
	err = l.Dump(context.Background(), DumpRequest{File: last.File, Pos: last.Pos + 1}, func([]byte) error { return nil })
	if !errors.Is(err, ErrBadPosition) {
		t.Fatalf("dump from inside an event: %v", err)
	}
}
