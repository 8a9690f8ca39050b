package system

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSQLSurvivesRestartAndCrash(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	for _, q := range []string{
		"CREATE DATABASE shop",
		"CREATE TABLE shop.items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(40) NOT NULL, price DECIMAL(10,2), added DATETIME DEFAULT NOW(), UNIQUE KEY uname (name), KEY iprice (price))",
		"CREATE TABLE shop.log (msg TEXT)", // no primary key
		"INSERT INTO shop.items (name, price) VALUES ('apple', 1.50), ('pear', 2.25), ('fig', NULL)",
		"INSERT INTO shop.log VALUES ('a'), ('a'), ('b')",
		"CREATE VIEW shop.cheap AS SELECT name FROM shop.items WHERE price < 2",
		"CREATE TRIGGER shop.upper BEFORE INSERT ON shop.items FOR EACH ROW SET NEW.name = UPPER(NEW.name)",
		"CREATE PROCEDURE shop.total() SELECT SUM(price) FROM shop.items",
		"CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 's3cret'",
		"GRANT SELECT ON shop.* TO 'app'@'127.0.0.1'",
	} {
		mustExec(t, db, q)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO shop.items (name, price) VALUES ('kiwi', 3)")
	mustExec(t, tx, "DELETE FROM shop.log WHERE msg = 'b'")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tx, _ = db.Begin()
	mustExec(t, tx, "INSERT INTO shop.items (name, price) VALUES ('rolled back', 9)")
	tx.Rollback()

	check := func(stage string) {
		t.Helper()
		db := s.open("shop")
		if got := queryString(t, db, "SELECT id, name, price FROM items ORDER BY id"); got != "1 apple 1.50;2 pear 2.25;3 fig NULL;4 KIWI 3.00;" {
			t.Fatalf("%s: items = %s", stage, got)
		}
		if got := queryString(t, db, "SELECT msg FROM log ORDER BY msg"); got != "a;a;" {
			t.Fatalf("%s: log = %s", stage, got)
		}
		if got := queryString(t, db, "SELECT name FROM cheap ORDER BY name"); got != "apple;" {
			t.Fatalf("%s: view = %s", stage, got)
		}
		if got := queryString(t, db, "SELECT name FROM items WHERE name = 'PEAR'"); got != "pear;" {
			t.Fatalf("%s: case-insensitive lookup = %s", stage, got)
		}
		if got := queryString(t, db, "CALL total()"); got != "6.75;" {
			t.Fatalf("%s: procedure = %s", stage, got)
		}
		app, err := sql.Open("mysql", s.dsn("app", "s3cret", "shop"))
		if err != nil {
			t.Fatal(err)
		}
		defer app.Close()
		if got := queryString(t, app, "SELECT COUNT(*) FROM items"); got != "4;" {
			t.Fatalf("%s: app user count = %s", stage, got)
		}
		if _, err := app.Exec("DELETE FROM items"); err == nil {
			t.Fatalf("%s: app user could delete without the privilege", stage)
		}
	}
	check("running")
	s.stop()
	s.restart()
	check("after clean restart")
	mustExec(t, s.open("shop"), "INSERT INTO log VALUES ('c')")
	mustExec(t, s.open("shop"), "DELETE FROM log WHERE msg = 'c'")
	s.kill()
	s.restart()
	check("after kill -9")
}

func TestWriteConflictGets1213(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE bank")
	mustExec(t, db, "CREATE TABLE bank.acct (id INT PRIMARY KEY, balance INT)")
	mustExec(t, db, "INSERT INTO bank.acct VALUES (1, 100), (2, 100)")

	ctx := context.Background()
	c1, _ := db.Conn(ctx)
	c2, _ := db.Conn(ctx)
	defer c1.Close()
	defer c2.Close()
	mustExec(t, c1, "START TRANSACTION")
	mustExec(t, c2, "START TRANSACTION")
	mustExec(t, c1, "UPDATE bank.acct SET balance = balance - 10 WHERE id = 1")
	mustExec(t, c2, "UPDATE bank.acct SET balance = balance - 50 WHERE id = 1")
	mustExec(t, c2, "UPDATE bank.acct SET balance = balance + 50 WHERE id = 2")
	mustExec(t, c1, "COMMIT")
	_, err := c2.ExecContext(ctx, "COMMIT")
	if num, state := mysqlError(err); num != 1213 || state != "40001" {
		t.Fatalf("second COMMIT: %v (want 1213, SQLSTATE 40001)", err)
	}
	if got := queryString(t, db, "SELECT id, balance FROM bank.acct ORDER BY id"); got != "1 90;2 100;" {
		t.Fatalf("balances = %s: the failed transaction's writes must be invisible", got)
	}
	// The connection is usable again and starts afresh.
	mustExec(t, c2, "UPDATE bank.acct SET balance = balance + 1 WHERE id = 2")
	if got := queryString(t, db, "SELECT balance FROM bank.acct WHERE id = 2"); got != "101;" {
		t.Fatalf("after retry balance = %s", got)
	}
}

func TestErrorsCarryMySQLCodes(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE e")
	mustExec(t, db, "CREATE TABLE e.t (id INT PRIMARY KEY, v TINYINT)")
	mustExec(t, db, "INSERT INTO e.t VALUES (1, 1)")
	for _, c := range []struct {
		q     string
		num   uint16
		state string
	}{
		{"INSERT INTO e.t VALUES (1, 2)", 1062, "23000"},
		{"SELECT * FROM e.nope", 1146, "42S02"},
		{"CREATE TABLE e.t (x INT)", 1050, "42S01"},
		{"SELEC 1", 1064, "42000"},
	} {
		_, err := db.Exec(c.q)
		if num, state := mysqlError(err); num != c.num || state != c.state {
			t.Errorf("%s: %v (want %d %s)", c.q, err, c.num, c.state)
		}
	}
}

// TestCrashDuringWriteLoad kills the server with SIGKILL while clients
// commit, then checks that every acknowledged transaction is there and no
// transaction is there in part. Each transaction inserts one row in each of
// two tables and moves 1 between two counters; a partial transaction would
// show as a missing twin row or a changed counter sum.
func TestCrashDuringWriteLoad(t *testing.T) {
	root := t.TempDir()
	s := newServer(t, root)
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE wl")
	mustExec(t, db, "CREATE TABLE wl.a (id BIGINT PRIMARY KEY, payload VARCHAR(100))")
	mustExec(t, db, "CREATE TABLE wl.b (id BIGINT PRIMARY KEY, a_id BIGINT, KEY ia (a_id))")
	mustExec(t, db, "CREATE TABLE wl.counters (id INT PRIMARY KEY, n BIGINT)")
	mustExec(t, db, "INSERT INTO wl.counters VALUES (1, 1000000), (2, 0), (3, 0)")
	mustExec(t, db, "CREATE TABLE wl.c (id BIGINT PRIMARY KEY)")

	const rounds, writers, autocommitWriters = 3, 4, 3
	var acked sync.Map // id -> true once COMMIT returned without error
	var nextID atomic.Int64
	// Autocommit writes by key (each committed alone, storage.DB.CommitRow,
	// whose group commits gather: journal.Log.SyncToGathering): rows of c
	// and increments of counter 3, acknowledged and tried.
	var ackedC sync.Map
	var incAcked, incTried atomic.Int64
	for round := 0; round < rounds; round++ {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var commits atomic.Int64
		// writer runs step on a connection of its own until the round
		// ends or step returns false.
		writer := func(step func(conn *sql.DB) bool) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, err := sql.Open("mysql", s.dsn("root", "", "wl"))
				if err != nil {
					return
				}
				defer conn.Close()
				for ctx.Err() == nil && step(conn) {
				}
			}()
		}
		for w := 0; w < autocommitWriters; w++ {
			writer(func(conn *sql.DB) bool {
				id := nextID.Add(1)
				if _, err := conn.ExecContext(ctx, "INSERT INTO c (id) VALUES (?)", id); err == nil {
					ackedC.Store(id, true)
				}
				incTried.Add(1)
				if _, err := conn.ExecContext(ctx, "UPDATE counters SET n = n + 1 WHERE id = ?", 3); err == nil {
					incAcked.Add(1)
				}
				return true
			})
		}
		for w := 0; w < writers; w++ {
			writer(func(conn *sql.DB) bool {
				id := nextID.Add(1)
				tx, err := conn.BeginTx(ctx, nil)
				if err != nil {
					return false
				}
				_, e1 := tx.Exec("INSERT INTO a VALUES (?, ?)", id, strings.Repeat("x", int(id%90)))
				_, e2 := tx.Exec("INSERT INTO b VALUES (?, ?)", id, id)
				_, e3 := tx.Exec("UPDATE counters SET n = n - 1 WHERE id = 1")
				_, e4 := tx.Exec("UPDATE counters SET n = n + 1 WHERE id = 2")
				if e1 != nil || e2 != nil || e3 != nil || e4 != nil {
					tx.Rollback()
					return true
				}
				if tx.Commit() == nil {
					acked.Store(id, true)
					commits.Add(1)
				}
				return true
			})
		}
		// Let some commits through, then crash at a random moment.
		waitFor(t, "commits under load", 60*time.Second, func() bool { return commits.Load() >= 50 })
		time.Sleep(time.Duration(rand.Intn(300)) * time.Millisecond)
		s.kill()
		cancel()
		wg.Wait()
		s.restart()

		db := s.open("wl")
		var nA, nB, sum int64
		if err := db.QueryRow("SELECT COUNT(*) FROM a").Scan(&nA); err != nil {
			t.Fatal(err)
		}
		db.QueryRow("SELECT COUNT(*) FROM b").Scan(&nB)
		if err := db.QueryRow("SELECT CAST(SUM(n) AS SIGNED) FROM counters WHERE id IN (1, 2)").Scan(&sum); err != nil {
			t.Fatal(err)
		}
		var moved int64
		db.QueryRow("SELECT n FROM counters WHERE id = 2").Scan(&moved)
		if nA != nB || sum != 1000000 || moved != nA {
			t.Fatalf("round %d: partial transaction visible: a=%d b=%d counter sum=%d moved=%d", round, nA, nB, sum, moved)
		}
		present := idSet(t, db, "SELECT a.id FROM a JOIN b ON a.id = b.a_id")
		missing := 0
		acked.Range(func(k, _ any) bool {
			if !present[k.(int64)] {
				missing++
			}
			return true
		})
		if missing > 0 {
			t.Fatalf("round %d: %d acknowledged commits lost after kill -9", round, missing)
		}
		inC := idSet(t, db, "SELECT id FROM c")
		ackedC.Range(func(k, _ any) bool {
			if !inC[k.(int64)] {
				missing++
			}
			return true
		})
		var inc int64
		db.QueryRow("SELECT n FROM counters WHERE id = 3").Scan(&inc)
		if missing > 0 || inc < incAcked.Load() || inc > incTried.Load() {
			t.Fatalf("round %d: autocommit writes: %d acknowledged rows lost; counter %d, %d increments acknowledged, %d tried",
				round, missing, inc, incAcked.Load(), incTried.Load())
		}
		t.Logf("round %d: %d rows, all acknowledged commits present (%d autocommit rows, counter %d of %d acknowledged increments)",
			round, nA, len(inC), inc, incAcked.Load())
	}
}

