package funcs

import (
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function/json"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// JSON_EXTRACT (and ->, ->>) of a path without wildcards follows MySQL's
// path rules here: a member of something that is no object is no match
// (NULL; go-mysql-server answered [] for JSON_EXTRACT('[1,2]', '$.a')), a
// position in something that is no array reads it as an array of itself
// ('$[0]' of an object is the object; go-mysql-server failed with 1105
// "object is not Slice"), and [last] and [last-n] count from the end (a
// syntax error before). Paths with *, ** or ranges, and several paths, are
// go-mysql-server's.

// JSONExtract is JSON_EXTRACT with MySQL's reading of simple paths.
type JSONExtract struct {
	*json.JSONExtract
}

func (j *JSONExtract) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if len(j.Paths) != 1 {
		return j.evalPaths(ctx, row)
	}
	p, err := j.Paths[0].Eval(ctx, row)
	if err != nil || p == nil {
		return nil, err
	}
	ps, ok := p.(string)
	if !ok {
		return j.JSONExtract.Eval(ctx, row)
	}
	legs, ok := parseJSONPath(ps)
	if !ok {
		return j.JSONExtract.Eval(ctx, row)
	}
	doc, err := j.JSON.Eval(ctx, row)
	if err != nil || doc == nil {
		return nil, err
	}
	jd, _, err := types.JSON.Convert(ctx, doc)
	if err != nil {
		return j.JSONExtract.Eval(ctx, row)
	}
	w, ok := jd.(sql.JSONWrapper)
	if !ok {
		return j.JSONExtract.Eval(ctx, row)
	}
	v, err := w.ToInterface()
	if err != nil {
		return nil, err
	}
	for _, l := range legs {
		if v, ok = l.step(v); !ok {
			return nil, nil
		}
	}
	return types.JSONDocument{Val: v}, nil
}

func (j *JSONExtract) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := j.JSONExtract.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &JSONExtract{JSONExtract: e.(*json.JSONExtract)}, nil
}

// jsonLeg is one step of a path: a member (key) or a position (index,
// from the end with last).
type jsonLeg struct {
	member bool
	key    string
	index  int
	last   bool
}

// step returns the value the leg reaches from v, false for none.
func (l jsonLeg) step(v any) (any, bool) {
	if l.member {
		o, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		x, ok := o[l.key]
		return x, ok
	}
	a, isArray := v.([]any)
	if !isArray {
		a = []any{v} // MySQL reads a non-array as an array of itself
	}
	i := l.index
	if l.last {
		i = len(a) - 1 - l.index
	}
	if i < 0 || i >= len(a) {
		return nil, false
	}
	return a[i], true
}

// parseJSONPath reads a path of members and positions; false for any other
// (wildcards, ranges, a path it cannot read: left to go-mysql-server).
func parseJSONPath(p string) ([]jsonLeg, bool) {
	s := strings.TrimSpace(p)
	if !strings.HasPrefix(s, "$") {
		return nil, false
	}
	s = s[1:]
	var legs []jsonLeg
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return legs, true
		}
		switch s[0] {
		case '.':
			s = strings.TrimLeft(s[1:], " ")
			if s == "" || s[0] == '*' {
				return nil, false
			}
			if s[0] == '"' {
				end := strings.IndexByte(s[1:], '"')
				if end < 0 || strings.Contains(s[1:1+end], "\\") {
					return nil, false
				}
				legs = append(legs, jsonLeg{member: true, key: s[1 : 1+end]})
				s = s[2+end:]
				continue
			}
			n := 0
			for n < len(s) && (s[n] == '_' || s[n] == '$' || s[n] >= '0' && s[n] <= '9' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= 0x80) {
				n++
			}
			if n == 0 {
				return nil, false
			}
			legs = append(legs, jsonLeg{member: true, key: s[:n]})
			s = s[n:]
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, false
			}
			in := strings.TrimSpace(s[1:end])
			s = s[end+1:]
			leg := jsonLeg{}
			if rest, ok := strings.CutPrefix(in, "last"); ok {
				leg.last = true
				rest = strings.TrimSpace(rest)
				if rest == "" {
					legs = append(legs, leg)
					continue
				}
				num, ok := strings.CutPrefix(rest, "-")
				if !ok {
					return nil, false
				}
				in = strings.TrimSpace(num)
			}
			n, err := strconv.Atoi(in)
			if err != nil || n < 0 {
				return nil, false
			}
			leg.index = n
			legs = append(legs, leg)
		default:
			return nil, false
		}
	}
}
