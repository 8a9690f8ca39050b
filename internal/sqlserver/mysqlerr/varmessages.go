package mysqlerr

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/sqltext"
)

// pickedMessage is a go-mysql-server text whose MySQL code, SQLSTATE and
// text depend on more than the text: pick decides them from the
// submatches of re and the statement, or says the row does not apply (ok
// false). from is go-mysql-server's code the text may come with besides
// 1105. Translate tries these rows before mysqlMessages.
type pickedMessage struct {
	from int
	re   *regexp.Regexp
	pick func(m []string, c Context) (code int, state, text string, ok bool)
}

var pickedMessages = []pickedMessage{
	{1146, regexp.MustCompile(`^table not found: (.*)$`), missingReferencedTable},
	{0, regexp.MustCompile(`^Variable '(.*)' can't be set to the value of '(.*)'$`), wrongVariableValue},
	{0, regexp.MustCompile(`^value (.*) (?:was not found in the set|is not valid for this set)$`), wrongSetVariableValue},
	{1146, regexp.MustCompile(`^table not found: (.*)$`), missingSystemView},
	{0, regexp.MustCompile(`^function '(.*)' expected .* arguments?, \d+ received$`), wrongArgumentCount},
	{0, regexp.MustCompile(`^You are not allowed to create a user with GRANT$`), grantToMissingUser},
	{1396, regexp.MustCompile(`^Operation ALTER USER failed for '.*'@'.*'$`), passwordOfMissingUser},
	{0, regexp.MustCompile(`^Scale (\d+) cannot be larger than the precision (\d+)$`), scaleOverPrecision},
}

// missingSystemView is MySQL's 1109 for a table of information_schema
// that does not exist (1146 names a table of a database).
func missingSystemView(m []string, c Context) (int, string, string, bool) {
	if name := c.tableName(m[1]); strings.HasPrefix(strings.ToLower(name), "information_schema.") {
		return 1109, "42S02", fmt.Sprintf("Unknown table '%s' in information_schema", name[len("information_schema."):]), true
	}
	return 0, "", "", false
}

// wrongArgumentCount is MySQL's 1582 for a built-in function called with
// a wrong number of arguments.
func wrongArgumentCount(m []string, _ Context) (int, string, string, bool) {
	if funcs.Aggregates[strings.ToLower(m[1])] {
		return 0, "", "", false
	}
	return 1582, "42000", fmt.Sprintf("Incorrect parameter count in the call to native function '%s'", strings.ToUpper(m[1])), true
}

// accountRE finds the account a REVOKE … FROM names.
var accountRE = regexp.MustCompile("(?is)\\bFROM\\s+['\x60\"]?([^'\x60\"@\\s]*)['\x60\"]?\\s*@\\s*['\x60\"]?([^'\x60\"\\s,;]*)")

// grantToMissingUser is MySQL's error for a GRANT to an account that does
// not exist (1410, go-mysql-server's text) or a REVOKE from one (1141).
func grantToMissingUser(m []string, c Context) (int, string, string, bool) {
	if strings.EqualFold(sqltext.FirstWord(c.Query), "REVOKE") {
		if a := accountRE.FindStringSubmatch(c.Query); a != nil {
			return 1141, "42000", fmt.Sprintf("There is no such grant defined for user '%s' on host '%s'", a[1], a[2]), true
		}
	}
	return 1410, "42000", m[0], true
}

// passwordOfMissingUser is MySQL's 1133 for SET PASSWORD FOR an account
// that does not exist (ALTER USER's is 1396).
func passwordOfMissingUser(m []string, c Context) (int, string, string, bool) {
	if !strings.EqualFold(sqltext.FirstWord(c.Query), "SET") {
		return 0, "", "", false
	}
	return 1133, "28000", "Can't find any matching row in the user table", true
}

// scaleOverPrecision is MySQL's 1427 for DECIMAL(M,D) with D > M, naming
// the column, which the statement gives.
func scaleOverPrecision(m []string, c Context) (int, string, string, bool) {
	re, err := regexp.Compile("(?i)(\x60[^\x60]+\x60|[\\w$]+)\\s+(?:decimal|dec|numeric|fixed)\\s*\\(\\s*" + m[2] + "\\s*,\\s*" + m[1] + "\\s*\\)")
	if err != nil {
		return 0, "", "", false
	}
	col := re.FindStringSubmatch(c.Query)
	if col == nil {
		return 0, "", "", false
	}
	return 1427, "42000", fmt.Sprintf("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '%s')", sqltext.UnquoteIdent(col[1])), true
}

// MySQL's errors for a SET of a system variable to a value it cannot take,
// which go-mysql-server sends as 1105 (the rows of mysqlMessages that pick
// these):
//
//   - 1231 (42000), "Variable 'x' can't be set to the value of 'v'": a
//     value outside a switch's, an enumeration's or a set's (sql_mode),
//     or NULL where none is taken;
//   - 1232 (42000), "Incorrect argument type to variable 'x'": NULL, or a
//     value that is not a number of the variable's kind (a word, 1.5 for
//     an integer), for a numeric variable;
//   - 1286 (42000), "Unknown storage engine 'e'": default_storage_engine
//     and default_tmp_storage_engine.

