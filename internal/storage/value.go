package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Value encoding inside frames: one tag byte, then the value.
//
//	nil            tagNull
//	intN / uintN   tag, varint / uvarint
//	floatN         tag, 4 / 8 bytes IEEE 754 little endian
//	string, bytes  tag, uvarint length, bytes
//	bool           tag, 0 or 1
//	time.Time      tag, uvarint length, time.MarshalBinary
//	decimal        tag, varint exponent, uvarint length, coefficient text
//	extension      tag (>= firstExtTag), uvarint length, bytes of the
//	               extension's encoder (registered by the SQL layer)
//
// The Go type of every value survives a round trip, so rows read back from a
// journal are the rows that were written.
const (
	tagNull byte = iota
	tagInt8
	tagInt16
	tagInt32
	tagInt64
	tagUint8
	tagUint16
	tagUint32
	tagUint64
	tagFloat32
	tagFloat64
	tagString
	tagBytes
	tagBool
	tagTime
	tagDecimal
	tagInt
	tagUint
	firstExtTag byte = 64
)

// ErrDecode marks a payload that does not decode: a bug or corruption.
var ErrDecode = errors.New("storage: cannot decode")

// ValueType lets the SQL layer store values of its own Go types (JSON
// documents, for instance) in rows.
type ValueType struct {
	Tag    byte // >= 64, unique
	Match  func(v any) bool
	Encode func(dst []byte, v any) []byte
	Decode func(b []byte) (any, error)
}

var extTypes struct {
	sync.RWMutex
	list  []ValueType
	byTag map[byte]ValueType
}

// RegisterValueType adds a value type to the row encoding. It is meant for
// package initialisation.
func RegisterValueType(t ValueType) {
	if t.Tag < firstExtTag {
		panic(fmt.Sprintf("storage: extension tag %d below %d", t.Tag, firstExtTag))
	}
	extTypes.Lock()
	defer extTypes.Unlock()
	if extTypes.byTag == nil {
		extTypes.byTag = map[byte]ValueType{}
	}
	if _, dup := extTypes.byTag[t.Tag]; dup {
		panic(fmt.Sprintf("storage: extension tag %d registered twice", t.Tag))
	}
	extTypes.byTag[t.Tag] = t
	extTypes.list = append(extTypes.list, t)
}

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendBytes(b []byte, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, tagNull)
	case int8:
		return binary.AppendVarint(append(b, tagInt8), int64(x))
	case int16:
		return binary.AppendVarint(append(b, tagInt16), int64(x))
	case int32:
		return binary.AppendVarint(append(b, tagInt32), int64(x))
	case int64:
		return binary.AppendVarint(append(b, tagInt64), x)
	case int:
		return binary.AppendVarint(append(b, tagInt), int64(x))
	case uint8:
		return binary.AppendUvarint(append(b, tagUint8), uint64(x))
	case uint16:
		return binary.AppendUvarint(append(b, tagUint16), uint64(x))
	case uint32:
		return binary.AppendUvarint(append(b, tagUint32), uint64(x))
	case uint64:
		return binary.AppendUvarint(append(b, tagUint64), x)
	case uint:
		return binary.AppendUvarint(append(b, tagUint), uint64(x))
	case float32:
		return binary.LittleEndian.AppendUint32(append(b, tagFloat32), math.Float32bits(x))
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat64), math.Float64bits(x))
	case string:
		b = append(b, tagString)
		b = binary.AppendUvarint(b, uint64(len(x)))
		return append(b, x...)
	case []byte:
		return appendBytes(append(b, tagBytes), x)
	case bool:
		if x {
			return append(b, tagBool, 1)
		}
		return append(b, tagBool, 0)
	case time.Time:
		p, err := x.MarshalBinary()
		if err != nil {
			panic(fmt.Sprintf("storage: time %v does not encode: %v", x, err))
		}
		return appendBytes(append(b, tagTime), p)
	case decimal.Decimal:
		// Coefficient and exponent, so that 12.3400 stays 12.3400.
		b = binary.AppendVarint(append(b, tagDecimal), int64(x.Exponent()))
		return appendBytes(b, []byte(x.Coefficient().String()))
	}
	extTypes.RLock()
	defer extTypes.RUnlock()
	for _, t := range extTypes.list {
		if t.Match(v) {
			b = append(b, t.Tag)
			lenAt := len(b)
			b = append(b, 0, 0, 0, 0)
			b = t.Encode(b, v)
			binary.LittleEndian.PutUint32(b[lenAt:], uint32(len(b)-lenAt-4))
			return b
		}
	}
	panic(fmt.Sprintf("storage: no encoding for a value of type %T", v))
}

