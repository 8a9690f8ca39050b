package sqlserver

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
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
}
