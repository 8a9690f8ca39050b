package sqlserver

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/miraj-db/miraj/internal/journal"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
	"github.com/miraj-db/miraj/internal/storage"
)

// Causal reads: read-your-writes on any node of a cluster.
//
// After each commit that wrote, the session's @@cluster_last_position is a
// position token covering every database the session has written: for
// each, the end of its commit in the journal. Journals are byte-identical
// on every node of a cluster, so a node that has applied a database up to
// that position has the write. The application carries the token to a
// secondary and either waits for it there explicitly:
//
//	SELECT CLUSTER_POSITION_WAIT('shop:5e1f03aa:91234', 5)   -- 0: reached, -1: timed out
//
// or lets every statement of its session wait for it:
//
//	SET SESSION cluster_read_after = 'shop:5e1f03aa:91234';
//	SELECT … ;   -- waits up to @@cluster_read_after_timeout ms, else error 3024
//
// Token layout: comma-separated, by database name,
//
//	<database, URL-escaped>:<first 8 hex digits of its BASE_ID>:<LSN>
//
// The base id tells a database from a later one of the same name (a DROP
// then a CREATE): a node whose database has another identity never
// satisfies the position (error 1210).

const (
	varLastPosition    = "cluster_last_position"
	varReadAfter       = "cluster_read_after"
	varReadAfterTimout = "cluster_read_after_timeout"
	positionWaitFunc   = "cluster_position_wait"
	// baseIDDigits is how much of a database's BASE_ID a token carries.
	baseIDDigits = 8
	// errQueryTimeout is MySQL's ER_QUERY_TIMEOUT (3024): a statement
	// that waited its limit out.
	errQueryTimeout = 3024
	// errWrongArguments is MySQL's ER_WRONG_ARGUMENTS (1210).
	errWrongArguments = 1210
	// maxPositionPoll bounds the pause between two looks at a database's
	// applied position while waiting for it.
	maxPositionPoll = 2 * time.Millisecond
)

// position is one database's part of a token.
type position struct {
	db   string // lower case
	base string // baseIDDigits hex digits
	lsn  journal.LSN
}

// causalState is a session's position: what it has written, by database.
// Used from the session's goroutine only.
type causalState struct {
	written map[string]position
}

// note records the commits of one transaction.
func (c *causalState) note(e *storage.Engine, commits []committed) {
	for _, cm := range commits {
		c.noteDB(e, cm.db, cm.lsn)
	}
}

// noteDB records a commit of database name ending at lsn.
func (c *causalState) noteDB(e *storage.Engine, name string, lsn journal.LSN) {
	db, ok := e.Database(name)
	if !ok {
		return
	}
	key := strings.ToLower(name)
	if c.written == nil {
		c.written = map[string]position{}
	}
	if p, ok := c.written[key]; ok && p.lsn >= lsn && p.base == baseOf(db) {
		return
	}
	c.written[key] = position{db: key, base: baseOf(db), lsn: lsn}
}

func baseOf(db *storage.DB) string {
	h := hex.EncodeToString(db.Latest().BaseID())
	return h[:min(len(h), baseIDDigits)]
}

// token is @@cluster_last_position: "" before the session wrote.
func (c *causalState) token() string {
	var parts []string
	for _, p := range c.written {
		parts = append(parts, url.QueryEscape(p.db)+":"+p.base+":"+strconv.FormatUint(uint64(p.lsn), 10))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// parseToken reads a position token.
func parseToken(s string) ([]position, error) {
	var out []position
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("%q is not database:base:lsn", part)
		}
		name, err := url.QueryUnescape(f[0])
		if err != nil || name == "" {
			return nil, fmt.Errorf("%q: bad database name", part)
		}
		lsn, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: bad position", part)
		}
		out = append(out, position{db: strings.ToLower(name), base: strings.ToLower(f[1]), lsn: journal.LSN(lsn)})
	}
	return out, nil
}

func errBadToken(err error) error {
	return mysql.NewSQLError(errWrongArguments, "HY000", "Incorrect arguments to %s: %v", strings.ToUpper(positionWaitFunc), err)
}

