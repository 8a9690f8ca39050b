package storage

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Compact rows.
//
// A stored row whose values are all of the plain kinds (NULL, Go integers,
// floats, strings, byte strings, booleans) keeps them as one immutable byte
// string in the journal's value encoding (appendValue), after a 16-byte
// header, in one allocation: not as a []any of boxed values. A sysbench
// row (INT, INT, CHAR(120), CHAR(60)) takes 208 bytes instead of about 300
// in five, and the garbage collector has no pointer to follow inside it.
// Rows holding other values (times, decimals, JSON documents) keep their
// []any in a rowExt, as do key and seek rows.
//
// Layout of a compact row (allocCompact):
//
//	+----+----+--------------+-------------+-------------+-----+
//	| ID | vf | uvarint size | value 0     | value 1     | ... |
//	+----+----+--------------+-------------+-------------+-----+
//	vf: version, count of values, flags (Row); size: bytes of the values
//	value: tag byte, then varint (signed), uvarint (unsigned), 4 or 8 bytes
//	(floats), uvarint length + bytes (strings, byte strings), 1 byte (bool)
//
// The journal's row (appendRow) is the count of values, then the same
// values: a compact row is journaled and decoded by copying its bytes.
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

// maxCompactValues bounds the values of a compact row: their count is kept
// in the row's header (countBits). Rows with more keep them boxed (MySQL
// allows 4,096 columns).
const maxCompactValues = 1<<countBits - 1

// rowHeader is the size of a Row: a compact row's bytes follow its header
// in the same allocation.
const rowHeader = unsafe.Sizeof(Row{})

// rowExt is a row whose values are not in its own allocation: boxed values,
// or the values of a compact row it shares (a key or a seek row made from a
// stored row), and a seek row's bound. Its Row comes first, so that a *Row
// of it is a *rowExt (flagExt says which).
type rowExt struct {
	Row
	vals   []any // the values, boxed; nil when of is set
	of     *Row  // a compact row whose values these are
	bound  int8  // seek rows: see Row
	prefix uint8
}

func (r *Row) ext() *rowExt { return (*rowExt)(unsafe.Pointer(r)) }

// held returns the compact row that holds r's values: r itself, or the row
// r shares them with; nil when r's values are boxed.
func (r *Row) held() *Row {
	if r.vf&flagExt == 0 {
		return r
	}
	return r.ext().of
}

