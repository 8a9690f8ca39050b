package sqlserver

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/storage"
)

// Index hints. go-mysql-server reads USE, FORCE and IGNORE INDEX (…) and
// drops them: a hint steers the plan, never the answer. MySQL refuses a
// hint that names an index the table does not have (1176), so that a
// misspelt hint is not silently without effect; so does Miraj. The parser
// notes the hints of the statement it read (noteIndexHints, from finish)
// on the session, and the analysis of that statement checks them
// (checkIndexHints, from castRule). A command's start forgets what an
// earlier one left (beginStatement).

// indexHint is an index a statement's hint names on a table (as, the
// name the statement gives the table: its alias, or its name).
type indexHint struct {
	db, table, as, index string
}

// erKeyDoesNotExist is MySQL's ER_KEY_DOES_NOT_EXITS.
const erKeyDoesNotExist = 1176

// noteIndexHints returns hints with the indexes t's hints name added.
func noteIndexHints(hints []indexHint, t *ast.AliasedTableExpr) []indexHint {
	name, ok := t.Expr.(ast.TableName)
	if !ok || t.Hints == nil {
		return hints
	}
	for _, ix := range t.Hints.Indexes {
		if n := ix.String(); n != "" && !strings.EqualFold(n, "PRIMARY") {
			as := t.As.String()
			if as == "" {
				as = name.Name.String()
			}
			hints = append(hints, indexHint{db: name.DbQualifier.String(), table: name.Name.String(), as: as, index: n})
		}
	}
	return hints
}

// checkIndexHints refuses, with 1176, a hint of the statement being
// analyzed that names an index its table does not have. A table that does
// not exist is left to the analysis (1146).
func (s *Session) checkIndexHints(ctx *sql.Context) error {
	hints := s.hints
	s.hints = nil
	for _, h := range hints {
		db := h.db
		if db == "" {
			db = ctx.GetCurrentDatabase()
		}
		def, ok := s.tableDef(db, h.table)
		if !ok {
			continue
		}
		found := false
		for _, ix := range def.Indexes {
			if strings.EqualFold(ix.Name, h.index) {
				found = true
				break
			}
		}
		if !found {
			return mysql.NewSQLError(erKeyDoesNotExist, "42000", "Key '%s' doesn't exist in table '%s'", h.index, h.as)
		}
	}
	return nil
}

// tableDef returns the definition of table name of database db as the
// session sees it: its temporary table of that name, else the committed
// one.
func (s *Session) tableDef(db, name string) (*storage.TableDef, bool) {
	if tdb := s.tempDB(db, false); tdb != nil {
		if t, ok := tdb.Latest().Table(name); ok {
			return t.Def(), true
		}
	}
	if s.engine == nil {
		return nil, false
	}
	d, ok := s.engine.Database(db)
	if !ok {
		return nil, false
	}
	t, ok := d.Latest().Table(name)
	if !ok {
		return nil, false
	}
	return t.Def(), true
}
