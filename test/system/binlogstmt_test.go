package system

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// The statements and variables of §17.13.1–2 and their errors, with the
// binary log off and on.

func TestBinlogStatements(t *testing.T) {
	off := newServer(t, t.TempDir())
	db := off.open("")
	wantCodes(t, db, "log off", map[string]uint16{
		"SHOW BINARY LOGS": 1381, "SHOW MASTER LOGS": 1381, "PURGE BINARY LOGS TO 'miraj-bin.000001.mrb'": 1381,
		"PURGE MASTER LOGS BEFORE NOW()": 1381, "RESET MASTER": 1186,
	})
	if got := queryString(t, db, "SHOW MASTER STATUS"); got != "" {
		t.Errorf("log off: SHOW MASTER STATUS %q, want no rows", got)
	}
	if got := queryString(t, db, "SHOW BINLOG EVENTS"); got != "" {
		t.Errorf("log off: SHOW BINLOG EVENTS %q, want no rows", got)
	}
	if got := queryString(t, db, "SELECT @@log_bin, @@binlog_format, @@binlog_row_image"); got != "0 ROW FULL;" {
		t.Errorf("log off: variables %q", got)
	}

	root := t.TempDir()
	on := newServer(t, root, "--log-bin=binlogs/main", "--server-id", "5")
	db = on.open("")
	if got := queryString(t, db, "SELECT @@log_bin, @@server_id, @@log_bin_basename, @@gtid_binlog_pos"); got != "1 5 "+root+"/binlogs/main ;" {
		t.Errorf("log on: variables %q", got)
	}
	mustExec(t, db, "CREATE DATABASE d")
	mustExec(t, db, "CREATE TABLE d.t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO d.t VALUES (1)")
	// The spec's example: a new log, one insert.
	status := strings.Fields(queryString(t, db, "SHOW MASTER STATUS"))
	if status[0] != "main.000001" {
		t.Fatalf("SHOW MASTER STATUS %v", status)
	}
	evs := queryString(t, db, "SHOW BINLOG EVENTS IN 'main.000001' LIMIT 3")
	if !strings.Contains(evs, "main.000001 4 Format_desc 5 256 Server ver: 10.4.32-MIRAJ-log, Binlog ver: 4;") ||
		!strings.Contains(evs, "Gtid_list 5 283 [];") || !strings.Contains(evs, "Binlog_checkpoint") {
		t.Errorf("SHOW BINLOG EVENTS: %s", evs)
	}
	if got := queryString(t, db, "SELECT @@gtid_binlog_pos, @@gtid_binlog_state, @@gtid_current_pos"); got != "0-5-3 0-5-3 0-5-3;" {
		t.Errorf("GTID variables %q", got)
	}
	// BINLOG_GTID_POS at the second group's start: the first is before it.
	var gtids []string
	for _, row := range strings.Split(queryString(t, db, "SHOW BINLOG EVENTS IN 'main.000001'"), ";") {
		if f := strings.Fields(row); len(f) > 2 && f[2] == "Gtid" {
			gtids = append(gtids, f[1])
		}
	}
	if len(gtids) != 3 {
		t.Fatalf("Gtid events at %v, want 3 (CREATE DATABASE, CREATE TABLE, INSERT)", gtids)
	}
	if got := queryString(t, db, "SELECT BINLOG_GTID_POS('main.000001', "+gtids[1]+")"); got != "0-5-1;" {
		t.Errorf("BINLOG_GTID_POS at %s: %q", gtids[1], got)
	}
	if got := queryString(t, db, "SHOW BINLOG EVENTS IN 'main.000001' FROM "+gtids[2]+" LIMIT 1, 1"); !strings.Contains(got, "Table_map 5 ") || !strings.Contains(got, "(d.t)") {
		t.Errorf("SHOW BINLOG EVENTS FROM %s LIMIT 1, 1: %q", gtids[2], got)
	}
	wantCodes(t, db, "log on", map[string]uint16{
		"SHOW BINLOG EVENTS FROM 5":               1220,
		"SHOW BINLOG EVENTS IN 'nope.000001.mrb'": 1220,
		"PURGE BINARY LOGS TO 'nope.000001.mrb'":  1373,
		"SET SESSION binlog_format = 'STATEMENT'": 1231,
		"SET GLOBAL binlog_row_image = 'MINIMAL'": 1231,
		"SET GLOBAL log_bin = 0":                  1238,
		"SET GLOBAL gtid_binlog_pos = '0-1-1'":    1238,
	})

	// gtid_domain_id and gtid_seq_no apply to the session's next group;
	// sql_log_bin = 0 keeps its writes out.
	c, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustExec(t, c, "SET gtid_domain_id = 9")
	mustExec(t, c, "SET gtid_seq_no = 100")
	mustExec(t, c, "INSERT INTO d.t VALUES (2)")
	mustExec(t, c, "INSERT INTO d.t VALUES (3)")
	mustExec(t, c, "SET sql_log_bin = 0")
	mustExec(t, c, "INSERT INTO d.t VALUES (4)")
	if got := queryString(t, db, "SELECT @@gtid_binlog_pos"); got != "0-5-3,9-5-101;" {
		t.Errorf("after domain 9 with gtid_seq_no 100: %q", got)
	}

	// Rotation, purge, reset.
	mustExec(t, db, "FLUSH BINARY LOGS")
	mustExec(t, db, "FLUSH LOGS")
	if got := queryString(t, db, "SHOW BINARY LOGS"); strings.Count(got, ";") != 3 {
		t.Errorf("after two flushes: %q", got)
	}
	mustExec(t, db, "PURGE BINARY LOGS TO 'main.000003'")
	if got := queryString(t, db, "SHOW BINARY LOGS"); !strings.HasPrefix(got, "main.000003 ") {
		t.Errorf("after PURGE TO: %q", got)
	}
	mustExec(t, db, "PURGE BINARY LOGS BEFORE NOW() + INTERVAL 1 DAY") // never the active file
	if got := queryString(t, db, "SHOW BINARY LOGS"); strings.Count(got, ";") != 1 {
		t.Errorf("after PURGE BEFORE: %q", got)
	}
	mustExec(t, db, "RESET MASTER TO 42")
	if got := queryString(t, db, "SHOW MASTER STATUS"); !strings.HasPrefix(got, "main.000042 ") {
		t.Errorf("after RESET MASTER TO 42: %q", got)
	}
	if got := queryString(t, db, "SELECT @@gtid_binlog_state"); got != ";" {
		t.Errorf("state after RESET MASTER: %q", got)
	}

	// binlog_checksum: a change opens a new file, whose events have no
	// footer (Format_description says NONE); max_binlog_size applies from
	// the next group.
	mustExec(t, db, "SET GLOBAL binlog_checksum = 'NONE'")
	if got := queryString(t, db, "SELECT @@global.binlog_checksum"); got != "NONE;" {
		t.Errorf("binlog_checksum after SET: %q", got)
	}
	if got := queryString(t, db, "SHOW MASTER STATUS"); !strings.HasPrefix(got, "main.000043 ") {
		t.Errorf("after SET GLOBAL binlog_checksum: %q", got)
	}
	mustExec(t, db, "INSERT INTO d.t VALUES (5)")
	if got := queryString(t, db, "SHOW BINLOG EVENTS IN 'main.000043' LIMIT 1"); !strings.Contains(got, "Format_desc") {
		t.Errorf("first event of the new file: %q", got)
	}
	mustExec(t, db, "SET GLOBAL binlog_checksum = 'CRC32'")
	mustExec(t, db, "SET GLOBAL max_binlog_size = 4096")
	if got := queryString(t, db, "SELECT @@global.max_binlog_size"); got != "4096;" {
		t.Errorf("max_binlog_size after SET: %q", got)
	}
	for i := range 60 {
		mustExec(t, db, fmt.Sprintf("INSERT INTO d.t VALUES (%d)", 1000+i))
	}
	if got := queryString(t, db, "SHOW BINARY LOGS"); strings.Count(got, ";") < 4 {
		t.Errorf("no rotation at max_binlog_size 4096: %q", got)
	}
	wantCodes(t, db, "settings", map[string]uint16{
		"SET GLOBAL binlog_checksum = 'MD5'": 1231,
		"SET SESSION max_binlog_size = 8192": 1229,
	})
	mustExec(t, db, "SET GLOBAL max_binlog_size = 1073741824")

	// server_id: SET SESSION for the session's groups, SET GLOBAL for
	// the server's from then on (§17.13.1).
	pos := func() string { return queryString(t, db, "SELECT @@gtid_binlog_pos") }
	before := pos()
	sdb := on.open("") // a pool of its own: the session's setting stays on its connection
	mustExec(t, sdb, "SET SESSION server_id = 7")
	mustExec(t, sdb, "INSERT INTO d.t VALUES (2000)")
	sdb.Close()
	if got := queryString(t, db, "SELECT @@global.server_id"); got != "5;" {
		t.Errorf("global server_id after SET SESSION: %q", got)
	}
	mustExec(t, db, "SET GLOBAL server_id = 9")
	mustExec(t, db, "INSERT INTO d.t VALUES (2001)")
	after := pos()
	if !strings.HasPrefix(after, "0-9-") || after == before {
		t.Errorf("gtid_binlog_pos %q after groups under server ids 7 and 9 (before %q)", after, before)
	}
	if got := queryString(t, db, "SELECT @@gtid_binlog_state"); !strings.Contains(got, "0-7-") || !strings.Contains(got, "0-9-") {
		t.Errorf("gtid_binlog_state %q: no group of server 7 or 9", got)
	}
	mustExec(t, db, "SET GLOBAL server_id = 5")

	// Privileges: REPLICATION CLIENT for SHOW, SUPER for PURGE and RESET,
	// REPLICATION SLAVE for the dump.
	mustExec(t, db, "CREATE USER plain@'%' IDENTIFIED BY 'pw'")
	pl := on.openAs(t, "plain", "pw")
	wantCodes(t, pl, "plain", map[string]uint16{
		"SHOW MASTER STATUS": 1227, "SHOW BINARY LOGS": 1227, "SHOW BINLOG EVENTS": 1227,
		"PURGE BINARY LOGS TO 'main.000042'": 1227, "RESET MASTER": 1227,
	})
	mustExec(t, db, "GRANT REPLICATION CLIENT ON *.* TO plain@'%'")
	if got := queryString(t, pl, "SHOW BINARY LOGS"); !strings.HasPrefix(got, "main.000042") {
		t.Errorf("with REPLICATION CLIENT: %q", got)
	}
	empty, _ := gomysql.ParseMariadbGTIDSet("")
	st, err := newSyncerAs(t, on, 300, "plain", "pw").StartSyncGTID(empty)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = st.GetEvent(ctx)
	}
	var me *gomysql.MyError
	if !errors.As(err, &me) || me.Code != 1227 {
		t.Errorf("dump without REPLICATION SLAVE: %v, want 1227", err)
	}
	// The server still serves the connection's neighbours.
	if got := queryString(t, db, "SELECT 1"); got != "1;" {
		t.Fatalf("after a refused dump: %q", got)
	}
}

