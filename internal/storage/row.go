package storage

import (
	"fmt"
	"math"
	"unsafe"
)

// Compact rows.
//
// A stored row whose values are all of the plain kinds (NULL, Go integers,
// floats, strings, byte strings, booleans) keeps them as one immutable byte
// string in the journal's row encoding (appendRow), not as a []any of boxed
// values. A sysbench row (INT, INT, CHAR(120), CHAR(60)) takes 192 bytes
// in one allocation instead of about 300 in five, and the garbage collector
// has no pointer to follow inside it. Rows holding other values (times,
// decimals, JSON documents) keep their []any.
//
// Layout of the bytes, as appendRow writes them:
//
//	+-----------------+-------------+-------------+-----+
//	| uvarint n       | value 0     | value 1     | ... |   n values
//	+-----------------+-------------+-------------+-----+
//	value: tag byte, then varint (signed), uvarint (unsigned), 4 or 8 bytes
//	(floats), uvarint length + bytes (strings, byte strings), 1 byte (bool)
//
// Reading a value walks the encoding to it; integers compare without being
// boxed (intAt), strings are read in place (a string is immutable, and so
// are the bytes), byte strings are copied (a caller may write to a []byte).

// plainValue reports whether v has a compact form.
func plainValue(v any) bool {
	switch v.(type) {
	case nil, int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint,
		float32, float64, string, []byte, bool:
		return true
	}
	return false
}

// maxCompactRow bounds a compact row's encoding: its length is kept in 32
// bits. Larger rows keep their values boxed.
const maxCompactRow = math.MaxUint32

// rowHeader is the size of a Row: a compact row's bytes follow its header
// in the same allocation.
const rowHeader = unsafe.Sizeof(Row{})

// newRow returns a row numbered id holding vals: compact when they all have
// a compact form (vals is not kept then), else holding vals as they are.
func newRow(id uint64, vals []any) *Row {
	noNulls := true
	for _, v := range vals {
		if !plainValue(v) {
			return boxedRow(id, vals)
		}
		noNulls = noNulls && v != nil
	}
	size := encodedSize(vals)
	if size > maxCompactRow {
		return boxedRow(id, vals)
	}
	r, enc := allocCompact(id, size)
	if b := appendRow(enc[:0], vals); len(b) != size || &b[0] != &enc[0] {
		panic(fmt.Sprintf("storage: row of %d bytes encoded in %d", size, len(b)))
	}
	r.noNulls = noNulls
	return r
}

// copyRow returns a row numbered id holding o's values.
func copyRow(id uint64, o *Row) *Row {
	if !o.compact {
		return boxedRow(id, o.boxed())
	}
	s := o.encoded()
	r, enc := allocCompact(id, len(s))
	copy(enc, s)
	r.noNulls = o.noNulls
	return r
}

// compactRow returns a row numbered id holding a copy of enc, a row in
// appendRow's format whose values all have a compact form.
func compactRow(id uint64, enc []byte, noNulls bool) *Row {
	r, b := allocCompact(id, len(enc))
	copy(b, enc)
	r.noNulls = noNulls
	return r
}

// allocCompact allocates a compact row of size bytes of encoding, returned
// for the caller to fill. The header and the bytes are one allocation
// without pointers for the collector to follow: a row costs one object,
// and reading it touches one place in memory. Its one pointer, data, points
// into the allocation itself, so the collector need not see it: what keeps
// the allocation alive is the pointers to the row (the trees') and to its
// bytes (strings read from it).
func allocCompact(id uint64, size int) (*Row, []byte) {
	block := make([]byte, int(rowHeader)+size)
	r := (*Row)(unsafe.Pointer(unsafe.SliceData(block)))
	enc := block[rowHeader:]
	r.ID = id
	r.data, r.n, r.compact = unsafe.Pointer(unsafe.SliceData(enc)), uint32(size), true
	return r, enc
}

// boxedRow returns a row numbered id holding vals as they are.
func boxedRow(id uint64, vals []any) *Row {
	r := &Row{ID: id}
	r.setBoxed(vals)
	return r
}

// setBoxed makes r hold vals, kept as they are.
func (r *Row) setBoxed(vals []any) {
	if len(vals) > math.MaxUint32 {
		panic(fmt.Sprintf("storage: row of %d values", len(vals)))
	}
	r.data, r.n, r.compact = unsafe.Pointer(unsafe.SliceData(vals)), uint32(len(vals)), false
}

