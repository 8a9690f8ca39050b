package sqlserver

// The server's parser: go-mysql-server's, wrapped by three layers that
// read the statement's text before it does, outermost first (newParser):
//
//	lockParser          locking clauses, versioned comments, WITH ROLLUP,
//	                    assignments in expressions, modifiers it refuses
//	                    (lockclause.go, modifiers.go, rollup.go,
//	                    assignvar.go), then one walk over the statement
//	                    parsed (finish)
//	systemSchemaParser  the mysql schema's log tables, CHECKSUM TABLE,
//	                    SHOW WARNINGS' forms (systemschema.go, checksum.go,
//	                    diagnostics.go)
//	clusterParser       Miraj's own statements (SHOW CLUSTER STATUS, …),
//	                    SHOW OPEN TABLES, CHECK/REPAIR/OPTIMIZE TABLE,
//	                    CREATE INDEX's options, ALTER TABLE … AFTER, and
//	                    RENAME TABLE's refusal in a cluster
//	go-mysql-server's   the MySQL grammar of vitess
//
// The server's engine uses it, and Install makes it go-mysql-server's
// global parser too (a procedure's definition is parsed by that at each
// CALL).

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/rules"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// newParser returns the server's parser over p, go-mysql-server's.
// cluster is the server's node (nil for go-mysql-server's global parser,
// which reads the definitions of stored routines: RENAME TABLE inside one
// is refused by Database.RenameTable).
func newParser(p sql.Parser, cluster *clusterRef) sql.Parser {
	return lockParser{systemSchemaParser{clusterParser{Parser: p, cluster: cluster}}}
}

// lockParser lets the parser read the locking clauses it does not know,
// and MySQL's versioned comments as MySQL does (sqltext.UnwrapVersionComments).
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
	n, stmt := assigned.WrittenPos(out.n), out.stmt
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
// routine, its text as written (WrittenRoutine).
func (p lockParser) finishText(ctx *sql.Context, q, rb, r string, delim rune, assigned rules.Assignments, out parseOut, err error) (ast.Statement, string, string, error) {
	stmt := out.stmt
	parsed, rest := unblank(q, rb, delim, out.parsed, assigned.WrittenRest(rb, r, out.rest))
	if err == nil {
		stmt, err = p.finish(ctx, stmt, r, assigned)
		parsed = assigned.WrittenRoutine(stmt, rb, r, parsed)
	}
	return stmt, parsed, rest, err
}

