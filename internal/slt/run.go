package slt

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dolthub/sqllogictest/go/logictest/parser"
	"github.com/go-sql-driver/mysql"
)

// engine is the name records are run as (skipif mysql, onlyif mysql).
const engine = "mysql"

// database is the database each file runs in: dropped and created again
// before each file, so that no table or view of a file is seen by the next.
const database = "slt"

// maxValues bounds the values read of one result: the corpus's largest
// results are a few thousand values; a runaway join must not fill memory.
const maxValues = 1_000_000

// adminTimeout bounds the statements the runner itself sends (creating the
// database, killing a timed-out query).
const adminTimeout = 60 * time.Second

// File is one test file to run.
type File struct {
	Name string // as reported: the path relative to the corpus ("select1.test", "evidence/in1.test")
	Path string // where to read it
}

// Options say where and how to run.
type Options struct {
	Addr string // host:port
	User string
	Pass string
	// QueryTimeout bounds each record; past it the record fails as a
	// timeout and its connection is killed and replaced.
	QueryTimeout time.Duration
	// FileBudget, when not zero, bounds the time spent on one file: once
	// it is spent, the file's remaining records are not run (and counted
	// as not run, not as failures).
	FileBudget time.Duration
	// Progress, when set, gets one line per file as it ends.
	Progress io.Writer
}

// Run runs the files in turn, each in a fresh database, and returns what
// every record gave. An error is returned only when the server cannot be
// used at all (no connection, the database cannot be created) or ctx ends,
// with the report of what ran until then; a file that does not parse is
// reported as a failure of that file.
func Run(ctx context.Context, opts Options, files []File) (*Report, error) {
	if opts.QueryTimeout <= 0 {
		return &Report{}, errors.New("slt: QueryTimeout must be set")
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.Passwd = "tcp", opts.Addr, opts.User, opts.Pass
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return &Report{}, fmt.Errorf("slt: %w", err)
	}
	defer admin.Close()
	cfg.DBName = database
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return &Report{}, fmt.Errorf("slt: %w", err)
	}
	defer db.Close()
	r := &runner{opts: opts, admin: admin, db: db}
	rep := &Report{}
	start := time.Now()
	defer func() { rep.Elapsed = time.Since(start) }()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		fr, err := r.runFile(ctx, f)
		rep.Files = append(rep.Files, fr) // in part when err is set
		if err != nil {
			return rep, err
		}
		if opts.Progress != nil {
			fmt.Fprintln(opts.Progress, fr.summary())
		}
	}
	return rep, nil
}

type runner struct {
	opts  Options
	admin *sql.DB // no database selected: creates the file's database, kills timed-out queries
	db    *sql.DB // the file's database
	conn  *sql.Conn
	id    int64 // conn's CONNECTION_ID()
}

func (r *runner) runFile(ctx context.Context, f File) (fr FileResult, err error) {
	fr.Name = f.Name
	start := time.Now()
	defer func() { fr.Elapsed = time.Since(start) }()
	records, err := parser.ParseTestFile(f.Path)
	if err != nil {
		fr.Failures = append(fr.Failures, Failure{File: f.Name, Kind: KindParse, Err: err.Error()})
		fr.Failed++
		return fr, nil
	}
	if err := r.resetDatabase(ctx); err != nil {
		return fr, err
	}
	defer r.closeConn()
	for i, rec := range records {
		if rec.Type() == parser.Halt {
			if rec.ShouldExecuteForEngine(engine) {
				fr.Halted = true
				break
			}
			continue
		}
		if !rec.ShouldExecuteForEngine(engine) {
			fr.Skipped++
			continue
		}
		if r.opts.FileBudget > 0 && time.Since(start) > r.opts.FileBudget {
			fr.NotRun = countRunnable(records[i:])
			fr.BudgetLine = rec.LineNum()
			break
		}
		if err := ctx.Err(); err != nil {
			return fr, err
		}
		began := time.Now()
		fail, err := r.runRecord(ctx, f.Name, rec)
		if err != nil {
			return fr, err
		}
		fr.noteSlow(Timing{File: f.Name, Line: rec.LineNum(), Query: rec.Query(), Elapsed: time.Since(began)})
		if fail != nil {
			fr.Failed++
			fr.Failures = append(fr.Failures, *fail)
		} else {
			fr.OK++
			fr.Passed = append(fr.Passed, rec.LineNum())
		}
	}
	return fr, nil
}

// countRunnable counts the statements and queries of records that would
// run as MySQL, up to a halt that applies.
func countRunnable(records []*parser.Record) int {
	n := 0
	for _, rec := range records {
		if !rec.ShouldExecuteForEngine(engine) {
			continue
		}
		if rec.Type() == parser.Halt {
			break
		}
		n++
	}
	return n
}

func (r *runner) resetDatabase(ctx context.Context) error {
	r.closeConn()
	actx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	for _, q := range []string{"DROP DATABASE IF EXISTS " + database, "CREATE DATABASE " + database} {
		if _, err := r.admin.ExecContext(actx, q); err != nil {
			return fmt.Errorf("slt: %s: %w", q, err)
		}
	}
	return nil
}

