package sqlserver

import (
	"context"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/binlog/replica"
)

// TestReplicaWriteRows: a row event on a plain table is written by
// storage writes, in the group's transaction; a table with a trigger, a
// value that does not convert exactly, a new primary key or a duplicate
// leave the event to statements with nothing written; a missing row is
// reported by its index.
func TestReplicaWriteRows(t *testing.T) {
	srv, open := startServer(t)
	root := open("root", "", "")
	// A database with a trigger has its rows written by statements (as a
	// client's compiled writes are).
	execAll(t, root, "CREATE DATABASE r", "CREATE DATABASE rt",
		"CREATE TABLE r.t (id INT PRIMARY KEY, name VARCHAR(10), n BIGINT UNSIGNED)",
		"CREATE TABLE r.b (id BINARY(4) PRIMARY KEY, v VARBINARY(8), bl BLOB)",
		"INSERT INTO r.b VALUES (x'01', x'aa', x'bbcc'), (x'02', NULL, NULL)",
		"CREATE TABLE rt.tr (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE rt.log (id INT)",
		"CREATE TRIGGER rt.trg AFTER INSERT ON rt.tr FOR EACH ROW INSERT INTO rt.log VALUES (NEW.id)",
		"INSERT INTO r.t VALUES (1, 'one', 1)")
	target := &replicaTarget{srv: srv}
	ctx := context.Background()
	group := func(f func(w replica.RowWriter)) {
		t.Helper()
		txn, err := target.Begin(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		f(txn.(replica.RowWriter))
		if err := txn.Commit(ctx, []string{"r"}, []byte(`{"c":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(q string) string {
		t.Helper()
		r, err := query(t, root, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return strings.Join(r.rows, ";") + ";"
	}
	write := func(w replica.RowWriter, table string, kind replica.RowKind, rows [][]any) (bool, int) {
		t.Helper()
		db := "r"
		if table == "tr" {
			db = "rt"
		}
		handled, missing, err := w.WriteRows(ctx, db, table, kind, rows)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		return handled, missing
	}

	group(func(w replica.RowWriter) {
		if h, m := write(w, "t", replica.RowsInsert, [][]any{{int64(2), "two", uint64(18446744073709551615)}, {int64(3), nil, uint64(3)}}); !h || m != -1 {
			t.Fatalf("insert: handled %v missing %d", h, m)
		}
		if h, m := write(w, "t", replica.RowsUpdate, [][]any{{int64(1), "one", uint64(1)}, {int64(1), "uno", uint64(11)}}); !h || m != -1 {
			t.Fatalf("update: handled %v missing %d", h, m)
		}
		if h, m := write(w, "t", replica.RowsDelete, [][]any{{int64(3), nil, uint64(3)}}); !h || m != -1 {
			t.Fatalf("delete: handled %v missing %d", h, m)
		}
	})
	if got, want := rows("SELECT * FROM r.t ORDER BY id"), "1|uno|11;2|two|18446744073709551615;"; got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}

	group(func(w replica.RowWriter) {
		if h, _ := write(w, "tr", replica.RowsInsert, [][]any{{int64(1), int64(1)}}); h {
			t.Error("a table with a trigger was written directly")
		}
		if h, _ := write(w, "t", replica.RowsInsert, [][]any{{int64(4), "far too long a name", uint64(4)}}); h {
			t.Error("a value that does not fit was written directly")
		}
		if h, _ := write(w, "t", replica.RowsUpdate, [][]any{{int64(2), "two", uint64(2)}, {int64(5), "two", uint64(2)}}); h {
			t.Error("a new primary key was written directly")
		}
		// The second row is a duplicate: the first is undone too.
		if h, _ := write(w, "t", replica.RowsInsert, [][]any{{int64(6), "six", uint64(6)}, {int64(1), "dup", uint64(1)}}); h {
			t.Error("a duplicate key was written directly")
		}
		if h, m := write(w, "t", replica.RowsDelete, [][]any{{int64(2), "two", uint64(2)}, {int64(9), "nine", uint64(9)}}); !h || m != 1 {
			t.Errorf("delete of a missing row: handled %v missing %d, want the second", h, m)
		}
	})
	// The group committed what the last event did before the missing row
	// (the SQL thread stops at it and rolls back: here the test commits).
	if got, want := rows("SELECT * FROM r.t ORDER BY id"), "1|uno|11;"; got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
	// Binary strings: a key written by a statement (BINARY padded with
	// zeros) is found by the event's value.
	group(func(w replica.RowWriter) {
		if h, m := write(w, "b", replica.RowsUpdate, [][]any{{[]byte{1}, []byte{0xaa}, []byte{0xbb, 0xcc}}, {[]byte{1}, []byte{0xab}, []byte{}}}); !h || m != -1 {
			t.Fatalf("update by a BINARY key: handled %v missing %d", h, m)
		}
		if h, m := write(w, "b", replica.RowsDelete, [][]any{{[]byte{2, 0, 0, 0}, nil, nil}}); !h || m != -1 {
			t.Fatalf("delete by a BINARY key: handled %v missing %d", h, m)
		}
		if h, m := write(w, "b", replica.RowsInsert, [][]any{{[]byte{3}, []byte("x"), []byte("blob")}}); !h || m != -1 {
			t.Fatalf("insert of binary strings: handled %v missing %d", h, m)
		}
		if h, _ := write(w, "b", replica.RowsInsert, [][]any{{[]byte{4}, []byte("far too long"), nil}}); h {
			t.Error("a VARBINARY value that does not fit was written directly")
		}
	})
	if got, want := rows("SELECT HEX(id), HEX(v), HEX(bl) FROM r.b ORDER BY id"), "01000000|AB|;03000000|78|626C6F62;"; got != want {
		t.Fatalf("binary rows %q, want %q", got, want)
	}
	if got := rows("SELECT HEX(id) FROM r.b WHERE id = x'03000000'"); got != "03000000;" {
		t.Fatalf("the inserted BINARY key is not found by a statement: %q", got)
	}
	if got := rows("SELECT COUNT(*) FROM rt.log"); got != "0;" {
		t.Fatalf("trigger ran: %s", got)
	}
}