// readableText returns q as the parser reads it: rb with the forms of the
// same length rewritten (versioned comments, locking clauses, WITH
// ROLLUP), and r, rb with its assignments in expressions rewritten
// (assignvar.go), which changes lengths.
func readableText(q string) (rb, r string, assigned rules.Assignments) {
	rb = rules.RollupText(blankLockClauses(sqltext.UnwrapVersionComments(q)))
	r, assigned = rules.AssignmentText(rb)
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
func (p lockParser) finish(ctx *sql.Context, stmt ast.Statement, text string, assigned rules.Assignments) (ast.Statement, error) {
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
				assigned.RestoreName(n)
			}
		case *ast.Select:
			if len(n.Window) > 0 {
				rules.InlineWindows(n)
			}
			if rules.TakeRollup(n) {
				rollups = append(rollups, n)
				stray = stray || len(n.GroupBy) == 0
			}
		case *ast.ColName:
			stray = stray || rules.IsRollupMarker(n)
		case *ast.IntervalExpr:
			rules.RestoreUnit(n)
		case *ast.FuncExpr:
			rules.NthValueCall(n)
		}
		return true, nil
	}, body)
	if stray {
		return nil, rules.ErrRollupSyntax()
	}
	nameBodyColumns(stmt, text, assigned)
	rules.RestoreRoutineSyntax(stmt)
	routineSyntax(stmt)
	if err := rules.CheckAggregatePlacement(body); err != nil {
		return nil, err
	}
	if ctx != nil {
		if err := checkFullGroupBy(ctx, stmt); err != nil {
			return nil, err
		}
		if s, ok := ctx.Session.(*Session); ok && s.mysql {
			noteDatabaseCharset(s, stmt)
			if err := funcs.TimeLengths(ctx, stmt); err != nil { // timetype.go
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
			return nil, rules.ErrRollupUnsupported("a view")
		}
	}
	for i := len(rollups) - 1; i >= 0; i-- {
		if err := rules.RewriteRollup(rollups[i], p.Parser.ParseSimple); err != nil {
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

// clusterParser is the MySQL parser plus Miraj's own statements.
type clusterParser struct {
	sql.Parser
	cluster *clusterRef // the server's; nil in go-mysql-server's global parser
}

// tableMaintenance matches CHECK, REPAIR and OPTIMIZE TABLE of one table,
// which the parser does not know. In memory there is nothing to check,
// repair or compact: they report OK for a table that exists (and fail as a
// SELECT would for one that does not), on any node (§17.6).
var tableMaintenance = regexp.MustCompile("(?is)^\\s*(check|repair|optimize)\\s+(?:(?:no_write_to_binlog|local)\\s+)?table\\s+(`?[\\w$]+`?(?:\\.`?[\\w$]+`?)?)(?:\\s+(?:for\\s+upgrade|quick|fast|medium|extended|changed|use_frm))*\\s*;?\\s*$")

func (p clusterParser) rewrite(ctx context.Context, q string) string {
	if showClusterStatus.MatchString(q) {
		return "SELECT * FROM information_schema." + clusterStatusTable
	}
	if m := showOpenTables.FindStringSubmatch(q); m != nil {
		var inUse map[lockedTable]int
		if c, ok := ctx.(*sql.Context); ok {
			if s, ok := c.Session.(*Session); ok {
				inUse = s.tables.inUse()
			}
		}
		return openTablesQuery(m[1], m[2], m[3], inUse)
	}
	if m := tableMaintenance.FindStringSubmatch(q); m != nil {
		op, name := strings.ToLower(m[1]), m[2]
		label := fmt.Sprintf("CONCAT(DATABASE(), '.', '%s')", strings.Trim(name, "`"))
		if strings.Contains(name, ".") {
			label = "'" + strings.ReplaceAll(name, "`", "") + "'"
		}
		return fmt.Sprintf("SELECT %s AS `Table`, '%s' AS `Op`, 'status' AS `Msg_type`, 'OK' AS `Msg_text` FROM dual WHERE (SELECT COUNT(*) FROM %s) >= 0", label, op, name)
	}
	if alterTableRE.MatchString(q) {
		return quoteAfterColumn(q)
	}
	if m := createIndexOptionsRE.FindStringSubmatchIndex(q); m != nil {
		return q[:m[2]] + q[m[3]:]
	}
	return q
}

// createIndexOptionsRE matches CREATE INDEX with its ALGORITHM and LOCK
// clauses (group 1), which go-mysql-server's parser refuses there (it
// takes them in ALTER TABLE): they are dropped, as ALTER TABLE's are. The
// index is built in place, without blocking the table's reads and writes
// (a write that commits meanwhile and the index's build are checked
// against each other at commit, 1213 for the later).
var createIndexOptionsRE = regexp.MustCompile(`(?is)^\s*create\s+(?:unique\s+|fulltext\s+|spatial\s+)?index\b.*?\)((?:\s*(?:algorithm|lock)\s*=?\s*\w+)+)\s*;?\s*$`)

// alterTableRE matches ALTER TABLE.
var alterTableRE = regexp.MustCompile(`(?is)^\s*alter\s+table\s`)

// afterColumnRE matches AFTER and an unquoted column name.
var afterColumnRE = regexp.MustCompile(`(?i)^after(\s+)([a-z_][a-z0-9_$]*)`)

// quoteAfterColumn quotes the column named by ALTER TABLE's AFTER col
// (outside string literals and quoted names): go-mysql-server's parser
// refuses a column named like one of its keywords there (AFTER name,
// AFTER status), which MySQL accepts.
func quoteAfterColumn(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(q) && q[j] != c {
				if q[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(q))
			b.WriteString(q[i:j])
			i = j
		case (c == 'a' || c == 'A') && (i == 0 || !isIdentByte(q[i-1])):
			if m := afterColumnRE.FindStringSubmatch(q[i:]); m != nil && (i+len(m[0]) == len(q) || !isIdentByte(q[i+len(m[0])])) {
				b.WriteString(q[i:i+5] + m[1] + "`" + m[2] + "`")
				i += len(m[0])
				continue
			}
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// renameTable matches RENAME TABLE, refused in a cluster (§17.7) before
// go-mysql-server resolves its names (it asks for a current database even
// for qualified ones).
var renameTable = regexp.MustCompile(`(?is)^\s*rename\s+tables?\s`)

// refuse returns the error of a statement refused before parsing.
func (p clusterParser) refuse(q string) error {
	if p.cluster.node() != nil && renameTable.MatchString(q) {
		return errRenameInCluster()
	}
	return nil
}

// errRenameInCluster is §17.7's refusal of RENAME TABLE in a cluster.
func errRenameInCluster() error {
	return mysqlerr.New(mysqlerr.RenameInCluster)
}

func (p clusterParser) ParseSimple(q string) (ast.Statement, error) {
	if err := p.refuse(q); err != nil {
		return nil, err
	}
	return parseQuoting(p.rewrite(context.Background(), q), p.Parser.ParseSimple)
}

// parsed is what the parser's Parse and ParseWithOptions return.
type parsed struct {
	stmt             ast.Statement
	query, remainder string
}

func (p clusterParser) Parse(ctx *sql.Context, q string, multi bool) (ast.Statement, string, string, error) {
	if err := p.refuse(q); err != nil {
		return nil, "", "", err
	}
	r, err := parseQuoting(p.rewrite(ctx, q), func(q string) (parsed, error) {
		s, query, rest, err := p.Parser.Parse(ctx, q, multi)
		return parsed{s, query, rest}, err
	})
	return r.stmt, r.query, r.remainder, err
}

func (p clusterParser) ParseWithOptions(ctx context.Context, q string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	if err := p.refuse(q); err != nil {
		return nil, "", "", err
	}
	r, err := parseQuoting(p.rewrite(ctx, q), func(q string) (parsed, error) {
		s, query, rest, err := p.Parser.ParseWithOptions(ctx, q, delim, multi, o)
		return parsed{s, query, rest}, err
	})
	return r.stmt, r.query, r.remainder, err
}

func (p clusterParser) ParseOneWithOptions(ctx context.Context, q string, o ast.ParserOptions) (ast.Statement, int, error) {
	if err := p.refuse(q); err != nil {
		return nil, 0, err
	}
	type one struct {
		stmt ast.Statement
		n    int
	}
	r, err := parseQuoting(p.rewrite(ctx, q), func(q string) (one, error) {
		s, n, err := p.Parser.ParseOneWithOptions(ctx, q, o)
		return one{s, n}, err
	})
	return r.stmt, r.n, err
}

// systemSchemaParser applies systemSchemaRewrite, checksumRewrite
// (checksum.go) and diagnosticsRewrite (diagnostics.go) before parsing.
type systemSchemaParser struct{ sql.Parser }

func currentDatabase(ctx context.Context) string {
	if c, ok := ctx.(*sql.Context); ok && c.Session != nil {
		return c.GetCurrentDatabase()
	}
	return ""
}

func (p systemSchemaParser) rewrite(ctx context.Context, q string) string {
	if r, ok := systemSchemaRewrite(q, currentDatabase(ctx)); ok {
		return r
	}
	if r, ok := checksumRewrite(q); ok {
		return r
	}
	if r, ok := diagnosticsRewrite(q); ok {
		return r
	}
	if r, ok := showErrorsRewrite(ctx, q); ok {
		return r
	}
	return q
}

func (p systemSchemaParser) Parse(ctx *sql.Context, q string, multi bool) (ast.Statement, string, string, error) {
	return p.Parser.Parse(ctx, p.rewrite(ctx, q), multi)
}

func (p systemSchemaParser) ParseWithOptions(ctx context.Context, q string, delim rune, multi bool, o ast.ParserOptions) (ast.Statement, string, string, error) {
	return p.Parser.ParseWithOptions(ctx, p.rewrite(ctx, q), delim, multi, o)
}

func (p systemSchemaParser) ParseOneWithOptions(ctx context.Context, q string, o ast.ParserOptions) (ast.Statement, int, error) {
	return p.Parser.ParseOneWithOptions(ctx, p.rewrite(ctx, q), o)
}
