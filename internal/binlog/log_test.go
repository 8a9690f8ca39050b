package binlog

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testTable = &Table{DB: "shop", Name: "items", Cols: []Column{
	{Type: TypeLong},
	{Type: TypeVarchar, Length: 40, Nullable: true},
	{Type: TypeNewDecimal, Precision: 10, Scale: 2, Nullable: true},
	{Type: TypeDatetime2, Scale: 3, Nullable: true},
	{Type: TypeTime2, Scale: 2, Nullable: true},
}}

func writeSome(t *testing.T, l *Log, n int) {
	t.Helper()
	g := NewGroup(GroupInfo{ServerID: 1})
	g.Query("shop", "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(10), price DECIMAL(10,2), at DATETIME(3), d TIME(2))", SQLModeBits("STRICT_TRANS_TABLES"))
	if _, _, err := l.Append(g); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		g := NewGroup(GroupInfo{ServerID: 1})
		at := time.Date(2026, 12, 7, 14, 30, 5, 123000000, time.UTC)
		if err := g.Row(WriteRowsEventV1, testTable, nil, []any{int64(i), "apple", "-12.50", at, -(90*time.Minute + 500*time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		if err := g.Row(UpdateRowsEventV1, testTable, []any{int64(i), "apple", "-12.50", at, nil}, []any{int64(i), nil, "3.00", nil, time.Second}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.Append(g); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAppendReopenRecover(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir, ServerID: 1})
	if err != nil {
		t.Fatal(err)
	}
	writeSome(t, l, 3)
	if got := l.State(); got.String() != "0-1-4" {
		t.Fatalf("state %s, want 0-1-4", got.String())
	}
	end := l.End()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A torn group at the end, as a crash mid-write leaves: cut at start.
	f, _ := os.OpenFile(filepath.Join(dir, end.File+".mrb"), os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21})
	f.Close()
	l, err = Open(Options{Dir: dir, ServerID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if st, _ := os.Stat(filepath.Join(dir, end.File+".mrb")); st.Size() != end.Pos+HeaderSize+ChecksumSize {
		t.Fatalf("recovered size %d, want %d (groups and the Stop event)", st.Size(), end.Pos+HeaderSize+ChecksumSize)
	}
	if got := l.State(); got.String() != "0-1-4" {
		t.Fatalf("state after reopen %s", got.String())
	}
	files := l.Files()
	if len(files) != 2 || files[1].Name != "miraj-bin.000002" {
		t.Fatalf("files %v", files)
	}
	g := NewGroup(GroupInfo{ServerID: 1})
	g.Row(DeleteRowsEventV1, testTable, []any{int64(9), nil, nil, nil, nil}, nil)
	if _, gt, err := l.Append(g); err != nil || gt.String() != "0-1-5" {
		t.Fatalf("append after reopen: %v %v", gt, err)
	}
	evs, err := l.Events(files[1].Name, 0, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range evs {
		names = append(names, e.Type.String()+" "+e.Info)
	}
	want := "Format_desc Server ver: 10.4.32-MIRAJ-log, Binlog ver: 4|Gtid_list [0-1-4]|Binlog_checkpoint miraj-bin.000002|Gtid BEGIN GTID 0-1-5|Table_map table_id: 1 (shop.items)|Delete_rows_v1 table_id: 1 flags: STMT_END_F|Xid COMMIT /* xid=1 */"
	if got := strings.Join(names, "|"); got != want {
		t.Fatalf("events:\n%s\nwant\n%s", got, want)
	}
	if _, err := l.Events(files[1].Name, 5, 0, -1); !errors.Is(err, ErrBadPosition) {
		t.Fatalf("events from 5: %v, want ErrBadPosition", err)
	}
	pos, err := l.GTIDPosAt(files[0].Name, end.Pos)
	if err != nil || pos.String() != "0-1-4" {
		t.Fatalf("GTIDPosAt: %v %v", pos, err)
	}
}

func TestRotatePurgeReset(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir, ServerID: 3, MaxSize: MinMaxSize})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	writeSome(t, l, 40) // past 4 KiB more than once
	files := l.Files()
	if len(files) < 3 {
		t.Fatalf("no rotation: %v", files)
	}
	if err := l.PurgeTo("nope.000001.mrb"); !errors.Is(err, ErrNotInIndex) {
		t.Fatalf("purge to unknown: %v", err)
	}
	if err := l.PurgeTo(files[2].Name); err != nil {
		t.Fatal(err)
	}
	if got := l.Files(); got[0].Name != files[2].Name {
		t.Fatalf("after purge: %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, files[0].Name)); !os.IsNotExist(err) {
		t.Fatalf("purged file still there: %v", err)
	}
	// A replica at nothing cannot start: its groups are purged.
	err = l.Dump(context.Background(), DumpRequest{UseGTID: true, GTID: Position{}}, func([]byte) error { return nil })
	if !errors.Is(err, ErrGTIDNotFound) {
		t.Fatalf("dump from purged: %v", err)
	}
	if err := l.Reset(7); err != nil {
		t.Fatal(err)
	}
	if got := l.Files(); len(got) != 1 || got[0].Name != "miraj-bin.000007" {
		t.Fatalf("after reset: %v", got)
	}
	if st := l.State(); st.String() != "" {
		t.Fatalf("state after reset: %s", st.String())
	}
}

// TestMariaDBDecodes: mariadb-binlog reads the files and decodes the rows.
func TestMariaDBDecodes(t *testing.T) {
	tool, err := exec.LookPath("mariadb-binlog")
	if err != nil {
		if os.Getenv("MIRAJ_REQUIRE_MARIADB") == "1" {
			t.Fatal("mariadb-binlog not installed and MIRAJ_REQUIRE_MARIADB=1")
		}
		t.Skip("mariadb-binlog not installed")
	}
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir, ServerID: 1})
	if err != nil {
		t.Fatal(err)
	}
	writeSome(t, l, 1)
	end := l.End()
	l.Close()
	out, err := exec.Command(tool, "-vv", "--base64-output=decode-rows", filepath.Join(dir, end.File+".mrb")).CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb-binlog: %v\n%s", err, out)
	}
	for _, want := range []string{
		"GTID 0-1-2", "CREATE TABLE items", "### INSERT INTO `shop`.`items`",
		"###   @2='apple'", "###   @3=-12.50", "###   @4='2026-12-07 14:30:05.123'", "###   @5='-01:30:00.50'",
		"### UPDATE `shop`.`items`", "###   @2=NULL", "###   @5='00:00:01.00'", "COMMIT/*!*/;",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("mariadb-binlog output lacks %q:\n%s", want, out)
		}
	}
}

