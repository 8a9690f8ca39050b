package system

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// streamConn is a session on db that streams its transactions past 1 MiB.
func streamConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(context.Background(), "SET SESSION stream_transaction_mb = 1"); err != nil {
		t.Fatal(err)
	}
	return c
}

func cexec(t *testing.T, c *sql.Conn, q string) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%.80s: %v", q, err)
	}
}

// bigRows inserts rows [from, to) of 100 KiB into shop.big in c's
// transaction.
func bigRows(t *testing.T, c *sql.Conn, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		cexec(t, c, fmt.Sprintf("INSERT INTO shop.big VALUES (%d, REPEAT('s', 102400))", i))
	}
}

// openBytes is the sum of BYTES of a node's open transactions of shop
// (information_schema.MIRAJ_STREAMS), and how many there are.
func openBytes(t *testing.T, s *server) (int64, int) {
	var b sql.NullInt64
	var n int
	err := s.open("").QueryRow("SELECT COALESCE(SUM(BYTES), 0), COUNT(*) FROM information_schema.MIRAJ_STREAMS WHERE `DATABASE` = 'shop'").Scan(&b, &n)
	if err != nil {
		t.Fatalf("MIRAJ_STREAMS on %s: %v", filepath.Base(s.root), err)
	}
	return b.Int64, n
}

func streamCluster(t *testing.T) (*testCluster, []*server, *sql.DB) {
	c, ns, p := shopCluster(t, "", "n1", "n2", "n3")
	mustExec(t, p, "CREATE TABLE shop.big (id INT PRIMARY KEY, b LONGBLOB)")
	caughtUp(t, ns[0], ns[1], ns[2])
	return c, ns, p
}

// A large transaction reaches the secondaries while it runs, invisible
// there until its COMMIT; the journals are the same bytes; ROLLBACK and a
// client that goes away end it everywhere with nothing visible.
func TestStreamedTransactionReplicates(t *testing.T) {
	c, ns, p := streamCluster(t)
	n1, n2, n3 := ns[0], ns[1], ns[2]
	s2 := n2.open("")
	tx := streamConn(t, p)
	cexec(t, tx, "BEGIN")
	bigRows(t, tx, 0, 40) // 4 MiB
	waitFor(t, "n2 to receive the open transaction", 30*time.Second, func() bool {
		b, n := openBytes(t, n2)
		return n == 1 && b >= 3<<20
	})
	if got := one(t, s2, "SELECT COUNT(*) FROM shop.big"); got != "0" {
		t.Fatalf("n2 shows %s rows of an open transaction", got)
	}
	if got := one(t, s2, "SELECT CONCAT(ORIGIN, ' ', APPLYING) FROM information_schema.MIRAJ_STREAMS WHERE `DATABASE` = 'shop'"); got != "received YES" {
		t.Fatalf("n2's open transaction: %q", got)
	}
	if got := one(t, p, "SELECT ORIGIN FROM information_schema.MIRAJ_STREAMS WHERE `DATABASE` = 'shop'"); got != "local" {
		t.Fatalf("n1's open transaction: %q", got)
	}
	mustExec(t, p, "INSERT INTO shop.t VALUES (1, 'beside')") // a small commit in between
	bigRows(t, tx, 40, 50)
	cexec(t, tx, "COMMIT")
	caughtUp(t, n1, n2, n3)
	for _, s := range []*server{n2, n3} {
		if a, b := tableSum(t, s.open(""), "shop.big"), tableSum(t, p, "shop.big"); a != b {
			t.Fatalf("%s's rows differ from the primary's", filepath.Base(s.root))
		}
		if _, n := openBytes(t, s); n != 0 {
			t.Fatalf("%s still has an open transaction after the commit", filepath.Base(s.root))
		}
	}
	compareJournals(t, filepath.Join(c.dir, "data-n1", "shop"), filepath.Join(c.dir, "data-n2", "shop"))
	// Paced by the secondaries' acknowledgements, never by the pace's
	// time limit.
	if out := n1.output(); strings.Contains(out, "goes unpaced") {
		t.Fatalf("the primary gave up pacing the stream:\n%s", out)
	}

	// ROLLBACK.
	tx2 := streamConn(t, p)
	cexec(t, tx2, "BEGIN")
	bigRows(t, tx2, 100, 130)
	waitFor(t, "n2 to receive the second transaction", 30*time.Second, func() bool { _, n := openBytes(t, n2); return n == 1 })
	cexec(t, tx2, "ROLLBACK")
	// A client that goes away mid-transaction.
	tx3 := streamConn(t, p)
	cexec(t, tx3, "BEGIN")
	bigRows(t, tx3, 200, 230)
	waitFor(t, "n3 to receive the third transaction", 30*time.Second, func() bool { _, n := openBytes(t, n3); return n == 1 })
	tx3.Raw(func(dc any) error { return driver.ErrBadConn }) // closes the connection
	tx3.Close()
	// KILL from another session.
	tx4 := streamConn(t, p)
	var id int64
	if err := tx4.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	cexec(t, tx4, "BEGIN")
	bigRows(t, tx4, 300, 330)
	waitFor(t, "n2 to receive the fourth transaction", 30*time.Second, func() bool { _, n := openBytes(t, n2); return n >= 1 })
	mustExec(t, p, fmt.Sprintf("KILL %d", id))
	tx4.Close()
	for _, s := range []*server{n1, n2, n3} {
		waitFor(t, filepath.Base(s.root)+" to end the open transactions", 30*time.Second, func() bool { _, n := openBytes(t, s); return n == 0 })
		if got := one(t, s.open(""), "SELECT COUNT(*) FROM shop.big WHERE id >= 100"); got != "0" {
			t.Fatalf("%s shows %s rows of aborted transactions", filepath.Base(s.root), got)
		}
	}
	var name, aborted string
	if err := p.QueryRow("SHOW GLOBAL STATUS LIKE 'Miraj_streamed_aborted'").Scan(&name, &aborted); err != nil || aborted != "3" {
		t.Fatalf("Miraj_streamed_aborted on the primary: %q, %v", aborted, err)
	}
}

