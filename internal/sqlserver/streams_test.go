package sqlserver

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/config"
	"github.com/miraj-db/miraj/internal/storage"
)

// The server's default is storage's, in MiB.
func TestStreamDefaultIsStorages(t *testing.T) {
	if config.DefaultStreamTransactionMB<<20 != storage.DefaultStreamBytes {
		t.Fatalf("config.DefaultStreamTransactionMB = %d MiB, storage.DefaultStreamBytes = %d bytes",
			config.DefaultStreamTransactionMB, storage.DefaultStreamBytes)
	}
}

// restoreStreamGlobal puts @@GLOBAL.stream_transaction_mb back to the
// default at the test's end: it is process-wide.
func restoreStreamGlobal(t *testing.T) {
	t.Cleanup(func() {
		if err := setStreamDefault(nil); err != nil {
			t.Error(err)
		}
	})
}

// stream_transaction_mb has a global and a session value; a session
// starts with the global one; values outside 0…1048576 are 1231, values
// that are not integers 1232; SHOW VARIABLES lists it.
func TestStreamTransactionVariable(t *testing.T) {
	restoreStreamGlobal(t)
	_, open := startServer(t)
	db := open("root", "", "")
	c := dbConn(t, db)
	ctx := context.Background()
	one := func(q string) string {
		t.Helper()
		var v string
		if err := c.QueryRowContext(ctx, q).Scan(&v); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v
	}
	run := func(q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{"SELECT @@stream_transaction_mb", "SELECT @@session.stream_transaction_mb", "SELECT @@global.stream_transaction_mb"} {
		if got := one(q); got != "16" {
			t.Errorf("%s = %s, want 16", q, got)
		}
	}
	var name, value string
	if err := c.QueryRowContext(ctx, "SHOW VARIABLES LIKE 'stream_transaction_mb'").Scan(&name, &value); err != nil || value != "16" {
		t.Fatalf("SHOW VARIABLES: %q %q %v", name, value, err)
	}
	if err := c.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE 'stream%'").Scan(&name, &value); err != nil || name != "stream_transaction_mb" || value != "16" {
		t.Fatalf("SHOW GLOBAL VARIABLES: %q %q %v", name, value, err)
	}

	run("SET SESSION stream_transaction_mb = 1")
	if s, g := one("SELECT @@session.stream_transaction_mb"), one("SELECT @@global.stream_transaction_mb"); s != "1" || g != "16" {
		t.Fatalf("after SET SESSION: session %s global %s", s, g)
	}
	run("SET @@stream_transaction_mb = 0")
	if s := one("SELECT @@stream_transaction_mb"); s != "0" {
		t.Fatalf("after SET @@: %s", s)
	}
	run("SET GLOBAL stream_transaction_mb = 32")
	if s, g := one("SELECT @@session.stream_transaction_mb"), one("SELECT @@global.stream_transaction_mb"); s != "0" || g != "32" {
		t.Fatalf("after SET GLOBAL: session %s global %s", s, g)
	}
	// A new session starts with the global value.
	c2 := dbConn(t, db)
	var v string
	if err := c2.QueryRowContext(ctx, "SELECT @@stream_transaction_mb").Scan(&v); err != nil || v != "32" {
		t.Fatalf("new session: %s %v", v, err)
	}
	if got := one("SET STATEMENT stream_transaction_mb = 5 FOR SELECT @@stream_transaction_mb"); got != "5" {
		t.Fatalf("SET STATEMENT … FOR: %s", got)
	}
	if got := one("SELECT @@stream_transaction_mb"); got != "0" {
		t.Fatalf("after SET STATEMENT … FOR: %s, want the session's 0 back", got)
	}
	run("SET SESSION stream_transaction_mb = 1048576")

	for _, tc := range []struct{ q, want string }{
		{"SET SESSION stream_transaction_mb = -1", "1231 42000 Variable 'stream_transaction_mb' can't be set to the value of '-1'"},
		{"SET GLOBAL stream_transaction_mb = 1048577", "1231 42000 Variable 'stream_transaction_mb' can't be set to the value of '1048577'"},
		{"SET SESSION stream_transaction_mb = 'big'", "1232 42000 Incorrect argument type to variable 'stream_transaction_mb'"},
		{"SET SESSION stream_transaction_mb = 1.5", "1232 42000 Incorrect argument type to variable 'stream_transaction_mb'"},
		{"SET SESSION stream_transaction_mb = NULL", "1232 42000 Incorrect argument type to variable 'stream_transaction_mb'"},
	} {
		_, err := c.ExecContext(ctx, tc.q)
		if got := mysqlErr(err); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.q, got, tc.want)
		}
	}
	if s, g := one("SELECT @@session.stream_transaction_mb"), one("SELECT @@global.stream_transaction_mb"); s != "1048576" || g != "32" {
		t.Fatalf("after the refused SETs: session %s global %s", s, g)
	}
}

