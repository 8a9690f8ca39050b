package sqlserver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// The mysql schema as dump tools see it. go-mysql-server serves the mysql
// database itself (users, grants, help tables) and knows no other table
// there; it cannot be extended from outside. mariadb-dump and mysqldump
// --all-databases read the structure of the query logs mysql.general_log
// and mysql.slow_log (MySQL keeps them, empty unless log_output=TABLE),
// and a dump of the mysql database, loaded again, drops and creates its
// tables. So:
//
//   - SHOW CREATE TABLE of general_log and slow_log gives MySQL 8's
//     definitions (Miraj keeps no such log: they are empty by definition);
//   - the dump's own check of a mysql table (SELECT engine, table_type FROM
//     information_schema.TABLES WHERE table_schema = DATABASE() AND
//     table_name = '…', in database mysql) answers for them;
//   - DROP TABLE and CREATE TABLE of the mysql schema's tables, and DROP
//     DATABASE mysql (--add-drop-database), which a dump's restore runs,
//     succeed and keep the tables as they are: the
//     accounts are the server's own (a dump carries no rows of them, since
//     information_schema does not list their columns), the logs stay empty;
//   - FLUSH LOCAL … and FLUSH NO_WRITE_TO_BINLOG … (--lock-all-tables) are
//     FLUSH …: there is no binary log to keep them out of.

// logTables are the MySQL 8 definitions of the query log tables.
var logTables = map[string]string{
	"general_log": "CREATE TABLE `general_log` (\n" +
		"  `event_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
		"  `user_host` mediumtext NOT NULL,\n" +
		"  `thread_id` bigint unsigned NOT NULL,\n" +
		"  `server_id` int unsigned NOT NULL,\n" +
		"  `command_type` varchar(64) NOT NULL,\n" +
		"  `argument` mediumblob NOT NULL\n" +
		") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='General log'",
	"slow_log": "CREATE TABLE `slow_log` (\n" +
		"  `start_time` timestamp(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),\n" +
		"  `user_host` mediumtext NOT NULL,\n" +
		"  `query_time` time(6) NOT NULL,\n" +
		"  `lock_time` time(6) NOT NULL,\n" +
		"  `rows_sent` int NOT NULL,\n" +
		"  `rows_examined` int NOT NULL,\n" +
		"  `db` varchar(512) NOT NULL,\n" +
		"  `last_insert_id` int NOT NULL,\n" +
		"  `insert_id` int NOT NULL,\n" +
		"  `server_id` int unsigned NOT NULL,\n" +
		"  `sql_text` mediumblob NOT NULL,\n" +
		"  `thread_id` bigint unsigned NOT NULL\n" +
		") ENGINE=CSV DEFAULT CHARSET=utf8mb3 COMMENT='Slow log'",
}

// grantTables are the tables go-mysql-server serves in the mysql schema
// (SHOW TABLES FROM mysql).
var grantTables = map[string]bool{
	"user": true, "db": true, "tables_priv": true, "procs_priv": true, "role_edges": true,
	"slave_master_info": true, "help_topic": true, "help_keyword": true, "help_category": true,
	"help_relation": true,
}

func isSystemTable(name string) bool {
	name = strings.ToLower(name)
	_, log := logTables[name]
	return log || grantTables[name]
}

// tableCheck matches mariadb-dump's check of a table's engine and type.
var tableCheck = regexp.MustCompile(`(?is)^\s*SELECT\s+engine\s*,\s*table_type\s+FROM\s+INFORMATION_SCHEMA\.TABLES\s+WHERE\s+table_schema\s*=\s*DATABASE\(\)\s+AND\s+table_name\s*=\s*'([^'\\]*)'\s*;?\s*$`)

// tableRef is a table named in a statement: database (empty: the current
// one) and name, unquoted.
type tableRef struct{ db, name string }