// waitPositions waits until this node has applied every position of ps,
// or timeout passes (false), or ctx ends (KILL QUERY: its error).
func waitPositions(ctx context.Context, e *storage.Engine, ps []position, timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	pause := 50 * time.Microsecond
	for _, p := range ps {
		for {
			db, ok := e.Database(p.db)
			if ok {
				if b := baseOf(db); p.base != "" && !strings.HasPrefix(b, p.base) {
					return false, mysql.NewSQLError(errWrongArguments, "HY000",
						"Incorrect arguments to %s: database %s has identity %s here, the position is of %s", strings.ToUpper(positionWaitFunc), p.db, b, p.base)
				}
				if db.LSN() >= p.lsn {
					break
				}
			}
			if !time.Now().Before(deadline) {
				return false, nil
			}
			t := time.NewTimer(min(pause, time.Until(deadline)))
			select {
			case <-ctx.Done():
				t.Stop()
				return false, ctx.Err()
			case <-t.C:
			}
			pause = min(2*pause, maxPositionPoll)
		}
	}
	return true, nil
}

// positionWaitFunction is CLUSTER_POSITION_WAIT(token, timeout): 0 once
// this node has applied the token's positions, -1 if timeout seconds
// passed first (MASTER_GTID_WAIT's answers); NULL for a NULL token.
func positionWaitFunction(e *storage.Engine) sql.Function {
	return sql.Function2{Name: positionWaitFunc, Fn: func(tok, timeout sql.Expression) sql.Expression {
		return &funcs.Scalar{Name: strings.ToUpper(positionWaitFunc), Args: []sql.Expression{tok, timeout}, Volatile: true,
			TypeOf: func([]sql.Expression) sql.Type { return types.Int64 },
			EvalArgs: func(ctx *sql.Context, _ []sql.Expression, vals []any) (any, error) {
				ps, err := parseToken(fmt.Sprint(vals[0]))
				if err != nil {
					return nil, errBadToken(err)
				}
				secs, _, err := types.Float64.Convert(ctx, vals[1])
				if err != nil {
					return nil, errBadToken(fmt.Errorf("timeout %v", vals[1]))
				}
				ok, err := waitPositions(ctx, e, ps, time.Duration(secs.(float64)*float64(time.Second)))
				if err != nil {
					return nil, err
				}
				if !ok {
					return int64(-1), nil
				}
				return int64(0), nil
			}}
	}}
}

// causalVariables are the session's token (read only) and what its
// statements wait for.
func causalVariables() []sql.SystemVariable {
	return []sql.SystemVariable{
		&sql.MysqlSystemVariable{Name: varLastPosition, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Session),
			Type: types.NewSystemStringType(varLastPosition), Default: ""},
		&sql.MysqlSystemVariable{Name: varReadAfter, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Session), Dynamic: true,
			Type: types.NewSystemStringType(varReadAfter), Default: ""},
		&sql.MysqlSystemVariable{Name: varReadAfterTimout, Scope: sql.GetMysqlScope(sql.SystemVariableScope_Both), Dynamic: true,
			Type: types.NewSystemIntType(varReadAfterTimout, 0, 1<<31-1, false), Default: int64(10_000)},
	}
}

// readAfter makes a statement of session s wait until this node has
// applied @@cluster_read_after, if set; SET statements do not wait (a
// session can always change the setting).
func (s *Session) readAfter(ctx context.Context, q string) error {
	v, err := s.BaseSession.GetSessionVariable(nil, varReadAfter)
	if err != nil {
		return nil
	}
	tok, _ := v.(string)
	if tok == "" {
		return nil
	}
	if w := (sqltext.NewReader(q)); sqltext.IsKeyword(w.Next(), "SET") {
		return nil
	}
	ps, err := parseToken(tok)
	if err != nil {
		return mysql.NewSQLError(errWrongArguments, "HY000", "Incorrect arguments to @@%s: %v", varReadAfter, err)
	}
	var ms int64 = 10_000
	if t, err := s.BaseSession.GetSessionVariable(nil, varReadAfterTimout); err == nil {
		ms = toInt64(t)
	}
	ok, err := waitPositions(ctx, s.engine, ps, time.Duration(ms)*time.Millisecond)
	if err != nil {
		return err
	}
	if !ok {
		return mysql.NewSQLError(errQueryTimeout, "HY000",
			"Query execution was interrupted: this node had not applied @@%s (%s) within @@%s (%d ms)", varReadAfter, tok, varReadAfterTimout, ms)
	}
	return nil
}
