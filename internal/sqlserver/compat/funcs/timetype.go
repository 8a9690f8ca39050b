package funcs

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// TIME(n): a TIME column with n digits after the seconds (1 to 6).
// go-mysql-server v0.20 has one TIME type, without digits: it refused
// TIME(1) to TIME(5) (1105 TIME length not yet supported) and took
// TIME(6) as TIME, whose values Miraj rounds to whole seconds
// (timerange.go). Miraj's own type, TimeType, is go-mysql-server's TIME
// with the digits beside it: it rounds a value written into the column
// to them (half away from zero, as MySQL 8 does), writes the value's text
// with them, and is kept in the table definition (metaColumn.TimeDigits).
// A plain TIME (or TIME(0)) column keeps go-mysql-server's type.
//
// The digits reach the column so: the parser (TimeLengths) drops the
// length of a TIME column of a CREATE TABLE or ALTER TABLE a client sent,
// which go-mysql-server's planner would refuse, and before the statement
// runs (AdoptTimeDigits) each TIME column of the planned CREATE TABLE, ADD
// COLUMN, MODIFY or CHANGE COLUMN gets the digits its text gives it.
// Where the text is not at hand (PREPARE … FROM, a stored program's body)
// TIME(n) is refused (1235) rather than taken without its digits.
//
// Only client sessions see this: go-mysql-server's engine suites keep
// its own TIME (a TIME(6) that shows itself so), and so does a session
// without a client.

// MaxTimeDigits is the most digits after the seconds a TIME keeps
// (microseconds), MySQL's limit.
const MaxTimeDigits = 6

// TimeType is a TIME(n) column's type, 1 <= digits <= MaxTimeDigits.
type TimeType struct {
	types.TimespanType_
	Digits uint8
}

var _ types.TimeType = TimeType{}

// TimeOf returns the type of a TIME column with n digits: go-mysql-server's
// TIME for 0.
func TimeOf(n int) sql.Type {
	if n <= 0 {
		return types.Time
	}
	if n > MaxTimeDigits {
		panic(fmt.Sprintf("sqlserver: TIME with %d digits", n))
	}
	return TimeType{Digits: uint8(n)}
}

// IsTimeType reports whether t is a TIME, with or without digits.
func IsTimeType(t sql.Type) bool {
	if _, ok := t.(TimeType); ok {
		return true
	}
	return types.IsTimespan(t)
}

// TimeDigits is the digits after the seconds of TIME type t; 0 for any
// other type.
func TimeDigits(t sql.Type) int {
	if tt, ok := t.(TimeType); ok {
		return int(tt.Digits)
	}
	return 0
}

// RoundTimespan rounds ts to n digits after the seconds, half away from
// zero; the result stays within ±838:59:59.
func RoundTimespan(ts types.Timespan, n int) types.Timespan {
	unit := int64(1)
	for range MaxTimeDigits - n {
		unit *= 10
	}
	us := int64(ts)
	rest := us % unit
	us -= rest
	switch {
	case rest*2 >= unit:
		us += unit
	case rest*2 <= -unit:
		us -= unit
	}
	return types.Timespan(max(-maxTimeSeconds*1_000_000, min(maxTimeSeconds*1_000_000, us)))
}

// timespanText is ts written with n digits after the seconds, as MySQL writes
// a TIME(n) value ('12:34:56.800' for TIME(3), zeros too).
func timespanText(ts types.Timespan, n int) string {
	us := int64(ts)
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	secs, frac := us/1_000_000, us%1_000_000
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, secs/3600, secs/60%60, secs%60)
	if n > 0 {
		s += "." + fmt.Sprintf("%06d", frac)[:n]
	}
	return s
}

// Convert is TIME's conversion with the value rounded to the digits.
func (t TimeType) Convert(ctx context.Context, v any) (any, sql.ConvertInRange, error) {
	out, inRange, err := t.TimespanType_.Convert(ctx, v)
	if ts, ok := out.(types.Timespan); ok && err == nil {
		return RoundTimespan(ts, int(t.Digits)), inRange, nil
	}
	return out, inRange, err
}

