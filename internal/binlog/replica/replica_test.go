package replica

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestParseStatements(t *testing.T) {
	for _, tc := range []struct {
		q    string
		ok   bool
		kind StatementKind
		io   bool
		sql  bool
		all  bool
		code uint16 // error expected
	}{
		{q: "SELECT 1"},
		{q: "SHOW STATUS"},
		{q: "START TRANSACTION"},
		{q: "show slave status", ok: true, kind: StmtShow, io: false, sql: false},
		{q: "SHOW REPLICA STATUS;", ok: true, kind: StmtShow},
		{q: "SHOW ALL SLAVES STATUS", ok: true, kind: StmtShow, all: true},
		{q: "SHOW SLAVE STATUS FOR CHANNEL 'x'", ok: true, kind: StmtShow, code: codeNotSupported},
		{q: "START SLAVE", ok: true, kind: StmtStart, io: true, sql: true},
		{q: "start replica io_thread", ok: true, kind: StmtStart, io: true},
		{q: "STOP SLAVE SQL_THREAD", ok: true, kind: StmtStop, sql: true},
		{q: "STOP SLAVE IO_THREAD, SQL_THREAD", ok: true, kind: StmtStop, io: true, sql: true},
		{q: "START SLAVE UNTIL MASTER_GTID_POS = '0-1-2'", ok: true, kind: StmtStart, code: codeNotSupported},
		{q: "START SLAVE 'other'", ok: true, kind: StmtStart, code: codeNotSupported},
		{q: "START SLAVE BOGUS", ok: true, kind: StmtStart, code: codeSyntax},
		{q: "RESET SLAVE", ok: true, kind: StmtReset, io: true, sql: true},
		{q: "RESET REPLICA ALL", ok: true, kind: StmtReset, io: true, sql: true, all: true},
		{q: "CHANGE MASTER TO MASTER_HOST='h'", ok: true, kind: StmtChange},
		{q: "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h', SOURCE_PORT=3307", ok: true, kind: StmtChange},
		{q: "CHANGE MASTER 'x' TO MASTER_HOST='h'", ok: true, kind: StmtChange, code: codeNotSupported},
		{q: "CHANGE MASTER TO", ok: true, kind: StmtChange, code: codeSyntax},
		{q: "CHANGE MASTER TO MASTER_HOST='h' MASTER_PORT=1", ok: true, kind: StmtChange, code: codeSyntax},
		{q: "CHANGE MASTER TO MASTER_HOST='unclosed", ok: true, kind: StmtChange, code: codeSyntax},
	} {
		st, _, ok, err := Parse(tc.q)
		if ok != tc.ok {
			t.Errorf("%q: ours = %v, want %v", tc.q, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if tc.code != 0 {
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Errorf("%q: error %v, want code %d", tc.q, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.q, err)
			continue
		}
		if st.Kind != tc.kind || st.All != tc.all || tc.kind != StmtShow && tc.kind != StmtChange && (st.IO != tc.io || st.SQL != tc.sql) {
			t.Errorf("%q: %+v", tc.q, st)
		}
	}
}

func TestParseEndsAtSemicolon(t *testing.T) {
	q := "CHANGE MASTER TO MASTER_PASSWORD='a;b'; SELECT 1"
	st, end, ok, err := Parse(q)
	if !ok || err != nil {
		t.Fatalf("ok %v err %v", ok, err)
	}
	if q[end:] != " SELECT 1" {
		t.Fatalf("end at %q", q[end:])
	}
	c, _, err := applyOptions(defaultConfig(), st.options)
	if err != nil || c.Password != "a;b" {
		t.Fatalf("password %q, %v", c.Password, err)
	}
}

func TestChangeOptions(t *testing.T) {
	change := func(q string) (Config, []string, error) {
		st, _, _, err := Parse(q)
		if err != nil {
			return Config{}, nil, err
		}
		return applyOptions(defaultConfig(), st.options)
	}
	c, warns, err := change(`CHANGE MASTER TO MASTER_HOST='10.0.0.5', MASTER_PORT=3306, MASTER_USER='repl', MASTER_PASSWORD='it''s',
		MASTER_USE_GTID=current_pos, MASTER_CONNECT_RETRY=10, MASTER_HEARTBEAT_PERIOD=2.5, MASTER_SSL=1,
		MASTER_SSL_CA='/c/ca.pem', MASTER_SSL_VERIFY_SERVER_CERT=1, MASTER_DELAY=5, IGNORE_SERVER_IDS=(3,4)`)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Host: "10.0.0.5", Port: 3306, User: "repl", Password: "it's", UseGTID: useCurrentPos, ConnectRetry: 10,
		HeartbeatPeriod: 2.5, SSL: true, SSLCA: "/c/ca.pem", SSLVerify: true}
	if c.Host != want.Host || c.Port != want.Port || c.User != want.User || c.Password != want.Password || c.UseGTID != want.UseGTID ||
		c.ConnectRetry != want.ConnectRetry || c.HeartbeatPeriod != want.HeartbeatPeriod || !c.SSL || c.SSLCA != want.SSLCA || !c.SSLVerify {
		t.Fatalf("config %+v", c)
	}
	if len(warns) != 2 || c.Kept["MASTER_DELAY"] != "5" || c.Kept["IGNORE_SERVER_IDS"] != "(3,4)" {
		t.Fatalf("kept %v, warnings %v", c.Kept, warns)
	}
	c, _, err = change("CHANGE MASTER TO MASTER_HOST='h', MASTER_LOG_FILE='mariadb-bin.000002', MASTER_LOG_POS=1234")
	if err != nil || c.UseGTID != useNo || c.LogFile != "mariadb-bin.000002" || c.LogPos != 1234 {
		t.Fatalf("position mode: %+v %v", c, err)
	}
	for q, code := range map[string]uint16{
		"CHANGE MASTER TO MASTER_HOST='h', MASTER_USE_GTID=slave_pos, MASTER_LOG_POS=4": codeWrongArguments,
		"CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD=5000000":                              codeHeartbeatRange,
		"CHANGE MASTER TO MASTER_PORT=70000":                                            codeWrongArguments,
		"CHANGE MASTER TO MASTER_PORT='1'":                                              codeSyntax,
		"CHANGE MASTER TO MASTER_HOST=h":                                                codeSyntax,
		"CHANGE MASTER TO MASTER_USE_GTID=maybe":                                        codeSyntax,
		"CHANGE MASTER TO MASTER_SSL=2":                                                 codeWrongArguments,
		"CHANGE MASTER TO MASTER_BOGUS=1":                                               codeSyntax,
		"CHANGE MASTER TO MASTER_PORT=1, SOURCE_PORT=2":                                 codeWrongArguments,
	} {
		_, _, err := change(q)
		var e *Error
		if !errors.As(err, &e) || e.Code != code {
			t.Errorf("%s: %v, want %d", q, err, code)
		}
	}
}

func TestPosition(t *testing.T) {
	p, err := parsePosition("1-3-7, 0-1-42")
	if err != nil || p.String() != "0-1-42,1-3-7" {
		t.Fatalf("%v %v", p, err)
	}
	if !p.reached(position{0: {0, 1, 40}}) || p.reached(position{0: {0, 1, 43}}) || p.reached(position{2: {2, 1, 1}}) {
		t.Fatal("reached")
	}
	for _, bad := range []string{"0-1", "a-b-c", "0-1-2,0-1-3", "0-1--1"} {
		if _, err := parsePosition(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if q := p.with(gtid{0, 2, 43}); q.String() != "0-2-43,1-3-7" || p.String() != "0-1-42,1-3-7" {
		t.Fatalf("with: %v, original %v", q, p)
	}
}

// TestResume: a group over several databases cut by a crash is applied
// again, skipping the databases that committed it; a whole one is not.
func TestResume(t *testing.T) {
	rec := func(c uint64, pos, prev string, dbs ...string) []byte {
		return record{Counter: c, Pos: pos, Prev: prev, DBs: dbs, File: "f", FilePos: c * 100, PrevFile: "f", PrevFilePos: (c - 1) * 100}.encode()
	}
	all := func(string) bool { return true }
	// Whole: every database of group 5 holds it.
	rp, err := resume(map[string][]byte{
		"miraj": rec(5, "0-1-5", "0-1-4", "a", "b", "miraj"),
		"a":     rec(5, "0-1-5", "0-1-4", "a", "b", "miraj"),
		"b":     rec(5, "0-1-5", "0-1-4", "a", "b", "miraj"),
		"c":     rec(2, "0-1-2", "0-1-1", "c", "miraj"),
	}, all)
	if err != nil || rp.pos.String() != "0-1-5" || rp.done != nil || rp.counter != 5 || rp.filePos != 500 {
		t.Fatalf("whole: %+v %v", rp, err)
	}
	// Cut: b committed group 5, a and miraj did not.
	rp, err = resume(map[string][]byte{
		"miraj": rec(4, "0-1-4", "0-1-3", "a", "miraj"),
		"a":     rec(4, "0-1-4", "0-1-3", "a", "miraj"),
		"b":     rec(5, "0-1-5", "0-1-4", "a", "b", "miraj"),
	}, all)
	if err != nil || rp.pos.String() != "0-1-4" || !rp.done["b"] || rp.done["a"] || rp.filePos != 400 {
		t.Fatalf("cut: %+v %v", rp, err)
	}
	// The position database several groups behind (its commits do not
	// wait for their fsync when the group wrote another database): the
	// newest record elsewhere names the group; only its position is redone.
	rp, err = resume(map[string][]byte{
		"miraj": rec(2, "0-1-2", "0-1-1", "a", "miraj"),
		"a":     rec(5, "0-1-5", "0-1-4", "a", "miraj"),
		"b":     rec(4, "0-1-4", "0-1-3", "b", "miraj"),
	}, all)
	if err != nil || rp.pos.String() != "0-1-4" || !rp.done["a"] || rp.done["miraj"] || rp.counter != 5 || rp.filePos != 400 {
		t.Fatalf("position behind: %+v %v", rp, err)
	}
	// A database of the group dropped since: nothing to redo there.
	rp, err = resume(map[string][]byte{
		"miraj": rec(5, "0-1-5", "0-1-4", "a", "miraj"),
	}, func(db string) bool { return db != "a" })
	if err != nil || rp.pos.String() != "0-1-5" {
		t.Fatalf("dropped: %+v %v", rp, err)
	}
	if rp, err := resume(nil, all); err != nil || len(rp.pos) != 0 {
		t.Fatalf("empty: %+v %v", rp, err)
	}
	if _, err := resume(map[string][]byte{"a": []byte("{")}, all); err == nil {
		t.Fatal("a corrupt record was read")
	}
}

func TestLiteral(t *testing.T) {
	for _, tc := range []struct {
		v    any
		typ  string
		want string
	}{
		{nil, "int", "NULL"},
		{int8(-1), "tinyint unsigned", "255"},
		{int8(-1), "tinyint", "-1"},
		{int16(-1), "smallint unsigned", "65535"},
		{int32(-1), "mediumint unsigned", "16777215"},
		{int32(-1), "int unsigned", "4294967295"},
		{int64(-1), "bigint unsigned", "18446744073709551615"},
		{int64(-9223372036854775808), "bigint", "-9223372036854775808"},
		{int64(2), "enum('a','b','c')", "'b'"},
		{int64(0), "enum('a')", "''"},
		{int64(5), "set('a','b','c')", "'a,c'"},
		{int64(5), "bit(3)", "b'101'"},
		{float32(1.5), "float", "1.5"},
		{float64(-2.25e100), "double", "-2.25e+100"},
		{"12.50", "decimal(5,2)", "'12.50'"},
		{decimal.RequireFromString("1.5"), "decimal(5,2)", "1.5"},
		{"it's", "varchar(10)", "'it''s'"},
		{"a\\b", "varchar(10)", "CONCAT('a',CHAR(92 USING utf8mb4),'b')"},
		{"\x00\xff", "varbinary(4)", "X'00ff'"},
		{[]byte("héllo"), "text", "'héllo'"},
		{[]byte{0, 1}, "blob", "X'0001'"},
		{[]byte{}, "blob", "''"},
	} {
		got, err := literal(tc.v, Column{Name: "c", Type: tc.typ})
		if err != nil || got != tc.want {
			t.Errorf("literal(%#v, %s) = %s, %v; want %s", tc.v, tc.typ, got, err, tc.want)
		}
	}
	for _, bad := range []struct {
		v   any
		typ string
	}{{int64(4), "enum('a')"}, {int64(8), "set('a','b')"}, {struct{}{}, "int"}} {
		if got, err := literal(bad.v, Column{Type: bad.typ}); err == nil {
			t.Errorf("literal(%#v, %s) = %s", bad.v, bad.typ, got)
		}
	}
}

func TestStatusSQLMode(t *testing.T) {
	// Q_FLAGS2 (0) then Q_SQL_MODE (1): MariaDB 10.11's default mode.
	vars := []byte{0, 0, 0, 0, 0, 1, 0, 0, 0x20, 0x54, 0, 0, 0, 0, 6, 3, 's', 't', 'd'}
	bits := statusSQLMode(vars)
	got := sqlModeNames(bits)
	if got != "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION" {
		t.Fatalf("sql_mode %x = %s", bits, got)
	}
	if statusSQLMode([]byte{200, 1, 2}) != 0 || statusSQLMode(nil) != 0 || statusSQLMode([]byte{1, 2}) != 0 {
		t.Fatal("unknown or short status variables read as a mode")
	}
}

func TestFullImage(t *testing.T) {
	if !fullImage(nil, 9) || !fullImage([]byte{0xff, 0x01}, 9) || fullImage([]byte{0xff, 0x00}, 9) || fullImage([]byte{0xff}, 9) {
		t.Fatal("fullImage")
	}
}

func TestErrorsAreMariaDBs(t *testing.T) {
	if e := errRunning(); e.Code != 1198 || !strings.Contains(e.Message, "STOP SLAVE") {
		t.Fatal(e)
	}
	if e := errNotConfigured(); e.Code != 1200 {
		t.Fatal(e)
	}
}

func TestLogLimit(t *testing.T) {
	var l logLimit
	now := time.Unix(1000, 0)
	for i := range logBurst {
		if ok, _ := l.allow(now); !ok {
			t.Fatalf("message %d refused", i)
		}
	}
	if ok, _ := l.allow(now); ok {
		t.Fatal("a message beyond the burst allowed")
	}
	l.allow(now)
	ok, dropped := l.allow(now.Add(logWindow))
	if !ok || dropped != 2 {
		t.Fatalf("next window: ok %v, dropped %d", ok, dropped)
	}
}

// Client statements are looked at by their first word before they are
// tokenized; a replica statement is still found behind spaces, a comment
// or lower case.
func TestParseFirstWord(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT 1":                            false,
		"insert into t values ('STOP SLAVE')": false,
		"  \n start slave":                    true,
		"/* why */ STOP SLAVE":                true,
		"Change Master To master_host='h'":    true,
		"SHOW SLAVE STATUS":                   true,
		"SHOW TABLES":                         false,
		"RESET MASTER":                        false,
	} {
		if _, _, ok, _ := Parse(q); ok != want {
			t.Errorf("Parse(%q) is a replica statement: %v, want %v", q, ok, want)
		}
	}
}