// boxed returns the values of a row that is not compact (nil if it is).
func (r *Row) boxed() []any {
	if r.compact || r.data == nil {
		return nil
	}
	return unsafe.Slice((*any)(r.data), r.n)
}

// encodedSize is the length appendRow gives vals of compact kinds: the
// row keeps the whole allocation.
func encodedSize(vals []any) int {
	n := uvarintLen(uint64(len(vals))) + len(vals) // count, tags
	for _, v := range vals {
		if bits, signed, ok := intOf(v); ok {
			if signed {
				n += varintLen(int64(bits))
			} else {
				n += uvarintLen(bits)
			}
			continue
		}
		switch x := v.(type) {
		case float32:
			n += 4
		case float64:
			n += 8
		case string:
			n += uvarintLen(uint64(len(x))) + len(x)
		case []byte:
			n += uvarintLen(uint64(len(x))) + len(x)
		case bool:
			n++
		}
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func varintLen(x int64) int {
	ux := uint64(x) << 1
	if x < 0 {
		ux = ^ux
	}
	return uvarintLen(ux)
}

// encoded returns r's compact encoding ("" when r keeps boxed values).
func (r *Row) encoded() string {
	if !r.compact {
		return ""
	}
	return unsafe.String((*byte)(r.data), int(r.n))
}

// KeyRow returns a row holding vals, to look a row up by (Table.Get,
// Table.FindRow) or to pass as a key; vals is kept as it is.
func KeyRow(vals []any) *Row { return boxedRow(0, vals) }

// Values returns the row's values. For a compact row they are decoded into
// a new slice, which the caller may keep; otherwise the row's own slice,
// which nobody may modify.
func (r *Row) Values() []any {
	if !r.compact {
		return r.boxed()
	}
	s := r.encoded()
	n, p := uvarintAt(s, 0)
	out := make([]any, n)
	for i := range out {
		out[i], p = valueAt(s, p)
	}
	return out
}

// NumValues returns the number of values in the row.
func (r *Row) NumValues() int {
	if !r.compact {
		return int(r.n)
	}
	n, _ := uvarintAt(r.encoded(), 0)
	return int(n)
}

// Value returns value i of the row.
func (r *Row) Value(i int) any {
	if !r.compact {
		return r.boxed()[i]
	}
	s := r.encoded()
	v, _ := valueAt(s, r.offset(s, i))
	return v
}

// IsNull reports whether value i of the row is NULL.
func (r *Row) IsNull(i int) bool {
	if !r.compact {
		return r.boxed()[i] == nil
	}
	if r.noNulls {
		if i < 0 || i >= r.NumValues() {
			panic(fmt.Sprintf("storage: value %d of a row of %d", i, r.NumValues()))
		}
		return false
	}
	s := r.encoded()
	return s[r.offset(s, i)] == tagNull
}

// StringAt returns value i when it is a string.
func (r *Row) StringAt(i int) (string, bool) {
	if !r.compact {
		s, ok := r.boxed()[i].(string)
		return s, ok
	}
	s := r.encoded()
	p := r.offset(s, i)
	if s[p] != tagString {
		return "", false
	}
	n, q := uvarintAt(s, p+1)
	return s[q : q+int(n)], true
}

// intAt returns value i when it is a Go integer: the bits, and whether the kind is signed.
func (r *Row) intAt(i int) (x uint64, signed, ok bool) {
	if !r.compact {
		return intOf(r.boxed()[i])
	}
	s := r.encoded()
	p := r.offset(s, i)
	switch s[p] {
	case tagInt8, tagInt16, tagInt32, tagInt64, tagInt:
		v, _ := varintAt(s, p+1)
		return uint64(v), true, true
	case tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
		v, _ := uvarintAt(s, p+1)
		return v, false, true
	}
	return 0, false, false
}

// intOf is intAt for a boxed value.
func intOf(v any) (x uint64, signed, ok bool) {
	switch x := v.(type) {
	case int64:
		return uint64(x), true, true
	case int32:
		return uint64(int64(x)), true, true
	case int16:
		return uint64(int64(x)), true, true
	case int8:
		return uint64(int64(x)), true, true
	case int:
		return uint64(int64(x)), true, true
	case uint64:
		return x, false, true
	case uint32:
		return uint64(x), false, true
	case uint16:
		return uint64(x), false, true
	case uint8:
		return uint64(x), false, true
	case uint:
		return uint64(x), false, true
	}
	return 0, false, false
}

// offset returns where value i starts in s, r's encoding.
func (r *Row) offset(s string, i int) int {
	n, p := uvarintAt(s, 0)
	if i < 0 || uint64(i) >= n {
		panic(fmt.Sprintf("storage: value %d of a row of %d", i, n))
	}
	for range i {
		p = skipValue(s, p)
	}
	return p
}

// The readers below trust their input: a compact row was encoded by
// appendRow here, or checked to decode (DecodeOp) before it was kept.

func uvarintAt(s string, p int) (uint64, int) {
	var x uint64
	var shift uint
	for {
		c := s[p]
		p++
		if c < 0x80 {
			return x | uint64(c)<<shift, p
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
}

func varintAt(s string, p int) (int64, int) {
	ux, p := uvarintAt(s, p)
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, p
}

// le reads a little-endian number of up to 8 bytes.
func le(s string) uint64 {
	var x uint64
	for i := len(s) - 1; i >= 0; i-- {
		x = x<<8 | uint64(s[i])
	}
	return x
}

// skipValue returns where the value after the one at p starts.
func skipValue(s string, p int) int {
	tag := s[p]
	p++
	switch tag {
	case tagNull:
		return p
	case tagInt8, tagInt16, tagInt32, tagInt64, tagInt, tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
		for s[p] >= 0x80 {
			p++
		}
		return p + 1
	case tagFloat32:
		return p + 4
	case tagFloat64:
		return p + 8
	case tagString, tagBytes:
		n, q := uvarintAt(s, p)
		return q + int(n)
	case tagBool:
		return p + 1
	}
	panic(fmt.Sprintf("storage: tag %d in a compact row", tag))
}

// valueAt decodes the value at p and returns where the next one starts.
func valueAt(s string, p int) (any, int) {
	tag := s[p]
	p++
	switch tag {
	case tagNull:
		return nil, p
	case tagInt8, tagInt16, tagInt32, tagInt64, tagInt:
		v, q := varintAt(s, p)
		return boxInt(tag, uint64(v)), q
	case tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
		v, q := uvarintAt(s, p)
		return boxInt(tag, v), q
	case tagFloat32:
		return math.Float32frombits(uint32(le(s[p : p+4]))), p + 4
	case tagFloat64:
		return math.Float64frombits(le(s[p : p+8])), p + 8
	case tagString:
		n, q := uvarintAt(s, p)
		return s[q : q+int(n)], q + int(n)
	case tagBytes:
		n, q := uvarintAt(s, p)
		return []byte(s[q : q+int(n)]), q + int(n)
	case tagBool:
		return s[p] != 0, p + 1
	}
	panic(fmt.Sprintf("storage: tag %d in a compact row", tag))
}

// appendRowOf appends r's values in appendRow's format.
func appendRowOf(b []byte, r *Row) []byte {
	if s := r.encoded(); s != "" {
		return append(b, s...)
	}
	return appendRow(b, r.boxed())
}

// takeValues makes r hold o's values, sharing them (rows are immutable).
// r is a row of its own (a key, a seek row), not a compact row.
func (r *Row) takeValues(o *Row) {
	r.data, r.n, r.compact, r.noNulls = o.data, o.n, o.compact, o.noNulls
}

// keyCopy returns a row with r's values, and no version.
func (r *Row) keyCopy() *Row {
	k := &Row{ID: r.ID}
	k.takeValues(r)
	return k
}

// seekFrom is Seek over the first n index columns of r.
func seekFrom(r *Row, n int, bound int8) *Row {
	s := &Row{bound: bound, prefix: uint8(n)}
	s.takeValues(r)
	return s
}

// Warm reads the first bytes of each row's values, one row after the other
// without waiting for any: the memory loads overlap, where reading the rows
// one at a time, each with its work, waits for each load in turn. A scan
// over rows spread through memory warms a batch before it works on it.
// The result means nothing; it keeps the loads from being optimised away.
func Warm(rows []*Row) (sum uint32) {
	for _, r := range rows {
		sum += r.n
		if r.compact {
			sum += uint32(*(*byte)(r.data))
		}
	}
	return sum
}

// WarmBatch is how many rows to give Warm at a time: enough loads to
// overlap, few rows read past the end of a short range.
const WarmBatch = 16

// CountNonNull returns how many of rows have a value in column col.
func CountNonNull(rows []*Row, col int) int {
	n := 0
	for len(rows) > 0 {
		b := rows[:min(WarmBatch, len(rows))]
		rows = rows[len(b):]
		Warm(b)
		for _, r := range b {
			if !r.IsNull(col) {
				n++
			}
		}
	}
	return n
}
