package binlog

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"
)

// ColType is a column's type code in Table_map (MySQL's enum_field_types).
type ColType byte

const (
	TypeTiny       ColType = 1
	TypeShort      ColType = 2
	TypeLong       ColType = 3
	TypeFloat      ColType = 4
	TypeDouble     ColType = 5
	TypeLongLong   ColType = 8
	TypeInt24      ColType = 9
	TypeDate       ColType = 10
	TypeYear       ColType = 13
	TypeVarchar    ColType = 15
	TypeBit        ColType = 16
	TypeTimestamp2 ColType = 17
	TypeDatetime2  ColType = 18
	TypeTime2      ColType = 19
	TypeNewDecimal ColType = 246
	TypeEnum       ColType = 247
	TypeSet        ColType = 248
	TypeBlob       ColType = 252
	TypeString     ColType = 254
	TypeGeometry   ColType = 255
)

// Column is one column of a logged table, as Table_map describes it and as
// its values are encoded in row events.
//
// The Go value each type takes (nil is NULL for every type):
//
//	Tiny…LongLong    int64 or uint64 (two's complement bits are written)
//	Float, Double    float32 / float64
//	NewDecimal       string, the decimal's digits ("-12.50")
//	Date, Datetime2, Timestamp2  time.Time (UTC wall clock for Timestamp2)
//	Time2            time.Duration (negative allowed)
//	Year             int64 (0 or 1901..2155)
//	Varchar, String, Blob, Geometry  string or []byte
//	Enum             uint64, the 1-based index (0: the empty value)
//	Set, Bit         uint64, the bits
type Column struct {
	Type ColType
	// Length: Varchar and String, the maximum size in bytes; Blob and
	// Geometry, the length prefix's size (1–4); Enum, the value's size
	// (1–2); Set, (1–8); Bit, the number of bits (1–64).
	Length int
	// Precision and Scale: NewDecimal's; Scale is also the fractional
	// digits of Datetime2, Timestamp2 and Time2 (0–6).
	Precision, Scale int
	Nullable         bool
}

// metadata appends the column's Table_map metadata.
func (c Column) metadata(b []byte) []byte {
	switch c.Type {
	case TypeFloat:
		return append(b, 4)
	case TypeDouble:
		return append(b, 8)
	case TypeVarchar:
		return binary.LittleEndian.AppendUint16(b, uint16(c.Length))
	case TypeBlob, TypeGeometry:
		return append(b, byte(c.Length))
	case TypeNewDecimal:
		return append(b, byte(c.Precision), byte(c.Scale))
	case TypeBit:
		return append(b, byte(c.Length%8), byte(c.Length/8))
	case TypeEnum, TypeSet:
		return append(b, byte(c.Type), byte(c.Length))
	case TypeString:
		// The real type, with the length's bits 8-9 folded in (inverted).
		return append(b, byte(TypeString)^byte((c.Length&0x300)>>4), byte(c.Length))
	case TypeDatetime2, TypeTimestamp2, TypeTime2:
		return append(b, byte(c.Scale))
	}
	return b
}

// wireType is the type Table_map announces: ENUM and SET as STRING.
func (c Column) wireType() byte {
	if c.Type == TypeEnum || c.Type == TypeSet {
		return byte(TypeString)
	}
	return byte(c.Type)
}

// Table is a logged table: its database, name and columns in order.
type Table struct {
	DB, Name string
	Cols     []Column
}

// tableMap appends a Table_map.
//
//	[table id:6] [flags:2] [db length:1] [db] [00] [name length:1] [name] [00]
//	[column count:lenenc] [types] [metadata length:lenenc] [metadata]
//	[nullable bitmap]
func (w *eventWriter) tableMap(id uint64, t *Table) {
	s := w.begin(TableMapEvent, 0)
	w.buf = appendTableID(w.buf, id)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, tableMapFlagNone)
	w.buf = append(w.buf, byte(len(t.DB)))
	w.buf = append(w.buf, t.DB...)
	w.buf = append(w.buf, 0, byte(len(t.Name)))
	w.buf = append(w.buf, t.Name...)
	w.buf = append(w.buf, 0)
	w.buf = appendLenEnc(w.buf, uint64(len(t.Cols)))
	for _, c := range t.Cols {
		w.buf = append(w.buf, c.wireType())
	}
	var meta []byte
	for _, c := range t.Cols {
		meta = c.metadata(meta)
	}
	w.buf = appendLenEnc(w.buf, uint64(len(meta)))
	w.buf = append(w.buf, meta...)
	nulls := make([]byte, (len(t.Cols)+7)/8)
	for i, c := range t.Cols {
		if c.Nullable {
			nulls[i/8] |= 1 << (i % 8)
		}
	}
	w.buf = append(w.buf, nulls...)
	w.end(s)
}