// Config.StreamTransactionMB (cluster.toml's stream_transaction_mb, or
// --stream-transaction-mb) is the global value the sessions start with.
func TestStreamTransactionMBFromConfig(t *testing.T) {
	restoreStreamGlobal(t)
	zero := int64(0)
	_, open := startServerWith(t, Config{StreamTransactionMB: &zero})
	var v string
	if err := open("root", "", "").QueryRow("SELECT @@stream_transaction_mb").Scan(&v); err != nil || v != "0" {
		t.Fatalf("@@stream_transaction_mb = %s, %v; want 0", v, err)
	}
}

// streamRow is a row of information_schema.MIRAJ_STREAMS.
type streamRow struct {
	db, origin, applying string
	started              string
	txn, start           uint64
	bytes, rows          int64
	age                  float64
}

func openStreamRows(t *testing.T, db *sql.DB) []streamRow {
	t.Helper()
	rs, err := db.Query("SELECT `DATABASE`, TXN_ID, ORIGIN, START_LSN, BYTES, ROWS_WRITTEN, STARTED, AGE_SECONDS, APPLYING FROM information_schema.MIRAJ_STREAMS")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []streamRow
	for rs.Next() {
		var r streamRow
		if err := rs.Scan(&r.db, &r.txn, &r.origin, &r.start, &r.bytes, &r.rows, &r.started, &r.age, &r.applying); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// streamCounters reads the Miraj_stream* status counters.
func streamCounters(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, name := range []string{"Miraj_streamed_transactions", "Miraj_streamed_bytes", "Miraj_streamed_aborted",
		"Miraj_stream_workers", "Miraj_stream_published", "Miraj_stream_replayed", "Miraj_stream_rolled_back"} {
		out[name] = globalStatus(t, db, name)
	}
	return out
}

// A session with stream_transaction_mb = 1 writing several MiB in BEGIN …
// COMMIT streams: another connection sees its open transaction in
// MIRAJ_STREAMS, growing, and the counters rise, while its rows stay
// invisible until COMMIT. ROLLBACK counts an abort and leaves no row; with
// 0 nothing streams.
func TestStreamedTransactionIsMonitored(t *testing.T) {
	restoreStreamGlobal(t)
	_, open := startServer(t)
	admin := open("root", "", "")
	ctx := context.Background()
	for _, q := range []string{
		"CREATE DATABASE big",
		"CREATE TABLE big.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10000))",
		"CREATE TABLE big.n (i INT PRIMARY KEY)",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var vals []string
	for i := 0; i < 150; i++ {
		vals = append(vals, "("+strconv.Itoa(i)+")")
	}
	if _, err := admin.Exec("INSERT INTO big.n VALUES " + strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	w := dbConn(t, open("root", "", "big"))
	exec := func(q string) {
		t.Helper()
		if _, err := w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// About 1.5 MB of rows per statement.
	const fill = "INSERT INTO t (v) SELECT REPEAT('x', 10000) FROM n"
	count := func() int {
		t.Helper()
		var n int
		if err := admin.QueryRow("SELECT COUNT(*) FROM big.t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if rows := openStreamRows(t, admin); len(rows) != 0 {
		t.Fatalf("open transactions before any: %+v", rows)
	}

	// Committed.
	before := streamCounters(t, admin)
	exec("SET SESSION stream_transaction_mb = 1")
	exec("BEGIN")
	exec(fill)
	rows := openStreamRows(t, admin)
	if len(rows) != 1 {
		t.Fatalf("MIRAJ_STREAMS during the transaction: %+v", rows)
	}
	r1 := rows[0]
	if r1.db != "big" || r1.origin != "local" || r1.applying != "NO" || r1.bytes < 1<<20 || r1.rows < 100 || r1.txn == 0 || r1.start == 0 || r1.age < 0 ||
		len(r1.started) != len("2006-01-02 15:04:05.000000") {
		t.Fatalf("row of the open transaction: %+v", r1)
	}
	exec(fill)
	exec(fill)
	rows = openStreamRows(t, admin)
	if len(rows) != 1 || rows[0].txn != r1.txn || rows[0].start != r1.start || rows[0].bytes <= r1.bytes || rows[0].rows <= r1.rows {
		t.Fatalf("MIRAJ_STREAMS has not grown: first %+v, now %+v", r1, rows)
	}
	mid := streamCounters(t, admin)
	if mid["Miraj_streamed_transactions"] != before["Miraj_streamed_transactions"]+1 ||
		mid["Miraj_streamed_bytes"]-before["Miraj_streamed_bytes"] != int(rows[0].bytes) {
		t.Fatalf("counters during the transaction: before %v, now %v (row %+v)", before, mid, rows[0])
	}
	if n := count(); n != 0 {
		t.Fatalf("another session sees %d rows of the open transaction", n)
	}
	exec("COMMIT")
	if rows := openStreamRows(t, admin); len(rows) != 0 {
		t.Fatalf("MIRAJ_STREAMS after COMMIT: %+v", rows)
	}
	if n := count(); n != 450 {
		t.Fatalf("rows after COMMIT: %d, want 450", n)
	}
	after := streamCounters(t, admin)
	if after["Miraj_streamed_aborted"] != before["Miraj_streamed_aborted"] || after["Miraj_streamed_bytes"] < mid["Miraj_streamed_bytes"] {
		t.Fatalf("counters after COMMIT: %v (during: %v)", after, mid)
	}

	// Rolled back.
	exec("BEGIN")
	exec(fill)
	exec(fill)
	if rows := openStreamRows(t, admin); len(rows) != 1 || rows[0].txn == r1.txn {
		t.Fatalf("MIRAJ_STREAMS during the second transaction: %+v", rows)
	}
	exec("ROLLBACK")
	if rows := openStreamRows(t, admin); len(rows) != 0 {
		t.Fatalf("MIRAJ_STREAMS after ROLLBACK: %+v", rows)
	}
	rolled := streamCounters(t, admin)
	if rolled["Miraj_streamed_aborted"] != after["Miraj_streamed_aborted"]+1 ||
		rolled["Miraj_streamed_transactions"] != after["Miraj_streamed_transactions"]+1 {
		t.Fatalf("counters after ROLLBACK: %v (before: %v)", rolled, after)
	}
	if n := count(); n != 450 {
		t.Fatalf("rows after ROLLBACK: %d, want 450", n)
	}

	// Off.
	exec("SET SESSION stream_transaction_mb = 0")
	exec("BEGIN")
	exec(fill)
	exec(fill)
	if rows := openStreamRows(t, admin); len(rows) != 0 {
		t.Fatalf("MIRAJ_STREAMS with streaming off: %+v", rows)
	}
	exec("COMMIT")
	if off := streamCounters(t, admin); off["Miraj_streamed_transactions"] != rolled["Miraj_streamed_transactions"] ||
		off["Miraj_streamed_bytes"] != rolled["Miraj_streamed_bytes"] {
		t.Fatalf("counters with streaming off: %v (before: %v)", off, rolled)
	}
	if n := count(); n != 750 {
		t.Fatalf("rows after the unstreamed COMMIT: %d, want 750", n)
	}

	// A statement of its own (autocommit) streams as well.
	exec("SET SESSION stream_transaction_mb = 1")
	exec(fill)
	if auto := streamCounters(t, admin); auto["Miraj_streamed_transactions"] != rolled["Miraj_streamed_transactions"]+1 ||
		auto["Miraj_streamed_aborted"] != rolled["Miraj_streamed_aborted"] {
		t.Fatalf("counters after an autocommit statement: %v (before: %v)", auto, rolled)
	}
	if n := count(); n != 900 {
		t.Fatalf("rows after the autocommit statement: %d, want 900", n)
	}
}

// An account without PROCESS or REPLICATION CLIENT sees no rows of
// MIRAJ_STREAMS, as of MIRAJ_REPLICATION.
func TestStreamsTableNeedsProcess(t *testing.T) {
	restoreStreamGlobal(t)
	_, open := startServer(t)
	admin := open("root", "", "")
	for _, q := range []string{
		"CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(10000))",
		"CREATE USER app IDENTIFIED BY 'pw'", "GRANT ALL ON s.* TO app",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	w := dbConn(t, admin)
	ctx := context.Background()
	for _, q := range []string{"SET SESSION stream_transaction_mb = 1", "BEGIN",
		"INSERT INTO s.t VALUES (1, REPEAT('a', 10000))"} {
		if _, err := w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// 1.2 MB in one statement.
	var vals []string
	for i := 2; i < 120; i++ {
		vals = append(vals, "("+strconv.Itoa(i)+", REPEAT('b', 10000))")
	}
	if _, err := w.ExecContext(ctx, "INSERT INTO s.t VALUES "+strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	if rows := openStreamRows(t, admin); len(rows) != 1 {
		t.Fatalf("root: %+v", rows)
	}
	if rows := openStreamRows(t, open("app", "pw", "")); len(rows) != 0 {
		t.Fatalf("app without PROCESS: %+v", rows)
	}
	if _, err := w.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}

// With streaming on, a DDL that rebuilds a table streams at once (storage
// rebuilds): a small ALTER TABLE, CREATE INDEX and OPTIMIZE TABLE still
// leave the rows and the definition they should, and the ALTER counts as
// a streamed transaction.
func TestAlterTableWithStreaming(t *testing.T) {
	restoreStreamGlobal(t)
	_, open := startServer(t)
	db := open("root", "", "")
	c := dbConn(t, db)
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE DATABASE d")
	exec("USE d")
	exec("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))")
	exec("INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')")
	before := streamCounters(t, db)
	exec("SET SESSION stream_transaction_mb = 1")
	exec("ALTER TABLE t ADD COLUMN qty INT NOT NULL DEFAULT 7")
	exec("ALTER TABLE t MODIFY name VARCHAR(40) NOT NULL")
	exec("CREATE INDEX by_name ON t (name)")
	exec("OPTIMIZE TABLE t")
	exec("BEGIN")
	exec("INSERT INTO t VALUES (4, 'four', 8)")
	exec("ALTER TABLE t DROP COLUMN qty") // commits the INSERT first
	after := streamCounters(t, db)
	if after["Miraj_streamed_transactions"] <= before["Miraj_streamed_transactions"] {
		t.Errorf("no ALTER TABLE streamed: before %v, after %v", before, after)
	}
	if after["Miraj_streamed_aborted"] != before["Miraj_streamed_aborted"] {
		t.Errorf("aborted streams: before %v, after %v", before, after)
	}
	if rows := openStreamRows(t, db); len(rows) != 0 {
		t.Fatalf("open transactions after the DDL: %+v", rows)
	}
	got := queryOne(t, db, "SELECT GROUP_CONCAT(CONCAT(id, ':', name) ORDER BY id) FROM d.t")
	if got != "1:one,2:two,3:three,4:four" {
		t.Fatalf("rows after the ALTERs: %s", got)
	}
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE d.t").Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`name` varchar(40) NOT NULL", "KEY `by_name` (`name`)"} {
		if !strings.Contains(create, want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, create)
		}
	}
	if strings.Contains(create, "qty") {
		t.Errorf("qty not dropped:\n%s", create)
	}
	if got := queryOne(t, db, "SELECT id FROM d.t WHERE name = 'three'"); got != "3" {
		t.Fatalf("lookup by the new index: %s", got)
	}
}
