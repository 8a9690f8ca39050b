package rules

import (
	"encoding/binary"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/miraj-db/miraj/internal/sqlserver/weights"
)

// DistinctKey writes into b a key of row under sch that is equal for two
// rows exactly when MySQL takes them for the same: a string of a column
// with a collation is written as its weight string under that collation
// ('apple' and 'Apple' are one value under utf8mb4_0900_ai_ci), every
// other value as its text with its Go type. Each value is prefixed with
// its length (4 bytes, written once the value is), so two keys are equal
// only if every value is. go-mysql-server v0.20 hashes a row's values as
// text (sql.HashOf), without their collation, so its DISTINCT and
// COUNT(DISTINCT) kept 'apple' and 'Apple' apart.
func DistinctKey(ctx *sql.Context, b []byte, sch sql.Schema, row sql.Row) ([]byte, error) {
	for i, v := range row {
		at := len(b)
		b = append(b, 0, 0, 0, 0)
		switch {
		case v == nil:
			b = append(b, 0)
		default:
			var st sql.StringType
			if i < len(sch) {
				st, _ = sch[i].Type.(sql.StringType)
			}
			uv, err := sql.UnwrapAny(ctx, v) // a large string may come wrapped
			if err != nil {
				return nil, err
			}
			var s string
			isString := false
			switch x := uv.(type) {
			case string:
				s, isString = x, true
			case []byte:
				s, isString = string(x), true
			}
			if st != nil && isString && !st.Collation().Equals(sql.Collation_binary) {
				b = append(b, 1)
				if b, err = weights.AppendWeights(b, st.Collation(), s); err != nil {
					return nil, err
				}
			} else {
				b = append(b, 2)
				b = fmt.Appendf(b, "%T:%v", uv, uv)
			}
		}
		binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	}
	return b, nil
}

// HasCollatedString says whether a schema has a string column whose
// collation is not binary (where go-mysql-server's DISTINCT is wrong).
func HasCollatedString(sch sql.Schema) bool {
	for _, c := range sch {
		if st, ok := c.Type.(sql.StringType); ok && !st.Collation().Equals(sql.Collation_binary) && !types.IsBinaryType(c.Type) {
			return true
		}
	}
	return false
}

// collatedDistinct returns the rows of its child whose DistinctKey it has
// not returned yet. It holds every key seen, as go-mysql-server's DISTINCT
// holds every hash.
type collatedDistinct struct {
	child sql.RowIter
	sch   sql.Schema
	seen  map[string]struct{}
	key   []byte
}

func NewCollatedDistinct(child sql.RowIter, sch sql.Schema) *collatedDistinct {
	return &collatedDistinct{child: child, sch: sch, seen: map[string]struct{}{}}
}

func (d *collatedDistinct) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		r, err := d.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		if d.key, err = DistinctKey(ctx, d.key[:0], d.sch, r); err != nil {
			return nil, err
		}
		if _, dup := d.seen[string(d.key)]; dup {
			continue
		}
		d.seen[string(d.key)] = struct{}{}
		return r, nil
	}
}

func (d *collatedDistinct) Close(ctx *sql.Context) error {
	d.seen = nil
	return d.child.Close(ctx)
}
