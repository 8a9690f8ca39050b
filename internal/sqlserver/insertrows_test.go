package sqlserver

import (
	"context"
	gosql "database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	gomysql "github.com/go-sql-driver/mysql"
)

// An INSERT of several rows, prepared or as text (one longer than the
// 4 KiB other texts are compiled up to), is answered without the planner:
// its OK packet as MySQL's (the rows, the first AUTO_INCREMENT value; the
// info line, which this client does not read, is TestClientStatements'),
// its rows taking consecutive values. A duplicate key, within the
// statement or with a row there, fails it with nothing written, in
// autocommit mode and in a transaction, which goes on.
func TestInsertsOfSeveralRows(t *testing.T) {
	s, _ := startServer(t)
	host, portStr, _ := net.SplitHostPort(s.Addr().String())
	port, _ := strconv.Atoi(portStr)
	c, err := mysql.Connect(context.Background(), &mysql.ConnParams{Host: host, Port: port, Uname: "root"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exec := func(q string) error {
		_, err := c.ExecuteFetch(q, 1000, false)
		return err
	}
	one := func(q string) string {
		r, err := c.ExecuteFetch(q, 1000, false)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var b strings.Builder
		for _, row := range r.Rows {
			for i, v := range row {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(v.ToString())
			}
			b.WriteByte(';')
		}
		return b.String()
	}
	for _, q := range []string{
		"CREATE DATABASE ir", "USE ir",
		"CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))",
		"CREATE TABLE k (id INT PRIMARY KEY, v INT)",
		"INSERT INTO a (v) VALUES ('first')",
	} {
		if err := exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	compiled := func(q string) bool {
		before := s.points.written.Load()
		if err := exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s.points.written.Load() > before
	}
	// Three rows, AUTO_INCREMENT values taken: the OK packet.
	q := "INSERT INTO a (v) VALUES ('x'), ('y'), ('z')"
	before := s.points.written.Load()
	r, err := c.ExecuteFetch(q, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.points.written.Load() == before {
		t.Fatalf("%s: answered by the planner", q)
	}
	if r.RowsAffected != 3 || r.InsertID != 2 {
		t.Fatalf("%s: affected %d, insert id %d; want 3, 2", q, r.RowsAffected, r.InsertID)
	}
	if got := one("SELECT LAST_INSERT_ID(), ROW_COUNT()"); got != "2 3;" {
		t.Fatalf("LAST_INSERT_ID(), ROW_COUNT() = %s, want 2 3", got)
	}
	if got := one("SELECT id, v FROM a ORDER BY id"); got != "1 first;2 x;3 y;4 z;" {
		t.Fatalf("rows: %s", got)
	}

	// 600 rows, 8 KiB of text.
	var b strings.Builder
	b.WriteString("INSERT INTO k (id, v) VALUES ")
	for i := 1; i <= 600; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, %d)", i, i*i)
	}
	if len(b.String()) <= maxTextLen || !compiled(b.String()) {
		t.Fatalf("an INSERT of 600 rows (%d bytes) was answered by the planner", len(b.String()))
	}
	if got := one("SELECT COUNT(*), SUM(v) FROM k"); got != "600 72180100;" {
		t.Fatalf("COUNT(*), SUM(v) after 600 rows: %s", got)
	}

	dup := func(q string) {
		t.Helper()
		err := exec(q)
		if se, ok := err.(*mysql.SQLError); !ok || se.Num != 1062 {
			t.Fatalf("%.60s…: %v, want 1062", q, err)
		}
	}
	// Duplicates: within the statement, with a row there.
	dup("INSERT INTO k VALUES (1000, 1), (1001, 1), (1000, 2)")
	dup("INSERT INTO k VALUES (1002, 1), (7, 1)")
	if got := one("SELECT COUNT(*) FROM k WHERE id > 600"); got != "0;" {
		t.Fatalf("rows of the failed statements: %s, want none", got)
	}
	// In a transaction the statement alone is undone.
	for _, q := range []string{"BEGIN", "INSERT INTO k VALUES (2000, 1), (2001, 1)"} {
		if err := exec(q); err != nil {
			t.Fatal(err)
		}
	}
	dup("INSERT INTO k VALUES (2002, 1), (2001, 1)")
	if !compiled("INSERT INTO k VALUES (2003, 1), (2004, 1)") {
		t.Fatal("the transaction's next INSERT was answered by the planner")
	}
	if err := exec("COMMIT"); err != nil {
		t.Fatal(err)
	}
	if got := one("SELECT id FROM k WHERE id > 600 ORDER BY id"); got != "2000;2001;2003;2004;" {
		t.Fatalf("rows of the transaction: %s, want 2000 2001 2003 2004", got)
	}

	// More rows in a transaction than it keeps pending (storage's
	// maxPending), then a duplicate of one of them.
	b.Reset()
	b.WriteString("INSERT INTO k VALUES ")
	for i := 3000; i < 3100; i++ {
		if i > 3000 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, 1)", i)
	}
	rows100 := b.String()
	// A transaction that read first: its snapshot taken at once.
	for _, q := range []string{"BEGIN", "SELECT COUNT(*) FROM k"} {
		if err := exec(q); err != nil {
			t.Fatal(err)
		}
	}
	dup(rows100 + ", (3040, 2)")
	if !compiled(rows100) {
		t.Fatal("an INSERT of 100 rows in a transaction was answered by the planner")
	}
	dup("INSERT INTO k VALUES (3100, 1), (3050, 1)")
	if err := exec("COMMIT"); err != nil {
		t.Fatal(err)
	}
	if got := one("SELECT COUNT(*), MIN(id), MAX(id) FROM k WHERE id >= 3000"); got != "100 3000 3099;" {
		t.Fatalf("rows of the transaction of 100: %s, want 100 3000 3099", got)
	}

	// Values given for every row's AUTO_INCREMENT column (a dump's rows):
	// compiled, the counter past the largest. A statement that fails
	// leaves the counter moved by the rows before the failing one, as
	// MariaDB 10.11 and the planner do (next value 201, not 301).
	if !compiled("INSERT INTO a (id, v) VALUES (100, 'p'), (101, 'q')") {
		t.Fatal("an INSERT giving its rows' AUTO_INCREMENT values was answered by the planner")
	}
	if err := exec("INSERT INTO a (v) VALUES ('g')"); err != nil {
		t.Fatal(err)
	}
	dup("INSERT INTO a (id, v) VALUES (200, 'r'), (101, 'dup'), (300, 's')")
	if err := exec("INSERT INTO a (v) VALUES ('t')"); err != nil {
		t.Fatal(err)
	}
	if got := one("SELECT id, v FROM a WHERE id >= 100 ORDER BY id"); got != "100 p;101 q;102 g;201 t;" {
		t.Fatalf("rows after values given: %s, want 100 p;101 q;102 g;201 t", got)
	}
}

// INSERT … ON DUPLICATE KEY UPDATE, compiled: the affected rows MySQL
// counts (1 inserted, 2 changed, 0 left as it was, 1 with
// CLIENT_FOUND_ROWS), the planner's for each, and the rows.
func TestUpsertsCountAsMySQL(t *testing.T) {
	s, open := startServer(t)
	root := open("root", "", "")
	execAll(t, root,
		"CREATE DATABASE up", "CREATE TABLE up.t (id INT PRIMARY KEY, n INT NOT NULL, c VARCHAR(10))",
		"CREATE TABLE up.a (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
	)
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", s.Addr().String(), "up"
	cfg.AllowNativePasswords, cfg.ClientFoundRows = true, true
	found, err := gosql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer found.Close()
	plain := open("root", "", "up")
	steps := []struct {
		db        *gosql.DB
		q         string
		args      []any
		want      int64 // affected rows
		wantTable string
	}{
		{plain, "INSERT INTO t (id, n, c) VALUES (?, ?, ?), (?, ?, ?) ON DUPLICATE KEY UPDATE c = VALUES(c)", []any{1, 1, "a", 2, 2, "b"}, 2, "1 1 a;2 2 b;"},
		{plain, "INSERT INTO t (id, n, c) VALUES (?, ?, ?), (?, ?, ?) ON DUPLICATE KEY UPDATE c = VALUES(c)", []any{1, 1, "z", 3, 3, "c"}, 3, "1 1 z;2 2 b;3 3 c;"},
		{plain, "INSERT INTO t (id, n, c) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE c = VALUES(c)", []any{2, 0, "b"}, 0, "1 1 z;2 2 b;3 3 c;"},
		{found, "INSERT INTO t (id, n, c) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE c = VALUES(c)", []any{2, 0, "b"}, 1, "1 1 z;2 2 b;3 3 c;"},
		{plain, "INSERT INTO t (id, n) VALUES (?, ?), (?, ?) ON DUPLICATE KEY UPDATE n = n + ?", []any{3, 0, 3, 0, 10}, 4, "1 1 z;2 2 b;3 23 c;"},
	}
	table := func() string {
		rows, err := root.Query("SELECT id, n, c FROM up.t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var id, n int
			var c gosql.NullString
			if err := rows.Scan(&id, &n, &c); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%d %d %s;", id, n, c.String)
		}
		return b.String()
	}
	for i, st := range steps {
		before := s.points.written.Load()
		res, err := st.db.Exec(st.q, st.args...)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if s.points.written.Load() == before {
			t.Fatalf("step %d: answered by the planner", i)
		}
		n, _ := res.RowsAffected()
		if n != st.want {
			t.Errorf("step %d %s %v: %d rows affected, want %d", i, st.q, st.args, n, st.want)
		}
		if got := table(); got != st.wantTable {
			t.Fatalf("step %d: table %s, want %s", i, got, st.wantTable)
		}
	}
	// The planner counts the same.
	if _, err := root.Exec("DELETE FROM up.t"); err != nil {
		t.Fatal(err)
	}
	s.points.off.Store(true)
	defer s.points.off.Store(false)
	for i, st := range steps {
		res, err := st.db.Exec(st.q, st.args...)
		if err != nil {
			t.Fatalf("planner, step %d: %v", i, err)
		}
		if n, _ := res.RowsAffected(); n != st.want {
			t.Errorf("planner, step %d: %d rows affected, want %d", i, n, st.want)
		}
	}

	// The OK packet's insert id is 0 on a table without AUTO_INCREMENT,
	// whatever LAST_INSERT_ID() is, through either path (go-mysql-server
	// put LAST_INSERT_ID() there).
	c, err := plain.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(context.Background(), "INSERT INTO up.a (v) VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	for _, compiled := range []bool{false, true} {
		s.points.off.Store(!compiled)
		res, err := c.ExecContext(context.Background(), "INSERT INTO t (id, n) VALUES (?, ?) ON DUPLICATE KEY UPDATE n = n + 1", 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := res.LastInsertId(); id != 0 {
			t.Errorf("compiled %v: insert id %d, want 0 (no AUTO_INCREMENT column)", compiled, id)
		}
	}
}

// Autocommit upserts of a few keys from several connections at once (two
// of them inserting the same new key, or updating the same row) neither
// fail with 1213 nor lose an increment.
func TestConcurrentUpsertsNeverFailNorLoseIncrements(t *testing.T) {
	s, open := startServer(t)
	root := open("root", "", "")
	execAll(t, root, "CREATE DATABASE cu", "CREATE TABLE cu.c (id INT PRIMARY KEY, n INT NOT NULL)")
	db := open("root", "", "cu")
	db.SetMaxOpenConns(4)
	const workers, each = 4, 250
	before := s.points.written.Load()
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := range each {
				if _, err := db.Exec("INSERT INTO c (id, n) VALUES (?, 1) ON DUPLICATE KEY UPDATE n = n + 1", (w+i)%2); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var count, sum int
	if err := root.QueryRow("SELECT COUNT(*), SUM(n) FROM cu.c").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	if count != 2 || sum != workers*each {
		t.Fatalf("COUNT(*), SUM(n) = %d, %d, want 2, %d", count, sum, workers*each)
	}
	if n := s.points.written.Load() - before; n < workers*each/2 {
		t.Fatalf("%d of %d upserts ran compiled", n, workers*each)
	}
}

// Autocommit statements that go through the planner (here all of them)
// begin again when their commit meets another's write to the same rows,
// as the compiled ones do: concurrent upserts and increments of two rows
// neither fail with 1213 nor lose an increment; a transaction's own
// conflict is still reported (1213 at COMMIT).
func TestPlannerAutocommitStatementsBeginAgainOnConflict(t *testing.T) {
	s, open := startServer(t)
	root := open("root", "", "")
	execAll(t, root, "CREATE DATABASE pc", "CREATE TABLE pc.c (id INT PRIMARY KEY, n INT NOT NULL)")
	s.points.off.Store(true)
	defer s.points.off.Store(false)
	db := open("root", "", "pc")
	db.SetMaxOpenConns(4)
	const workers, each = 4, 150
	run := func(q string) {
		errs := make(chan error, workers)
		for w := range workers {
			go func() {
				for i := range each {
					if _, err := db.Exec(q, (w+i)%2); err != nil {
						errs <- fmt.Errorf("%s: %w", q, err)
						return
					}
				}
				errs <- nil
			}()
		}
		for range workers {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	sum := func() int {
		var n int
		if err := root.QueryRow("SELECT SUM(n) FROM pc.c").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A statement run again counts once.
	counter := func(name string) int { return globalStatus(t, root, name) }
	inserts := counter("Com_insert")
	run("INSERT INTO c (id, n) VALUES (?, 1) ON DUPLICATE KEY UPDATE n = n + 1")
	if got := sum(); got != workers*each {
		t.Fatalf("after the upserts SUM(n) = %d, want %d", got, workers*each)
	}
	if n := counter("Com_insert") - inserts; n != workers*each {
		t.Fatalf("Com_insert moved by %d for %d upserts", n, workers*each)
	}
	updates := counter("Com_update")
	run("UPDATE c SET n = n + 1 WHERE id = ?")
	if got := sum(); got != 2*workers*each {
		t.Fatalf("after the increments SUM(n) = %d, want %d", got, 2*workers*each)
	}
	if n := counter("Com_update") - updates; n != workers*each {
		t.Fatalf("Com_update moved by %d for %d increments", n, workers*each)
	}

	// An explicit transaction that loses is told.
	a, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec("UPDATE c SET n = 0 WHERE id = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Exec("UPDATE pc.c SET n = -1 WHERE id = 0"); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(); err == nil || !strings.Contains(err.Error(), "1213") {
		t.Fatalf("COMMIT of a transaction whose row another wrote first: %v, want 1213", err)
	}
}

// Only statements that touch nothing but rows are run again after a lost
// commit: not LOAD DATA (the client sent its file once), not CALL.
func TestRerunnableStatements(t *testing.T) {
	for q, want := range map[string]bool{
		"UPDATE t SET n = n + 1 WHERE id = 1":     true,
		"  insert into t values (1)":              true,
		"(DELETE FROM t WHERE id = 2)":            true,
		"REPLACE INTO t VALUES (1, 2)":            true,
		"LOAD DATA LOCAL INFILE 'f' INTO TABLE t": false,
		"CALL bump()":                false,
		"SELECT * FROM t FOR UPDATE": false,
		"SET autocommit = 1":         false,
		"/* x */ UPDATE t SET n = 1": false,
	} {
		if got := rerunnable(q); got != want {
			t.Errorf("rerunnable(%q) = %v, want %v", q, got, want)
		}
	}
}

// Text INSERTs whose rows are written alike share the compiled INSERT of
// one row, whatever their number of rows: a batch of another size is not
// parsed again, and one of thousands of rows (beyond maxInsertRows and
// maxInsertTextLen, as a load sends them) is answered without the planner,
// all rows or none.
func TestInsertsOfRowsAlikeShareOnePlan(t *testing.T) {
	s, open := startServer(t)
	root := open("root", "", "")
	execAll(t, root, "CREATE DATABASE fr", "CREATE TABLE fr.k (id INT PRIMARY KEY, v INT, c VARCHAR(30), KEY kv (v))")
	db := openText(s, "fr")
	defer db.Close()
	rows := func(from, n int) string {
		var b strings.Builder
		b.WriteString("INSERT INTO k (id, v, c) VALUES ")
		for i := from; i < from+n; i++ {
			if i > from {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "(%d, %d, 'row %d')", i, i%7, i)
		}
		return b.String()
	}
	run := func(q string) (compiled bool, parses int64, err error) {
		written, parsed := s.points.written.Load(), s.points.textParses.Load()
		_, err = db.Exec(q)
		return s.points.written.Load() > written, s.points.textParses.Load() - parsed, err
	}
	if _, _, err := run(rows(1, 3)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 7, 13, 1000} {
		compiled, parses, err := run(rows(100_000+n*100, n))
		if err != nil || !compiled || parses != 0 {
			t.Fatalf("a batch of %d rows: %v; compiled %v, parsed %d times; want compiled, not parsed", n, err, compiled, parses)
		}
	}
	big := rows(10_000, 5000)
	if len(big) <= maxInsertTextLen {
		t.Fatalf("%d bytes", len(big))
	}
	if compiled, _, err := run(big); err != nil || !compiled {
		t.Fatalf("an INSERT of 5,000 rows (%d bytes): %v; compiled %v", len(big), err, compiled)
	}
	count := func(where string) string {
		var n, sum int64
		if err := db.QueryRow("SELECT COUNT(*), COALESCE(SUM(v), 0) FROM k WHERE "+where).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d %d", n, sum)
	}
	want := 0
	for i := 10_000; i < 15_000; i++ {
		want += i % 7
	}
	if got := count("id BETWEEN 10000 AND 14999"); got != fmt.Sprintf("5000 %d", want) {
		t.Fatalf("rows of the INSERT of 5,000: %s, want 5000 %d", got, want)
	}
	if got := count("c = 'row 12345' AND v = 4"); got != "1 4" { // 12345 % 7 = 4
		t.Fatalf("row 12345 by its index: %s", got)
	}

	// Upserts fold too: 300 rows, of which 100 exist (2 each) and 200 are
	// new (1 each).
	upsert := strings.Replace(rows(14_900, 300), "'row ", "'new ", -1) + " ON DUPLICATE KEY UPDATE c = VALUES(c)"
	written := s.points.written.Load()
	res, err := db.Exec(upsert)
	if err != nil || s.points.written.Load() == written {
		t.Fatalf("an upsert of 300 rows: %v; compiled %v", err, s.points.written.Load() > written)
	}
	if n, _ := res.RowsAffected(); n != 400 {
		t.Fatalf("an upsert of 300 rows, 100 of them there: %d rows affected, want 400", n)
	}
	if got := count("id BETWEEN 14900 AND 15199 AND c LIKE 'new %'"); got != fmt.Sprintf("300 %d", sumMod7(14_900, 300)) {
		t.Fatalf("rows after the upsert: %s", got)
	}

	// A duplicate key at its end: 1062, nothing written; in a transaction
	// the statement alone is undone.
	dup := func(q string) {
		t.Helper()
		_, _, err := run(q)
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1062 {
			t.Fatalf("%.50s…: %v, want 1062", q, err)
		}
	}
	dup(rows(20_000, 3000) + ",(14999, 1, 'again')")
	if got := count("id BETWEEN 20000 AND 99999"); got != "0 0" {
		t.Fatalf("rows of the INSERT that failed: %s, want none", got)
	}
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, q := range []string{"BEGIN", rows(30_000, 10), rows(20_000, 3000) + ",(30005, 1, 'again')", rows(40_000, 3000), "COMMIT"} {
		_, err := c.ExecContext(context.Background(), q)
		var me *gomysql.MySQLError
		if i == 2 && (!errors.As(err, &me) || me.Number != 1062) || i != 2 && err != nil {
			t.Fatalf("%.50s…: %v", q, err)
		}
	}
	if got := count("id BETWEEN 20000 AND 99999"); got != "3010 "+strconv.Itoa(sumMod7(30_000, 10)+sumMod7(40_000, 3000)) {
		t.Fatalf("rows of the transaction: %s, want its first and third INSERTs', 3010", got)
	}
}

func sumMod7(from, n int) int {
	s := 0
	for i := from; i < from+n; i++ {
		s += i % 7
	}
	return s
}
