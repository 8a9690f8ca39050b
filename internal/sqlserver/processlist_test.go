package sqlserver

import "testing"

// Slow_queries counts the statements that ran longer than long_query_time,
// compiled ones (a prepared point lookup, a prepared write, a range read)
// and the planner's alike, and follows SET GLOBAL long_query_time at once: 0
// counts every statement, as in MySQL, and 10 none of these.
func TestSlowQueriesFollowLongQueryTime(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO d.t VALUES (1, 0), (2, 0)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { db.Exec("SET GLOBAL long_query_time = 10") })
	get, err := db.Prepare("SELECT v FROM d.t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	set, err := db.Prepare("UPDATE d.t SET v = v + 1 WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	// A range read runs the planner inside its first execution: one
	// statement all the same.
	rng, err := db.Prepare("SELECT id FROM d.t WHERE id BETWEEN ? AND ?")
	if err != nil {
		t.Fatal(err)
	}
	slow := func() int { return globalStatus(t, db, "Slow_queries") }
	run := func() {
		for i := 0; i < 5; i++ {
			var v int
			if err := get.QueryRow(1).Scan(&v); err != nil {
				t.Fatal(err)
			}
			if _, err := set.Exec(2); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("UPDATE d.t SET v = v + 1 WHERE id > 1"); err != nil {
				t.Fatal(err)
			}
			rows, err := rng.Query(1, 2)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
			}
			rows.Close()
		}
	}

	if _, err := db.Exec("SET GLOBAL long_query_time = 0"); err != nil {
		t.Fatal(err)
	}
	before := slow()
	run()
	// The 20 statements, and the first status query (counted as it ends).
	if got := slow() - before; got != 21 {
		t.Errorf("long_query_time = 0: Slow_queries grew by %d over 20 statements, want 21", got)
	}

	if _, err := db.Exec("SET GLOBAL long_query_time = 10"); err != nil {
		t.Fatal(err)
	}
	before = slow()
	run()
	if got := slow() - before; got != 0 {
		t.Errorf("long_query_time = 10: Slow_queries grew by %d", got)
	}
}

// Threads_running counts the statements running, and comes back to the
// one reading it after compiled statements of every kind, including the
// first execution of a range read, which runs the planner inside the
// compiled statement to learn its result columns.
func TestThreadsRunningComesBack(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO d.t VALUES (1, 0), (2, 0), (3, 0)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	running := func() int { return globalStatus(t, db, "Threads_running") }
	before := running()
	for _, q := range []string{
		"SELECT v FROM d.t WHERE id = ? AND ? > 0",
		"SELECT v FROM d.t WHERE id BETWEEN ? AND ? ORDER BY id",
		"SELECT SUM(v) FROM d.t WHERE id BETWEEN ? AND ?",
		"SELECT DISTINCT v FROM d.t WHERE id BETWEEN ? AND ? ORDER BY v",
		"UPDATE d.t SET v = v + 1 WHERE id = ? AND ? > 0",
	} {
		st, err := db.Prepare(q)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			rows, err := st.Query(1, 3)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			for rows.Next() {
			}
			rows.Close()
		}
		st.Close()
		if got := running(); got != before {
			t.Errorf("after %q: Threads_running %d, want %d", q, got, before)
		}
	}
}
