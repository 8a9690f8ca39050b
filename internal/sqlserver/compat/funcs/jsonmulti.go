package funcs

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function/json"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// JSON_EXTRACT with several paths is, in MySQL, the array of what every
// path matches, in the order of the paths (a wildcard path adds each of
// its matches); NULL when no path matches, when the document or a path is
// NULL. go-mysql-server v0.20 failed with a nil pointer dereference (a
// panic the handler caught) as soon as one of the paths matched nothing.

// evalPaths is JSON_EXTRACT of several paths.
func (j *JSONExtract) evalPaths(ctx *sql.Context, row sql.Row) (any, error) {
	doc, err := j.JSON.Eval(ctx, row)
	if err != nil || doc == nil {
		return nil, err
	}
	paths := make([]string, len(j.Paths))
	for i, p := range j.Paths {
		v, err := p.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		s, _, err := types.LongText.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		paths[i] = s.(string)
	}
	jd, _, err := types.JSON.Convert(ctx, doc)
	if err != nil {
		return j.JSONExtract.Eval(ctx, row) // go-mysql-server's error for the document
	}
	w, ok := jd.(sql.JSONWrapper)
	if !ok {
		return j.JSONExtract.Eval(ctx, row)
	}
	root, err := w.ToInterface()
	if err != nil {
		return nil, err
	}
	var matches []any
	for _, p := range paths {
		if legs, ok := parseJSONPath(p); ok {
			v := root
			found := true
			for _, l := range legs {
				if v, found = l.step(v); !found {
					break
				}
			}
			if found {
				matches = append(matches, v)
			}
			continue
		}
		// A wildcard or range path: go-mysql-server gives the array of its
		// matches.
		r, err := types.LookupJSONValue(w, p)
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		v, err := r.ToInterface()
		if err != nil {
			return nil, err
		}
		if a, ok := v.([]any); ok {
			matches = append(matches, a...)
		} else {
			matches = append(matches, v)
		}
	}
	if len(matches) == 0 {
		return nil, nil
	}
	return types.JSONDocument{Val: matches}, nil
}

// JSONContainsPath is JSON_CONTAINS_PATH with MySQL's reading of paths
// without wildcards (as JSONExtract's): a member of something that is no
// object is no match, where go-mysql-server v0.20 found '$.a' in an array
// (JSON_CONTAINS_PATH('[1,2]', 'one', '$.a') was 1, MySQL's is 0). Other
// paths are go-mysql-server's.
type JSONContainsPath struct {
	*json.JSONContainsPath
}

func (j *JSONContainsPath) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	args := j.Children()
	doc, err := args[0].Eval(ctx, row)
	if err != nil || doc == nil {
		return nil, err
	}
	mode, err := args[1].Eval(ctx, row)
	if err != nil || mode == nil {
		return nil, err
	}
	ms, ok := mode.(string)
	if !ok || (!strings.EqualFold(ms, "one") && !strings.EqualFold(ms, "all")) {
		return j.JSONContainsPath.Eval(ctx, row)
	}
	all := strings.EqualFold(ms, "all")
	legs := make([][]jsonLeg, len(args)-2)
	for i, p := range args[2:] {
		v, err := p.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		s, ok := v.(string)
		if !ok {
			return j.JSONContainsPath.Eval(ctx, row)
		}
		if legs[i], ok = parseJSONPath(s); !ok {
			return j.JSONContainsPath.Eval(ctx, row)
		}
	}
	jd, _, err := types.JSON.Convert(ctx, doc)
	if err != nil {
		return j.JSONContainsPath.Eval(ctx, row)
	}
	w, ok := jd.(sql.JSONWrapper)
	if !ok {
		return j.JSONContainsPath.Eval(ctx, row)
	}
	root, err := w.ToInterface()
	if err != nil {
		return nil, err
	}
	for _, path := range legs {
		v, found := root, true
		for _, l := range path {
			if v, found = l.step(v); !found {
				break
			}
		}
		if found && !all {
			return true, nil
		}
		if !found && all {
			return false, nil
		}
	}
	return all, nil
}

func (j *JSONContainsPath) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := j.JSONContainsPath.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &JSONContainsPath{JSONContainsPath: e.(*json.JSONContainsPath)}, nil
}