func appendTableID(b []byte, id uint64) []byte {
	return append(b, byte(id), byte(id>>8), byte(id>>16), byte(id>>24), byte(id>>32), byte(id>>40))
}

// rowsHeader appends the start of a rows event (v1, post-header of 8):
//
//	[table id:6] [flags:2] [column count:lenenc] [columns present bitmap]
//	(Update_rows also: [columns present in the after image bitmap])
//	then per row: [null bitmap] [values] (Update_rows: before, then after)
func (w *eventWriter) rowsHeader(t EventType, id uint64, ncols int, flags uint16) int {
	s := w.begin(t, 0)
	w.buf = appendTableID(w.buf, id)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, flags)
	w.buf = appendLenEnc(w.buf, uint64(ncols))
	all := func() {
		for i := 0; i < (ncols+7)/8; i++ {
			if rem := ncols - i*8; rem < 8 {
				w.buf = append(w.buf, byte(1<<rem-1))
			} else {
				w.buf = append(w.buf, 0xff)
			}
		}
	}
	all()
	if t == UpdateRowsEventV1 {
		all()
	}
	return s
}

// appendRow appends one row image: its null bitmap and values.
func appendRow(b []byte, cols []Column, vals []any) ([]byte, error) {
	if len(vals) != len(cols) {
		return b, fmt.Errorf("binlog: a row of %d values for %d columns", len(vals), len(cols))
	}
	n := len(b)
	for range (len(cols) + 7) / 8 {
		b = append(b, 0)
	}
	for i, v := range vals {
		if v == nil {
			b[n+i/8] |= 1 << (i % 8)
			continue
		}
		var err error
		if b, err = AppendValue(b, cols[i], v); err != nil {
			return b, fmt.Errorf("binlog: column %d: %w", i+1, err)
		}
	}
	return b, nil
}

func asUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case int64:
		return uint64(x), true
	case uint64:
		return x, true
	case int:
		return uint64(x), true
	case int32:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case int16:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case int8:
		return uint64(x), true
	case uint8:
		return uint64(x), true
	}
	return 0, false
}

func asBytes(v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		return []byte(x), true
	case []byte:
		return x, true
	}
	return nil, false
}

func badValue(c Column, v any) error {
	return fmt.Errorf("a %T value for a column of type %d", v, c.Type)
}

// AppendValue appends one non-NULL value in the column's row encoding
// (row events'; for a type of fixed size, also the bytes of MariaDB's record,
// which CHECKSUM TABLE sums).
func AppendValue(b []byte, c Column, v any) ([]byte, error) {
	switch c.Type {
	case TypeTiny, TypeShort, TypeInt24, TypeLong, TypeLongLong, TypeYear, TypeEnum, TypeSet, TypeBit:
		u, ok := asUint(v)
		if !ok {
			return b, badValue(c, v)
		}
		switch c.Type {
		case TypeTiny:
			return append(b, byte(u)), nil
		case TypeShort:
			return binary.LittleEndian.AppendUint16(b, uint16(u)), nil
		case TypeInt24:
			return append(b, byte(u), byte(u>>8), byte(u>>16)), nil
		case TypeLong:
			return binary.LittleEndian.AppendUint32(b, uint32(u)), nil
		case TypeLongLong:
			return binary.LittleEndian.AppendUint64(b, u), nil
		case TypeYear:
			if u == 0 {
				return append(b, 0), nil
			}
			return append(b, byte(u-1900)), nil
		case TypeEnum, TypeSet:
			for i := range c.Length {
				b = append(b, byte(u>>(8*i)))
			}
			return b, nil
		case TypeBit:
			n := (c.Length + 7) / 8
			for i := n - 1; i >= 0; i-- {
				b = append(b, byte(u>>(8*i)))
			}
			return b, nil
		}
	case TypeFloat:
		switch x := v.(type) {
		case float32:
			return binary.LittleEndian.AppendUint32(b, math.Float32bits(x)), nil
		case float64:
			return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x))), nil
		}
	case TypeDouble:
		switch x := v.(type) {
		case float64:
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(x)), nil
		case float32:
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(x))), nil
		}
	case TypeNewDecimal:
		if s, ok := v.(string); ok {
			return appendDecimal(b, s, c.Precision, c.Scale)
		}
	case TypeDate:
		if t, ok := v.(time.Time); ok {
			d := uint32(t.Day()) | uint32(t.Month())<<5 | uint32(t.Year())<<9
			return append(b, byte(d), byte(d>>8), byte(d>>16)), nil
		}
	case TypeDatetime2:
		if t, ok := v.(time.Time); ok {
			ym := uint64(t.Year()*13 + int(t.Month()))
			packed := ym<<22 | uint64(t.Day())<<17 | uint64(t.Hour())<<12 | uint64(t.Minute())<<6 | uint64(t.Second())
			packed += 0x8000000000
			b = append(b, byte(packed>>32), byte(packed>>24), byte(packed>>16), byte(packed>>8), byte(packed))
			return appendFrac(b, int64(t.Nanosecond()/1000), c.Scale), nil
		}
	case TypeTimestamp2:
		if t, ok := v.(time.Time); ok {
			b = binary.BigEndian.AppendUint32(b, uint32(t.Unix()))
			return appendFrac(b, int64(t.Nanosecond()/1000), c.Scale), nil
		}
	case TypeTime2:
		if d, ok := v.(time.Duration); ok {
			return appendTime2(b, d, c.Scale), nil
		}
	case TypeVarchar, TypeString:
		if s, ok := asBytes(v); ok {
			if c.Type == TypeString {
				s = []byte(strings.TrimRight(string(s), " "))
			}
			if len(s) > c.Length {
				return b, fmt.Errorf("a value of %d bytes for a column of %d", len(s), c.Length)
			}
			if c.Length < 256 {
				b = append(b, byte(len(s)))
			} else {
				b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
			}
			return append(b, s...), nil
		}
	case TypeBlob, TypeGeometry:
		if s, ok := asBytes(v); ok {
			if c.Length < 4 && len(s) >= 1<<(8*c.Length) {
				return b, fmt.Errorf("a value of %d bytes for a %d-byte length", len(s), c.Length)
			}
			for i := range c.Length {
				b = append(b, byte(len(s)>>(8*i)))
			}
			return append(b, s...), nil
		}
	}
	return b, badValue(c, v)
}

