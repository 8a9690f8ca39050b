package rules

import (
	"reflect"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
)

// GROUP_CONCAT as MySQL computes it. go-mysql-server v0.20 joined only the
// first of several expressions (GROUP_CONCAT(id, name) gave "1,2", not
// "1a,2b"), and its DISTINCT compared the text of that one byte for byte
// ('a' and 'A' both kept under a case-insensitive collation). Here the
// expressions are joined by CONCAT (a row with a NULL in any is left out,
// as before) and DISTINCT compares the row of values, each string under
// its collation, keeping the first row of each; ORDER BY, SEPARATOR and
// group_concat_max_len stay go-mysql-server's.

// groupConcatOf returns e as such a GROUP_CONCAT, or nil when e is not a
// GROUP_CONCAT (not windowed) that go-mysql-server gets wrong.
func groupConcatOf(e sql.Expression) sql.Expression {
	gc, ok := e.(*aggregation.GroupConcat)
	if !ok || gc.Window() != nil {
		return nil
	}
	// The clauses go-mysql-server keeps to itself: read, not changed.
	v := reflect.ValueOf(gc).Elem()
	sfv, distinctv, sepv, maxv := v.FieldByName("sf"), v.FieldByName("distinct"), v.FieldByName("separator"), v.FieldByName("maxLen")
	if !sfv.IsValid() || !distinctv.IsValid() || !sepv.IsValid() || !maxv.IsValid() {
		return nil // another go-mysql-server: left as it is
	}
	children := gc.Children()
	nSort := sfv.Len()
	args := children[nSort:]
	distinct := distinctv.String() != ""
	var sch sql.Schema
	for _, a := range args {
		sch = append(sch, &sql.Column{Type: a.Type()})
	}
	if len(args) == 1 && !(distinct && HasCollatedString(sch)) {
		return nil
	}
	sf := make(sql.SortFields, nSort)
	for i := range sf {
		f := sfv.Index(i)
		sf[i] = sql.SortField{Column: children[i], Order: sql.SortOrder(f.FieldByName("Order").Uint()), NullOrdering: sql.NullOrdering(f.FieldByName("NullOrdering").Uint())}
		sf[i].Column2, _ = children[i].(sql.Expression2)
	}
	value := args[0]
	if len(args) > 1 {
		var err error
		if value, err = function.NewConcat(args...); err != nil {
			return nil
		}
	}
	inner := aggregation.NewGroupConcat("", sf, sepv.String(), []sql.Expression{value}, int(maxv.Int())).WithId(gc.Id()).(sql.Aggregation)
	return &groupConcat{Aggregation: inner, joined: len(args) > 1, distinct: distinct, sch: sch}
}

// groupConcat is go-mysql-server's GROUP_CONCAT of one value (the CONCAT
// of the expressions when joined), without its DISTINCT, which the
// buffer does over the expressions.
type groupConcat struct {
	sql.Aggregation // *aggregation.GroupConcat
	joined          bool
	distinct        bool
	sch             sql.Schema // the expressions' types
}

func (a *groupConcat) FunctionName() string { return "group_concat" }

func (a *groupConcat) Description() string {
	return "returns a string result with the concatenated non-NULL values from a group"
}

func (a *groupConcat) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	n, err := a.Aggregation.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	c := *a
	c.Aggregation = n.(sql.Aggregation).WithId(a.Id()).(sql.Aggregation)
	return &c, nil
}

func (a *groupConcat) WithId(id sql.ColumnId) sql.IdExpression {
	c := *a
	c.Aggregation = a.Aggregation.WithId(id).(sql.Aggregation)
	return &c
}

// args returns the expressions, as they are now (their column indexes
// are set after this rule, through WithChildren).
func (a *groupConcat) args() []sql.Expression {
	children := a.Children()
	value := children[len(children)-1]
	if a.joined {
		return value.Children()
	}
	return []sql.Expression{value}
}

func (a *groupConcat) NewBuffer() (sql.AggregationBuffer, error) {
	inner, err := a.Aggregation.NewBuffer()
	if err != nil || !a.distinct {
		return inner, err
	}
	return &groupConcatBuffer{inner: inner, exprs: a.args(), sch: a.sch, seen: map[string]struct{}{}}, nil
}

// groupConcatBuffer passes on the first row of each distinct row of
// values.
type groupConcatBuffer struct {
	inner sql.AggregationBuffer
	exprs []sql.Expression
	sch   sql.Schema
	seen  map[string]struct{}
	key   []byte
}

func (b *groupConcatBuffer) Update(ctx *sql.Context, row sql.Row) error {
	key, ok, err := distinctValuesKey(ctx, b.key[:0], b.exprs, b.sch, row)
	b.key = key
	if err != nil || !ok {
		return err // a row with a NULL is left out, as the CONCAT of it is NULL
	}
	if _, dup := b.seen[string(b.key)]; dup {
		return nil
	}
	b.seen[string(b.key)] = struct{}{}
	return b.inner.Update(ctx, row)
}

func (b *groupConcatBuffer) Eval(ctx *sql.Context) (any, error) { return b.inner.Eval(ctx) }

func (b *groupConcatBuffer) Dispose() {
	b.inner.Dispose()
	for _, e := range b.exprs {
		expression.Dispose(e)
	}
}
