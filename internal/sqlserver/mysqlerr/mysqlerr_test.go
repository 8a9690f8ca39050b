package mysqlerr

import (
	"fmt"
	"testing"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/storage"
)

func TestEveryErrorHasAnEntry(t *testing.T) {
	for e := ReadOnly; e <= TLSLibrary; e++ {
		if _, ok := table[e]; !ok {
			t.Errorf("error %d has no entry", int(e))
		}
	}
}

func TestFromStorage(t *testing.T) {
	for _, c := range []struct {
		err         error
		code        int
		state, text string
	}{
		{storage.ErrLockTimeout, 1205, "HY000", "Lock wait timeout exceeded; try restarting transaction"},
		{fmt.Errorf("commit: %w", storage.ErrReadOnly), 1290, "HY000", "The MySQL server is running with the --read-only option so it cannot execute this statement"},
		{&storage.DuplicateError{Index: "PRIMARY", Key: []any{int64(1), "a"}}, 1062, "23000", "Duplicate entry '1-a' for key 'PRIMARY'"},
	} {
		se, ok := FromStorage(c.err).(*mysql.SQLError)
		if !ok || se.Num != c.code || se.State != c.state || se.Message != c.text {
			t.Errorf("FromStorage(%v) = %v, want %d (%s) %s", c.err, FromStorage(c.err), c.code, c.state, c.text)
		}
	}
	if got := New(NoSuchThread, uint32(7)).Error(); got != "Unknown thread id: 7 (errno 1094) (sqlstate HY000)" {
		t.Errorf("NoSuchThread: %s", got)
	}
}
