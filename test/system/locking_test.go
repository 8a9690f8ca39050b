package system

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Job-queue and counter workloads written the MySQL way, on one server:
// workers take jobs with SELECT … FOR UPDATE SKIP LOCKED then UPDATE, and
// other connections increment a counter with SELECT … FOR UPDATE then an
// UPDATE of the value they read. Every statement must succeed (no 1213, no
// 1205), no job may be taken twice, every job is done, and the counter
// counts every increment.
const (
	queueJobs       = 400
	queueWorkers    = 8
	counterConns    = 4
	counterIncrs    = 50 // per connection
	workloadTimeout = 5 * time.Minute
)

func TestLockingReadJobQueueAndCounter(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	db.SetMaxOpenConns(queueWorkers + counterConns + 2)
	mustExec(t, db, "CREATE DATABASE q")
	mustExec(t, db, "CREATE TABLE q.jobs (id INT PRIMARY KEY, status VARCHAR(10) NOT NULL, worker INT, KEY kstatus (status))")
	mustExec(t, db, "CREATE TABLE q.taken (job INT NOT NULL, worker INT NOT NULL)")
	mustExec(t, db, "CREATE TABLE q.counter (id INT PRIMARY KEY, n BIGINT NOT NULL)")
	mustExec(t, db, "INSERT INTO q.counter VALUES (1, 0)")
	for i := 1; i <= queueJobs; i++ {
		mustExec(t, db, "INSERT INTO q.jobs VALUES (?, 'pending', NULL)", i)
	}

	ctx, cancel := context.WithTimeout(context.Background(), workloadTimeout)
	defer cancel()
	var (
		mu       sync.Mutex
		errs     []string
		takenBy  = map[int]int{}
		dups     int
		perWorkr = make([]int, queueWorkers)
		wg       sync.WaitGroup
	)
	fail := func(who string, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, fmt.Sprintf("%s: %v", who, err))
	}

	for w := 0; w < queueWorkers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			who := fmt.Sprintf("worker %d", w)
			conn, err := db.Conn(ctx)
			if err != nil {
				fail(who, err)
				return
			}
			defer conn.Close()
			for {
				job, ok, err := takeJob(ctx, conn, w)
				if err != nil {
					fail(who, err)
					return
				}
				if !ok {
					// Nothing free: finished unless others still hold
					// jobs they have not committed yet.
					var left int
					if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM q.jobs WHERE status = 'pending'").Scan(&left); err != nil {
						fail(who, err)
						return
					}
					if left == 0 {
						return
					}
					continue
				}
				mu.Lock()
				if _, seen := takenBy[job]; seen {
					dups++
				}
				takenBy[job] = w
				perWorkr[w]++
				mu.Unlock()
			}
		}(w)
	}
	for c := 0; c < counterConns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			who := fmt.Sprintf("counter %d", c)
			conn, err := db.Conn(ctx)
			if err != nil {
				fail(who, err)
				return
			}
			defer conn.Close()
			for i := 0; i < counterIncrs; i++ {
				if err := increment(ctx, conn); err != nil {
					fail(who, err)
					return
				}
			}
		}(c)
	}
	wg.Wait()

	if len(errs) > 0 {
		t.Fatalf("%d errors, want 0:\n%v", len(errs), errs)
	}
	if dups != 0 {
		t.Fatalf("%d jobs taken twice", dups)
	}
	if len(takenBy) != queueJobs {
		t.Fatalf("%d jobs taken, want %d", len(takenBy), queueJobs)
	}
	if got := queryString(t, db, "SELECT COUNT(*), COUNT(DISTINCT job) FROM q.taken"); got != fmt.Sprintf("%d %d;", queueJobs, queueJobs) {
		t.Fatalf("q.taken rows, distinct jobs = %s, want %d of each", got, queueJobs)
	}
	if got := queryString(t, db, "SELECT status, COUNT(*) FROM q.jobs GROUP BY status"); got != fmt.Sprintf("done %d;", queueJobs) {
		t.Fatalf("job states: %s", got)
	}
	// Each job's worker in the table is the one that took it.
	if got := queryString(t, db, "SELECT COUNT(*) FROM q.jobs j JOIN q.taken k ON k.job = j.id WHERE k.worker <> j.worker"); got != "0;" {
		t.Fatalf("%s jobs whose worker differs from the one that took them", got)
	}
	want := counterConns * counterIncrs
	if got := queryString(t, db, "SELECT n FROM q.counter WHERE id = 1"); got != strconv.Itoa(want)+";" {
		t.Fatalf("counter = %s, want %d", got, want)
	}
	t.Logf("job queue: %d jobs, %d workers (jobs per worker %v), 0 errors, 0 taken twice; counter: %d connections × %d = %d",
		queueJobs, queueWorkers, perWorkr, counterConns, counterIncrs, want)
}