// session returns the connection records run on, opening one (and reading
// its id, to kill it if a record times out) when there is none.
func (r *runner) session(ctx context.Context) (*sql.Conn, error) {
	if r.conn != nil {
		return r.conn, nil
	}
	actx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	c, err := r.db.Conn(actx)
	if err != nil {
		return nil, fmt.Errorf("slt: connect: %w", err)
	}
	if err := c.QueryRowContext(actx, "SELECT CONNECTION_ID()").Scan(&r.id); err != nil {
		c.Close()
		return nil, fmt.Errorf("slt: connection id: %w", err)
	}
	r.conn = c
	return c, nil
}

func (r *runner) closeConn() {
	if r.conn != nil {
		r.conn.Close()
		r.conn = nil
	}
}

// abandon kills the session after a timeout: go-sql-driver has closed its
// socket, and KILL makes sure the server stops the query too (as far as
// the server checks for it) instead of running on beside the next records.
func (r *runner) abandon(ctx context.Context) {
	id := r.id
	r.conn.Raw(func(any) error { return driver.ErrBadConn }) // mark it bad: not returned to the pool
	r.closeConn()
	actx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	r.admin.ExecContext(actx, fmt.Sprintf("KILL %d", id)) // "Unknown thread id" when it is gone already
}

// runRecord runs one statement or query and returns its failure, or nil
// when it gave what the record expects. The error is for a server that can
// no longer be reached.
func (r *runner) runRecord(ctx context.Context, file string, rec *parser.Record) (*Failure, error) {
	conn, err := r.session(ctx)
	if err != nil {
		return nil, err
	}
	fail := &Failure{File: file, Line: rec.LineNum(), Query: rec.Query()}
	qctx, cancel := context.WithTimeout(ctx, r.opts.QueryTimeout)
	defer cancel()
	start := time.Now()
	timedOut := func(err error) bool {
		if qctx.Err() == nil || ctx.Err() != nil {
			return false
		}
		fail.Kind, fail.Err = KindTimeout, fmt.Sprintf("no answer in %v (%v)", time.Since(start).Round(time.Millisecond), err)
		r.abandon(ctx)
		return true
	}
	if rec.Type() == parser.Statement {
		_, err := conn.ExecContext(qctx, rec.Query())
		switch {
		case err != nil && timedOut(err):
			return fail, nil
		case err != nil && badConn(err):
			r.closeConn()
			fail.Kind, fail.Err = KindError, err.Error()
			return fail, nil
		case rec.ExpectError() && err == nil:
			fail.Kind, fail.Err = KindNoError, "the statement succeeded; the record expects an error"
			return fail, nil
		case !rec.ExpectError() && err != nil:
			fail.Kind, fail.Err = KindError, err.Error()
			return fail, nil
		}
		return nil, nil
	}
	schema, values, err := query(qctx, conn, rec.Query())
	if err != nil {
		if timedOut(err) {
			return fail, nil
		}
		if badConn(err) {
			r.closeConn()
		}
		fail.Kind, fail.Err = KindError, err.Error()
		return fail, nil
	}
	return compare(rec, schema, values, fail), nil
}

// badConn reports whether err leaves the connection unusable (go-sql-driver
// has given it up): the next record then gets a new one.
func badConn(err error) bool {
	return errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn)
}

// query runs q and returns the schema letters of its columns and its
// values, formatted, row after row.
func query(ctx context.Context, conn *sql.Conn, q string) (string, []string, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return "", nil, err
	}
	var schema strings.Builder
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.DatabaseTypeName()
		schema.WriteByte(columnKind(names[i]))
	}
	raw := make([]sql.RawBytes, len(types))
	dest := make([]any, len(types))
	for i := range raw {
		dest[i] = &raw[i]
	}
	var values []string
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return "", nil, err
		}
		for i, v := range raw {
			values = append(values, formatValue(v, names[i]))
		}
		if len(values) > maxValues {
			return "", nil, fmt.Errorf("more than %d values in the result", maxValues)
		}
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	return schema.String(), values, nil
}

// compare checks a query's result against the record and returns fail
// filled in, or nil when they match.
func compare(rec *parser.Record, schema string, values []string, fail *Failure) *Failure {
	want := rec.Schema()
	empty := rec.NumResults() == 0 && len(values) == 0
	if !empty && !schemaCompatible(want, schema) {
		fail.Kind, fail.Err = KindSchema, fmt.Sprintf("columns %s, expected %s", schema, want)
		fail.Got = describe(values, 20)
		return fail
	}
	normalize(values, want)
	if err := sortValues(values, rec.SortString(), len(want)); err != nil {
		fail.Kind, fail.Err = KindWrong, err.Error()
		return fail
	}
	expected := rec.Result()
	if rec.IsHashResult() {
		if len(values) == rec.NumResults() && hashValues(values) == rec.HashResult() {
			return nil
		}
		fail.Kind = KindWrong
		fail.Expected = expected[0]
		fail.Got = fmt.Sprintf("%d values hashing to %s: %s", len(values), hashValues(values), describe(values, 20))
		return fail
	}
	if len(values) == len(expected) {
		same := true
		for i := range values {
			if values[i] != strings.TrimRight(expected[i], " \t\r") {
				same = false
				break
			}
		}
		if same {
			return nil
		}
	}
	fail.Kind = KindWrong
	fail.Expected = describe(expected, 40)
	fail.Got = describe(values, 40)
	return fail
}

// describe lists up to n values for the report.
func describe(values []string, n int) string {
	if len(values) <= n {
		return fmt.Sprintf("%d values: %s", len(values), strings.Join(values, " "))
	}
	return fmt.Sprintf("%d values: %s …", len(values), strings.Join(values[:n], " "))
}
