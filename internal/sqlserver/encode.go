package sqlserver

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/storage"
)

// Result encoding on the compiled paths.
//
// The planner's results go out through server.RowToSQL: each value boxed,
// then written by its type's SQL method into a pooled buffer, and a new
// slice of values per row. A compiled SELECT writes the same bytes from the
// stored row: integers and UTF-8 strings straight from the row's encoding,
// every other column (and any value these do not cover) through its type's
// SQL method as RowToSQL would. The rows' values share one slice, and the
// slices a statement needs (rows read, sort keys, values) come from a pool.

// encKind is how a result column is written.
type encKind uint8

const (
	encGeneric encKind = iota // the type's SQL method, on the boxed value
	encInt                    // a signed integer type: the decimal digits
	encUint                   // an unsigned integer type: the decimal digits
	encUTF8                   // a utf8mb4 string sent as utf8mb4: the bytes
)

// encCol is one result column: where its value is in the stored row and
// how it is written.
type encCol struct {
	pos    int
	typ    sql.Type
	kind   encKind
	base   querypb.Type
	lo, hi int64  // encInt: the type's range, to which SQLIntN clamps
	max    uint64 // encUint: likewise
}

// rowEncoder writes stored rows as the protocol's values.
type rowEncoder struct {
	ctx  *sql.Context
	cols []encCol
	buf  *sql.ByteBuffer
}

// encoding is how a statement's result columns are written, for the table
// definition, database and character_set_results it was made for: kept by
// the statement's plan while they stay the same.
type encoding struct {
	def    *storage.TableDef
	db     string
	cs     sql.CharacterSetID
	proj   []int
	cols   []encCol
	fields []*querypb.Field // a point lookup's result columns
}

// fits reports whether e was made for def, db and cs.
func (e *encoding) fits(def *storage.TableDef, db string, cs sql.CharacterSetID) bool {
	return e != nil && e.def == def && e.db == db && e.cs == cs
}

// encoder returns the encoder of e's columns writing into buf (whose bytes
// the values then hold until it is reset).
func (e *encoding) encoder(ctx *sql.Context, buf *sql.ByteBuffer) rowEncoder {
	return rowEncoder{ctx: ctx, cols: e.cols, buf: buf}
}

// encodeCols returns how the columns proj of rows whose schema is sch are
// written for the results' character set cs (ctx.GetCharacterSetResults).
func encodeCols(sch sql.Schema, proj []int, cs sql.CharacterSetID) []encCol {
	cols := make([]encCol, len(proj))
	for i, pos := range proj {
		typ := sch[pos].Type
		c := encCol{pos: pos, typ: typ, base: typ.Type()}
		switch t := typ.(type) {
		case types.NumberTypeImpl_:
			c.kind, c.lo, c.hi, c.max = intRange(c.base)
		case types.StringType:
			sent := cs
			if sent == sql.CharacterSet_Unspecified || sent == sql.CharacterSet_binary {
				sent = t.Collation().CharacterSet()
			}
			// StringType.SQL checks the bytes are UTF-8 and encodes them
			// for the results' character set: nothing to do for utf8mb4.
			if !types.IsBinaryType(typ) && t.CharacterSet() == sql.CharacterSet_utf8mb4 && sent == sql.CharacterSet_utf8mb4 {
				c.kind = encUTF8
			}
		}
		cols[i] = c
	}
	return cols
}

// intRange returns how an integer type of base is written and the range
// its SQL method clamps to (types.NumberTypeImpl_.SQLInt8 …).
func intRange(base querypb.Type) (k encKind, lo, hi int64, max uint64) {
	switch base {
	case sqltypes.Int8:
		return encInt, math.MinInt8, math.MaxInt8, 0
	case sqltypes.Int16:
		return encInt, math.MinInt16, math.MaxInt16, 0
	case sqltypes.Int24:
		return encInt, -1 << 23, 1<<23 - 1, 0
	case sqltypes.Int32:
		return encInt, math.MinInt32, math.MaxInt32, 0
	case sqltypes.Int64:
		return encInt, math.MinInt64, math.MaxInt64, 0
	case sqltypes.Uint8:
		return encUint, 0, 0, math.MaxUint8
	case sqltypes.Uint16:
		return encUint, 0, 0, math.MaxUint16
	case sqltypes.Uint24:
		return encUint, 0, 0, 1 << 24 // as SQLUint24 clamps
	case sqltypes.Uint32:
		return encUint, 0, 0, math.MaxUint32
	case sqltypes.Uint64:
		return encUint, 0, 0, math.MaxUint64
	}
	return encGeneric, 0, 0, 0
}