// takeJob takes one pending job in a transaction, or reports none free.
func takeJob(ctx context.Context, conn *sql.Conn, worker int) (int, bool, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback()
	var job int
	err = tx.QueryRowContext(ctx, "SELECT id FROM q.jobs WHERE status = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED").Scan(&job)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, tx.Commit()
	}
	if err != nil {
		return 0, false, fmt.Errorf("select for update skip locked: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE q.jobs SET status = 'done', worker = ? WHERE id = ?", worker, job); err != nil {
		return 0, false, fmt.Errorf("update job %d: %w", job, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO q.taken VALUES (?, ?)", job, worker); err != nil {
		return 0, false, fmt.Errorf("record job %d: %w", job, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, false, fmt.Errorf("commit job %d: %w", job, err)
	}
	return job, true, nil
}

// increment adds one to the counter from the value read under lock.
func increment(ctx context.Context, conn *sql.Conn) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int64
	if err := tx.QueryRowContext(ctx, "SELECT n FROM q.counter WHERE id = ? FOR UPDATE", 1).Scan(&n); err != nil {
		return fmt.Errorf("select for update: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE q.counter SET n = ? WHERE id = ?", n+1, 1); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// TestLockingReadErrors checks the answers of locking reads one by one:
// 1205 past innodb_lock_wait_timeout, 3572 with NOWAIT, SKIP LOCKED, plain
// reads that never wait, a write that waits for a locked row, the lock of
// an autocommit statement gone with it, and a deadlock refused at once to
// the younger transaction (1213), which is rolled back whole.
func TestLockingReadErrors(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	mustExec(t, db, "CREATE DATABASE l")
	mustExec(t, db, "CREATE TABLE l.t (id INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO l.t VALUES (1, 10), (2, 20), (3, 30)")
	ctx := context.Background()
	conn := func() *sql.Conn {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c1, c2 := conn(), conn()
	wantCode := func(c *sql.Conn, q string, code uint16) {
		t.Helper()
		_, err := c.ExecContext(ctx, q)
		if num, _ := mysqlError(err); num != code {
			t.Fatalf("%s: %v, want error %d", q, err, code)
		}
	}
	rows := func(c *sql.Conn, q string) string {
		t.Helper()
		r, err := c.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer r.Close()
		out := ""
		for r.Next() {
			var a, b int
			if err := r.Scan(&a, &b); err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf("%d %d;", a, b)
		}
		if err := r.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}

	if got := queryString(t, db, "SELECT @@innodb_lock_wait_timeout, @@global.innodb_lock_wait_timeout"); got != "50 50;" {
		t.Fatalf("innodb_lock_wait_timeout = %s, want MySQL's default 50", got)
	}
	mustExec(t, c2, "SET SESSION innodb_lock_wait_timeout = 1")
	mustExec(t, c1, "START TRANSACTION")
	if got := rows(c1, "SELECT id, v FROM l.t WHERE id = 1 FOR UPDATE"); got != "1 10;" {
		t.Fatalf("locking read: %s", got)
	}
	wantCode(c2, "SELECT id, v FROM l.t WHERE id = 1 FOR SHARE", 1205)
	wantCode(c2, "SELECT id, v FROM l.t WHERE id = 1 LOCK IN SHARE MODE", 1205)
	wantCode(c2, "UPDATE l.t SET v = 11 WHERE id = 1", 1205)
	wantCode(c2, "SELECT id, v FROM l.t WHERE id = 1 FOR UPDATE NOWAIT", 3572)
	if got := rows(c2, "SELECT id, v FROM l.t FOR UPDATE SKIP LOCKED"); got != "2 20;3 30;" {
		t.Fatalf("SKIP LOCKED: %s, want rows 2 and 3", got)
	}
	if got := rows(c2, "SELECT id, v FROM l.t ORDER BY id"); got != "1 10;2 20;3 30;" {
		t.Fatalf("plain read beside a lock: %s", got)
	}
	// A plain write waits for the lock; at its release it goes on. An
	// autocommit UPDATE by key, as in MySQL, then updates the row as the
	// holder left it (not a lost update, and no 1213).
	done := make(chan error, 1)
	c3 := conn()
	go func() {
		_, err := c3.ExecContext(ctx, "UPDATE l.t SET v = v + 100 WHERE id = 1")
		done <- err
	}()
	waitFor(t, "the UPDATE to wait for the lock", 10*time.Second, func() bool {
		return queryString(t, db, "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'UPDATE l.t SET v = v + 100%'") == "1;"
	})
	mustExec(t, c1, "UPDATE l.t SET v = 15 WHERE id = 1")
	mustExec(t, c1, "COMMIT")
	if err := <-done; err != nil {
		t.Fatalf("autocommit UPDATE of a row changed by the lock's holder: %v", err)
	}
	if got := rows(c2, "SELECT id, v FROM l.t WHERE id = 1"); got != "1 115;" {
		t.Fatalf("after both: %s, want 1 115", got)
	}

	// An autocommit locking read holds its locks for the statement only.
	if got := rows(c1, "SELECT id, v FROM l.t WHERE id = 2 FOR UPDATE"); got != "2 20;" {
		t.Fatal(got)
	}
	if got := rows(c2, "SELECT id, v FROM l.t WHERE id = 2 FOR UPDATE NOWAIT"); got != "2 20;" {
		t.Fatal(got)
	}

	// Deadlock: c1 (older) holds 1 and waits for 2; c2 (younger) holds 2
	// and asks for 1.
	mustExec(t, c2, "SET SESSION innodb_lock_wait_timeout = 50")
	mustExec(t, c1, "START TRANSACTION")
	rows(c1, "SELECT id, v FROM l.t WHERE id = 1 FOR UPDATE")
	mustExec(t, c2, "START TRANSACTION")
	mustExec(t, c2, "UPDATE l.t SET v = 33 WHERE id = 3")
	rows(c2, "SELECT id, v FROM l.t WHERE id = 2 FOR UPDATE")
	waiting := make(chan error, 1)
	go func() {
		_, err := c1.ExecContext(ctx, "UPDATE l.t SET v = 22 WHERE id = 2")
		waiting <- err
	}()
	waitFor(t, "c1 to wait for row 2", 10*time.Second, func() bool {
		return queryString(t, db, "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'UPDATE l.t SET v = 22%'") == "1;"
	})
	_, err := c2.QueryContext(ctx, "SELECT id, v FROM l.t WHERE id = 1 FOR UPDATE")
	if num, state := mysqlError(err); num != 1213 || state != "40001" {
		t.Fatalf("younger closing the cycle: %v, want 1213 (40001)", err)
	}
	if err := <-waiting; err != nil {
		t.Fatalf("older after the younger's rollback: %v", err)
	}
	mustExec(t, c1, "COMMIT")
	// c2's transaction was rolled back whole: its write of row 3 is gone.
	mustExec(t, c2, "COMMIT")
	if got := rows(c2, "SELECT id, v FROM l.t ORDER BY id"); got != "1 115;2 22;3 30;" {
		t.Fatalf("after the deadlock: %s", got)
	}

	// A locking read through an index waits for a row that then leaves
	// its range: the row is not returned.
	mustExec(t, db, "CREATE TABLE l.q (id INT PRIMARY KEY, st VARCHAR(10), KEY kst (st))")
	mustExec(t, db, "INSERT INTO l.q VALUES (1, 'new'), (2, 'new'), (3, 'old')")
	mustExec(t, c1, "START TRANSACTION")
	rows(c1, "SELECT id, 0 FROM l.q WHERE id = 1 FOR UPDATE")
	got := make(chan string, 1)
	go func() {
		r, err := c2.QueryContext(ctx, "SELECT id FROM l.q WHERE st = 'new' FOR UPDATE")
		if err != nil {
			got <- err.Error()
			return
		}
		defer r.Close()
		out := ""
		for r.Next() {
			var id int
			r.Scan(&id)
			out += fmt.Sprintf("%d;", id)
		}
		got <- out
	}()
	waitFor(t, "the locking read to wait for row 1", 10*time.Second, func() bool {
		return queryString(t, db, "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'SELECT id FROM l.q WHERE st%'") == "1;"
	})
	mustExec(t, c1, "UPDATE l.q SET st = 'done' WHERE id = 1")
	mustExec(t, c1, "COMMIT")
	if g := <-got; g != "2;" {
		t.Fatalf("locking read after the row left the range: %s, want only row 2", g)
	}

	// A queue's next job in id order over KEY (st): the index range is in
	// id order, so no sort locks every pending job before the first is
	// returned; a second worker gets the next one.
	mustExec(t, db, "INSERT INTO l.q VALUES (6, 'new'), (5, 'new')")
	next := "SELECT id, 0 FROM l.q WHERE st = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"
	mustExec(t, c1, "START TRANSACTION")
	mustExec(t, c2, "START TRANSACTION")
	if a, b := rows(c1, next), rows(c2, next); a != "2 0;" || b != "5 0;" {
		t.Fatalf("two workers' next jobs: %s and %s, want 2 and 5", a, b)
	}
	if got := queryString(t, db, "EXPLAIN PLAN "+next); strings.Contains(got, "Sort") {
		t.Fatalf("plan of the queue query sorts:\n%s", got)
	}
	mustExec(t, c1, "COMMIT")
	mustExec(t, c2, "COMMIT")
	if got := rows(c1, "SELECT id, 0 FROM l.q WHERE st = 'new' ORDER BY id FOR UPDATE"); got != "2 0;5 0;6 0;" {
		t.Fatalf("locking read in index order: %s", got)
	}
}

// TestDeadlockAcrossDatabases: a transaction's locks in every database
// belong to one owner, so a cycle through two databases is found too.
func TestDeadlockAcrossDatabases(t *testing.T) {
	s := newServer(t, t.TempDir())
	db := s.open("")
	for _, q := range []string{
		"CREATE DATABASE a", "CREATE DATABASE b",
		"CREATE TABLE a.t (id INT PRIMARY KEY, v INT)", "CREATE TABLE b.t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO a.t VALUES (1, 0)", "INSERT INTO b.t VALUES (1, 0)",
	} {
		mustExec(t, db, q)
	}
	ctx := context.Background()
	c1, _ := db.Conn(ctx)
	c2, _ := db.Conn(ctx)
	defer c1.Close()
	defer c2.Close()
	mustExec(t, c1, "START TRANSACTION")
	mustExec(t, c1, "SELECT * FROM a.t WHERE id = 1 FOR UPDATE")
	mustExec(t, c2, "START TRANSACTION")
	mustExec(t, c2, "SELECT * FROM b.t WHERE id = 1 FOR UPDATE")
	waiting := make(chan error, 1)
	go func() {
		_, err := c1.ExecContext(ctx, "UPDATE b.t SET v = 1 WHERE id = 1")
		waiting <- err
	}()
	waitFor(t, "c1 to wait for b.t", 10*time.Second, func() bool {
		return queryString(t, db, "SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'UPDATE b.t SET v = 1%'") == "1;"
	})
	_, err := c2.ExecContext(ctx, "UPDATE a.t SET v = 2 WHERE id = 1")
	if num, _ := mysqlError(err); num != 1213 {
		t.Fatalf("the younger closing a cycle through two databases: %v, want 1213", err)
	}
	if err := <-waiting; err != nil {
		t.Fatalf("the older after the younger's rollback: %v", err)
	}
	mustExec(t, c1, "UPDATE a.t SET v = 1 WHERE id = 1")
	mustExec(t, c1, "COMMIT")
	if got := queryString(t, db, "SELECT a.v, b.v FROM a.t a JOIN b.t b ON a.id = b.id"); got != "1 1;" {
		t.Fatalf("after the deadlock: %s", got)
	}
}
