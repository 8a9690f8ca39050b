package sqlserver

import (
	"testing"

	"github.com/miraj-db/miraj/internal/storage"
)

func TestLockClauseOf(t *testing.T) {
	for _, c := range []struct {
		q    string
		want lockClause
	}{
		{"SELECT * FROM t", lockClause{}},
		{"SELECT * FROM t FOR UPDATE", lockClause{mode: storage.LockExclusive}},
		{"select * from t for update skip locked", lockClause{mode: storage.LockExclusive, wait: storage.WaitSkipLocked}},
		{"SELECT * FROM t FOR UPDATE NOWAIT", lockClause{mode: storage.LockExclusive, wait: storage.WaitNoWait}},
		{"SELECT * FROM t FOR SHARE", lockClause{mode: storage.LockShared}},
		{"SELECT * FROM t FOR SHARE OF t, `u` SKIP LOCKED", lockClause{mode: storage.LockShared, wait: storage.WaitSkipLocked}},
		{"SELECT * FROM t LOCK IN SHARE MODE", lockClause{mode: storage.LockShared}},
		{"(SELECT * FROM t FOR UPDATE)", lockClause{mode: storage.LockExclusive}},
		{"WITH c AS (SELECT 1) SELECT * FROM t FOR UPDATE", lockClause{mode: storage.LockExclusive}},
		{"SELECT 'for update' FROM t", lockClause{}},
		{"SELECT * FROM t /* for update */", lockClause{}},
		{"SELECT * FROM t -- for update", lockClause{}},
		{"SELECT * FROM t; SELECT * FROM u FOR UPDATE", lockClause{}},
		{"UPDATE t SET a = (SELECT 1 FROM u FOR UPDATE)", lockClause{}},
		{"SELECT * FROM t /*!80000 FOR UPDATE */", lockClause{mode: storage.LockExclusive}},
	} {
		if got := lockClauseOf(c.q); got != c.want {
			t.Errorf("%q: %+v, want %+v", c.q, got, c.want)
		}
	}
}

func TestBlankLockClauses(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"SELECT * FROM t FOR UPDATE", "SELECT * FROM t FOR UPDATE"},
		{"SELECT * FROM t FOR UPDATE SKIP LOCKED", "SELECT * FROM t FOR UPDATE SKIP LOCKED"},
		{"SELECT * FROM t LOCK IN SHARE MODE", "SELECT * FROM t LOCK IN SHARE MODE"},
		{"SELECT * FROM t FOR UPDATE NOWAIT; SELECT 1", "SELECT * FROM t                  ; SELECT 1"},
		{"SELECT * FROM t FOR SHARE", "SELECT * FROM t          "},
		{"SELECT * FROM t FOR UPDATE OF t", "SELECT * FROM t                "},
		{"SELECT 'FOR SHARE' FROM t", "SELECT 'FOR SHARE' FROM t"},
	} {
		if got := blankLockClauses(c.q); got != c.want {
			t.Errorf("%q: %q, want %q", c.q, got, c.want)
		}
	}
}