// Files older than Expire are removed at the next rotation, never the
// active one.
func TestExpireAtRotation(t *testing.T) {
	now := time.Now()
	l, err := Open(Options{Dir: t.TempDir(), ServerID: 1, Expire: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	writeSome(t, l, 1)
	if err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	writeSome(t, l, 1)
	if err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	if n := len(l.Files()); n != 3 {
		t.Fatalf("%d files before they expire, want 3", n)
	}
	now = now.Add(2 * time.Hour)
	if err := l.Rotate(); err != nil {
		t.Fatal(err)
	}
	files := l.Files()
	if len(files) != 1 || files[0].Name != "miraj-bin.000004" {
		t.Fatalf("after expiry: %v", files)
	}
	if st := l.State(); st.String() != "0-1-4" {
		t.Fatalf("state after expiry %s: the Gtid_list of the new file keeps it", st.String())
	}
}

// TestSettingsWhileOpen: binlog_checksum turned off opens a new file whose
// events have no footers, read back by SHOW BINLOG EVENTS, a dump and a
// restart; max_binlog_size applies from the next group.
func TestSettingsWhileOpen(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Options{Dir: dir, ServerID: 1})
	if err != nil {
		t.Fatal(err)
	}
	writeSome(t, l, 2)
	if err := l.SetChecksum(true); err != nil || len(l.Files()) != 1 {
		t.Fatalf("unchanged checksum: %v, files %v", err, l.Files())
	}
	if err := l.SetChecksum(false); err != nil {
		t.Fatal(err)
	}
	files := l.Files()
	if len(files) != 2 || l.Checksum() {
		t.Fatalf("checksum off: files %v, on %v", files, l.Checksum())
	}
	writeSome(t, l, 2)
	gtids := 0
	for _, f := range files {
		evs, err := l.Events(f.Name, 0, 0, 1000)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		for _, e := range evs {
			if e.Type == GTIDEvent {
				gtids++
			}
		}
	}
	if gtids != 6 {
		t.Fatalf("%d groups read back, 6 written", gtids)
	}
	// The events themselves (but Format_description, which has the field
	// either way): footers in the first file, none in the second.
	for i, f := range files {
		raw, err := os.ReadFile(filepath.Join(dir, f.Name+".mrb"))
		if err != nil {
			t.Fatal(err)
		}
		footed, bare := 0, 0
		for at := len(Magic); at+HeaderSize <= len(raw); {
			h, err := ParseHeader(raw[at:])
			if err != nil || h.Size < HeaderSize || at+int(h.Size) > len(raw) {
				t.Fatalf("%s at %d: %+v %v", f.Name, at, h, err)
			}
			if h.Type != FormatDescriptionEvent { // which has the field either way
				if VerifyChecksum(raw[at:at+int(h.Size)]) == nil {
					footed++
				} else {
					bare++
				}
			}
			at += int(h.Size)
		}
		if i == 0 && (footed == 0 || bare != 0) || i == 1 && (footed != 0 || bare == 0) {
			t.Fatalf("%s: %d events with a footer, %d without", f.Name, footed, bare)
		}
	}
	n := 0
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	l.Dump(ctx, DumpRequest{ChecksumAware: true}, func(ev []byte) error {
		if h, err := ParseHeader(ev); err == nil && h.Type == GTIDEvent {
			n++
		}
		return nil
	})
	if n != 6 {
		t.Fatalf("dump across the checksum change: %d groups, 6 written", n)
	}
	if err := l.SetMaxSize(MinMaxSize - 1); err == nil {
		t.Fatal("a max size below the minimum was taken")
	}
	if err := l.SetMaxSize(MinMaxSize); err != nil || l.MaxSize() != MinMaxSize {
		t.Fatalf("max size: %v %d", err, l.MaxSize())
	}
	writeSome(t, l, 40)
	if got := len(l.Files()); got < 4 {
		t.Fatalf("no rotation at the new max size: %d files", got)
	}
	l.Close()
	l, err = Open(Options{Dir: dir, ServerID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if st := l.State(); st.Pos().String() != "0-1-47" {
		t.Fatalf("state after restart: %s", st.Pos().String())
	}
}
