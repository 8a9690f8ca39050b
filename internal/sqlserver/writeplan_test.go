package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
)

// TestKeyWritesMatchThePlanner runs random prepared writes by key (and
// BEGIN / COMMIT around some of them) on two databases loaded alike: on
// one compiled (writeplan.go), on the other through the planner. Each
// statement must give the same affected rows, errors, warnings,
// ROW_COUNT() and FOUND_ROWS(), and the tables must stay equal.
//
// MIRAJ_WRITE_STATEMENTS sets how many statements are compared (10,000 by
// default).
func TestKeyWritesMatchThePlanner(t *testing.T) {
	total := statementCount("MIRAJ_WRITE_STATEMENTS")
	s, open := startServer(t)
	root := open("root", "", "")
	rng := rand.New(rand.NewPCG(11, uint64(total)))
	words := []string{"apple", "Apple", "banana", "x", "", "a b", "éclair", "twenty-one chars long", "zeta"}
	for _, db := range []string{"wa", "wb"} {
		for _, q := range []string{
			"CREATE DATABASE " + db,
			"CREATE TABLE " + db + ".w (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(20) NOT NULL, pad VARCHAR(10), t TINYINT, n INT NULL, KEY kk (k))",
			"CREATE TABLE " + db + ".w2 (a INT, b VARCHAR(8), v INT, PRIMARY KEY (a, b))",
			"CREATE TABLE " + db + ".wu (id INT PRIMARY KEY, u INT, UNIQUE KEY uu (u))",
			"CREATE TABLE " + db + ".wc (id INT PRIMARY KEY, v INT, CHECK (v < 100))",
			"CREATE TABLE " + db + ".wi (id INT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 5, c VARCHAR(10) DEFAULT 'd', n INT, KEY kk (k))",
		} {
			if _, err := root.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	load := rand.New(rand.NewPCG(3, 4))
	for id := 1; id <= 200; id++ {
		row := fmt.Sprintf("(%d, %d, '%s', '%s', %d, %d)", id, load.IntN(100), words[load.IntN(5)], words[load.IntN(5)], load.IntN(200)-100, load.IntN(50))
		for _, db := range []string{"wa", "wb"} {
			for _, q := range []string{
				"INSERT INTO " + db + ".w VALUES " + row,
				fmt.Sprintf("INSERT INTO %s.w2 VALUES (%d, '%s', %d)", db, id%40, []string{"x", "Y", "z", "w", "v"}[(id-1)/40], id),
				fmt.Sprintf("INSERT INTO %s.wu VALUES (%d, %d)", db, id, id*2),
				fmt.Sprintf("INSERT INTO %s.wc VALUES (%d, %d)", db, id, id%90),
			} {
				if _, err := root.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
	}

	ctx := context.Background()
	conns := [2]*sql.Conn{}
	texts := [2]*sql.Conn{} // the same statements as text, values written in
	for i, db := range []string{"wa", "wb"} {
		c, err := open("root", "", db).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
		if texts[i], err = openText(s, db).Conn(ctx); err != nil {
			t.Fatal(err)
		}
		defer texts[i].Close()
	}
	id := func() any { return rng.IntN(230) }
	str := func() any { return words[rng.IntN(len(words))] }
	small := func() any { return rng.IntN(400) - 200 }
	shapes := []struct {
		q    string
		args func() []any
	}{
		{"UPDATE w SET k = k + 1 WHERE id = ?", func() []any { return []any{id()} }},
		{"UPDATE w SET k = k - ? WHERE id = ?", func() []any { return []any{small(), id()} }},
		{"UPDATE w SET c = ? WHERE id = ?", func() []any { return []any{str(), id()} }},
		{"UPDATE w SET t = ? WHERE id = ?", func() []any { return []any{small(), id()} }},
		{"UPDATE w SET t = t + 100 WHERE id = ?", func() []any { return []any{id()} }},
		{"UPDATE w SET pad = ?, n = ? WHERE id = ?", func() []any { return []any{str(), small(), id()} }},
		{"UPDATE w SET n = NULL WHERE id = ?", func() []any { return []any{id()} }},
		{"UPDATE w SET k = ? WHERE ? = id", func() []any { return []any{rng.IntN(3), id()} }},
		{"UPDATE w SET c = 'fixed' WHERE id = ?", func() []any { return []any{id()} }},
		{"DELETE FROM w WHERE id = ?", func() []any { return []any{id()} }},
		{"INSERT INTO w VALUES (?, ?, ?, ?, ?, ?)", func() []any { return []any{id(), small(), str(), str(), rng.IntN(100), rng.IntN(9)} }},
		{"UPDATE w2 SET v = ? WHERE a = ? AND b = ?", func() []any { return []any{small(), rng.IntN(42), []string{"x", "y", "Z", "q"}[rng.IntN(4)]} }},
		{"DELETE FROM w2 WHERE b = ? AND a = ?", func() []any { return []any{[]string{"x", "y", "Z", "q"}[rng.IntN(4)], rng.IntN(42)} }},
		{"UPDATE wu SET u = ? WHERE id = ?", func() []any { return []any{rng.IntN(500), id()} }},
		{"UPDATE wc SET v = ? WHERE id = ?", func() []any { return []any{rng.IntN(120), id()} }},
		{"UPDATE w SET k = ? WHERE id = ?", func() []any { return []any{"12", id()} }},
		{"INSERT INTO w (id, k, c, pad) VALUES (?, ?, ?, ?)", func() []any { return []any{id(), small(), str(), str()} }},
		{"INSERT INTO w (k, c, id) VALUES (?, ?, ?)", func() []any { return []any{small(), str(), id()} }},
		{"INSERT INTO wi (k, c) VALUES (?, ?)", func() []any { return []any{small(), str()} }},
		{"INSERT INTO wi (c) VALUES (?)", func() []any { return []any{str()} }},
		{"INSERT INTO wi (id, k, c, n) VALUES (?, ?, ?, ?)", func() []any {
			id := []any{0, nil, rng.IntN(600), -rng.IntN(5)}[rng.IntN(4)]
			if rng.IntN(200) == 0 {
				id = 2147483647 // the counter runs out of the column's range
			}
			return []any{id, small(), str(), small()}
		}},
		{"DELETE FROM wi WHERE id = ?", func() []any { return []any{rng.IntN(600)} }},
		// Several rows: all written or none (a duplicate key, within
		// the statement or with a row already there, is the planner's);
		// AUTO_INCREMENT values all taken, or the planner's.
		{"INSERT INTO w VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)", func() []any {
			return []any{id(), small(), str(), str(), rng.IntN(100), rng.IntN(9), id(), small(), str(), str(), rng.IntN(100), rng.IntN(9)}
		}},
		{"INSERT INTO w (id, k, c) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?)", func() []any {
			a := 230 + rng.IntN(40)
			return []any{a, small(), str(), a + 1 + rng.IntN(3), small(), str(), a + 2 + rng.IntN(3), rng.IntN(2), str()}
		}},
		{"INSERT INTO wi (k, c) VALUES (?, ?), (?, ?), (?, ?)", func() []any { return []any{small(), str(), small(), str(), small(), str()} }},
		{"INSERT INTO wi (id, c) VALUES (?, ?), (?, ?)", func() []any {
			ids := []any{0, nil, 600 + rng.IntN(100)}
			return []any{ids[rng.IntN(3)], str(), ids[rng.IntN(3)], str()}
		}},
		{"INSERT INTO w2 (a, b, v) VALUES (?, ?, ?), (?, ?, ?)", func() []any {
			b := []string{"x", "X", "y", "q"}
			return []any{rng.IntN(45), b[rng.IntN(4)], small(), rng.IntN(45), b[rng.IntN(4)], small()}
		}},
		{"INSERT INTO wu VALUES (?, ?), (?, ?)", func() []any { return []any{id(), rng.IntN(500), id(), rng.IntN(500)} }},
		{"INSERT INTO w2 VALUES (?, ?, ?)", func() []any { return []any{rng.IntN(45), []string{"x", "y"}[rng.IntN(2)], small()} }},
		// ON DUPLICATE KEY UPDATE: inserted, updated (2), left as it was
		// (0), a key given twice in one statement; VALUES(); an AUTO_INCREMENT
		// table, a unique key, an assignment to the key (the planner's).
		{"INSERT INTO w (id, k, c) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE k = k + 1", func() []any { return []any{id(), small(), str()} }},
		{"INSERT INTO w (id, k, c) VALUES (?, ?, ?), (?, ?, ?) ON DUPLICATE KEY UPDATE c = VALUES(c), n = ?", func() []any {
			a := id()
			return []any{a, small(), str(), []any{a, id()}[rng.IntN(2)], small(), str(), rng.IntN(9)}
		}},
		{"INSERT INTO w (id, k, c) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE c = c", func() []any { return []any{id(), small(), str()} }},
		{"INSERT INTO w (id, k, c, pad) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE pad = VALUES(pad), t = ?", func() []any {
			return []any{id(), small(), str(), str(), small()}
		}},
		{"INSERT INTO w2 (a, b, v) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE v = v + ?", func() []any {
			return []any{rng.IntN(45), []string{"x", "X", "y"}[rng.IntN(3)], small(), small()}
		}},
		{"INSERT INTO wi (id, k) VALUES (?, ?) ON DUPLICATE KEY UPDATE k = VALUES(k)", func() []any { return []any{rng.IntN(600), small()} }},
		{"INSERT INTO wu (id, u) VALUES (?, ?) ON DUPLICATE KEY UPDATE u = ?", func() []any { return []any{id(), rng.IntN(500), rng.IntN(500)} }},
		{"INSERT INTO w (id, k, c) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE id = ?", func() []any { return []any{id(), small(), str(), 300 + rng.IntN(50)} }},
		// NULL as a parameter: into a nullable column, into a NOT NULL
		// one (the planner's error), as an AUTO_INCREMENT value.
		{"INSERT INTO w (id, k, c, pad, t, n) VALUES (?, ?, ?, ?, ?, ?)", func() []any {
			return []any{id(), []any{small(), nil}[rng.IntN(2)], str(), []any{str(), nil}[rng.IntN(2)], []any{nil, 5}[rng.IntN(2)], []any{nil, small()}[rng.IntN(2)]}
		}},
		{"UPDATE w SET pad = ?, n = ?, c = ? WHERE id = ?", func() []any {
			return []any{[]any{str(), nil}[rng.IntN(2)], []any{nil, small()}[rng.IntN(2)], []any{str(), str(), nil}[rng.IntN(3)], id()}
		}},
		{"INSERT INTO wi (id, c, n) VALUES (?, ?, ?), (?, ?, ?)", func() []any { return []any{nil, nil, small(), nil, str(), nil} }},
		// Literals in the rows of a prepared statement.
		{"INSERT INTO w (id, k, c) VALUES (?, 7, 'lit'), (?, ?, ?) ON DUPLICATE KEY UPDATE k = k + 1", func() []any { return []any{id(), id(), small(), str()} }},
		{"INSERT INTO wi (k, c, n) VALUES (-3, ?, 12), (?, 'Apple', 300)", func() []any { return []any{str(), small()} }},
		{"INSERT INTO w2 (a, b, v) VALUES (?, 'x', 1), (?, 'X', 2)", func() []any { return []any{rng.IntN(45), rng.IntN(45)} }},
		{"INSERT INTO wi VALUES (?, ?, ?, ?), (?, ?, ?, ?)", func() []any { return []any{nil, small(), str(), small(), 0, small(), str(), small()} }},
		// Ranges of one column (rangeWrite): of the primary key, of the k
		// index (which some of them change), of a composite key's first
		// column; open ranges; values that overflow or set a unique key
		// (the planner's); a column without an index (the planner's).
		{"UPDATE w SET k = k + 1 WHERE id BETWEEN ? AND ?", func() []any { a := rng.IntN(230); return []any{a, a + rng.IntN(6)} }},
		{"UPDATE w SET c = ? WHERE id IN (?, ?, ?)", func() []any { return []any{str(), id(), id(), id()} }},
		{"DELETE FROM w WHERE id > ? AND id <= ?", func() []any { a := rng.IntN(230); return []any{a, a + rng.IntN(3)} }},
		{"UPDATE w SET n = ? WHERE k = ?", func() []any { return []any{small(), rng.IntN(100)} }},
		{"UPDATE w SET k = k - 1, pad = ? WHERE k BETWEEN ? AND ?", func() []any { a := rng.IntN(100); return []any{str(), a, a + rng.IntN(3)} }},
		{"DELETE FROM w WHERE k = ? OR k IN (?)", func() []any { return []any{rng.IntN(120), rng.IntN(120)} }},
		{"UPDATE w SET c = ?, t = ? WHERE id >= ?", func() []any { return []any{str(), small(), 220 + rng.IntN(15)} }},
		{"UPDATE w SET t = t + 100 WHERE id BETWEEN ? AND ?", func() []any { a := rng.IntN(230); return []any{a, a + rng.IntN(4)} }},
		{"UPDATE w SET pad = ? WHERE n = ?", func() []any { return []any{str(), rng.IntN(50)} }},
		{"UPDATE w2 SET v = v + ? WHERE a = ?", func() []any { return []any{small(), rng.IntN(42)} }},
		{"DELETE FROM w2 WHERE a BETWEEN ? AND ? AND a <> 7", func() []any { a := rng.IntN(42); return []any{a, a} }},
		{"UPDATE wu SET u = ? WHERE id < ?", func() []any { return []any{rng.IntN(500), rng.IntN(3)} }},
		{"UPDATE wc SET v = ? WHERE id IN (?, ?)", func() []any { return []any{rng.IntN(120), id(), id()} }},
		// ORDER BY the range's column and LIMIT; LIMIT alone on the
		// primary key; on the k index without ORDER BY, or DESC (the
		// planner's).
		{"UPDATE w SET c = ? WHERE id > ? LIMIT 2", func() []any { return []any{str(), id()} }},
		{"DELETE FROM w WHERE id >= ? ORDER BY id LIMIT ?", func() []any { return []any{id(), rng.IntN(3)} }},
		{"UPDATE w SET k = k + 1 WHERE k BETWEEN ? AND ? ORDER BY k LIMIT 3", func() []any { a := rng.IntN(100); return []any{a, a + rng.IntN(5)} }},
		{"UPDATE w SET t = ? WHERE k >= ? ORDER BY k LIMIT ?", func() []any { return []any{small(), rng.IntN(110), rng.IntN(4)} }},
		{"UPDATE w SET pad = ? WHERE k > ? LIMIT 2", func() []any { return []any{str(), rng.IntN(100)} }},
		{"DELETE FROM w WHERE k = ? ORDER BY k DESC LIMIT 1", func() []any { return []any{rng.IntN(100)} }},
		{"UPDATE w SET c = 'zero' WHERE id = ? LIMIT 0", func() []any { return []any{id()} }},
		{"UPDATE w2 SET v = ? WHERE a = ? ORDER BY a LIMIT 2", func() []any { return []any{small(), rng.IntN(42)} }},
	}
	prepared := map[string][2]*sql.Stmt{}
	prepare := func(q string) [2]*sql.Stmt {
		if p, ok := prepared[q]; ok {
			return p
		}
		var p [2]*sql.Stmt
		for i := range conns {
			st, err := conns[i].PrepareContext(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			p[i] = st
		}
		prepared[q] = p
		return p
	}
	// exec runs q on both databases, compiled on the first, and returns
	// what each client saw.
	asText := false // the statements of a transaction all go one way
	exec := func(q string, args []any) [2]string {
		p := prepare(q)
		var out [2]string
		for i := range conns {
			s.points.off.Store(i == 1)
			var res sql.Result
			var err error
			if asText {
				res, err = texts[i].ExecContext(ctx, q, args...)
			} else {
				res, err = p[i].ExecContext(ctx, args...)
			}
			s.points.off.Store(false)
			var n, last int64
			if err == nil {
				n, _ = res.RowsAffected()
				last, _ = res.LastInsertId()
			}
			c := conns[i]
			if asText {
				c = texts[i]
			}
			info, _ := query(t, c, "SELECT ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID()")
			warn, _ := query(t, c, "SHOW WARNINGS")
			out[i] = fmt.Sprintf("affected=%d last=%d err=%v info=%v warnings=%v", n, last, err, info.rows, warn.rows)
		}
		return out
	}
	tables := func(i int) string {
		var b strings.Builder
		for _, tb := range []string{"w", "w2", "wu", "wc", "wi"} {
			r, err := query(t, conns[i], "SELECT * FROM "+tb+" ORDER BY 1, 2")
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, tb, r.rows)
		}
		return b.String()
	}
	before := s.points.written.Load()
	byShape := map[string]int{}
	inTx := false
	for n := 1; n <= total; n++ {
		if !inTx {
			asText = rng.IntN(3) == 0
		}
		switch r := rng.IntN(20); {
		case r == 0 && !inTx:
			if got := exec("BEGIN", nil); got[0] != got[1] {
				t.Fatalf("BEGIN:\n compiled %s\n planner  %s", got[0], got[1])
			}
			inTx = true
		case r == 1 && inTx:
			if got := exec("COMMIT", nil); got[0] != got[1] {
				t.Fatalf("COMMIT:\n compiled %s\n planner  %s", got[0], got[1])
			}
			inTx = false
		case r == 2 && inTx:
			for i := range conns {
				c := conns[i]
				if asText {
					c = texts[i]
				}
				if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
					t.Fatal(err)
				}
			}
			inTx = false
		}
		sh := shapes[rng.IntN(len(shapes))]
		args := sh.args()
		w0 := s.points.written.Load()
		got := exec(sh.q, args)
		byShape[sh.q] += int(s.points.written.Load() - w0)
		if got[0] != got[1] {
			t.Fatalf("%s %v (statement %d, in a transaction: %v):\n compiled %s\n planner  %s", sh.q, args, n, inTx, got[0], got[1])
		}
		if n%500 == 0 || n == total {
			if a, b := tables(0), tables(1); a != b {
				t.Fatalf("after %d statements the tables differ:\n compiled\n%s\n planner\n%s", n, a, b)
			}
		}
	}
	fast := s.points.written.Load() - before
	t.Logf("%d statements compared, %d answered without the planner", total, fast)
	for _, sh := range shapes {
		t.Logf("%5d without the planner: %s", byShape[sh.q], sh.q)
	}
	if fast < int64(total)*4/10 {
		t.Fatalf("only %d of %d statements were answered without the planner", fast, total)
	}
}

// A compiled UPDATE waits for a row lock another transaction took with
// SELECT … FOR UPDATE. When the holder rolls back, the UPDATE writes; when
// the holder changed the row and committed, the compiled UPDATE (autocommit)
// updates the row as the holder left it, as MySQL does, and so does the
// planner's: its commit loses to the holder's (first committer wins) and
// the statement begins again on the newest row (againOnConflict).
func TestKeyWriteWaitsForRowLock(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"CREATE DATABASE lk", "CREATE TABLE lk.t (id INT PRIMARY KEY, v INT)", "INSERT INTO lk.t VALUES (1, 10)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	a, _ := db.Conn(ctx)
	defer a.Close()
	b, _ := db.Conn(ctx)
	defer b.Close()
	st, err := b.PrepareContext(ctx, "UPDATE lk.t SET v = v + ? WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	// round runs the UPDATE while a holds the lock; end ends a's
	// transaction. It returns the UPDATE's error and v after it.
	round := func(planner bool, end ...string) (error, int) {
		for _, q := range []string{"BEGIN", "SELECT v FROM lk.t WHERE id = 1 FOR UPDATE"} {
			if _, err := a.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		before := s.points.written.Load()
		s.points.off.Store(planner)
		defer s.points.off.Store(false)
		done := make(chan error, 1)
		go func() { _, err := st.ExecContext(ctx, 5, 1); done <- err }()
		select {
		case err := <-done:
			t.Fatalf("the UPDATE did not wait for the row lock (%v)", err)
		case <-time.After(300 * time.Millisecond):
		}
		for _, q := range end {
			if _, err := a.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		err := <-done
		if fast := s.points.written.Load() != before; fast == planner {
			t.Fatalf("answered without the planner: %v, want %v (%v)", fast, !planner, err)
		}
		var v int
		if err := db.QueryRow("SELECT v FROM lk.t WHERE id = 1").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return err, v
	}
	for _, planner := range []bool{false, true} {
		if _, err := db.Exec("UPDATE lk.t SET v = 10 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		if err, v := round(planner, "ROLLBACK"); err != nil || v != 15 {
			t.Fatalf("planner %v, holder rolled back: %v, v = %d, want no error and 15", planner, err, v)
		}
		// Either statement, as MySQL's, updates the row as the holder
		// left it.
		if err, v := round(planner, "UPDATE lk.t SET v = 20 WHERE id = 1", "COMMIT"); err != nil || v != 25 {
			t.Fatalf("planner %v, holder changed the row: %v, v = %d, want no error and 25", planner, err, v)
		}
	}

	// While it waits, the compiled UPDATE is in the process list, and KILL
	// QUERY interrupts it (1317).
	var id int64
	if err := b.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"BEGIN", "SELECT v FROM lk.t WHERE id = 1 FOR UPDATE"} {
		if _, err := a.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before := s.points.written.Load()
	done := make(chan error, 1)
	go func() { _, err := st.ExecContext(ctx, 5, 1); done <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.processlist WHERE id = ? AND info LIKE 'UPDATE lk.t SET v = v + ?%'", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiting UPDATE is not in the process list")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	if num, _ := mysqlErrorNumber(<-done); num != 1317 {
		t.Fatal("KILL QUERY of the waiting UPDATE: want 1317")
	}
	if s.points.written.Load() != before+1 {
		t.Fatal("the killed UPDATE was not the compiled one")
	}
	if _, err := a.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}

func mysqlErrorNumber(err error) (uint16, bool) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number, true
	}
	return 0, false
}

// TestAutocommitKeyWritesNeverConflict: compiled autocommit writes of the
// same few rows from several connections at once neither fail with 1213
// (each is worked out again on the newest row, as in MySQL) nor lose an
// increment; each is a journal transaction, counted in Miraj_commits.
func TestAutocommitKeyWritesNeverConflict(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxOpenConns(8)
	for _, q := range []string{"CREATE DATABASE nc", "CREATE TABLE nc.t (id INT PRIMARY KEY, v INT NOT NULL)",
		"INSERT INTO nc.t VALUES (1, 0), (2, 0), (3, 0)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	status := func(name string) int { return globalStatus(t, db, name) }
	const workers, each = 6, 300
	commits, fsyncs := status("Miraj_commits"), status("Miraj_journal_fsyncs")
	before := s.points.written.Load()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ctx := context.Background()
			c, err := db.Conn(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			st, err := c.PrepareContext(ctx, "UPDATE nc.t SET v = v + 1 WHERE id = ?")
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < each; i++ {
				if _, err := st.ExecContext(ctx, 1+(w+i)%3); err != nil {
					errs <- fmt.Errorf("worker %d, update %d: %w", w, i, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := s.points.written.Load() - before; got != workers*each {
		t.Fatalf("%d of the %d UPDATEs answered without the planner", got, workers*each)
	}
	var sum int
	if err := db.QueryRow("SELECT SUM(v) FROM nc.t").Scan(&sum); err != nil || sum != workers*each {
		t.Fatalf("SUM(v) = %d (%v) after %d increments", sum, err, workers*each)
	}
	// Each one is a transaction of the journal, durable before its OK:
	// group commit shares fsyncs.
	if got := status("Miraj_commits") - commits; got != workers*each {
		t.Fatalf("Miraj_commits moved by %d, want %d", got, workers*each)
	}
	if got := status("Miraj_journal_fsyncs") - fsyncs; got < 1 || got > workers*each {
		t.Fatalf("Miraj_journal_fsyncs moved by %d for %d commits", got, workers*each)
	}
	sdb, _ := s.storage.Database("nc")
	updates := 0
	if err := sdb.Journal().Read(sdb.Journal().Start(), func(_ journal.LSN, typ journal.FrameType, _ []byte) error {
		if typ == journal.FrameType(storage.OpUpdate) {
			updates++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if updates != workers*each {
		t.Fatalf("the journal holds %d updates, want %d", updates, workers*each)
	}
}

// In autocommit mode a compiled write is committed when it returns, even
// after a statement that leaves the planner's transaction open (SHOW
// WARNINGS, SELECT ROW_COUNT()): another connection reads it at once.
func TestKeyWriteCommitsInAutocommit(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	for _, q := range []string{"CREATE DATABASE ac", "CREATE TABLE ac.t (id INT PRIMARY KEY, v INT)", "INSERT INTO ac.t VALUES (1, 0)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	a, _ := db.Conn(ctx)
	defer a.Close()
	st, err := a.PrepareContext(ctx, "UPDATE ac.t SET v = ? WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	before := s.points.written.Load()
	for i, q := range []string{"SHOW WARNINGS", "SELECT ROW_COUNT()", "SELECT v FROM ac.t WHERE id = 1", "SET @x = 1", "SHOW TABLES FROM ac"} {
		if _, err := a.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ExecContext(ctx, i+1, 1); err != nil {
			t.Fatal(err)
		}
		var v int
		if err := db.QueryRow("SELECT v FROM ac.t WHERE id = 1").Scan(&v); err != nil || v != i+1 {
			t.Fatalf("after %s and the UPDATE, another connection reads v = %d (%v), want %d", q, v, err, i+1)
		}
	}
	if got := s.points.written.Load() - before; got != 5 {
		t.Fatalf("%d of the UPDATEs answered without the planner, want 5", got)
	}
}

// TestKeyWritesFollowDDL: a prepared write that ran compiled runs through
// the planner once a trigger or a foreign key needs it (the trigger fires,
// the delete cascades), and compiled again once they are gone, whichever
// connection changed the definitions.
func TestKeyWritesFollowDDL(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	exec := func(qs ...string) { t.Helper(); execAll(t, db, qs...) }
	exec("CREATE DATABASE dd", "CREATE TABLE dd.t (id INT PRIMARY KEY, v INT)", "CREATE TABLE dd.audit (n INT)",
		"INSERT INTO dd.t VALUES (1, 0), (2, 0), (3, 0)")
	ctx := context.Background()
	a, _ := db.Conn(ctx)
	defer a.Close()
	upd, err := a.PrepareContext(ctx, "UPDATE dd.t SET v = ? WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	del, err := a.PrepareContext(ctx, "DELETE FROM dd.t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	compiled := func(what string, want int64, fn func()) {
		t.Helper()
		before := s.points.written.Load()
		fn()
		if got := s.points.written.Load() - before; got != want {
			t.Fatalf("%s: %d statements answered without the planner, want %d", what, got, want)
		}
	}
	run := func(st *sql.Stmt, args ...any) {
		t.Helper()
		if _, err := st.ExecContext(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	compiled("before any trigger", 1, func() { run(upd, 5, 1) })
	exec("CREATE TRIGGER dd.tr AFTER UPDATE ON dd.t FOR EACH ROW INSERT INTO dd.audit VALUES (NEW.v)")
	compiled("with a trigger", 0, func() { run(upd, 6, 1) })
	if n := count("SELECT COUNT(*) FROM dd.audit WHERE n = 6"); n != 1 {
		t.Fatalf("the trigger wrote %d rows, want 1", n)
	}
	exec("DROP TRIGGER dd.tr")
	compiled("after the trigger is dropped", 1, func() { run(upd, 7, 1) })
	exec("CREATE TABLE dd.child (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES dd.t (id) ON DELETE CASCADE)",
		"INSERT INTO dd.child VALUES (10, 2), (11, 3)")
	compiled("with a foreign key on the table", 0, func() { run(del, 2) })
	if n := count("SELECT COUNT(*) FROM dd.child"); n != 1 {
		t.Fatalf("after the delete of a parent row, %d child rows, want 1 (cascade)", n)
	}
	exec("DROP TABLE dd.child")
	compiled("after the child table is dropped", 1, func() { run(del, 3) })
}

// TestInPlaceWritesLeaveOpenSnapshotsAlone: compiled writes (updates,
// inserts, deletes by key; alone or two in a transaction) from several
// connections change the committed trees in place (Miraj_commits_in_place)
// while transactions
// that began before them read their snapshot again and again, through the
// primary key, a secondary index and a full scan: each read of a
// transaction gives what its first gave, and after the writes the table
// holds exactly what they wrote.
func TestInPlaceWritesLeaveOpenSnapshotsAlone(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxOpenConns(16)
	for _, q := range []string{"CREATE DATABASE ip", "CREATE TABLE ip.t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20) NOT NULL, KEY (k))"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	const rows = 300
	for i := 0; i < rows; i++ {
		if _, err := db.Exec("INSERT INTO ip.t VALUES (?, ?, ?)", i, i%17, fmt.Sprint("c", i)); err != nil {
			t.Fatal(err)
		}
	}
	status := func() int { return globalStatus(t, db, "Miraj_commits_in_place") }
	inPlace := status()
	ctx := context.Background()
	reads := []string{
		"SELECT COUNT(*), SUM(k), SUM(id) FROM ip.t",
		"SELECT id, k FROM ip.t WHERE k BETWEEN 3 AND 6 ORDER BY k, id",
		"SELECT id, k, c FROM ip.t ORDER BY id",
	}
	// rowsOf renders what q returns.
	rowsOf := func(q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}, text string) string {
		r, err := query(t, q, text)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(r.rows, ",")
	}
	snapshot := func(c *sql.Conn) []string {
		var out []string
		for _, q := range reads {
			out = append(out, rowsOf(c, q))
		}
		return out
	}

	// Writers: each owns the ids w, w+4, …, so that the final rows are
	// known: k counts its updates, inserted ids start at 1000.
	const writers, each = 4, 250
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	finals := make([]map[int]int, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, err := db.Conn(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			upd, err1 := c.PrepareContext(ctx, "UPDATE ip.t SET k = k + 1 WHERE id = ?")
			ins, err2 := c.PrepareContext(ctx, "INSERT INTO ip.t VALUES (?, ?, ?)")
			del, err3 := c.PrepareContext(ctx, "DELETE FROM ip.t WHERE id = ?")
			if err := errors.Join(err1, err2, err3); err != nil {
				errs <- err
				return
			}
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			mine := map[int]int{}
			for id := w; id < rows; id += writers {
				mine[id] = id % 17
			}
			next := 1000 + w
			write := func() error {
				var ids []int
				for id := range mine {
					ids = append(ids, id)
				}
				slices.Sort(ids)
				id := ids[rng.IntN(len(ids))]
				switch rng.IntN(6) {
				case 0:
					_, err = ins.ExecContext(ctx, next, 0, "new")
					mine[next] = 0
					next += writers
				case 1:
					_, err = del.ExecContext(ctx, id)
					delete(mine, id)
				default:
					_, err = upd.ExecContext(ctx, id)
					mine[id]++
				}
				return err
			}
			for i := 0; i < each; i++ {
				if rng.IntN(3) > 0 {
					err = write()
				} else {
					// Two writes in a transaction (committed in
					// place too when no one froze the catalog).
					_, err = c.ExecContext(ctx, "BEGIN")
					for j := 0; j < 2 && err == nil; j++ {
						err = write()
					}
					if err == nil {
						_, err = c.ExecContext(ctx, "COMMIT")
					}
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
			finals[w] = mine
		}(w)
	}

	// Readers: transactions that read their snapshot while the writers
	// run, three times each.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	txns := 0
	for running := true; running; txns++ {
		select {
		case <-done:
			running = false
		default:
		}
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
			t.Fatal(err)
		}
		first := snapshot(c)
		for r := 0; r < 2; r++ {
			time.Sleep(2 * time.Millisecond)
			if again := snapshot(c); !slices.Equal(again, first) {
				t.Fatalf("transaction %d read its snapshot differently:\n first %.200q\n again %.200q", txns, first, again)
			}
		}
		if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var want []string
	total := 0
	for _, m := range finals {
		for id, k := range m {
			want = append(want, fmt.Sprint(id, "|", k))
			total++
		}
	}
	slices.SortFunc(want, func(a, b string) int {
		var x, y int
		fmt.Sscan(strings.Split(a, "|")[0], &x)
		fmt.Sscan(strings.Split(b, "|")[0], &y)
		return x - y
	})
	got := rowsOf(db, "SELECT id, k FROM ip.t ORDER BY id")
	if w := strings.Join(want, ","); got != w {
		t.Fatalf("after the writes:\n got %.300s\nwant %.300s", got, w)
	}
	// The index agrees with the rows.
	var viaIndex, viaRows int
	if err := db.QueryRow("SELECT COUNT(*) FROM ip.t WHERE k >= 0").Scan(&viaIndex); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT COUNT(*) FROM ip.t IGNORE INDEX (k)").Scan(&viaRows); err != nil {
		t.Fatal(err)
	}
	if viaIndex != total || viaRows != total {
		t.Fatalf("%d rows through the index, %d through the rows, want %d", viaIndex, viaRows, total)
	}
	if n := status() - inPlace; n < writers*each/2 {
		t.Fatalf("%d of %d commits in place, %d transactions read meanwhile", n, writers*each, txns)
	}
	t.Logf("%d commits, %d in place, %d reading transactions", writers*each, status()-inPlace, txns)
}

// Autocommit UPDATEs of ranges from several connections, overlapping: none
// fails (a range write whose rows another commit wrote first begins again
// on the newest rows, as MySQL's changes the rows as the last commit left
// them), and no increment is lost; inside transactions the same
// statements conflict as transactions do (1213 at COMMIT for the later
// one), and the increments of those committed are all there.
func TestRangeWritesNeverLoseIncrements(t *testing.T) {
	s, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxOpenConns(8)
	for _, q := range []string{"CREATE DATABASE rw", "CREATE TABLE rw.t (id INT PRIMARY KEY, k INT NOT NULL, v INT NOT NULL, KEY kk (k))",
		"INSERT INTO rw.t VALUES (1, 1, 0), (2, 1, 0), (3, 2, 0), (4, 2, 0), (5, 3, 0)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	const workers, each = 4, 150
	before := s.points.written.Load()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	var committed [workers]int // rows incremented by each worker's committed transactions
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ctx := context.Background()
			c, err := db.Conn(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			byID, err := c.PrepareContext(ctx, "UPDATE rw.t SET v = v + 1 WHERE id BETWEEN ? AND ?")
			if err != nil {
				errs <- err
				return
			}
			byK, err := c.PrepareContext(ctx, "UPDATE rw.t SET v = v + 1 WHERE k IN (?, ?)")
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < each; i++ {
				lo := 1 + (w+i)%4
				res, err := byID.ExecContext(ctx, lo, lo+1)
				if err != nil {
					errs <- fmt.Errorf("worker %d, autocommit update %d: %w", w, i, err)
					return
				}
				if n, _ := res.RowsAffected(); n != 2 {
					errs <- fmt.Errorf("worker %d: %d rows changed, want 2", w, n)
					return
				}
				committed[w] += 2
				if i%10 != 0 {
					continue
				}
				// A transaction of two range updates: 3 rows of k 1 and 3,
				// 2 rows of k 2.
				if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
					errs <- err
					return
				}
				n, aborted := 0, false
				for _, ks := range [][2]int{{1, 3}, {2, 2}} {
					res, err := byK.ExecContext(ctx, ks[0], ks[1])
					if err == nil {
						m, _ := res.RowsAffected()
						n += int(m)
					} else if num, _ := mysqlErrorNumber(err); num == 1213 {
						aborted = true // rolled back whole
						break
					} else {
						errs <- fmt.Errorf("worker %d, update in a transaction: %w", w, err)
						return
					}
				}
				_, err = c.ExecContext(ctx, "COMMIT")
				switch num, _ := mysqlErrorNumber(err); {
				case err == nil && aborted:
				case err == nil:
					committed[w] += n
				case num != 1213:
					errs <- fmt.Errorf("worker %d, COMMIT: %w", w, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := 0
	for _, n := range committed {
		want += n
	}
	var sum int
	if err := db.QueryRow("SELECT SUM(v) FROM rw.t").Scan(&sum); err != nil || sum != want {
		t.Fatalf("SUM(v) = %d (%v), committed increments %d", sum, err, want)
	}
	if got := s.points.written.Load() - before; got < workers*each {
		t.Fatalf("%d of the range UPDATEs answered without the planner, want at least %d", got, workers*each)
	}
}
