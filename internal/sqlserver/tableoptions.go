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
)

// What CREATE TABLE says that Miraj does not carry out: every table is
// held in memory and journaled whole, whatever ENGINE or PARTITION BY
// names. Both were dropped in silence; CREATE TABLE now warns, as MySQL
// warns when it substitutes an engine (1266), so that a dump of MyISAM or
// partitioned tables still loads and says what it became.

// warnTableOptions warns about the ENGINE and PARTITION BY of CREATE TABLE
// statement q that are not carried out.
func warnTableOptions(ctx *sql.Context, q string, table string) {
	stmt, _, err := sqlparser.ParseOne(ctx, q)
	if err != nil {
		return
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	if !ok || ddl.TableSpec == nil {
		return
	}
	for _, o := range ddl.TableSpec.TableOpts {
		if strings.EqualFold(o.Name, "engine") && !strings.EqualFold(strings.Trim(o.Value, "`'\""), "InnoDB") {
			ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: 1266, Message: fmt.Sprintf("Using storage engine InnoDB for table '%s'", table)})
		}
	}
	if ddl.TableSpec.PartitionOpt != nil {
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet,
			Message: fmt.Sprintf("PARTITION BY is not used: Miraj stores table '%s' whole", table)})
	}
}

// showErrorsRE matches SHOW ERRORS [LIMIT [offset,] count].
var showErrorsRE = regexp.MustCompile(`(?is)^\s*show\s+errors\s*(?:limit\s+(\d+)\s*(?:,\s*(\d+))?)?\s*;?\s*$`)

// showErrorsRewrite turns SHOW ERRORS, which go-mysql-server does not
// build (1105), into the SELECT of the conditions of level Error that SHOW
// WARNINGS lists, with MySQL's columns.
func showErrorsRewrite(ctx context.Context, q string) (string, bool) {
	if len(q) < 4 || !strings.EqualFold(firstWord(q), "SHOW") {
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