// compactVals returns the bytes of r's values when they are compact (ok
// false when they are boxed): the values of appendRow's format, without
// their count, which is in the header (n).
func (r *Row) compactVals() (s string, n int, ok bool) {
	h := r
	if r.vf&flagExt != 0 {
		if h = r.ext().of; h == nil {
			return "", 0, false
		}
	}
	// The size, a uvarint read in place (uvarintAt reads a string, and
	// the bytes' end is what this finds).
	p := unsafe.Add(unsafe.Pointer(h), rowHeader)
	var size uint64
	w := 0
	for shift := uint(0); ; shift += 7 {
		c := *(*byte)(unsafe.Add(p, w))
		w++
		size |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return unsafe.String((*byte)(unsafe.Add(p, w)), int(size)), h.count(), true
}

// newRow returns a row numbered id holding vals: compact when they all have
// a compact form (vals is not kept then), else holding vals as they are.
func newRow(id uint64, vals []any) *Row {
	if len(vals) > maxCompactValues {
		return boxedRow(id, vals)
	}
	noNulls := true
	for _, v := range vals {
		if !plainValue(v) {
			return boxedRow(id, vals)
		}
		noNulls = noNulls && v != nil
	}
	size := encodedSize(vals) - uvarintLen(uint64(len(vals)))
	r, enc := allocCompact(id, len(vals), size, noNulls)
	b := enc[:0]
	for _, v := range vals {
		b = appendValue(b, v)
	}
	if len(b) != size || size > 0 && &b[0] != &enc[0] {
		panic(fmt.Sprintf("storage: row of %d bytes encoded in %d", size, len(b)))
	}
	return r
}

// copyRow returns a row numbered id holding o's values.
func copyRow(id uint64, o *Row) *Row {
	h := o.held()
	if h == nil {
		return boxedRow(id, o.boxed())
	}
	s, n, _ := h.compactVals()
	r, enc := allocCompact(id, n, len(s), h.vf&flagNoNulls != 0)
	copy(enc, s)
	return r
}

// compactRow returns a row numbered id holding a copy of the values of
// enc, a row in appendRow's format whose values all have a compact form.
func compactRow(id uint64, enc []byte, noNulls bool) *Row {
	n, w := binary.Uvarint(enc)
	if w <= 0 || n > maxCompactValues {
		panic(fmt.Sprintf("storage: compact row of %d values", n))
	}
	r, b := allocCompact(id, int(n), len(enc)-w, noNulls)
	copy(b, enc[w:])
	return r
}

// allocCompact allocates a compact row of n values taking size bytes,
// returned for the caller to fill. The header, the values' length and
// the values are one allocation without pointers for the collector to
// follow: a row costs one object, and reading it touches one place in
// memory. What keeps the allocation alive is the pointers to the row
// (the trees') and to its bytes (strings read from it).
//
//	+----+----+---------------+------------------+
//	| ID | vf | uvarint size  | values           |
//	+----+----+---------------+------------------+
//	vf: version, the count of values, flagNoNulls
//
// A sysbench row (INT, INT, CHAR(120), CHAR(60): values of 190 bytes)
// takes 208 bytes, an allocator class of its own.
func allocCompact(id uint64, n, size int, noNulls bool) (*Row, []byte) {
	if n > maxCompactValues {
		panic(fmt.Sprintf("storage: compact row of %d values", n))
	}
	return placeCompact(make([]byte, compactBytes(size)), id, n, size, noNulls)
}

// compactBytes is the size of the allocation of a compact row whose values
// take size bytes.
func compactBytes(size int) int { return int(rowHeader) + uvarintLen(uint64(size)) + size }

// placeCompact is allocCompact in block, of compactBytes(size) bytes,
// 8-byte aligned.
func placeCompact(block []byte, id uint64, n, size int, noNulls bool) (*Row, []byte) {
	w := uvarintLen(uint64(size))
	r := (*Row)(unsafe.Pointer(unsafe.SliceData(block)))
	r.ID = id
	r.vf = uint64(n) << countShift
	if noNulls {
		r.vf |= flagNoNulls
	}
	binary.PutUvarint(block[rowHeader:], uint64(size))
	return r, block[int(rowHeader)+w:]
}

// boxedRow returns a row numbered id holding vals as they are.
func boxedRow(id uint64, vals []any) *Row {
	e := &rowExt{Row: Row{ID: id, vf: flagExt}, vals: vals}
	return &e.Row
}

// idRow returns a row holding nothing but the row number id, to look up a
// row of a table without a primary key.
func idRow(id uint64) *Row { return boxedRow(id, nil) }

// boxed returns the values of a row that is not compact (nil if it is).
func (r *Row) boxed() []any {
	if r.vf&flagExt == 0 {
		return nil
	}
	return r.ext().vals
}

// isCompact reports whether r holds its values compactly in its own allocation.
func (r *Row) isCompact() bool { return r.vf&flagExt == 0 }

// hasNoNulls reports whether r is a compact row without a NULL.
func (r *Row) hasNoNulls() bool { return r.vf&(flagExt|flagNoNulls) == flagNoNulls }

// count returns the number of values of a compact row (its header's).
func (r *Row) count() int { return int(r.vf >> countShift & maxCompactValues) }

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

// KeyRow returns a row holding vals, to look a row up by (Table.Get,
// Table.FindRow) or to pass as a key; vals is kept as it is.
func KeyRow(vals []any) *Row { return boxedRow(0, vals) }

// Values returns the row's values. For a compact row they are decoded into
// a new slice, which the caller may keep; otherwise the row's own slice,
// which nobody may modify.
func (r *Row) Values() []any {
	s, n, ok := r.compactVals()
	if !ok {
		return r.boxed()
	}
	out := make([]any, n)
	p := 0
	for i := range out {
		out[i], p = valueAt(s, p)
	}
	return out
}

// NumValues returns the number of values in the row.
func (r *Row) NumValues() int {
	if h := r.held(); h != nil {
		return h.count()
	}
	return len(r.boxed())
}

// Value returns value i of the row.
func (r *Row) Value(i int) any {
	s, n, ok := r.compactVals()
	if !ok {
		return r.boxed()[i]
	}
	v, _ := valueAt(s, offset(s, n, i))
	return v
}

// IsNull reports whether value i of the row is NULL.
func (r *Row) IsNull(i int) bool {
	h := r.held()
	if h == nil {
		return r.boxed()[i] == nil
	}
	if h.vf&flagNoNulls != 0 {
		if i < 0 || i >= h.count() {
			panic(fmt.Sprintf("storage: value %d of a row of %d", i, h.count()))
		}
		return false
	}
	s, n, _ := h.compactVals()
	return s[offset(s, n, i)] == tagNull
}

// StringAt returns value i when it is a string.
func (r *Row) StringAt(i int) (string, bool) {
	s, n, ok := r.compactVals()
	if !ok {
		s, ok := r.boxed()[i].(string)
		return s, ok
	}
	p := offset(s, n, i)
	if s[p] != tagString {
		return "", false
	}
	size, q := uvarintAt(s, p+1)
	return s[q : q+int(size)], true
}

// IntAt returns value i when it is an integer, without boxing it: its
// bits, and whether its kind is signed (then the bits are an int64's).
// ok is false for NULL and for values of any other kind.
func (r *Row) IntAt(i int) (x uint64, signed, ok bool) { return r.intAt(i) }

// intAt returns value i when it is a Go integer: the bits, and whether the kind is signed.
func (r *Row) intAt(i int) (x uint64, signed, ok bool) {
	x, tag, ok := r.intTagAt(i)
	return x, signedTag(tag), ok
}

// intTagAt is intAt giving, instead of the sign, the tag of the integer's
// kind in the journal's value encoding (tagInt8 … tagUint).
func (r *Row) intTagAt(i int) (x uint64, tag byte, ok bool) {
	s, n, compact := r.compactVals()
	if !compact {
		v := r.boxed()[i]
		if x, _, ok = intOf(v); !ok {
			return 0, 0, false
		}
		return x, intTag(v), true
	}
	p := offset(s, n, i)
	switch tag = s[p]; tag {
	case tagInt8, tagInt16, tagInt32, tagInt64, tagInt:
		v, _ := varintAt(s, p+1)
		return uint64(v), tag, true
	case tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
		v, _ := uvarintAt(s, p+1)
		return v, tag, true
	}
	return 0, 0, false
}

// intTag returns the tag of v, an integer intOf takes.
func intTag(v any) byte {
	switch v.(type) {
	case int8:
		return tagInt8
	case int16:
		return tagInt16
	case int32:
		return tagInt32
	case int64:
		return tagInt64
	case int:
		return tagInt
	case uint8:
		return tagUint8
	case uint16:
		return tagUint16
	case uint32:
		return tagUint32
	case uint64:
		return tagUint64
	}
	return tagUint
}

// signedTag reports whether tag is that of a signed integer.
func signedTag(tag byte) bool {
	switch tag {
	case tagInt8, tagInt16, tagInt32, tagInt64, tagInt:
		return true
	}
	return false
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

// offset returns where value i starts in s, n compact values.
func offset(s string, n, i int) int {
	if i < 0 || i >= n {
		panic(fmt.Sprintf("storage: value %d of a row of %d", i, n))
	}
	p := 0
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
	if s, n, ok := r.compactVals(); ok {
		b = binary.AppendUvarint(b, uint64(n))
		return append(b, s...)
	}
	return appendRow(b, r.boxed())
}

// shareValues returns a row of its own (a key, a seek row) numbered id
// with o's values, shared (rows are immutable).
func shareValues(id uint64, o *Row) *rowExt {
	e := &rowExt{Row: Row{ID: id, vf: flagExt}}
	if h := o.held(); h != nil {
		e.of = h
	} else {
		e.vals = o.boxed()
	}
	return e
}

// keyCopy returns a row with r's values, and no version.
func (r *Row) keyCopy() *Row { return &shareValues(r.ID, r).Row }

// seekFrom is Seek over the first n index columns of r.
func seekFrom(r *Row, n int, bound int8) *Row {
	e := shareValues(0, r)
	e.bound, e.prefix = bound, uint8(n)
	return &e.Row
}

// Warm reads the first bytes of each row's values, one row after the other
// without waiting for any: the memory loads overlap, where reading the rows
// one at a time, each with its work, waits for each load in turn. A scan
// over rows spread through memory warms a batch before it works on it.
// The result means nothing; it keeps the loads from being optimised away.
func Warm(rows []*Row) (sum uint32) {
	for _, r := range rows {
		sum += uint32(r.vf)
		if r.vf&flagExt == 0 {
			sum += uint32(*(*byte)(unsafe.Add(unsafe.Pointer(r), rowHeader)))
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