// kill -9 of the primary while a transaction streams, then a promotion:
// the new primary drops the open transaction at once (none of it visible,
// its keys free), the third node follows; the old primary, back, keeps
// what only it had in quarantine.
func TestStreamedTransactionPrimaryKilled(t *testing.T) {
	c, ns, p := streamCluster(t)
	n1, n2, n3 := ns[0], ns[1], ns[2]
	tx := streamConn(t, p)
	cexec(t, tx, "BEGIN")
	bigRows(t, tx, 0, 30)
	waitFor(t, "n2 and n3 to receive the open transaction", 30*time.Second, func() bool {
		b2, _ := openBytes(t, n2)
		b3, _ := openBytes(t, n3)
		return b2 >= 2<<20 && b3 >= 2<<20
	})
	// Frames only the old primary gets: the secondaries frozen.
	n2.signal(syscall.SIGSTOP)
	n3.signal(syscall.SIGSTOP)
	bigRows(t, tx, 30, 230) // 20 MiB: more than the socket buffers hold
	n1.kill()
	n2.signal(syscall.SIGCONT)
	n3.signal(syscall.SIGCONT)
	p2 := designate(t, n2)
	if _, n := openBytes(t, n2); n != 0 {
		t.Fatal("the promoted node still holds the open transaction")
	}
	if got := one(t, p2, "SELECT COUNT(*) FROM shop.big"); got != "0" {
		t.Fatalf("the promoted node shows %s rows of the open transaction", got)
	}
	// Its keys are free at once: no lock held by the dropped transaction.
	mustExec(t, p2, "INSERT INTO shop.big VALUES (5, 'after the promotion')")
	// n3, thawed with the old primary's frames still in its socket
	// buffers, may read some after it answered the promotion: then it
	// holds frames off n2's history, keeps them in quarantine and takes a
	// copy (the database is missing meanwhile).
	waitFor(t, "n3 to follow n2", 60*time.Second, func() bool {
		var v sql.NullString
		n3.open("").QueryRow("SELECT b FROM shop.big WHERE id = 5").Scan(&v)
		return v.String == "after the promotion"
	})
	waitFor(t, "n3 to end the open transaction", 30*time.Second, func() bool { _, n := openBytes(t, n3); return n == 0 })
	if got := one(t, n3.open(""), "SELECT COUNT(*) FROM shop.big"); got != "1" {
		t.Fatalf("n3 holds %s rows", got)
	}

	n1.restart()
	p1 := n1.open("")
	waitFor(t, "the old primary to be fenced", 30*time.Second, func() bool { return one(t, p1, "SELECT @@cluster_role") == "FENCED" })
	mustExec(t, p1, "SET GLOBAL cluster_role = 'secondary'")
	waitFor(t, "n1 to follow n2", 60*time.Second, func() bool {
		var v sql.NullString
		p1.QueryRow("SELECT b FROM shop.big WHERE id = 5").Scan(&v) // the database is missing while its copy comes
		return v.String == "after the promotion"
	})
	if got := one(t, p1, "SELECT COUNT(*) FROM shop.big"); got != "1" {
		t.Fatalf("n1 holds %s rows after it rejoined", got)
	}
	reports, _ := filepath.Glob(filepath.Join(c.dir, "data-n1", "miraj", "quarantaine", "*", "shop", "report.txt"))
	if len(reports) != 1 {
		t.Fatalf("n1's quarantine reports: %v", reports)
	}
	rep, _ := os.ReadFile(reports[0])
	if !strings.Contains(string(rep), "rows changed") {
		t.Fatalf("the report does not account for the open transaction:\n%s", rep)
	}
	t.Logf("n1's quarantine report:\n%s", rep)
}

// kill -9 of a secondary while a transaction streams: restarted, it keeps
// what it had received and the primary sends the rest, not the
// transaction again.
func TestStreamedTransactionSecondaryKilled(t *testing.T) {
	_, ns, p := streamCluster(t)
	n1, n2, n3 := ns[0], ns[1], ns[2]
	start, _ := replPos(n1, "shop")
	tx := streamConn(t, p)
	cexec(t, tx, "BEGIN")
	bigRows(t, tx, 0, 60)
	waitFor(t, "n2 to receive the open transaction", 30*time.Second, func() bool { b, _ := openBytes(t, n2); return b >= 5<<20 })
	kept, _ := replPos(n2, "shop")
	n2.kill()
	bigRows(t, tx, 60, 100)
	cexec(t, tx, "COMMIT")
	end, _ := replPos(n1, "shop")
	n2.restart()
	caughtUp(t, n1, n2, n3)
	if a, b := tableSum(t, n2.open(""), "shop.big"), tableSum(t, p, "shop.big"); a != b {
		t.Fatal("n2's rows differ from the primary's")
	}
	total, resent := end-start, end-kept
	t.Logf("transaction of %d bytes; n2 had %d when killed, %d sent after its restart", total, kept-start, resent)
	if resent >= total {
		t.Fatalf("n2 was sent %d bytes after its restart, the whole transaction (%d)", resent, total)
	}
	if kept <= start {
		t.Fatalf("n2 had written nothing of the transaction (%d) when it was killed", kept)
	}
}
