package system

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// A change-data-capture client (go-mysql's BinlogSyncer, MariaDB flavor)
// reads Miraj's binary log: the GTID start skips the groups it has, the
// row events carry the values of each type, and a purged position is
// refused with 1236.

func newSyncer(t *testing.T, srv *server, serverID uint32) *replication.BinlogSyncer {
	t.Helper()
	return newSyncerAs(t, srv, serverID, "cdc", "cdcpw")
}

func newSyncerAs(t *testing.T, srv *server, serverID uint32, user, pass string) *replication.BinlogSyncer {
	t.Helper()
	host, port, _ := net.SplitHostPort(srv.addr)
	p, _ := strconv.Atoi(port)
	s := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{ServerID: serverID, Flavor: gomysql.MariaDBFlavor,
		Host: host, Port: uint16(p), User: user, Password: pass, UseDecimal: true, MaxReconnectAttempts: 1,
		HeartbeatPeriod: 200 * time.Millisecond})
	t.Cleanup(s.Close)
	return s
}

// nextRows returns the next rows event of table, skipping other events.
func nextRows(t *testing.T, st *replication.BinlogStreamer, table string) (*replication.BinlogEvent, *replication.RowsEvent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			t.Fatalf("waiting for rows of %s: %v", table, err)
		}
		if re, ok := ev.Event.(*replication.RowsEvent); ok && string(re.Table.Table) == table {
			return ev, re
		}
	}
}

func TestBinlogCDCClient(t *testing.T) {
	srv := newServer(t, t.TempDir(), "--log-bin", "--server-id", "7", "--gtid-domain-id", "3")
	db := srv.open("")
	mustExec(t, db, "CREATE USER cdc@'%' IDENTIFIED BY 'cdcpw'")
	mustExec(t, db, "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO cdc@'%'")
	mustExec(t, db, "CREATE DATABASE shop")
	mustExec(t, db, typesTable)
	mustExec(t, db, "INSERT INTO shop.types VALUES "+typesRows[2]) // all NULL
	skip := queryString(t, db, "SELECT @@gtid_binlog_pos")
	if skip != "3-7-3;" {
		t.Fatalf("gtid_binlog_pos %s, want 3-7-3 (domain 3, server 7, third group)", skip)
	}
	mustExec(t, db, "INSERT INTO shop.types VALUES "+typesRows[0])

	// From the GTID of the all-NULL insert: its group is skipped, the
	// next one is the first rows event read.
	gs, err := gomysql.ParseMariadbGTIDSet(strings.TrimSuffix(skip, ";"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := newSyncer(t, srv, 101).StartSyncGTID(gs)
	if err != nil {
		t.Fatal(err)
	}
	ev, rows := nextRows(t, st, "types")
	if ev.Header.EventType != replication.WRITE_ROWS_EVENTv1 || len(rows.Rows) != 1 {
		t.Fatalf("first rows event: %v with %d rows", ev.Header.EventType, len(rows.Rows))
	}
	want := []string{"1", "-128", "-1", "-32768", "-1", "-8388608", "-1", "-2147483648", "-1", "-9223372036854775808", "-1",
		"-12345678901234567890.0123456789", "1.5", "-2.25e+100", "2026-12-07 14:30:05.123456", "2026-01-02 03:04:05.678", "-838:59:59", // go-mysql leaves out a zero fraction of TIME(n)
		"2026-02-28", "2155", "2", "5", "682", "[0 255 16]", "héllo wörld", `{"a": [1, 2, {"b": null}]}`, "abc", strings.Repeat("x", 300), "\x01\x02"}
	got := rows.Rows[0]
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := fmt.Sprint(got[i])
		if b, ok := got[i].([]byte); ok && i != 22 {
			g = string(b)
		}
		if g != w {
			t.Errorf("column %d: %q, want %q", i+1, g, w)
		}
	}

	// An update carries both images; a delete the old one.
	mustExec(t, db, "UPDATE shop.types SET ti = 5 WHERE id = 1")
	ev, rows = nextRows(t, st, "types")
	if ev.Header.EventType != replication.UPDATE_ROWS_EVENTv1 || len(rows.Rows) != 2 || fmt.Sprint(rows.Rows[0][1]) != "-128" || fmt.Sprint(rows.Rows[1][1]) != "5" {
		t.Fatalf("update: %v %v", ev.Header.EventType, rows.Rows)
	}
	mustExec(t, db, "SET sql_log_bin = 0")
	mustExec(t, db, "DELETE FROM shop.types WHERE id = 3") // not logged
	mustExec(t, db, "SET sql_log_bin = 1")
	mustExec(t, db, "DELETE FROM shop.types WHERE id = 1")
	ev, rows = nextRows(t, st, "types")
	if ev.Header.EventType != replication.DELETE_ROWS_EVENTv1 || fmt.Sprint(rows.Rows[0][0]) != "1" {
		t.Fatalf("delete: %v %v (the delete of id 3 was made with sql_log_bin = 0)", ev.Header.EventType, rows.Rows)
	}

	// Files purged: a client at the start of the log gets 1236.
	mustExec(t, db, "FLUSH BINARY LOGS")
	last := strings.Fields(queryString(t, db, "SHOW MASTER STATUS"))[0]
	mustExec(t, db, "PURGE BINARY LOGS TO '"+last+"'")
	empty, _ := gomysql.ParseMariadbGTIDSet("")
	st2, err := newSyncer(t, srv, 102).StartSyncGTID(empty)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for err == nil {
			_, err = st2.GetEvent(ctx)
		}
	}
	var me *gomysql.MyError
	if !errors.As(err, &me) || me.Code != 1236 {
		t.Fatalf("start before the purged files: %v, want 1236", err)
	}

	// A clean shutdown ends the stream still open (the first client's)
	// instead of waiting for it.
	start := time.Now()
	srv.stop()
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("shutdown with a dump running took %v", d)
	}
}