// wrongVariableValue picks the code and text of go-mysql-server's "can't
// be set to the value of" for variable m[1] and value m[2].
func wrongVariableValue(m []string, _ Context) (int, string, string, bool) {
	name, value := m[1], m[2]
	isNull := value == "<nil>" // go-mysql-server prints NULL so
	if isNull {
		value = "NULL"
	}
	switch strings.ToLower(name) {
	case "default_storage_engine", "default_tmp_storage_engine", "storage_engine":
		return 1286, "42000", fmt.Sprintf("Unknown storage engine '%s'", value), true
	}
	if kind := numericVariable(name); kind != 0 && (isNull || !kind.takes(value)) {
		return 1232, "42000", fmt.Sprintf("Incorrect argument type to variable '%s'", name), true
	}
	return 1231, "42000", fmt.Sprintf("Variable '%s' can't be set to the value of '%s'", name, value), true
}

// wrongSetVariableValue is 1231 for a value a set-valued variable
// (sql_mode) does not take, when the statement is a SET of a system
// variable; the same text from a SET column's value is another error.
func wrongSetVariableValue(m []string, c Context) (int, string, string, bool) {
	name := setVariableOf(c.Query, m[1])
	if name == "" {
		return 0, "", "", false
	}
	return 1231, "42000", fmt.Sprintf("Variable '%s' can't be set to the value of '%s'", name, m[1]), true
}

// numericKind is what a numeric system variable takes: integers or reals.
type numericKind int

const (
	integers numericKind = iota + 1
	reals
)

// numericVariable says whether the system variable name takes integers or
// reals (0: switches, words or sets).
func numericVariable(name string) numericKind {
	sv, _, ok := sql.SystemVariables.GetGlobal(name)
	if !ok {
		return 0
	}
	switch sv.GetType().Type() {
	case sqltypes.Int64, sqltypes.Uint64:
		return integers
	case sqltypes.Float64:
		return reals
	}
	return 0
}

var (
	integerRE = regexp.MustCompile(`^\s*[+-]?\d+\s*$`)
	realRE    = regexp.MustCompile(`^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$`)
)

// takes reports whether value (as go-mysql-server prints it) is of the
// kind: a value of another type is 1232, one of the kind out of range 1231.
func (k numericKind) takes(value string) bool {
	if k == integers {
		return integerRE.MatchString(value)
	}
	return realRE.MatchString(value)
}

// setVariableOf is the system variable that statement sets to a value
// holding bad (the first system variable it sets when none does), "" when
// the statement is not a SET of system variables.
func setVariableOf(statement, bad string) string {
	stmt, err := sqlparser.Parse(statement)
	if err != nil {
		return ""
	}
	set, ok := stmt.(*sqlparser.Set)
	if !ok {
		return ""
	}
	first := ""
	for _, e := range set.Exprs {
		if e.Scope == sqlparser.SetScope_User || e.Name == nil {
			continue
		}
		name := systemVariableName(e.Name.String())
		if name == "" || strings.HasPrefix(name, "@") {
			continue
		}
		if first == "" {
			first = name
		}
		if strings.Contains(strings.ToLower(sqlparser.String(e.Expr)), strings.ToLower(bad)) {
			return name
		}
	}
	return first
}

// systemVariableName is the variable a SET names, without @@ and scope.
func systemVariableName(s string) string {
	s = strings.ToLower(strings.Trim(s, "`"))
	s = strings.TrimPrefix(s, "@@")
	for _, scope := range []string{"session.", "global.", "local.", "persist.", "persist_only."} {
		s = strings.TrimPrefix(s, scope)
	}
	return s
}

// refsTableRE finds the tables a CREATE or ALTER TABLE's foreign keys
// reference.
var refsTableRE = regexp.MustCompile("(?i)\\bREFERENCES\\s+((?:`[^`]+`|[\\w$]+)(?:\\s*\\.\\s*(?:`[^`]+`|[\\w$]+))?)")

// missingReferencedTable is MySQL 8's 1824 (HY000) for a foreign key of a
// CREATE or ALTER TABLE whose referenced table does not exist; another
// missing table is 1146 (the next row).
func missingReferencedTable(m []string, c Context) (int, string, string, bool) {
	q := strings.TrimSpace(c.Query)
	if len(q) < 12 || !strings.EqualFold(q[:6], "CREATE") && !strings.EqualFold(q[:5], "ALTER") {
		return 0, "", "", false
	}
	for _, ref := range refsTableRE.FindAllStringSubmatch(q, -1) {
		parts := strings.Split(ref[1], ".")
		table := sqltext.UnquoteIdent(strings.TrimSpace(parts[len(parts)-1]))
		if strings.EqualFold(table, m[1]) {
			return 1824, "HY000", fmt.Sprintf("Failed to open the referenced table '%s'", table), true
		}
	}
	return 0, "", "", false
}