func TestCorruptJournalRefusesToStart(t *testing.T) {
	root := t.TempDir()
	s := newServer(t, root)
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE c")
	mustExec(t, db, "CREATE TABLE c.t (id INT PRIMARY KEY, v VARCHAR(50))")
	for i := 0; i < 50; i++ {
		mustExec(t, db, "INSERT INTO c.t VALUES (?, 'some value to fill the journal')", i)
	}
	s.kill() // no shutdown checkpoint: the rows live in the journal only
	segs, _ := filepath.Glob(filepath.Join(root, "c", "*.journal"))
	if len(segs) != 1 {
		t.Fatalf("journal segments: %v", segs)
	}
	data, _ := os.ReadFile(segs[0])
	// In the middle of the log; the file holds zeros after it (the
	// journal writes them ahead of its frames).
	off := len(bytes.TrimRight(data, "\x00")) / 2
	data[off] ^= 0xff
	os.WriteFile(segs[0], data, 0o644)

	// A server that starts anyway is stopped after a minute, and fails
	// the test rather than hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, serverBin, "--root", root, "--port", "0").CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("server started on a corrupt journal:\n%s", out)
	}
	m := regexp.MustCompile(`corrupt frame in (\S+) at offset (\d+)`).FindStringSubmatch(string(out))
	if m == nil || m[1] != segs[0] {
		t.Fatalf("error does not name the file and offset:\n%s", out)
	}
	var at int
	fmt.Sscan(m[2], &at)
	if at > off || at < off-200 {
		t.Fatalf("offset %d is not the frame holding byte %d", at, off)
	}
	if st, _ := os.Stat(segs[0]); st.Size() != int64(len(data)) {
		t.Fatal("the corrupt journal was truncated")
	}
}