// --gtid-strict-mode refuses a gtid_seq_no that does not follow its
// domain's last (1950); without it, any is taken.
func TestBinlogStrictMode(t *testing.T) {
	srv := newServer(t, t.TempDir(), "--log-bin", "--gtid-strict-mode")
	db := srv.open("")
	mustExec(t, db, "CREATE DATABASE d")
	mustExec(t, db, "CREATE TABLE d.t (id INT PRIMARY KEY)")
	c, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.ExecContext(t.Context(), "SET gtid_seq_no = 2")
	if n, _ := mysqlError(err); n != 1950 {
		t.Fatalf("SET gtid_seq_no = 2 after 0-1-2: %v, want 1950", err)
	}
	mustExec(t, c, "SET gtid_seq_no = 10")
	mustExec(t, c, "INSERT INTO d.t VALUES (1)")
	if got := queryString(t, db, "SELECT @@gtid_binlog_pos, @@gtid_strict_mode"); got != "0-1-10 1;" {
		t.Fatalf("after gtid_seq_no = 10: %q", got)
	}
}

func (s *server) openAs(t *testing.T, user, pass string) *sql.DB {
	t.Helper()
	d, err := sql.Open("mysql", s.dsn(user, pass, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// wantCodes runs each statement and checks its error code.
func wantCodes(t *testing.T, db *sql.DB, who string, codes map[string]uint16) {
	t.Helper()
	for q, code := range codes {
		_, err := db.Exec(q)
		if n, _ := mysqlError(err); n != code {
			t.Errorf("%s: %s: %v, want %d", who, q, err, code)
		}
	}
}
