package funcs

import (
	gojson "encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/json"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/compat"
)

// MySQL's versions of JSON_LENGTH, JSON_VALUE, HOUR, MINUTE and SECOND
// (Provider.Function finds them before go-mysql-server's), for client
// connections (Session.mysql; go-mysql-server's engine suites assert its
// own answers):
//
//   - JSON_LENGTH of an empty array is 0; go-mysql-server gave NULL.
//   - JSON_VALUE of a JSON string is the string's text: JSON_VALUE('{"a":
//     "x"}', '$.a') is x; go-mysql-server gave "x" with its quotes. Of
//     JSON's null it is NULL (go-mysql-server: the text null).
//   - HOUR, MINUTE and SECOND of a time written as text ('10:11:12',
//     '-838:59:59', '1 10:00:00') read it as a TIME; go-mysql-server read
//     it as a date and time and gave NULL with warning 1292.
func init() {
	Overridden["json_length"] = sql.FunctionN{Name: "json_length", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		e, err := json.NewJsonLength(args...)
		if err != nil {
			return nil, err
		}
		return &jsonLength{JsonLength: e.(*json.JsonLength)}, nil
	}}
	Overridden["json_value"] = sql.FunctionN{Name: "json_value", Fn: func(args ...sql.Expression) (sql.Expression, error) {
		e, err := json.NewJsonValue(args...)
		if err != nil {
			return nil, err
		}
		return &jsonValue{JsonValue: e.(*json.JsonValue)}, nil
	}}
	for _, p := range []struct {
		name string
		fn   func(sql.Expression) sql.Expression
		part func(h, m, s int64) int64
	}{
		{"hour", function.NewHour, func(h, _, _ int64) int64 { return h }},
		{"minute", function.NewMinute, func(_, m, _ int64) int64 { return m }},
		{"second", function.NewSecond, func(_, _, s int64) int64 { return s }},
	} {
		Overridden[p.name] = sql.Function1{Name: p.name, Fn: func(arg sql.Expression) sql.Expression {
			return &timePart{Expression: p.fn(arg), arg: arg, part: p.part, build: p.fn}
		}}
	}
}

// jsonLength is JSON_LENGTH with 0 for an empty array.
type jsonLength struct {
	*json.JsonLength
}

func (j *jsonLength) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := j.JsonLength.Eval(ctx, row)
	if err != nil || v != nil || !compat.FromClient(ctx) {
		return v, err
	}
	// go-mysql-server gives NULL for an empty array as for a missing
	// document or path: look again.
	doc, err := j.JSON.Eval(ctx, row)
	if err != nil || doc == nil {
		return nil, err
	}
	path, err := j.Path.Eval(ctx, row)
	if err != nil || path == nil {
		return nil, err
	}
	p, _, err := types.LongText.Convert(ctx, path)
	if err != nil {
		return nil, nil
	}
	js, _, err := types.JSON.Convert(ctx, doc)
	if err != nil {
		return nil, nil
	}
	w, ok := js.(sql.JSONWrapper)
	if !ok {
		return nil, nil
	}
	res, err := types.LookupJSONValue(w, p.(string))
	if err != nil || res == nil {
		return nil, nil
	}
	val, err := res.ToInterface()
	if err != nil {
		return nil, nil
	}
	if a, ok := val.([]any); ok && len(a) == 0 {
		return 0, nil
	}
	return nil, nil
}

func (j *jsonLength) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := j.JsonLength.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &jsonLength{JsonLength: n.(*json.JsonLength)}, nil
}

// jsonValue is JSON_VALUE with a JSON string's text unquoted when the
// result is text.
type jsonValue struct {
	*json.JsonValue
}

func (j *jsonValue) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := j.JsonValue.Eval(ctx, row)
	if err != nil || v == nil || !compat.FromClient(ctx) || !types.IsText(j.Typ) {
		return v, err
	}
	s, ok := v.(string)
	if ok && s == "null" {
		return nil, nil // JSON's null (a string "null" keeps its quotes here)
	}
	if !ok || len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return v, nil
	}
	var text string
	if gojson.Unmarshal([]byte(s), &text) != nil {
		return v, nil
	}
	return text, nil
}

func (j *jsonValue) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := j.JsonValue.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &jsonValue{JsonValue: n.(*json.JsonValue)}, nil
}

// timeText is a time written as text: [-][D ]h:m[:s[.frac]].
var timeText = regexp.MustCompile(`^\s*-?(\d+\s+)?\d+:\d{1,2}(:\d{1,2}(\.\d*)?)?\s*$`)

// timePart is HOUR, MINUTE or SECOND (go-mysql-server's, in Expression)
// with a time written as text read as a TIME.
type timePart struct {
	sql.Expression
	arg   sql.Expression
	part  func(h, m, s int64) int64
	build func(sql.Expression) sql.Expression
}

func (t *timePart) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if !compat.FromClient(ctx) || !types.IsText(t.arg.Type()) {
		return t.Expression.Eval(ctx, row)
	}
	v, err := t.arg.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok || !timeText.MatchString(s) {
		return t.Expression.Eval(ctx, row)
	}
	// go-mysql-server's TIME does not read days ('1 10:00:00' is 34
	// hours): they are added here.
	var days int64
	if m := timeText.FindStringSubmatch(s); m[1] != "" {
		days, _ = strconv.ParseInt(strings.TrimSpace(m[1]), 10, 64)
		s = strings.Replace(s, m[1], "", 1)
	}
	ts, err := types.Time.ConvertToTimespan(s)
	if err != nil {
		return t.Expression.Eval(ctx, row)
	}
	us := ts.AsMicroseconds()
	if us < 0 {
		us = -us
	}
	secs := us/1_000_000 + days*86400
	return int32(t.part(secs/3600, secs/60%60, secs%60)), nil
}

func (t *timePart) Children() []sql.Expression { return []sql.Expression{t.arg} }

func (t *timePart) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &timePart{Expression: t.build(children[0]), arg: children[0], part: t.part, build: t.build}, nil
}

func (t *timePart) FunctionName() string {
	if f, ok := t.Expression.(sql.FunctionExpression); ok {
		return f.FunctionName()
	}
	return ""
}

func (t *timePart) Description() string {
	if f, ok := t.Expression.(sql.FunctionExpression); ok {
		return f.Description()
	}
	return ""
}