func TestMalformedClusterConfigRefusesToStart(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cluster.toml")
	os.WriteFile(cfg, []byte("[node]\nid = \"n1\"\nlisten = \"127.0.0.1:7100\"\n\n[cluster]\nname = \"c\"\nmembers = [\"n1\"]\nelection_timeout_ms = 100\n"), 0o644)
	out, err := exec.Command(serverBin, "--root", filepath.Join(dir, "data"), "--port", "0", "--cluster-config", cfg).CombinedOutput()
	if err == nil {
		t.Fatalf("server started with a malformed cluster.toml:\n%s", out)
	}
	if want := cfg + ":8: [cluster] election_timeout_ms: 100 is out of range"; !strings.Contains(string(out), want) {
		t.Fatalf("error does not name file, line and key (%q):\n%s", want, out)
	}
}

// A statement that fails in autocommit mode ends its transaction: the
// connection's next statement sees what others committed meanwhile (it
// used to keep reading the failed statement's snapshot).
func TestFailedAutocommitStatementLeavesNoSnapshot(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE shop")
	mustExec(t, db, "CREATE TABLE shop.t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO shop.t VALUES (1)")
	a, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.ExecContext(t.Context(), "INSERT INTO shop.t VALUES (1)"); err == nil {
		t.Fatal("a duplicate key was accepted")
	}
	b := s.open("")
	mustExec(t, b, "INSERT INTO shop.t VALUES (2)")
	var n int
	if err := a.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM shop.t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("after a failed autocommit statement the connection sees %d rows (%v), want 2", n, err)
	}
}

