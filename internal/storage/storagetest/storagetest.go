// Package storagetest makes storage engines holding a known journal, for
// the tests of the packages that read journals (quarantine, listings).
package storagetest

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/storage"
)

// OneRowTxns opens an engine in root with journal segments of 4 KiB and
// creates database name, whose table t (id, payload) gets n transactions
// of one row each (about 700 bytes of journal). It returns the engine
// (closed at the test's end unless the test closed it), the database and
// the LSN each transaction starts at.
func OneRowTxns(t testing.TB, root, name string, n int) (*storage.Engine, *storage.DB, []journal.LSN) {
	t.Helper()
	eng, db := openWith(t, root, name, 4096)
	var starts []journal.LSN
	for i := range n {
		starts = append(starts, db.LSN())
		tx := db.Begin()
		if i == 0 {
			if err := tx.CreateTable(&storage.TableDef{Name: "t", NumCols: 2, AutoCol: -1, PK: []int{0}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tx.Insert("t", []any{int64(i), strings.Repeat("x", 600)}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return eng, db, starts
}

// OneTxn opens an engine in root and creates database name, whose table t
// (as many columns as row has, the first the key) gets row in one
// transaction. It returns the engine (closed at the test's end unless the
// test closed it) and the database.
func OneTxn(t testing.TB, root, name string, row []any) (*storage.Engine, *storage.DB) {
	t.Helper()
	eng, db := openWith(t, root, name, 0)
	tx := db.Begin()
	if err := tx.CreateTable(&storage.TableDef{Name: "t", NumCols: len(row), AutoCol: -1, PK: []int{0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Insert("t", row); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return eng, db
}

// bindByText compares every column's values by their text: enough to keep
// the tests' rows in order.
func bindByText(def *storage.TableDef) ([]storage.Compare, error) {
	out := make([]storage.Compare, def.NumCols)
	for i := range out {
		out[i] = func(a, b any) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) }
	}
	return out, nil
}

// openWith opens an engine in root with journal segments of segmentBytes
// (0: storage's default), closed at the test's end, and creates database
// name.
func openWith(t testing.TB, root, name string, segmentBytes int64) (*storage.Engine, *storage.DB) {
	t.Helper()
	eng, err := storage.Open(storage.Options{Root: root, Policy: storage.SaveCommit, Bind: bindByText, SegmentBytes: segmentBytes,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	db, err := eng.CreateDatabase(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return eng, db
}