// encode writes the result columns of r into out (one value per column).
// An error is the one the column type's SQL method returned.
func (e *rowEncoder) encode(r *storage.Row, out []sqltypes.Value) error {
	for i := range e.cols {
		c := &e.cols[i]
		switch c.kind {
		case encInt:
			if x, signed, ok := r.IntAt(c.pos); ok && signed {
				n := min(max(int64(x), c.lo), c.hi)
				out[i] = e.put(c.base, strconv.AppendInt(e.buf.Get(), n, 10))
				continue
			}
		case encUint:
			if x, signed, ok := r.IntAt(c.pos); ok && !signed {
				out[i] = e.put(c.base, strconv.AppendUint(e.buf.Get(), min(x, c.max), 10))
				continue
			}
		case encUTF8:
			if s, ok := r.StringAt(c.pos); ok && utf8.ValidString(s) {
				out[i] = e.put(c.base, append(e.buf.Get(), s...))
				continue
			}
		}
		v := r.Value(c.pos)
		if v == nil {
			out[i] = sqltypes.NULL
			continue
		}
		val, err := c.typ.SQL(e.ctx, e.buf.Get(), v)
		if err != nil {
			return err
		}
		e.buf.Grow(val.Len())
		out[i] = val
	}
	return nil
}

// put makes b, just written at the buffer's free end, a value of type
// base, and moves the buffer's end past it (as RowToSQL does).
func (e *rowEncoder) put(base querypb.Type, b []byte) sqltypes.Value {
	e.buf.Grow(len(b))
	return sqltypes.MakeTrusted(base, b)
}

// selectScratch is what a compiled SELECT reuses from one statement to the
// next.
type selectScratch struct {
	rows  []*storage.Row
	keyed []prefixedRow
	out   [][]sqltypes.Value
	vals  []sqltypes.Value
}

// maxScratchRows bounds the slices a scratch keeps: a statement that read
// more allocates its own and leaves the pool's as they were.
const maxScratchRows = 4096

var scratchPool = sync.Pool{New: func() any { return new(selectScratch) }}

func getScratch() *selectScratch { return scratchPool.Get().(*selectScratch) }

// putScratch returns sc to the pool, holding no row or value any more.
// Each slice's length is what the statement used of it: only that is
// cleared.
func putScratch(sc *selectScratch) {
	sc.rows = reuse(sc.rows, maxScratchRows)
	sc.keyed = reuse(sc.keyed, maxScratchRows)
	sc.out = reuse(sc.out, maxScratchRows)
	sc.vals = reuse(sc.vals, 4*maxScratchRows)
	scratchPool.Put(sc)
}

// reuse returns s emptied for the next statement, or nil if its capacity
// is over limit.
func reuse[T any](s []T, limit int) []T {
	if cap(s) > limit {
		return nil
	}
	clear(s)
	return s[:0]
}

// values returns n values from the scratch's slice.
func (sc *selectScratch) values(n int) []sqltypes.Value {
	if cap(sc.vals) < n {
		sc.vals = make([]sqltypes.Value, n)
	}
	sc.vals = sc.vals[:n]
	return sc.vals
}

// encodeRows writes the columns proj of rows as the result's rows, their
// values in sc.
func encodeRows(e rowEncoder, rows []*storage.Row, sc *selectScratch) ([][]sqltypes.Value, error) {
	n := len(e.cols)
	vals := sc.values(len(rows) * n)
	out := sc.out[:0]
	for i, r := range rows {
		v := vals[i*n : (i+1)*n : (i+1)*n]
		if err := e.encode(r, v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	sc.out = out
	return out, nil
}

// sumInts is SUM of the integer column pos over rows, exactly (in 128
// bits), as a decimal; ok is false if a value is neither NULL nor an
// integer. some is false when every value is NULL.
func sumInts(rows []*storage.Row, pos int) (sum decimal.Decimal, some, ok bool) {
	var hi, lo uint64 // two's complement, 128 bits
	for _, r := range rows {
		x, signed, isInt := r.IntAt(pos)
		if !isInt {
			if r.IsNull(pos) {
				continue
			}
			return decimal.Decimal{}, false, false
		}
		var carry uint64
		lo, carry = bits.Add64(lo, x, 0)
		hi += carry
		if signed && int64(x) < 0 {
			hi-- // the sign extension: x's upper 64 bits are all ones
		}
		some = true
	}
	if !some {
		return decimal.Decimal{}, false, true
	}
	if (hi == 0 && lo <= math.MaxInt64) || (hi == math.MaxUint64 && lo > math.MaxInt64) {
		return decimal.NewFromInt(int64(lo)), true, true
	}
	neg := int64(hi) < 0
	if neg { // negate: the magnitude
		lo, hi = ^lo+1, ^hi
		if lo == 0 {
			hi++
		}
	}
	b := new(big.Int).SetUint64(hi)
	b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(lo))
	if neg {
		b.Neg(b)
	}
	return decimal.NewFromBigInt(b, 0), true, true
}