// A statement that fails in analysis in autocommit mode (1146: the table
// does not exist yet) does not pin the snapshot it took: once the table is
// created elsewhere, the same connection finds it.
func TestFailedAnalysisLeavesNoSnapshot(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE shop")
	a, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var n int
	if err := a.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM shop.items").Scan(&n); err == nil {
		t.Fatal("a missing table was found")
	}
	mustExec(t, s.open(""), "CREATE TABLE shop.items (id INT PRIMARY KEY)")
	if err := a.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM shop.items").Scan(&n); err != nil {
		t.Fatalf("after a failed statement the connection does not see a table created since: %v", err)
	}
}

// Preparing a statement in autocommit mode does not pin the snapshot the
// analysis took: its first execution sees rows committed after the
// prepare (it used to read the prepare's snapshot once).
func TestPrepareLeavesNoSnapshot(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE shop")
	mustExec(t, db, "CREATE TABLE shop.t (id INT PRIMARY KEY, v INT)")
	a, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	stmt, err := a.PrepareContext(t.Context(), "SELECT COUNT(*) FROM shop.t WHERE v = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	mustExec(t, s.open(""), "INSERT INTO shop.t VALUES (1, 7)")
	var n int
	if err := stmt.QueryRowContext(t.Context(), 7).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the first execution after the prepare sees %d rows (%v), want the row committed since", n, err)
	}
}

// TestPeriodicPolicyLosesNothingToAProcessCrash: under --save-policy
// periodic a commit is acknowledged once written to the OS; killing the
// server (kill -9) between two fsyncs loses none of them, autocommit or in
// transactions, whether written by key (compiled) or otherwise.
func TestPeriodicPolicyLosesNothingToAProcessCrash(t *testing.T) {
	s := newServer(t, t.TempDir(), "--save-policy", "periodic", "--save-interval-ms", "3600000")
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE p")
	mustExec(t, db, "CREATE TABLE p.t (id INT PRIMARY KEY, v INT)")
	for i := 1; i <= 50; i++ {
		mustExec(t, db, "INSERT INTO p.t VALUES (?, ?)", i, i)
	}
	mustExec(t, db, "UPDATE p.t SET v = v + 100 WHERE id <= 10")
	for i := 1; i <= 5; i++ {
		mustExec(t, db, "UPDATE p.t SET v = ? WHERE id = ?", -i, 40+i)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "DELETE FROM p.t WHERE id = ?", 50)
	mustExec(t, tx, "INSERT INTO p.t VALUES (?, ?), (?, ?)", 51, 51, 52, 52)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := queryString(t, db, "SELECT COUNT(*), SUM(v) FROM p.t")
	if want != "51 2098;" {
		t.Fatalf("before the crash: COUNT(*), SUM(v) = %s, want 51 2098", want)
	}
	s.kill()
	s.restart()
	if got := queryString(t, s.open(""), "SELECT COUNT(*), SUM(v) FROM p.t"); got != want {
		t.Fatalf("after kill -9 under the periodic policy: %s, want %s", got, want)
	}
}