// appendFrac appends the fractional seconds of Datetime2 and Timestamp2:
// (scale+1)/2 bytes, big endian.
func appendFrac(b []byte, micros int64, scale int) []byte {
	switch scale {
	case 1, 2:
		return append(b, byte(micros/10000))
	case 3, 4:
		v := micros / 100
		return append(b, byte(v>>8), byte(v))
	case 5, 6:
		return append(b, byte(micros>>16), byte(micros>>8), byte(micros))
	}
	return b
}

// appendTime2 appends a TIME(scale) value (MariaDB's
// my_time_packed_to_binary): the packed value is
// ((hours<<12 | minutes<<6 | seconds) << 24) + microseconds, negated for a
// negative time, then stored with an offset, big endian.
func appendTime2(b []byte, d time.Duration, scale int) []byte {
	neg := d < 0
	if neg {
		d = -d
	}
	us := int64(d / time.Microsecond)
	secs, frac := us/1e6, us%1e6
	hms := (secs/3600)<<12 | (secs/60%60)<<6 | secs%60
	nr := hms<<24 + frac
	if neg {
		nr = -nr
	}
	const intOfs = 0x800000
	intPart, fracPart := nr>>24, nr%(1<<24)
	put3 := func(v int64) []byte { return append(b, byte(v>>16), byte(v>>8), byte(v)) }
	switch scale {
	case 1, 2:
		b = put3(intPart + intOfs)
		return append(b, byte(int8(fracPart/10000)))
	case 3, 4:
		b = put3(intPart + intOfs)
		v := fracPart / 100
		return append(b, byte(v>>8), byte(v))
	case 5, 6:
		v := nr + 0x800000000000
		return append(b, byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return put3(intPart + intOfs)
}

// digitBytes is the size of a group of 0–9 decimal digits.
var digitBytes = [10]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}

// appendDecimal appends a DECIMAL(precision, scale) in MySQL's binary
// form: the integer digits right-aligned and the fraction left-aligned in
// groups of nine digits (four bytes, big endian), a shorter group at the
// outer ends; every byte inverted for a negative value, then the first
// byte's top bit flipped.
func appendDecimal(b []byte, s string, precision, scale int) ([]byte, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	ip, fp, _ := strings.Cut(s, ".")
	ip = strings.TrimLeft(ip, "0")
	intg := precision - scale
	if len(ip) > intg || len(fp) > scale || strings.Trim(ip+fp, "0123456789") != "" {
		return b, fmt.Errorf("decimal %q does not fit DECIMAL(%d,%d)", s, precision, scale)
	}
	ip = strings.Repeat("0", intg-len(ip)) + ip
	fp += strings.Repeat("0", scale-len(fp))
	start := len(b)
	put := func(digits string) {
		if digits == "" {
			return
		}
		var v uint32
		for _, ch := range digits {
			v = v*10 + uint32(ch-'0')
		}
		n := digitBytes[len(digits)]
		for i := n - 1; i >= 0; i-- {
			b = append(b, byte(v>>(8*i)))
		}
	}
	lead := intg % 9
	put(ip[:lead])
	for i := lead; i < len(ip); i += 9 {
		put(ip[i : i+9])
	}
	full := scale / 9 * 9
	for i := 0; i < full; i += 9 {
		put(fp[i : i+9])
	}
	put(fp[full:])
	if neg {
		for i := start; i < len(b); i++ {
			b[i] ^= 0xff
		}
	}
	b[start] ^= 0x80
	return b, nil
}
