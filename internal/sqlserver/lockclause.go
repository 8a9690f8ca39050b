package sqlserver

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

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
func findLockClauses(w []sqlWord) []lockSpan {
	is := func(i int, s string) bool { return i < len(w) && w[i].word && w[i].text == s }
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
			for j < len(w) && (w[j].word || w[j].text == "," || w[j].text == ".") && !is(j, "NOWAIT") && !is(j, "SKIP") && !is(j, "FOR") && !is(j, "LOCK") {
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
		sp.start, sp.end = w[i].start, w[j-1].end
		out = append(out, sp)
		i = j - 1
	}
	return out
}

// lockClauseOf returns the locking clause of the first statement of q: the
// strongest mode among its clauses, the wait of the first. Only a SELECT
// (or WITH … SELECT, or a parenthesized one) locks.
func lockClauseOf(q string) lockClause {
	w := scanWords(q, true)
	k := 0
	for k < len(w) && w[k].text == "(" {
		k++
	}
	if k >= len(w) || !(w[k].text == "SELECT" || w[k].text == "WITH") {
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
	if indexFold(q, "for") < 0 && indexFold(q, "lock") < 0 {
		return q
	}
	k := blanker{q: q}
	for _, sp := range findLockClauses(scanWords(q, false)) {
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

// newParser returns the server's parser over p, go-mysql-server's.
func newParser(p sql.Parser) sql.Parser {
	return lockParser{systemSchemaParser{clusterParser{p}}}
}

// go-mysql-server parses some text with its global parser rather than the
// engine's: a procedure's definition at each CALL, for one. It reads that
// text as the server reads a statement's.
func init() { sql.GlobalParser = newParser(sql.GlobalParser) }

// lockParser lets the parser read the locking clauses it does not know,
// and MySQL's versioned comments as MySQL does (unwrapVersionComments).
type lockParser struct{ sql.Parser }

func (p lockParser) ParseSimple(q string) (ast.Statement, error) {
	_, r, assigned := readableText(q)
	out, r, err := readAgain(nil, r, func(text string) (parseOut, error) {
		stmt, err := p.Parser.ParseSimple(text)
		return parseOut{stmt: stmt}, err
	})
	if err != nil {
		return nil, err
	}
	return p.finish(nil, out.stmt, r, assigned)
}

func (p lockParser) Parse(ctx *sql.Context, q string, multi bool) (ast.Statement, string, string, error) {
	rb, r, assigned := readableText(q)
	out, r, err := readAgain(ctx, r, func(text string) (parseOut, error) {
		stmt, parsed, rest, err := p.Parser.Parse(ctx, text, multi)
		return parseOut{stmt: stmt, parsed: parsed, rest: rest}, err
	})
	return p.finishText(ctx, q, rb, r, ';', assigned, out, err)
}

func (p lockParser) ParseWithOptions(ctx context.Context, q string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	rb, r, assigned := readableText(q)
	c, _ := ctx.(*sql.Context)
	out, r, err := readAgain(c, r, func(text string) (parseOut, error) {
		stmt, parsed, rest, err := p.Parser.ParseWithOptions(ctx, text, delim, multi, o)
		return parseOut{stmt: stmt, parsed: parsed, rest: rest}, err
	})
	return p.finishText(c, q, rb, r, delim, assigned, out, err)
}

func (p lockParser) ParseOneWithOptions(ctx context.Context, q string, o ast.ParserOptions) (ast.Statement, int, error) {
	_, r, assigned := readableText(q)
	c, _ := ctx.(*sql.Context)
	out, r, err := readAgain(c, r, func(text string) (parseOut, error) {
		stmt, n, err := p.Parser.ParseOneWithOptions(ctx, text, o)
		return parseOut{stmt: stmt, n: n}, err
	})
	n, stmt := assigned.writtenPos(out.n), out.stmt
	if err == nil {
		stmt, err = p.finish(c, stmt, r, assigned)
	}
	return stmt, n, err
}

// parseOut is what one of the parser's entry points returned.
type parseOut struct {
	stmt         ast.Statement
	parsed, rest string
	n            int
}

// readAgain parses r and, when the parser refuses it, r once more with the
// modifiers it does not know blanked (modifiers.go). It returns the
// parse's result, the text it read (r when both attempts failed: the
// first attempt's result and error stand) and its error.
func readAgain(ctx *sql.Context, r string, parse func(text string) (parseOut, error)) (parseOut, string, error) {
	// DELETE's modifiers first: the parser reads DELETE QUICK FROM t as
	// the deletion of a table named QUICK.
	read := blankDeleteModifiers(r)
	out, err := parse(read)
	if err == nil {
		return out, read, nil
	}
	m, delayed := blankModifiers(read)
	if m == read {
		return out, r, err
	}
	again, err2 := parse(m)
	if err2 != nil {
		return out, r, err
	}
	warnDelayed(ctx, delayed)
	return again, m, nil
}

// finishText completes what Parse and ParseWithOptions read of q: the
// rest as the client wrote it (unblank), the statement (finish) and, for a
// routine, its text as written (writtenRoutine).
func (p lockParser) finishText(ctx *sql.Context, q, rb, r string, delim rune, assigned assignments, out parseOut, err error) (ast.Statement, string, string, error) {
	stmt := out.stmt
	parsed, rest := unblank(q, rb, delim, out.parsed, assigned.writtenRest(rb, r, out.rest))
	if err == nil {
		stmt, err = p.finish(ctx, stmt, r, assigned)
		parsed = assigned.writtenRoutine(stmt, rb, r, parsed)
	}
	return stmt, parsed, rest, err
}

// readableText returns q as the parser reads it: rb with the forms of the
// same length rewritten (versioned comments, locking clauses, WITH
// ROLLUP), and r, rb with its assignments in expressions rewritten
// (assignvar.go), which changes lengths.
func readableText(q string) (rb, r string, assigned assignments) {
	rb = rollupText(blankLockClauses(unwrapVersionComments(q)))
	r, assigned = assignmentText(rb)
	return rb, r, assigned
}

// finish completes a parsed statement, text as the parser read it, in one
// walk over it: the names of its columns (trimLeadingNoise, and the text
// of rewritten assignments; those of a procedure's body, nameBodyColumns),
// its named windows written into their OVER clauses (windowdefs.go), its
// WITH ROLLUP clauses taken (rollup.go); then, for a session's statement,
// it checks ONLY_FULL_GROUP_BY (groupby.go) and rewrites INSERT … SELECT
// with VALUES() (insertvalues.go), and last the rollups. On an error the
// statement is nil: the handler would run a statement it was given.
func (p lockParser) finish(ctx *sql.Context, stmt ast.Statement, text string, assigned assignments) (ast.Statement, error) {
	body := stmt
	if ex, ok := stmt.(*ast.Explain); ok {
		body = ex.Statement // not walked into by ast.Walk
	}
	var rollups []*ast.Select
	var hints []indexHint
	stray := false
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.AliasedTableExpr:
			hints = noteIndexHints(hints, n)
		case *ast.AliasedExpr:
			if n.InputExpression != "" {
				n.InputExpression = trimLeadingNoise(n.InputExpression)
				assigned.restoreName(n)
			}
		case *ast.Select:
			if len(n.Window) > 0 {
				inlineWindows(n)
			}
			if takeRollup(n) {
				rollups = append(rollups, n)
				stray = stray || len(n.GroupBy) == 0
			}
		case *ast.ColName:
			stray = stray || isRollupMarker(n)
		case *ast.IntervalExpr:
			restoreUnit(n)
		case *ast.FuncExpr:
			nthValueCall(n)
		}
		return true, nil
	}, body)
	if stray {
		return nil, errRollupSyntax()
	}
	nameBodyColumns(stmt, text, assigned)
	restoreRoutineSyntax(stmt)
	routineSyntax(stmt)
	if err := checkAggregatePlacement(body); err != nil {
		return nil, err
	}
	if ctx != nil {
		if err := checkFullGroupBy(ctx, stmt); err != nil {
			return nil, err
		}
		if s, ok := ctx.Session.(*Session); ok && s.mysql {
			noteDatabaseCharset(s, stmt)
			if err := timeLengths(ctx, stmt); err != nil { // timetype.go
				return nil, err
			}
			acceptCheckOption(stmt)
			qualifyFunctionCalls(stmt)                                       // storedfunc.go
			checks, err := rewriteViewDML(s, ctx.GetCurrentDatabase(), stmt) // viewdml.go
			if err != nil {
				return nil, err
			}
			s.setViewChecks(ctx.Query(), checks)
			rewriteInsertSelectValues(s, ctx.GetCurrentDatabase(), stmt)
			insertGeneratedColumns(s, ctx.GetCurrentDatabase(), stmt)
			s.hints = hints
		}
	}
	if len(rollups) > 0 {
		if ddl, ok := stmt.(*ast.DDL); ok && ddl.ViewSpec != nil {
			return nil, errRollupUnsupported("a view")
		}
	}
	for i := len(rollups) - 1; i >= 0; i-- {
		if err := rewriteRollup(rollups[i], p.Parser.ParseSimple); err != nil {
			return nil, err
		}
	}
	return stmt, nil
}