// SQL writes the value with the type's digits.
func (t TimeType) SQL(_ *sql.Context, dest []byte, v any) (sqltypes.Value, error) {
	if v == nil {
		return sqltypes.NULL, nil
	}
	ts, err := t.ConvertToTimespan(v)
	if err != nil {
		return sqltypes.Value{}, err
	}
	n := int(t.Digits)
	return sqltypes.MakeTrusted(sqltypes.Time, []byte(timespanText(RoundTimespan(ts, n), n))), nil
}

func (t TimeType) String() string { return fmt.Sprintf("time(%d)", t.Digits) }

func (t TimeType) Equals(other sql.Type) bool {
	o, ok := other.(TimeType)
	return ok && o.Digits == t.Digits
}

func (t TimeType) Promote() sql.Type { return t }

// TimeDefaultText is the text a TIME(n) column's literal default d is
// kept as: quoted, with the column's digits ('00:00:01.500'), as MySQL
// shows it. go-mysql-server turns the literal into a time value whose
// text (00:00:01.500000) would not be read back as a literal. False for
// a default that is no literal time.
func TimeDefaultText(d *sql.ColumnDefaultValue, n int) (string, bool) {
	if d == nil {
		return "", false
	}
	var v any
	if lit, ok := d.Expr.(*expression.Literal); ok {
		v = lit.Value()
	} else if d.IsLiteral() {
		// A resolved default: its literal, converted to the column's type.
		var err error
		if v, err = d.Eval(sql.NewEmptyContext(), nil); err != nil {
			return "", false
		}
	}
	if v == nil {
		return "", false
	}
	ts, err := types.Time.ConvertToTimespan(v)
	if err != nil {
		return "", false
	}
	return "'" + timespanText(RoundTimespan(ts, n), n) + "'", true
}

// TimeLengths drops the length of each TIME column of CREATE TABLE or
// ALTER TABLE statement stmt, which ctx runs for a client
// (go-mysql-server refuses TIME(1) to TIME(5) and takes TIME(6) as
// TIME); AdoptTimeDigits gives the columns their digits back from the
// statement's text. A length beyond 6 is 1426. Where the digits would be lost, TIME(n) is refused (1235): a
// statement whose text is not the one the client sent (PREPARE … FROM:
// EXECUTE's text names no column), and a CREATE or ALTER TABLE in the
// body of a stored program.
func TimeLengths(ctx *sql.Context, stmt sqlparser.Statement) error {
	cols := timeColumns(stmt)
	digits := false
	for _, cd := range cols {
		if n, ok := timeLength(cd.Type); ok && n >= 1 && n <= MaxTimeDigits {
			digits = true
		}
	}
	if digits && timeDigitsOf(ctx, ctx.Query()) == nil {
		return errTimeDigits("in a prepared statement")
	}
	if storedProgram(stmt) && nestedTimeDigits(reflect.ValueOf(stmt), 0) {
		return errTimeDigits("in a stored program")
	}
	for _, cd := range cols {
		n, ok := timeLength(cd.Type)
		if ok && n > MaxTimeDigits {
			// go-mysql-server said 1105 (TIME only supports a length from
			// 0 to 6); MySQL 8's error and text.
			return mysql.NewSQLError(1426, "42000", "Too-big precision %d specified for '%s'. Maximum is %d.", n, cd.Name.String(), MaxTimeDigits)
		}
		if ok {
			cd.Type.Length = nil
		}
	}
	return nil
}

// storedProgram reports whether stmt creates a procedure, trigger or
// event, whose body may create or alter a table.
func storedProgram(stmt sqlparser.Statement) bool {
	ddl, ok := stmt.(*sqlparser.DDL)
	return ok && (ddl.ProcedureSpec != nil || ddl.TriggerSpec != nil || ddl.EventSpec != nil)
}

