package sqlserver

import (
	"errors"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
	"github.com/miraj-db/miraj/internal/storage"
)

// Locking reads (SELECT … FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE, with
// OF, NOWAIT or SKIP LOCKED). The parser of go-mysql-server v0.20 knows
// FOR UPDATE [SKIP LOCKED] and LOCK IN SHARE MODE only, and its planner
// drops the clause. So the clause is read here from the statement's text:
// lockParser blanks the forms the parser does not know (spaces of the same
// length, so that the positions of a multi-statement query hold), and at
// execution a table read asks lockClauseOf for the clause of the statement
// running (ctx.Query(), the text as the client sent it).
//
// The clause applies to every table the SELECT reads (subqueries too),
// row by row as the scan or index range yields them, as InnoDB locks the
// rows it reads; there are no gap locks. Inside stored routines and
// triggers a SELECT … FOR UPDATE reads without locking.

// lockClause is what a statement asks of its reads.
type lockClause struct {
	mode storage.LockMode // 0: a plain read
	wait storage.LockWait
}

// lockSpan is one locking clause found in a statement: its mode and wait,
// where it is, and whether the parser knows its form.
type lockSpan struct {
	lockClause
	start, end int
	known      bool
}

// findLockClauses returns the locking clauses among words.
func findLockClauses(w []sqltext.Word) []lockSpan {
	is := func(i int, s string) bool { return i < len(w) && w[i].IsWord && w[i].Text == s }
	var out []lockSpan
	for i := 0; i < len(w); i++ {
		var sp lockSpan
		j := i
		switch {
		case is(i, "FOR") && is(i+1, "UPDATE"):
			sp.mode, j = storage.LockExclusive, i+2
			sp.known = true
		case is(i, "FOR") && is(i+1, "SHARE"):
			sp.mode, j = storage.LockShared, i+2
		case is(i, "LOCK") && is(i+1, "IN") && is(i+2, "SHARE") && is(i+3, "MODE"):
			sp.mode, j = storage.LockShared, i+4
			sp.known = true
		default:
			continue
		}
		if is(j, "OF") {
			sp.known = false
			j++
			for j < len(w) && (w[j].IsWord || w[j].Text == "," || w[j].Text == ".") && !is(j, "NOWAIT") && !is(j, "SKIP") && !is(j, "FOR") && !is(j, "LOCK") {
				j++
			}
		}
		switch {
		case is(j, "NOWAIT"):
			sp.wait, sp.known = storage.WaitNoWait, false
			j++
		case is(j, "SKIP") && is(j+1, "LOCKED"):
			// The parser knows SKIP LOCKED right after FOR UPDATE only.
			sp.wait, sp.known = storage.WaitSkipLocked, sp.known && sp.mode == storage.LockExclusive && j == i+2
			j += 2
		}
		sp.start, sp.end = w[i].Start, w[j-1].End
		out = append(out, sp)
		i = j - 1
	}
	return out
}

// lockClauseOf returns the locking clause of the first statement of q: the
// strongest mode among its clauses, the wait of the first. Only a SELECT
// (or WITH … SELECT, or a parenthesized one) locks.
func lockClauseOf(q string) lockClause {
	w := sqltext.Scan(q, true)
	k := 0
	for k < len(w) && w[k].Text == "(" {
		k++
	}
	if k >= len(w) || !(w[k].Text == "SELECT" || w[k].Text == "WITH") {
		return lockClause{}
	}
	var lc lockClause
	for i, sp := range findLockClauses(w) {
		if i == 0 {
			lc.wait = sp.wait
		}
		lc.mode = max(lc.mode, sp.mode)
	}
	return lc
}

// blankLockClauses returns q with the locking clauses the parser does not
// know replaced by spaces (same length, so positions hold).
func blankLockClauses(q string) string {
	if sqltext.IndexFold(q, "for") < 0 && sqltext.IndexFold(q, "lock") < 0 {
		return q
	}
	k := blanker{q: q}
	for _, sp := range findLockClauses(sqltext.Scan(q, false)) {
		if !sp.known {
			k.blank(sp.start, sp.end)
		}
	}
	return k.text()
}

// blanker blanks spans of a text with spaces, keeping its length and its
// line breaks (the parser's positions and line numbers hold).
type blanker struct {
	q string
	b []byte // nil until a span is blanked
}

func (k *blanker) blank(from, to int) {
	if k.b == nil {
		k.b = []byte(k.q)
	}
	for i := from; i < to; i++ {
		if k.b[i] != '\n' {
			k.b[i] = ' '
		}
	}
}

// text returns the text with its spans blanked.
func (k *blanker) text() string {
	if k.b == nil {
		return k.q
	}
	return string(k.b)
}

// lockClause returns the locking clause of the statement ctx runs.
func (s *Session) lockClause(ctx *sql.Context) lockClause {
	q := ctx.Query()
	if q != s.lock.query {
		s.lock.query, s.lock.mode = q, lockClauseOf(q)
	}
	return s.lock.mode
}

// lockWaitVar is MySQL's innodb_lock_wait_timeout, in seconds: how long a
// row lock is waited for before error 1205.
const lockWaitVar = "innodb_lock_wait_timeout"

// defaultLockWait is MySQL's default innodb_lock_wait_timeout (s).
const defaultLockWait = 50

// registerLockVariables replaces go-mysql-server's innodb_lock_wait_timeout
// (fixed at 1, global only) by MySQL's: 1 to 1073741824 s, default 50,
// global and per session.
func registerLockVariables() {
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{&sql.MysqlSystemVariable{
		Name:    lockWaitVar,
		Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
		Dynamic: true,
		Type:    types.NewSystemIntType(lockWaitVar, 1, 1073741824, false),
		Default: int64(defaultLockWait),
	}})
}

// lockWaitTimeout is the session's innodb_lock_wait_timeout.
func (s *Session) lockWaitTimeout(ctx *sql.Context) time.Duration {
	v, err := s.GetSessionVariable(ctx, lockWaitVar)
	if err != nil {
		return defaultLockWait * time.Second
	}
	n, ok := v.(int64)
	if !ok {
		return defaultLockWait * time.Second
	}
	return time.Duration(n) * time.Second
}

// lockError turns a lock's refusal into MySQL's error. A deadlock rolls the
// whole transaction back at once, as InnoDB does, so that its locks go to
// the transactions it blocked; a timeout or NOWAIT fails the statement
// only.
func (s *Session) lockError(ctx *sql.Context, err error) error {
	if errors.Is(err, storage.ErrDeadlock) || errors.Is(err, storage.ErrConflict) {
		s.abortTxn(ctx)
	}
	return mysqlerr.From(err)
}

// abortTxn rolls back the open transaction from inside a statement.
func (s *Session) abortTxn(ctx *sql.Context) {
	if s.txn == nil {
		return
	}
	for _, dtx := range s.txn.dbs {
		dtx.Rollback()
	}
	s.txn.end()
	s.txn = nil
	s.trx.Store(nil)
	s.frozen = nil
	ctx.SetTransaction(nil)
	s.SetIgnoreAutoCommit(false)
}

// lockCache is the locking clause of the statement a session last asked
// about (Session.lockClause).
type lockCache struct {
	query string
	mode  lockClause
}
