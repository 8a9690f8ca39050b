package main

import (
	"database/sql"
	"net"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/miraj-db/miraj/internal/journal"
)

// run starts a nullserver on a free loopback port and runs n transactions
// of a prepared UPDATE and a COMMIT through the Go client.
func run(t *testing.T, durable bool, n int) *handler {
	t.Helper()
	h, err := newHandler(t.TempDir(), durable, 640)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go serve(ln, h)
	db, err := sql.Open("mysql", "root@tcp("+ln.Addr().String()+")/sbtest")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < n; i++ {
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		res, err := tx.Exec("UPDATE sbtest1 SET k=k+1 WHERE id=?", i)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := res.RowsAffected(); got != 1 {
			t.Fatalf("UPDATE: %d rows affected, want 1", got)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// commits counts the commit frames in h's journal.
func commits(t *testing.T, h *handler) int {
	n := 0
	if err := h.jrnl.Read(h.jrnl.Start(), func(_ journal.LSN, typ journal.FrameType, _ []byte) error {
		if typ == journal.FrameCommit {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// The bound is only a bound if a durable COMMIT pays what Miraj's does: a
// frame in the journal, made durable by an fsync before the answer.
func TestDurableCommitIsInTheJournalAndSynced(t *testing.T) {
	h := run(t, true, 3)
	if got := commits(t, h); got != 3 {
		t.Fatalf("%d commit frames in the journal, want 3", got)
	}
	if h.jrnl.Fsyncs() == 0 || h.jrnl.Durable() != h.jrnl.End() {
		t.Fatalf("after the COMMITs: %d fsyncs, durable to %d of %d", h.jrnl.Fsyncs(), h.jrnl.Durable(), h.jrnl.End())
	}
}

func TestCommitWithoutDurabilityAppendsAndDoesNotSync(t *testing.T) {
	h := run(t, false, 3)
	if got := commits(t, h); got != 3 {
		t.Fatalf("%d commit frames in the journal, want 3", got)
	}
	if n := h.jrnl.Fsyncs(); n != 0 {
		t.Fatalf("%d fsyncs without --durable, want 0", n)
	}
}