// maxASTDepth bounds nestedTimeDigits' descent: a stored program's body
// is far shallower, and the bound keeps a cycle from running away.
const maxASTDepth = 200

// nestedTimeDigits reports whether v, a statement's syntax tree or part
// of it, holds a CREATE or ALTER TABLE with a TIME(n) column, n >= 1,
// below its top (a stored program's body: IF, loops and blocks nest its
// statements in many node types, which sqlparser.Walk does not enter).
func nestedTimeDigits(v reflect.Value, depth int) bool {
	if depth > maxASTDepth {
		return false
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		if depth > 0 && v.CanInterface() {
			if st, ok := v.Interface().(sqlparser.Statement); ok {
				for _, cd := range timeColumns(st) {
					if n, ok := timeLength(cd.Type); ok && n >= 1 {
						return true
					}
				}
			}
		}
		return nestedTimeDigits(v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && nestedTimeDigits(v.Field(i), depth+1) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if nestedTimeDigits(v.Index(i), depth+1) {
				return true
			}
		}
	}
	return false
}

// errTimeDigits is the error for a TIME(n) column Miraj does not make
// where: 1235, as MySQL says what it does not support.
func errTimeDigits(where string) error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
		"This version of MySQL doesn't yet support 'TIME(n) columns %s: Miraj keeps their digits only in a CREATE or ALTER TABLE sent as it is'", where)
}

// timeColumns returns the TIME column definitions of CREATE TABLE or
// ALTER TABLE statement stmt (its table's columns, and its ADD, MODIFY and
// CHANGE COLUMN); nil for any other statement.
func timeColumns(stmt sqlparser.Statement) []*sqlparser.ColumnDefinition {
	var ddls []*sqlparser.DDL
	switch s := stmt.(type) {
	case *sqlparser.DDL:
		ddls = []*sqlparser.DDL{s}
	case *sqlparser.AlterTable:
		ddls = s.Statements
	}
	var out []*sqlparser.ColumnDefinition
	for _, ddl := range ddls {
		if ddl == nil || ddl.TableSpec == nil {
			continue
		}
		for _, cd := range ddl.TableSpec.Columns {
			if cd != nil && strings.EqualFold(cd.Type.Type, "time") {
				out = append(out, cd)
			}
		}
	}
	return out
}

// timeLength is the digits a TIME column type names; false when it names
// none.
func timeLength(ct sqlparser.ColumnType) (int, bool) {
	if ct.Length == nil {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscan(string(ct.Length.Val), &n); err != nil {
		return 0, false
	}
	return n, true
}

// timeDigitsOf returns, for the statement text q (a CREATE TABLE or ALTER
// TABLE), the digits of each TIME column it defines, by lower-case name;
// nil when q is no such statement.
func timeDigitsOf(ctx *sql.Context, q string) map[string]int {
	// The server's parser reads the text as the statement was read
	// (versioned comments, modifiers); without a session it keeps the
	// lengths.
	stmt, _, err := sql.GlobalParser.ParseOneWithOptions(context.WithoutCancel(ctx), q, sql.LoadSqlMode(ctx).ParserOptions())
	if err != nil {
		return nil
	}
	cols := timeColumns(stmt)
	if len(cols) == 0 {
		return nil
	}
	out := make(map[string]int, len(cols))
	for _, cd := range cols {
		n, _ := timeLength(cd.Type)
		out[strings.ToLower(cd.Name.String())] = n
	}
	return out
}

// AdoptTimeDigits gives each TIME column of cols the digits the statement
// ctx runs names for it (timeDigitsOf).
func AdoptTimeDigits(ctx *sql.Context, cols ...*sql.Column) {
	var digits map[string]int
	for _, c := range cols {
		if c == nil || !IsTimeType(c.Type) {
			continue
		}
		if digits == nil {
			if digits = timeDigitsOf(ctx, ctx.Query()); digits == nil {
				return
			}
		}
		if n, ok := digits[strings.ToLower(c.Name)]; ok && n <= MaxTimeDigits {
			c.Type = TimeOf(n)
		}
	}
}
