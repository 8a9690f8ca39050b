package rules

import (
	"reflect"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// ENUM, SET and date values where text is read. go-mysql-server holds an
// ENUM as its member's number, a SET as the bits of its members and a
// DATE as a time of day, and its string functions read those as they are:
// CONCAT(e) of an ENUM('a','b') holding 'b' was '2', e LIKE 'b' false,
// UPPER(e) 'b', LEFT(e, 1) an error, COALESCE(e, 'z') '2', LENGTH(d) of a
// DATE 19, d LIKE '2020-01-01' false, and CONCAT(t) of a TIME an error. MySQL reads such a value as its text, the one a
// client is sent ('b', 'x,y', '2020-01-01'). castRule gives the string
// functions, LIKE, CAST(… AS CHAR), GROUP_CONCAT and JSON_ARRAYAGG that
// text (textOf), and MIN and MAX an ENUM's or SET's members as text;
// comparisons, arithmetic, ORDER BY and the date functions keep the
// values as they are.

// textFunctions are the functions that read their arguments as text, by
// go-mysql-server's names (COALESCE and IFNULL: of an ENUM or a date and
// a string, whose result is text). GROUP_CONCAT and JSON_ARRAYAGG are
// taken apart (WithTextArgs).
var textFunctions = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(`concat concat_ws upper ucase lower lcase left right substring
		substr mid substring_index replace trim ltrim rtrim lpad rpad length octet_length
		char_length character_length hex locate position instr reverse repeat insert ascii
		ord soundex md5 sha sha1 sha2 crc32 to_base64 quote strcmp regexp_like regexp_replace
		regexp_substr regexp_instr elt field find_in_set bit_length make_set export_set
		weight_string compress coalesce ifnull`) {
		m[f] = true
	}
	return m
}()

// membersAsText are the aggregates that compare an ENUM's or a SET's
// members as text (MySQL: "MAX() and MIN() compare ENUM and SET columns by
// their string value"); a date they keep as a date.
var membersAsText = map[string]bool{"max": true, "min": true}

// WithTextArgs is e with its ENUM, SET and date arguments read as text,
// when e reads its arguments as text; false when nothing changes.
func WithTextArgs(ctx *sql.Context, e sql.Expression) (sql.Expression, bool) {
	asText := readAsText
	first := 0 // the first child that is an argument
	switch x := e.(type) {
	case *expression.Like:
	case *expression.Convert:
		if !types.IsText(x.Type()) {
			return nil, false
		}
	case *aggregation.GroupConcat:
		// Its children are its ORDER BY expressions, which sort an ENUM
		// by its number as ORDER BY does, then its arguments. Of one
		// argument and without DISTINCT only: go-mysql-server plans the
		// others' arguments apart, and loses a changed one.
		var ok bool
		if first, ok = groupConcatOrderBy(x); !ok || len(x.Children()) != first+1 {
			return nil, false
		}
	case *aggregation.JsonArray: // JSON_ARRAYAGG
	default:
		f, ok := e.(sql.FunctionExpression)
		if !ok {
			return nil, false
		}
		switch name := strings.ToLower(f.FunctionName()); {
		case membersAsText[name]:
			asText = func(t sql.Type) bool { return types.IsEnum(t) || types.IsSet(t) }
		case !textFunctions[name]:
			return nil, false
		}
	}
	children := e.Children()
	var args []sql.Expression
	for i, c := range children {
		if _, done := c.(*textOf); done || i < first || !asText(c.Type()) {
			continue
		}
		if args == nil {
			args = append([]sql.Expression(nil), children...)
		}
		args[i] = newTextOf(ctx, c)
	}
	if args == nil {
		return nil, false
	}
	ne, err := e.WithChildren(args...)
	if err != nil {
		return nil, false
	}
	return ne, true
}

// readAsText reports whether a value of type t is read as text by a
// string function in MySQL but not in go-mysql-server.
func readAsText(t sql.Type) bool {
	return types.IsEnum(t) || types.IsSet(t) || types.IsTime(t) || funcs.IsTimeType(t)
}

// textOf is an ENUM, SET or date value as its text.
type textOf struct {
	sql.Expression
	typ sql.Type
}

func newTextOf(ctx *sql.Context, e sql.Expression) *textOf {
	collation := ctx.GetCollation()
	if tc, ok := e.Type().(sql.TypeWithCollation); ok {
		collation = tc.Collation()
	}
	return &textOf{Expression: e, typ: types.CreateLongText(collation)}
}

func (a *textOf) Type() sql.Type { return a.typ }

func (a *textOf) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := a.Expression.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	t := a.Expression.Type()
	if dt, ok := t.(sql.DatetimeType); ok && !types.IsDateType(t) {
		if tv, ok := v.(time.Time); ok {
			// With all of its fractional digits, as a client is sent
			// it (the type's own text drops a zero fraction).
			layout := "2006-01-02 15:04:05"
			if p := dt.Precision(); p > 0 {
				layout += "." + strings.Repeat("0", p)
			}
			return tv.Format(layout), nil
		}
	}
	text, err := t.SQL(ctx, nil, v)
	if err != nil {
		return nil, err
	}
	return text.ToString(), nil
}

func (a *textOf) Children() []sql.Expression { return []sql.Expression{a.Expression} }

func (a *textOf) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(children), 1)
	}
	return &textOf{Expression: children[0], typ: a.typ}, nil
}

func (a *textOf) String() string { return a.Expression.String() }

// CollationCoercibility: the argument's own (a column's is implicit).
func (a *textOf) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, a.Expression)
}

// groupConcatOrderBy is the number of ORDER BY expressions of g, which
// come first among its children; false when g has DISTINCT or the number
// cannot be read. go-mysql-server exports neither; its fields are read
// (not written) by reflection.
func groupConcatOrderBy(g *aggregation.GroupConcat) (int, bool) {
	v := reflect.ValueOf(g).Elem()
	sf, distinct := v.FieldByName("sf"), v.FieldByName("distinct")
	if !sf.IsValid() || sf.Kind() != reflect.Slice || !distinct.IsValid() || distinct.Kind() != reflect.String || distinct.Len() > 0 {
		return 0, false
	}
	return sf.Len(), true
}