// trimLeadingNoise returns s without the commas, white space and comments
// it starts with.
func trimLeadingNoise(s string) string {
	for {
		t := strings.TrimLeft(s, ", \t\r\n")
		switch {
		case strings.HasPrefix(t, "/*") && !strings.HasPrefix(t, "/*!"):
			end := strings.Index(t[2:], "*/")
			if end < 0 {
				return t
			}
			t = t[2+end+2:]
		case strings.HasPrefix(t, "#"), strings.HasPrefix(t, "-- "):
			end := strings.IndexByte(t, '\n')
			if end < 0 {
				return t
			}
			t = t[end+1:]
		}
		if t == s {
			return s
		}
		s = t
	}
}

// unblank returns the rest of a multi-statement query as the client wrote
// it: the rest is run next, and its locking clauses are read from its text
// (lockClauseOf), so it must keep them. The statement parsed stays as the
// parser read it: go-mysql-server cuts the bodies of CREATE TRIGGER,
// EVENT and PROCEDURE out of that text by the parser's positions. r is q
// with clauses blanked, of the same length; rest is a part of r, unless an
// inner parser rewrote r otherwise.
func unblank(q, r string, delim rune, parsed, rest string) (string, string) {
	if q == r || rest == "" {
		return parsed, rest
	}
	lead := len(r) - len(strings.TrimLeftFunc(r, unicode.IsSpace))
	at := lead + len(sql.RemoveSpaceAndDelimiter(r, delim)) - len(rest)
	if at < lead || at+len(rest) > len(r) || r[at:at+len(rest)] != rest {
		return parsed, rest
	}
	return parsed, q[at:]
}

// lockClause returns the locking clause of the statement ctx runs.
func (s *Session) lockClause(ctx *sql.Context) lockClause {
	q := ctx.Query()
	if q != s.lockQuery {
		s.lockQuery, s.lockMode = q, lockClauseOf(q)
	}
	return s.lockMode
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
	return toSQLError(err)
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