// decoder reads values and integers from a payload, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrDecode, what)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail("length")
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) bytes() []byte { return d.take(int(d.uvarint())) }

func (d *decoder) byte1() byte {
	p := d.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (d *decoder) value() any {
	tag := d.byte1()
	if d.err != nil {
		return nil
	}
	switch tag {
	case tagNull:
		return nil
	case tagInt8, tagInt16, tagInt32, tagInt64, tagInt:
		return boxInt(tag, uint64(d.varint()))
	case tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
		return boxInt(tag, d.uvarint())
	case tagFloat32:
		p := d.take(4)
		if p == nil {
			return nil
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(p))
	case tagFloat64:
		p := d.take(8)
		if p == nil {
			return nil
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(p))
	case tagString:
		return string(d.bytes())
	case tagBytes:
		p := d.bytes()
		if p == nil {
			return []byte{}
		}
		return append([]byte(nil), p...)
	case tagBool:
		return d.byte1() != 0
	case tagTime:
		var t time.Time
		if err := t.UnmarshalBinary(d.bytes()); err != nil && d.err == nil {
			d.fail("time")
		}
		return t
	case tagDecimal:
		exp := d.varint()
		coef, ok := new(big.Int).SetString(string(d.bytes()), 10)
		if !ok {
			d.fail("decimal")
			return nil
		}
		return decimal.NewFromBigInt(coef, int32(exp))
	}
	extTypes.RLock()
	t, ok := extTypes.byTag[tag]
	extTypes.RUnlock()
	if !ok {
		d.fail(fmt.Sprintf("unknown value tag %d", tag))
		return nil
	}
	p := d.take(4)
	if p == nil {
		return nil
	}
	body := d.take(int(binary.LittleEndian.Uint32(p)))
	if d.err != nil {
		return nil
	}
	v, err := t.Decode(body)
	if err != nil {
		d.fail(fmt.Sprintf("value tag %d: %v", tag, err))
	}
	return v
}

// boxInt boxes an integer, given as its bits, as the Go kind of tag.
func boxInt(tag byte, bits uint64) any {
	switch tag {
	case tagInt8:
		return int8(bits)
	case tagInt16:
		return int16(bits)
	case tagInt32:
		return int32(bits)
	case tagInt64:
		return int64(bits)
	case tagInt:
		return int(bits)
	case tagUint8:
		return uint8(bits)
	case tagUint16:
		return uint16(bits)
	case tagUint32:
		return uint32(bits)
	case tagUint:
		return uint(bits)
	}
	return bits
}

func appendRow(b []byte, vals []any) []byte {
	b = binary.AppendUvarint(b, uint64(len(vals)))
	for _, v := range vals {
		b = appendValue(b, v)
	}
	return b
}

func (d *decoder) row() []any {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("row length")
		return nil
	}
	vals := make([]any, n)
	for i := range vals {
		vals[i] = d.value()
	}
	return vals
}

// storedRow decodes a row numbered id: compact, a copy of its bytes, when every
// value has a compact form (each checked as value would), else boxed. nil
// on an error.
func (d *decoder) storedRow(id uint64) *Row {
	start := d.b
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("row length")
		return nil
	}
	plain, noNulls := true, true
	for i := uint64(0); i < n && plain && d.err == nil; i++ {
		switch d.byte1() {
		case tagNull:
			noNulls = false
		case tagInt8, tagInt16, tagInt32, tagInt64, tagInt:
			d.varint()
		case tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
			d.uvarint()
		case tagFloat32:
			d.take(4)
		case tagFloat64:
			d.take(8)
		case tagString, tagBytes:
			d.bytes()
		case tagBool:
			d.byte1()
		default:
			plain = false
		}
	}
	if d.err != nil {
		return nil
	}
	if used := len(start) - len(d.b); plain && n <= maxCompactValues {
		return compactRow(id, start[:used], noNulls)
	}
	d.b = start
	vals := d.row()
	if d.err != nil {
		return nil
	}
	return boxedRow(id, vals)
}
