package sqlserver

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/mysqlerr"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
	"github.com/miraj-db/miraj/internal/sqlserver/tabledef"
)

// msgContext is what a message needs beyond go-mysql-server's text: the
// session's database (MySQL names a missing table with it), the statement
// (a syntax error quotes it from the error on), and the unique key of the
// session's last duplicate entry (go-mysql-server's text has the values
// only).
type msgContext struct {
	db       string
	query    string
	dupIndex string
	// fkClause gives MySQL's text of a foreign key of a table of db
	// ("FOREIGN KEY (`p_id`) REFERENCES `p` (`id`)"), "" when unknown.
	fkClause func(table, name string) string
	// columns gives the number of columns of a table, 0 when unknown.
	columns func(db, table string) int
}

// valueCountText is MySQL's 1136, which names the first row whose values
// do not match the columns the statement lists, or the table's.
func valueCountText(_ []string, c msgContext) string {
	return fmt.Sprintf("Column count doesn't match value count at row %d", c.mismatchedRow())
}

// mismatchedRow is the number of the first row of the statement's INSERT
// … VALUES whose values do not match its columns; 1 when it cannot tell.
func (c msgContext) mismatchedRow() int {
	stmt, err := sqlparser.Parse(c.query)
	if err != nil {
		return 1
	}
	ins, ok := stmt.(*sqlparser.Insert)
	if !ok {
		return 1
	}
	var rows sqlparser.Values
	switch r := ins.Rows.(type) {
	case sqlparser.Values:
		rows = r
	case *sqlparser.AliasedValues:
		rows = r.Values
	}
	want := len(ins.Columns)
	if want == 0 && c.columns != nil {
		db := ins.Table.DbQualifier.String()
		if db == "" {
			db = c.db
		}
		want = c.columns(db, ins.Table.Name.String())
	}
	for i, row := range rows {
		if want > 0 && len(row) != want {
			return i + 1
		}
	}
	return 1
}

// procedureRE finds the procedure a statement names (CALL p, SHOW CREATE
// PROCEDURE d.p, DROP PROCEDURE …).
var procedureRE = regexp.MustCompile("(?i)\\b(?:procedure|call)\\s+(?:if\\s+exists\\s+)?((?:`[^`]+`|[\\w$]+)(?:\\s*\\.\\s*(?:`[^`]+`|[\\w$]+))?)")

// procedureName is procedure name with its database, as MySQL's 1305
// names it: the one the statement gives, the current one otherwise.
func (c msgContext) procedureName(name string) string {
	if m := procedureRE.FindStringSubmatch(c.query); m != nil {
		parts := strings.Split(m[1], ".")
		for i := range parts {
			parts[i] = unquoteIdent(strings.TrimSpace(parts[i]))
		}
		if len(parts) == 2 {
			return parts[0] + "." + parts[1]
		}
		return qualified(c.db, parts[0])
	}
	return qualified(c.db, name)
}

// tableName is table name as the statement writes it, with its database:
// the qualifier it has there (SELECT … FROM d.t), the current database
// otherwise (go-mysql-server's messages name the table alone, in lower
// case).
func (c msgContext) tableName(name string) string {
	db := c.db
	if c.query != "" {
		if stmt, _, err := sqlparser.ParseOne(context.Background(), c.query); err == nil {
			found := false
			sqlparser.WalkAuthNodes(stmt, func(_ sqlparser.AuthNode, ai sqlparser.AuthInformation) {
				if found || ai.TargetType != sqlparser.AuthTargetType_SingleTableIdentifier && ai.TargetType != sqlparser.AuthTargetType_MultipleTableIdentifiers {
					return
				}
				for i := 0; i+1 < len(ai.TargetNames); i += 2 {
					if strings.EqualFold(ai.TargetNames[i+1], name) {
						name, found = ai.TargetNames[i+1], true
						if ai.TargetNames[i] != "" {
							db = ai.TargetNames[i]
						}
						return
					}
				}
			})
		}
	}
	return qualified(db, name)
}

// truncateFKText is the definition 1701 gives of the foreign key name of
// table: its columns and the parent's, the parent named with its
// database, without its ON clauses ("" when it cannot be read).
func truncateFKText(c msgContext, table, name string) string {
	if c.fkClause == nil {
		return ""
	}
	def := c.fkClause(table, name)
	i := strings.Index(def, " REFERENCES ")
	if i < 0 {
		return ""
	}
	ref := def[i+len(" REFERENCES "):]
	open := strings.Index(ref, " (")
	end := strings.Index(ref, ")")
	if open < 0 || end < open {
		return ""
	}
	parent := ref[:open]
	if !strings.Contains(parent, "`.`") {
		parent = "`" + c.db + "`." + parent
	}
	return " " + def[:i] + " REFERENCES " + parent + ref[open:end+1]
}

