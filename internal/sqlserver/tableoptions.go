package sqlserver

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// What CREATE TABLE says that Miraj does not carry out: every table is
// held in memory and journaled whole, whatever ENGINE or PARTITION BY
// names. Both were dropped in silence; CREATE TABLE now warns, as MySQL
// warns when it substitutes an engine (1266), so that a dump of MyISAM or
// partitioned tables still loads and says what it became.
//
// An ENGINE that names no storage engine of MySQL or MariaDB is refused as
// MySQL refuses it under NO_ENGINE_SUBSTITUTION (in the default
// sql_mode): 1286, Unknown storage engine. Without that mode MySQL
// substitutes its default engine with a warning, and so does Miraj.

// knownEngines are the storage engines of MySQL 8 and MariaDB, in lower
// case: a table of one of them is held as every table is, with 1266.
var knownEngines = map[string]bool{
	"innodb": true, "myisam": true, "memory": true, "heap": true, "csv": true, "archive": true,
	"blackhole": true, "mrg_myisam": true, "merge": true, "federated": true, "ndb": true,
	"ndbcluster": true, "example": true, "performance_schema": true, "aria": true,
	"rocksdb": true, "tokudb": true, "spider": true, "connect": true, "sequence": true,
	"s3": true, "columnstore": true, "oqgraph": true, "mroonga": true, "sphinx": true,
	"xtradb": true, "maria": true,
}

// checkTableOptions refuses an unknown ENGINE of CREATE TABLE statement q
// (1286, under NO_ENGINE_SUBSTITUTION) and a FLOAT(M,D) or DOUBLE(M,D)
// with D > M (1427), and warns about the ENGINE and PARTITION BY that are
// not carried out.
func checkTableOptions(ctx *sql.Context, q string, table string) error {
	stmt, _, err := sqlparser.ParseOne(ctx, q)
	if err != nil {
		return nil
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	if !ok || ddl.TableSpec == nil {
		return nil
	}
	for _, c := range ddl.TableSpec.Columns {
		if err := checkFloatScale(c); err != nil {
			return err
		}
	}
	for _, o := range ddl.TableSpec.TableOpts {
		if !strings.EqualFold(o.Name, "engine") {
			continue
		}
		engine := strings.Trim(o.Value, "`'\"")
		if strings.EqualFold(engine, "InnoDB") {
			continue
		}
		if !knownEngines[strings.ToLower(engine)] {
			if compat.SQLMode(ctx).ModeEnabled("NO_ENGINE_SUBSTITUTION") {
				return mysql.NewSQLError(1286, "42000", "Unknown storage engine '%s'", engine)
			}
			ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: 1286, Message: fmt.Sprintf("Unknown storage engine '%s'", engine)})
		}
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: 1266, Message: fmt.Sprintf("Using storage engine InnoDB for table '%s'", table)})
	}
	if ddl.TableSpec.PartitionOpt != nil {
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet,
			Message: fmt.Sprintf("PARTITION BY is not used: Miraj stores table '%s' whole", table)})
	}
	return nil
}

// showErrorsRE matches SHOW ERRORS [LIMIT [offset,] count].
var showErrorsRE = regexp.MustCompile(`(?is)^\s*show\s+errors\s*(?:limit\s+(\d+)\s*(?:,\s*(\d+))?)?\s*;?\s*$`)

// showErrorsRewrite turns SHOW ERRORS, which go-mysql-server does not
// build (1105), into the SELECT of the conditions of level Error that SHOW
// WARNINGS lists, with MySQL's columns.
func showErrorsRewrite(ctx context.Context, q string) (string, bool) {
	if len(q) < 4 || !strings.EqualFold(sqltext.FirstWord(q), "SHOW") {
		return "", false
	}
	m := showErrorsRE.FindStringSubmatch(q)
	if m == nil {
		return "", false
	}
	var rows []string
	if c, ok := ctx.(*sql.Context); ok && c.Session != nil {
		for _, w := range c.Session.Warnings() {
			if w.Level == "Error" {
				rows = append(rows, fmt.Sprintf("SELECT 'Error' AS `Level`, CAST(%d AS UNSIGNED) AS `Code`, %s AS `Message`", w.Code, sqlString(w.Message)))
			}
		}
	}
	if len(rows) == 0 {
		rows = []string{"SELECT 'Error' AS `Level`, CAST(0 AS UNSIGNED) AS `Code`, '' AS `Message` FROM dual WHERE FALSE"}
	}
	sel := strings.Join(rows, " UNION ALL ")
	if m[1] != "" {
		n, _ := strconv.Atoi(m[1])
		if m[2] != "" {
			count, _ := strconv.Atoi(m[2])
			sel = fmt.Sprintf("SELECT * FROM (%s) e LIMIT %d, %d", sel, n, count)
		} else {
			sel = fmt.Sprintf("SELECT * FROM (%s) e LIMIT %d", sel, n)
		}
	}
	return sel, true
}

// checkFloatScale is MySQL's 1427 for a FLOAT(M,D), DOUBLE(M,D) or
// REAL(M,D) column with more decimals than digits, which go-mysql-server
// took (a DECIMAL's it refuses already).
func checkFloatScale(c *sqlparser.ColumnDefinition) error {
	switch strings.ToLower(c.Type.Type) {
	case "float", "double", "real", "double precision", "float4", "float8":
	default:
		return nil
	}
	if c.Type.Length == nil || c.Type.Scale == nil {
		return nil
	}
	m, err1 := strconv.Atoi(string(c.Type.Length.Val))
	d, err2 := strconv.Atoi(string(c.Type.Scale.Val))
	if err1 != nil || err2 != nil || d <= m {
		return nil
	}
	return mysql.NewSQLError(1427, "42000", "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '%s')", c.Name.String())
}