// tableRefs reads a comma-separated list of table names from w[i:]; it
// returns them and the index after the list.
func tableRefs(q string, w []sqltext.Word, i int) ([]tableRef, int) {
	var out []tableRef
	for i < len(w) && w[i].IsWord {
		r := tableRef{name: sqltext.UnquoteIdent(q[w[i].Start:w[i].End])}
		i++
		if i+1 < len(w) && w[i].Text == "." && w[i+1].IsWord {
			r = tableRef{db: r.name, name: sqltext.UnquoteIdent(q[w[i+1].Start:w[i+1].End])}
			i += 2
		}
		out = append(out, r)
		if i < len(w) && w[i].Text == "," {
			i++
			continue
		}
		break
	}
	return out, i
}

// systemSchemaRewrite returns the statement to run instead of the first
// statement of q (whose text ends at end), or false.
func systemSchemaRewrite(q, currentDB string) (string, bool) {
	switch sqltext.FirstWord(q) {
	case "FLUSH", "DROP", "SHOW", "CREATE":
	case "SELECT":
		if !strings.EqualFold(currentDB, "mysql") {
			return "", false
		}
	default:
		return "", false // none of the statements below: q is not scanned whole
	}
	w, end := sqltext.ScanStatement(q)
	if len(w) < 2 {
		return "", false
	}
	inMySQL := func(r tableRef) bool {
		if r.db != "" {
			return strings.EqualFold(r.db, "mysql")
		}
		return strings.EqualFold(currentDB, "mysql")
	}
	is := func(i int, s string) bool { return i < len(w) && w[i].IsWord && w[i].Text == s }
	kept := func(what string) (string, bool) {
		return fmt.Sprintf("SET @miraj_system_table = '%s'", what) + q[end:], true
	}
	switch {
	case is(0, "FLUSH") && (is(1, "LOCAL") || is(1, "NO_WRITE_TO_BINLOG")):
		// Not written to a binary log: Miraj keeps none, so the same
		// as FLUSH (mariadb-dump --lock-all-tables, --master-data).
		return q[:w[1].Start] + strings.Repeat(" ", w[1].End-w[1].Start) + q[w[1].End:], true
	case is(0, "DROP") && (is(1, "DATABASE") || is(1, "SCHEMA")):
		i := 2
		if is(i, "IF") && is(i+1, "EXISTS") {
			i += 2
		}
		if i+1 != len(w) || !w[i].IsWord || !strings.EqualFold(sqltext.UnquoteIdent(q[w[i].Start:w[i].End]), "mysql") {
			return "", false
		}
		return kept("kept")
	case is(0, "SHOW") && is(1, "CREATE") && is(2, "TABLE"):
		refs, next := tableRefs(q, w, 3)
		if len(refs) != 1 || next != len(w) || !inMySQL(refs[0]) {
			return "", false
		}
		name := strings.ToLower(refs[0].name)
		ddl, ok := logTables[name]
		if !ok {
			return "", false
		}
		return fmt.Sprintf("SELECT '%s' AS `Table`, '%s' AS `Create Table`", name, strings.ReplaceAll(ddl, "'", "''")) + q[end:], true
	case is(0, "DROP") && is(1, "TABLE"):
		i := 2
		if is(i, "IF") && is(i+1, "EXISTS") {
			i += 2
		}
		refs, next := tableRefs(q, w, i)
		if len(refs) == 0 || next != len(w) {
			return "", false
		}
		for _, r := range refs {
			if !inMySQL(r) || !isSystemTable(r.name) {
				return "", false
			}
		}
		return kept("kept")
	case is(0, "CREATE") && is(1, "TABLE"):
		i := 2
		if is(i, "IF") && is(i+1, "NOT") && is(i+2, "EXISTS") {
			i += 3
		}
		refs, next := tableRefs(q, w, i)
		if len(refs) != 1 || next >= len(w) || w[next].Text != "(" || !inMySQL(refs[0]) || !isSystemTable(refs[0].name) {
			return "", false
		}
		return kept("kept")
	case is(0, "SELECT") && strings.EqualFold(currentDB, "mysql"):
		m := tableCheck.FindStringSubmatch(q[:end])
		if m == nil || !isSystemTable(m[1]) {
			return "", false
		}
		engine := "InnoDB"
		if _, log := logTables[strings.ToLower(m[1])]; log {
			engine = "CSV"
		}
		return fmt.Sprintf("SELECT '%s' AS engine, 'BASE TABLE' AS table_type", engine) + q[end:], true
	}
	return "", false
}