// fkText is the constraint part of 1451 and 1452: the child table, and the
// constraint with its definition when it can be read.
func (c msgContext) fkText(table, name string) string {
	def := ""
	if c.fkClause != nil {
		if d := c.fkClause(table, name); d != "" {
			def = " " + d
		}
	}
	return fmt.Sprintf("(`%s`.`%s`, CONSTRAINT `%s`%s)", c.db, table, name, def)
}

// mysqlMessage is one row of the table of MySQL's errors: go-mysql-server's
// text of an error (as it reaches the SQL boundary, its structure gone) and
// MySQL's code, SQLSTATE and text for it. The texts are MySQL 8's
// (errmsg-utf8.txt); where MariaDB words one otherwise, the difference is
// listed in test/diff/intended.txt.
type mysqlMessage struct {
	code  int
	state string
	re    *regexp.Regexp
	// text makes MySQL's text from the submatches of re; nil keeps
	// go-mysql-server's text (only the code and SQLSTATE were wrong).
	text func(m []string, c msgContext) string
}

// mysqlMessages is the table. The first row whose expression matches wins.
var mysqlMessages = []mysqlMessage{
	{1305, "42000", regexp.MustCompile(`^function: '(.*)' not found$`),
		func(m []string, c msgContext) string { return "FUNCTION " + qualified(c.db, m[1]) + " does not exist" }},
	{1305, "42000", regexp.MustCompile(`^stored procedure "(.*)" does not exist$`),
		func(m []string, c msgContext) string { return "PROCEDURE " + c.procedureName(m[1]) + " does not exist" }},
	{1214, "HY000", regexp.MustCompile(`^table does not support FULLTEXT indexes$`),
		func([]string, msgContext) string { return "The used table type doesn't support FULLTEXT indexes" }},
	{1290, "HY000", regexp.MustCompile(`The MySQL server is running with the --secure-file-priv option so it cannot execute this statement$`),
		func([]string, msgContext) string {
			return "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement"
		}},
	{3105, "HY000", regexp.MustCompile(`^The value specified for generated column "(.*)" in table "(.*)" is not allowed\.$`),
		func(m []string, _ msgContext) string {
			return fmt.Sprintf("The value specified for generated column '%s' in table '%s' is not allowed.", m[1], m[2])
		}},
	{1046, "3D000", regexp.MustCompile(`^no database selected$`),
		func([]string, msgContext) string { return "No database selected" }},
	{1792, "25006", regexp.MustCompile(`^cannot execute statement in a READ ONLY transaction$`),
		func([]string, msgContext) string { return "Cannot execute statement in a READ ONLY transaction." }},
	{1062, "23000", regexp.MustCompile(`^duplicate (?:unique|primary) key given: \[(.*)\]$`), dupEntryText},
	{1048, "23000", regexp.MustCompile(`^column name '(.*)' is non-nullable but attempted to set a value of null$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Column '%s' cannot be null", m[1]) }},
	{1146, "42S02", regexp.MustCompile(`^table not found: (.*)$`),
		func(m []string, c msgContext) string {
			return fmt.Sprintf("Table '%s' doesn't exist", c.tableName(m[1]))
		}},
	{1136, "21S01", regexp.MustCompile(`^number of values does not match number of columns provided$`), valueCountText},
	{1068, "42000", regexp.MustCompile(`^error: Multiple primary keys defined$`),
		func([]string, msgContext) string { return "Multiple primary key defined" }},
	{1075, "42000", regexp.MustCompile(`^there can be only one auto_increment column and it must be defined as a key$`),
		func([]string, msgContext) string {
			return "Incorrect table definition; there can be only one auto column and it must be defined as a key"
		}},
	{1061, "42000", regexp.MustCompile(`^an index with id "(.*)" has already been registered$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Duplicate key name '%s'", m[1]) }},
	{1051, "42S02", regexp.MustCompile(`^the view (.*) does not exist$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Unknown table '%s'", m[1]) }},
	{1193, "HY000", regexp.MustCompile(`^Unknown system variable '.*'$`), nil},
	{1115, "42000", regexp.MustCompile(`^Unknown character set: (.*)$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Unknown character set: '%s'", m[1]) }},
	{1273, "HY000", regexp.MustCompile(`^Unknown collation: (.*)$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Unknown collation: '%s'", m[1]) }},
	{1396, "HY000", regexp.MustCompile(`^Operation (?:CREATE|DROP|ALTER|RENAME) USER failed for '.*'@'.*'$`), nil},
	{1050, "42S01", regexp.MustCompile(`^table with name CreateView\((.*)\)`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Table '%s' already exists", m[1]) }},
	{1170, "42000", regexp.MustCompile(`^blob/text column '(.*)' used in key specification without a key length$`),
		func(m []string, _ msgContext) string {
			return fmt.Sprintf("BLOB/TEXT column '%s' used in key specification without a key length", m[1])
		}},
	{1222, "21000", regexp.MustCompile(`^cannot union two queries whose schemas are different lengths`),
		func([]string, msgContext) string {
			return "The used SELECT statements have a different number of columns"
		}},
	// go-mysql-server's texts lack the column MySQL's texts name: the code
	// and SQLSTATE are MySQL's.
	{1074, "42000", regexp.MustCompile(`^length is \d+ but max allowed is \d+$`), nil},
	{1426, "42000", regexp.MustCompile(`^Too big precision \d+ specified\. Maximum is \d+\.$`), nil},
	{1241, "21000", regexp.MustCompile(`^operand should have (\d+) columns, but has \d+$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Operand should contain %s column(s)", m[1]) }},
	{1050, "42S01", regexp.MustCompile(`^table with name (.*) already exists$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Table '%s' already exists", m[1]) }},
	{1049, "42000", regexp.MustCompile(`^database not found: (.*)$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Unknown database '%s'", m[1]) }},
	{1007, "HY000", regexp.MustCompile(`^(?i:can't create database) (.*); database exists\s*$`),
		func(m []string, _ msgContext) string {
			return fmt.Sprintf("Can't create database '%s'; database exists", m[1])
		}},
	// go-mysql-server does not say in which clause the column is missing;
	// MySQL names the clause ('where clause', 'on clause', …), which
	// clauseOf finds in the statement.
	{1054, "42S22", regexp.MustCompile(`^column "(.*)" could not be found in any table in scope$`),
		func(m []string, c msgContext) string {
			return fmt.Sprintf("Unknown column '%s' in '%s'", m[1], clauseOf(c.query, m[1]))
		}},
	{1054, "42S22", regexp.MustCompile(`^Unknown column '(.*)' in '.*'$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Unknown column '%s' in 'field list'", m[1]) }},
	{1054, "42S22", regexp.MustCompile(`^table "(.*)" does not have column "(.*)"$`),
		func(m []string, c msgContext) string {
			name := m[2]
			if strings.Contains(c.query, m[1]+"."+m[2]) {
				name = m[1] + "." + m[2]
			}
			return fmt.Sprintf("Unknown column '%s' in '%s'", name, clauseOf(c.query, m[2]))
		}},
	{1052, "23000", regexp.MustCompile(`^ambiguous column name "(.*)", it's present in all these tables: .*$`),
		func(m []string, _ msgContext) string {
			return fmt.Sprintf("Column '%s' in field list is ambiguous", m[1])
		}},
	{1060, "42S21", regexp.MustCompile("^duplicate column name: `(.*)`$"),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Duplicate column name '%s'", m[1]) }},
	{1060, "42S21", regexp.MustCompile(`^Column "(.*)" already exists`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Duplicate column name '%s'", m[1]) }},
	{1064, "42000", regexp.MustCompile(`^syntax error at position (\d+) near '(.*)'$`), syntaxErrorText},
	{1072, "42000", regexp.MustCompile(`^key column '(.*)' doesn't exist in table$`),
		func(m []string, _ msgContext) string {
			return fmt.Sprintf("Key column '%s' doesn't exist in table", m[1])
		}},
	{1091, "42000", regexp.MustCompile(`^error: can't drop '(.*)'; check that column/key exists$`),
		func(m []string, _ msgContext) string {
			return fmt.Sprintf("Can't DROP '%s'; check that column/key exists", m[1])
		}},
	{1242, "21000", regexp.MustCompile(`^the subquery returned more than 1 row$`),
		func([]string, msgContext) string { return "Subquery returns more than 1 row" }},
	{1305, "42000", regexp.MustCompile(`^SAVEPOINT (.*) does not exist$`), nil},
	{1317, "70100", regexp.MustCompile(`^context canceled$`),
		func([]string, msgContext) string { return "Query execution was interrupted" }},
	{1055, "42000", regexp.MustCompile(`^expression '.*' doesn't appear in the group by expressions$`), nil},
	{1364, "HY000", regexp.MustCompile(`^Field '.*' doesn't have a default value`), nil},
	// Without the column and row (an UPDATE's): insertErrors gives both
	// for an INSERT.
	{1264, "22003", regexp.MustCompile(`out of range for`), nil},
	{1406, "22001", regexp.MustCompile(`^string '.*' is too large for column '(.*)'$`),
		func(m []string, _ msgContext) string {
			return fmt.Sprintf("Data too long for column '%s' at row 1", m[1])
		}},
	{1366, "HY000", regexp.MustCompile(`^error: '.*' is not a valid value for '.*'$`), nil},
	{1292, "22007", regexp.MustCompile(`^Incorrect (?:datetime|date|time) value: `), nil},
	{1229, "HY000", regexp.MustCompile(`^Variable '.*' is a GLOBAL variable and should be set with SET GLOBAL$`), nil},
	{1238, "HY000", regexp.MustCompile(`^Variable '.*' is a read only variable$`), nil},
	{1701, "42000", regexp.MustCompile(`^cannot truncate table (.*) as it is referenced in foreign key (.*) on table (.*)$`),
		func(m []string, c msgContext) string {
			return fmt.Sprintf("Cannot truncate a table referenced in a foreign key constraint (`%s`.`%s`, CONSTRAINT `%s`%s)", c.db, m[3], m[2], truncateFKText(c, m[3], m[2]))
		}},
	{1359, "HY000", regexp.MustCompile(`^trigger "(.*)" already exists$`),
		func([]string, msgContext) string { return "Trigger already exists" }},
	{1243, "HY000", regexp.MustCompile(`^Unknown prepared statement handler \((.*)\) given to (.*)$`),
		func(m []string, c msgContext) string {
			to := "EXECUTE"
			if w := sqltext.Scan(c.query, true); len(w) > 0 && (w[0].Text == "DEALLOCATE" || w[0].Text == "DROP") {
				to = "DEALLOCATE PREPARE"
			}
			return fmt.Sprintf("Unknown prepared statement handler (%s) given to %s", m[1], to)
		}},
	{1172, "42000", regexp.MustCompile(`^Result consisted of more than one row$`), nil},
	{1369, "HY000", regexp.MustCompile(`^Check constraint "` + viewCheckPrefix + `(.*)" violated$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("CHECK OPTION failed '%s'", m[1]) }},
	{3819, "HY000", regexp.MustCompile(`^Check constraint "(.*)" violated$`),
		func(m []string, _ msgContext) string { return fmt.Sprintf("Check constraint '%s' is violated.", m[1]) }},
	{1452, "23000", regexp.MustCompile("^cannot add or update a child row - Foreign key violation on fk: `(.*)`, table: `(.*)`, referenced table: `(.*)`, key: `.*`$"),
		func(m []string, c msgContext) string {
			return "Cannot add or update a child row: a foreign key constraint fails " + c.fkText(m[2], m[1])
		}},
	{1451, "23000", regexp.MustCompile("^cannot delete or update a parent row - Foreign key violation on fk: `(.*)`, table: `(.*)`, referenced table: `(.*)`, key: `.*`$"),
		func(m []string, c msgContext) string {
			return "Cannot delete or update a parent row: a foreign key constraint fails " + c.fkText(m[2], m[1])
		}},
	// MySQL's own text names the parser's complaint and the position; the
	// code and SQLSTATE let clients tell it apart.
	{3140, "22032", regexp.MustCompile(`^Invalid JSON text`), nil},
	// A database the account has no privilege in, refused when it is
	// looked up (USE, a connection's default database): go-mysql-server
	// words it as MySQL does.
	{1044, "42000", regexp.MustCompile(`^Access denied for user '.*'@'.*' to database '.*'$`), nil},
}

// mysqlError gives MySQL's code, SQLSTATE and text for an error that
// go-mysql-server sent: from the table when its text is known, else with
// the SQLSTATE of its code.
func mysqlError(se *mysql.SQLError, c msgContext) *mysql.SQLError {
	if se.Num == mysql.ERUnknownError || se.Num < 3000 || se.Num == 3819 {
		for _, row := range pickedMessages {
			if m := row.re.FindStringSubmatch(se.Message); m != nil && (se.Num == mysql.ERUnknownError || se.Num == row.from) {
				if code, state, text, ok := row.pick(m, c); ok {
					return mysql.NewSQLError(code, state, "%s", text)
				}
			}
		}
		for _, row := range mysqlMessages {
			m := row.re.FindStringSubmatch(se.Message)
			if m == nil || (se.Num != row.code && se.Num != mysql.ERUnknownError && !sameFamily(se.Num, row.code)) {
				continue
			}
			text := se.Message
			if row.text != nil {
				text = row.text(m, c)
			}
			return mysql.NewSQLError(row.code, row.state, "%s", text)
		}
	}
	if st, ok := mysqlerr.State(se.Num); ok && st != se.State {
		return mysql.NewSQLError(se.Num, st, "%s", se.Message)
	}
	return se
}

// sameFamily says whether go-mysql-server's code got may be sent as want:
// a missing table is 1146 to go-mysql-server, 1051 to DROP TABLE (which
// the caller decides), a parent-row violation 1451 or 1217.
func sameFamily(got, want int) bool {
	switch want {
	case 1451:
		return got == 1217
	case 1452:
		return got == 1216
	}
	return false
}

// mysqlWarningText is MySQL's text of a warning go-mysql-server wrote
// with its own (INSERT IGNORE's, DROP TABLE IF EXISTS's).
func mysqlWarningText(code int, msg string, c msgContext) string {
	if code == 1051 {
		if m := unknownTableRE.FindStringSubmatch(msg); m != nil {
			return fmt.Sprintf("Unknown table '%s'", qualified(c.db, m[1]))
		}
		return msg
	}
	for _, w := range warningTexts {
		if m := w.re.FindStringSubmatch(msg); m != nil && code == w.code {
			return w.text(m)
		}
	}
	return mysqlError(mysql.NewSQLError(code, "", "%s", msg), c).Message
}

// warningTexts are MySQL's texts of warnings that go-mysql-server words
// its own way.
var warningTexts = []struct {
	code int
	re   *regexp.Regexp
	text func(m []string) string
}{
	{1292, regexp.MustCompile(`^Truncated incorrect (double|decimal|integer) value: (.*)$`),
		func(m []string) string { return "Truncated incorrect " + strings.ToUpper(m[1]) + " value: " + m[2] }},
	{1292, regexp.MustCompile(`^Incorrect date(?:time)? value: ([^']*)$`),
		func(m []string) string { return fmt.Sprintf("Incorrect datetime value: '%s'", m[1]) }},
}

var unknownTableRE = regexp.MustCompile(`^Unknown table '(.*)'$`)

// alterDropRE recognises an ALTER TABLE that drops a column or an index,
// whose missing column is 1091 in MySQL (1054 for the other statements).
var alterDropRE = regexp.MustCompile(`(?is)^\s*ALTER\s+TABLE\s.*\bDROP\s`)

// missingColumnRE is go-mysql-server's text of a missing column of a
// table.
var missingColumnRE = regexp.MustCompile(`^table ".*" does not have column "(.*)"$`)

// cantDrop is ALTER TABLE … DROP's 1091 for a column go-mysql-server
// found missing.
func cantDrop(name string) *mysql.SQLError {
	return mysql.NewSQLError(1091, "42000", "Can't DROP '%s'; check that column/key exists", name)
}

// dropTableRE recognises a DROP TABLE, whose missing table is 1051 in
// MySQL (1146 is for the other statements).
var dropTableRE = regexp.MustCompile(`(?is)^\s*DROP\s+(?:TEMPORARY\s+)?TABLES?\s`)

// unknownTable is DROP TABLE's 1051 for a table go-mysql-server found
// missing.
func unknownTable(name string, c msgContext) *mysql.SQLError {
	return mysql.NewSQLError(mysql.ERBadTable, "42S02", "Unknown table '%s'", qualified(c.db, name))
}

func qualified(db, name string) string {
	if db == "" || strings.Contains(name, ".") {
		return name
	}
	return db + "." + name
}

// dupEntryText is MySQL's 1062: the key's values joined with '-', and the
// key's name (PRIMARY for the primary key), as MariaDB and MySQL before
// 8.0.19 print it (MySQL 8.0.19+ prefixes the table's name).
func dupEntryText(m []string, c msgContext) string {
	key := c.dupIndex
	if key == "" {
		key = "PRIMARY"
	}
	return fmt.Sprintf("Duplicate entry '%s' for key '%s'", strings.ReplaceAll(m[1], ",", "-"), key)
}

// maxNearBytes is how much of the statement MySQL quotes after "near".
const maxNearBytes = 80

// syntaxErrorText is MySQL's 1064: the statement from the token the parser
// stopped at (nothing when it ran out of statement), and its line.
// go-mysql-server's position is one past the end of that token.
func syntaxErrorText(m []string, c msgContext) string {
	pos, _ := strconv.Atoi(m[1])
	tok := m[2]
	near, line := "", 1
	q := c.query
	if start := pos - 1 - len(tok); pos <= len(q) && start >= 0 && start <= len(q) {
		near = q[start:]
		line += strings.Count(q[:start], "\n")
	} else {
		line += strings.Count(q, "\n")
	}
	if len(near) > maxNearBytes {
		near = near[:maxNearBytes]
	}
	return fmt.Sprintf("You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line %d", near, line)
}

// insertErrors gives an INSERT's errors and warnings about a value MySQL's
// texts, which name the column and the row ("Out of range value for column
// 'ti' at row 2"): go-mysql-server's name the value and the type. It wraps
// the INSERT's iterator as a MutableRowIter, so that go-mysql-server still
// finds the INSERT's own iterator under it (it adds the accumulator that
// counts the rows by the iterator's type). The row of an error is one past
// the rows the statement handed to the storage editor so far: each row of
// an INSERT reaches the editor's Insert once, after its values are
// converted.
type insertErrors struct {
	sql.RowIter
	sess *Session
	sch  sql.Schema
	info *insertInfo // nil: the statement's OK has no info
	// replace: the statement is a REPLACE (replacesame.go).
	replace bool
	// noInsertID: a REPLACE or INSERT … ON DUPLICATE KEY UPDATE of a
	// table without an AUTO_INCREMENT column, whose OK packet's insert id
	// is 0 in MySQL; go-mysql-server put the session's LAST_INSERT_ID()
	// there.
	noInsertID bool
}

// hasAutoIncrement reports whether sch has an AUTO_INCREMENT column.
func hasAutoIncrement(sch sql.Schema) bool {
	for _, c := range sch {
		if c.AutoIncrement {
			return true
		}
	}
	return false
}

func newInsertErrors(iter sql.RowIter, s *Session, sch sql.Schema) *insertErrors {
	it := &insertErrors{RowIter: iter, sess: s, sch: sch}
	s.ins.calls, s.ins.sameReplaced = 0, 0
	s.ins.replaceDups, s.ins.replaceExtra = 0, 0
	s.ins.row = it
	return it
}

func (it *insertErrors) GetChildIter() sql.RowIter { return it.RowIter }

func (it *insertErrors) WithChildIter(child sql.RowIter) sql.RowIter {
	c := *it
	c.RowIter = child
	it.sess.ins.row = &c
	return &c
}

func (it *insertErrors) Close(ctx *sql.Context) error {
	if it.sess.ins.row == it {
		it.sess.ins.row = nil
	}
	return it.RowIter.Close(ctx)
}

func (it *insertErrors) Next(ctx *sql.Context) (sql.Row, error) {
	r, err := it.RowIter.Next(ctx)
	if err == nil {
		if it.replace {
			r = countSameReplaced(ctx, it.sess, r)
		}
		if it.noInsertID && len(r) == 1 {
			if ok, isOK := r[0].(types.OkResult); isOK && ok.InsertID != 0 {
				ok.InsertID = 0
				r = sql.NewRow(ok)
			}
		}
		return it.info.add(ctx, r), nil
	}
	if err == io.EOF {
		return r, err
	}
	var offending sql.Row
	cause := err
	if w, ok := err.(sql.WrappedInsertError); ok {
		offending, cause = w.OffendingRow, w.Cause
	}
	if se := it.valueError(cause.Error(), offending); se != nil {
		return nil, se
	}
	return nil, err
}

// valueErrorRE matches go-mysql-server's texts of a value a column cannot
// take: the value (and type) they name.
var (
	outOfRangeRE   = regexp.MustCompile(`^(.*) out of range for (.*)$`)
	invalidValueRE = regexp.MustCompile(`^error: '(.*)' is not a valid value for '(.*)'$`)
	badTimeRE      = regexp.MustCompile(`^Incorrect datetime value: '(.*)'$`)
	tooLongRE      = regexp.MustCompile(`^string '.*' is too large for column '(.*)'$`)
	badEnumRE      = regexp.MustCompile(`^value (.*) is not valid for this Enum$`)
	badSetRE       = regexp.MustCompile(`^value (.*) (?:was not found in the set|is not valid for this set)$`)
	badYearRE      = regexp.MustCompile(`^value (.*) is not a valid Year$`)
	tooManyBitsRE  = regexp.MustCompile(`^(.*) is beyond the maximum value that can be held by \d+ bits$`)
	badTimeOfDayRE = regexp.MustCompile(`^value (.*) is not a valid Time$`)
	decimalRangeRE = regexp.MustCompile(`^Out of range value for column of Decimal type\s*$`)
)

// valueError is MySQL's error for go-mysql-server's text msg about a value
// of the row being inserted (nil: msg is about something else, or its
// column cannot be told). row is the row as given, when known.
func (it *insertErrors) valueError(msg string, row sql.Row) *mysql.SQLError {
	at := it.sess.ins.calls + 1
	if m := tooLongRE.FindStringSubmatch(msg); m != nil {
		return mysql.NewSQLError(1406, "22001", "Data too long for column '%s' at row %d", m[1], at)
	}
	if m := outOfRangeRE.FindStringSubmatch(msg); m != nil {
		if col := it.column(row, m[1], m[2], nil); col != nil {
			return mysql.NewSQLError(1264, "22003", "Out of range value for column '%s' at row %d", col.Name, at)
		}
		return nil
	}
	if m := invalidValueRE.FindStringSubmatch(msg); m != nil {
		if col := it.column(row, m[1], m[2], nil); col != nil {
			return mysql.NewSQLError(1366, "HY000", "Incorrect %s value: '%s' for column '%s' at row %d", valueKind(col.Type), m[1], col.Name, at)
		}
		return nil
	}
	// A value an ENUM or SET column does not list: MySQL's strict 1265.
	// The column holding the value as given, else the only one of the
	// kind (a SET's message names the member, not the value).
	for _, k := range []struct {
		re   *regexp.Regexp
		kind func(sql.Type) bool
	}{{badEnumRE, types.IsEnum}, {badSetRE, types.IsSet}} {
		if m := k.re.FindStringSubmatch(msg); m != nil {
			col := it.column(row, m[1], "", k.kind)
			if col == nil {
				col = it.column(nil, "", "", k.kind)
			}
			if col != nil {
				return mysql.NewSQLError(1265, "01000", "Data truncated for column '%s' at row %d", col.Name, at)
			}
			return nil
		}
	}
	// A YEAR, a BIT, a TIME or a DECIMAL that does not fit: the column
	// holding the value as given, else the only one of the type. (The
	// texts index their arguments: column, row, value.)
	for _, k := range []struct {
		re          *regexp.Regexp
		kind        func(sql.Type) bool
		code        int
		state, text string
	}{
		{badYearRE, types.IsYear, 1264, "22003", "Out of range value for column '%[1]s' at row %[2]d"},
		{tooManyBitsRE, types.IsBit, 1406, "22001", "Data too long for column '%[1]s' at row %[2]d"},
		{badTimeOfDayRE, funcs.IsTimeType, 1292, "22007", "Incorrect time value: '%[3]s' for column '%[1]s' at row %[2]d"},
		{decimalRangeRE, types.IsDecimal, 1264, "22003", "Out of range value for column '%[1]s' at row %[2]d"},
	} {
		if m := k.re.FindStringSubmatch(msg); m != nil {
			var col *sql.Column
			if len(m) > 1 {
				col = it.column(row, m[1], "", k.kind)
			}
			if col == nil {
				col = it.column(nil, "", "", k.kind)
			}
			if col == nil {
				return nil
			}
			value := ""
			if len(m) > 1 {
				value = m[1]
			}
			return mysql.NewSQLError(k.code, k.state, k.text, col.Name, at, value)
		}
	}
	if m := badTimeRE.FindStringSubmatch(msg); m != nil {
		if col := it.column(row, m[1], "", types.IsTime); col != nil {
			kind := "datetime"
			if types.IsDateType(col.Type) {
				kind = "date"
			}
			return mysql.NewSQLError(1292, "22007", "Incorrect %s value: '%s' for column '%s' at row %d", kind, m[1], col.Name, at)
		}
	}
	return nil
}

// column finds the column a value belongs to: by the value in row (when
// known) and by the type's name (when typ is given) or kind; nil when no
// column, or more than one, fits.
func (it *insertErrors) column(row sql.Row, value, typ string, kind func(sql.Type) bool) *sql.Column {
	var found *sql.Column
	for i, c := range it.sch {
		if typ != "" && !strings.EqualFold(c.Type.String(), typ) {
			continue
		}
		if kind != nil && !kind(c.Type) {
			continue
		}
		if row != nil && (i >= len(row) || row[i] == nil || fmt.Sprint(row[i]) != value) {
			continue
		}
		if found != nil {
			return nil
		}
		found = c
	}
	return found
}

// valueKind is the word MySQL's 1366 uses for a column's type.
func valueKind(t sql.Type) string {
	switch {
	case types.IsInteger(t):
		return "integer"
	case types.IsDecimal(t):
		return "decimal"
	case types.IsFloat(t):
		return "double"
	}
	return "string"
}

// valueErrorOrNil is valueError of a warning (whose row is not known), for
// an INSERT in progress; nil otherwise.
func (it *insertErrors) valueErrorOrNil(msg string) *mysql.SQLError {
	if it == nil {
		return nil
	}
	return it.valueError(msg, nil)
}

// fkClause is MySQL's text of foreign key name of table in database db, as
// last committed ("" when it is not found): its columns, the parent table
// (with its database when it is another one) and columns, and the actions
// given.
// columnCount is the number of columns of table db.table, 0 when there is
// no such table.
func (s *Server) columnCount(db, table string) int {
	d, ok := s.storage.Database(db)
	if !ok {
		return 0
	}
	st, ok := d.Latest().Table(table)
	if !ok {
		return 0
	}
	return st.Def().NumCols
}

func (s *Server) fkClause(db, table, name string) string {
	d, ok := s.storage.Database(db)
	if !ok {
		return ""
	}
	st, ok := d.Latest().Table(table) // the definition only
	if !ok {
		return ""
	}
	ti, err := tabledef.Decode(st.Def())
	if err != nil {
		return ""
	}
	quote := func(names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = "`" + n + "`"
		}
		return strings.Join(q, ", ")
	}
	for _, fk := range ti.Meta.ForeignKeys {
		if !strings.EqualFold(fk.Name, name) {
			continue
		}
		parent := "`" + fk.ParentTable + "`"
		if fk.ParentDatabase != "" && !strings.EqualFold(fk.ParentDatabase, db) {
			parent = "`" + fk.ParentDatabase + "`." + parent
		}
		text := fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s (%s)", quote(fk.Columns), parent, quote(fk.ParentColumns))
		for _, a := range []struct {
			on     string
			action sql.ForeignKeyReferentialAction
		}{{"DELETE", fk.OnDelete}, {"UPDATE", fk.OnUpdate}} {
			if a.action != "" && a.action != sql.ForeignKeyReferentialAction_DefaultAction && a.action != sql.ForeignKeyReferentialAction_Restrict {
				text += " ON " + a.on + " " + string(a.action)
			}
		}
		return text
	}
	return ""
}

// clauseKeywordRE finds the keywords that open a clause, for clauseOf.
var clauseKeywordRE = regexp.MustCompile(`(?i)\b(SELECT|WHERE|HAVING|ON|ORDER\s+BY|GROUP\s+BY|SET|VALUES|FROM|JOIN|USING)\b`)

// clauseOf is MySQL's name of the clause in which column first appears in
// the statement q ('where clause', 'having clause', 'on clause', 'order
// clause', 'group statement'; 'field list' for the select list, SET and
// VALUES, and when the column is not found in the text).
func clauseOf(q, column string) string {
	name := column
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	re, err := regexp.Compile("(?i)[`.]?\\b" + regexp.QuoteMeta(name) + "\\b`?")
	if err != nil {
		return "field list"
	}
	loc := re.FindStringIndex(q)
	if loc == nil {
		return "field list"
	}
	kws := clauseKeywordRE.FindAllString(q[:loc[0]], -1)
	if len(kws) == 0 {
		return "field list"
	}
	switch kw := strings.ToUpper(strings.Join(strings.Fields(kws[len(kws)-1]), " ")); kw {
	case "WHERE":
		return "where clause"
	case "HAVING":
		return "having clause"
	case "ON", "USING":
		return "on clause"
	case "ORDER BY":
		return "order clause"
	case "GROUP BY":
		return "group statement"
	}
	return "field list"
}
