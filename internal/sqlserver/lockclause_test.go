package sqlserver

import (
	"context"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

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

// A multi-statement query: the statement parsed and the rest are returned
// as the client wrote them, so the next statement's clauses are read from
// its own text.
func TestLockParserKeepsTheRest(t *testing.T) {
	p := lockParser{sql.NewMysqlParser()}
	q := "  SELECT a FROM t FOR SHARE; SELECT b FROM u FOR UPDATE NOWAIT;"
	stmt, parsed, rest, err := p.ParseWithOptions(context.Background(), q, ';', true, ast.ParserOptions{})
	if err != nil || stmt == nil {
		t.Fatalf("parse: %v", err)
	}
	if parsed != "SELECT a FROM t" { // as parsed: the clause blanked
		t.Errorf("parsed %q", parsed)
	}
	if strings.TrimSpace(rest) != "SELECT b FROM u FOR UPDATE NOWAIT;" && strings.TrimSpace(rest) != "SELECT b FROM u FOR UPDATE NOWAIT" {
		t.Errorf("rest %q", rest)
	}
	if lc := lockClauseOf(rest); lc.mode != storage.LockExclusive || lc.wait != storage.WaitNoWait {
		t.Errorf("clause of the rest: %+v", lc)
	}
	if _, _, rest, err = p.ParseWithOptions(context.Background(), rest, ';', true, ast.ParserOptions{}); err != nil || rest != "" {
		t.Errorf("second statement: %q %v", rest, err)
	}
}

func TestExplained(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT 1 FOR UPDATE":                                      "SELECT 1 FOR UPDATE",
		"EXPLAIN PLAN SELECT a FROM t FOR SHARE":                   "SELECT a FROM t FOR SHARE",
		"explain format=tree with c as (select 1) select * from c": "with c as (select 1) select * from c",
		"EXPLAIN UPDATE t SET a = 1":                               "EXPLAIN UPDATE t SET a = 1",
	} {
		if got := explained(q); got != want {
			t.Errorf("explained(%q) = %q, want %q", q, got, want)
		}
	}
}
