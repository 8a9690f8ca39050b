package storage

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/miraj-db/miraj/internal/journal"
)

// rowOf makes a row as storage stores one: compact when its values allow.
func rowOf(id uint64, vals []any) *Row { return newRow(id, vals) }

func typed(v any) string { return fmt.Sprintf("%T %v", v, v) }

// Every value of a compact kind reads back with its Go type and value,
// through every accessor; a row holding another kind keeps its values
// boxed; both encode for the journal as appendRow does.
func TestCompactRowReadsBackWhatWasStored(t *testing.T) {
	vals := []any{nil, int8(-128), int16(-300), int32(math.MinInt32), int64(math.MaxInt64), int(-1),
		uint8(255), uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64), uint(1 << 40),
		float32(-1.5), math.Inf(-1), "", "héllo wörld", []byte{}, []byte{0, 1, 2, 255}, true, false}
	r := rowOf(9, vals)
	if !r.isCompact() {
		t.Fatal("plain values not stored compactly")
	}
	if r.NumValues() != len(vals) {
		t.Fatalf("%d values, want %d", r.NumValues(), len(vals))
	}
	got := r.Values()
	for i, v := range vals {
		if typed(got[i]) != typed(v) || typed(r.Value(i)) != typed(v) {
			t.Errorf("value %d: Values %s, Value %s, want %s", i, typed(got[i]), typed(r.Value(i)), typed(v))
		}
		if r.IsNull(i) != (v == nil) {
			t.Errorf("value %d: IsNull %v", i, r.IsNull(i))
		}
		s, ok := r.StringAt(i)
		if w, wok := v.(string); ok != wok || s != w {
			t.Errorf("value %d: StringAt %q %v", i, s, ok)
		}
		x, signed, ok := r.intAt(i)
		if wx, ws, wok := intOf(v); ok != wok || x != wx || signed != ws {
			t.Errorf("value %d: intAt %d %v %v, want %d %v %v", i, x, signed, ok, wx, ws, wok)
		}
	}
	// A row without NULLs says so without reading its values.
	full := rowOf(2, []any{int64(1), "x", 2.5})
	if !full.hasNoNulls() || r.hasNoNulls() {
		t.Fatalf("noNulls %v for a row without NULLs, %v for one with", full.hasNoNulls(), r.hasNoNulls())
	}
	for i := range 3 {
		if full.IsNull(i) {
			t.Errorf("value %d of a row without NULLs is NULL", i)
		}
	}
	// NaN keeps its bits.
	if f := rowOf(1, []any{math.NaN()}).Value(0).(float64); !math.IsNaN(f) {
		t.Errorf("NaN read back as %v", f)
	}
	// A []byte read from a row is the caller's: writing to it changes
	// nothing stored.
	b := r.Value(16).([]byte)
	b[0] = 99
	if r.Value(16).([]byte)[0] != 0 {
		t.Fatal("a byte string read from a compact row aliases the row")
	}
	if string(appendRowOf(nil, r)) != string(appendRow(nil, vals)) {
		t.Fatal("a compact row encodes for the journal unlike appendRow")
	}

	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	boxed := rowOf(10, []any{int64(1), when})
	if boxed.isCompact() {
		t.Fatal("a row holding a time stored compactly")
	}
	if boxed.Value(1) != when || string(appendRowOf(nil, boxed)) != string(appendRow(nil, []any{int64(1), when})) {
		t.Fatalf("boxed row reads %v", boxed.Values())
	}
}

// Rows decoded from the journal are compact exactly when stored rows are.
func TestDecodedRowsAreCompact(t *testing.T) {
	for _, tc := range []struct {
		vals    []any
		compact bool
	}{
		{[]any{int32(7), "x", nil}, true},
		{[]any{int32(7), "x"}, true},
		{[]any{int32(7), time.Unix(0, 0).UTC()}, false},
	} {
		op := &Op{Kind: OpInsert, Table: "t", Row: rowOf(3, tc.vals)}
		got, err := DecodeOp(OpInsert, encodeOp(appendUvarint(nil, 1), op))
		if err != nil {
			t.Fatal(err)
		}
		if got.Row.isCompact() != tc.compact || got.Row.hasNoNulls() != rowOf(3, tc.vals).hasNoNulls() || fmt.Sprint(got.Row.Values()) != fmt.Sprint(tc.vals) {
			t.Errorf("%v decoded as %v (compact %v)", tc.vals, got.Row.Values(), got.Row.isCompact())
		}
	}
}

// A row's header is 16 bytes: with its values (190 bytes and their length)
// in the same allocation, a sysbench row takes the allocator's class of
// 208 bytes, not 224.
func TestRowSize(t *testing.T) {
	if n := unsafe.Sizeof(Row{}); n > 16 {
		t.Fatalf("Row is %d bytes", n)
	}
	pad := func(n int) string { return strings.Repeat("7", n) }
	r := newRow(1, []any{int32(1_000_000), int32(999_999), pad(119), pad(59)}) // id and k of a million-row table
	s, _, _ := r.compactVals()
	if size := int(rowHeader) + uvarintLen(uint64(len(s))) + len(s); size > 208 {
		t.Fatalf("a sysbench row takes %d bytes", size)
	}
}

// A compact row is one allocation without pointers: what
// keeps it alive is a pointer to the row or a string read from it. Rows
// dropped but for their strings, and rows kept only by a tree, read back
// intact after collections that reuse the freed memory.
func TestCompactRowsSurviveCollections(t *testing.T) {
	const n = 20000
	strs := make([]string, n)
	tree := make([]*Row, 0, n)
	for i := range n {
		r := rowOf(uint64(i), []any{int64(i), fmt.Sprintf("row %d", i), []byte("pad")})
		if i%2 == 0 {
			tree = append(tree, r)
		} else {
			strs[i], _ = r.StringAt(1)
		}
	}
	for range 3 {
		runtime.GC()
		// Garbage of every size near the rows', to take freed memory.
		junk := make([][]byte, 0, 4*n)
		for i := range 4 * n {
			junk = append(junk, bytes.Repeat([]byte{0xff}, 8+i%96))
		}
		runtime.KeepAlive(junk)
	}
	for i, s := range strs {
		if i%2 == 0 {
			continue
		}
		if want := fmt.Sprintf("row %d", i); s != want {
			t.Fatalf("string %d reads %q, want %q", i, s, want)
		}
	}
	for j, r := range tree {
		i := 2 * j
		if r.ID != uint64(i) || r.Value(0) != int64(i) || r.Value(1) != fmt.Sprintf("row %d", i) || string(r.Value(2).([]byte)) != "pad" {
			t.Fatalf("row %d reads %d %v", i, r.ID, r.Values())
		}
	}
}

// AppendOp encodes a frame in place: the same bytes as a frame around the
// op's payload, which reads back as the op, whether the buffer has room or
// must grow, after other frames; sizeHint leaves no room short for a row
// change of compact rows.
func TestAppendOpFramesInPlace(t *testing.T) {
	old, row := rowOf(3, []any{int32(7), "x", nil}), rowOf(3, []any{int32(7), strings.Repeat("y", 300), int64(-5)})
	boxed := rowOf(4, []any{int32(8), time.Unix(0, 0).UTC()})
	for _, op := range []*Op{
		{Kind: OpInsert, Txn: 9, Table: "t", Row: row},
		{Kind: OpUpdate, Txn: 9, Table: "t", Old: old, Row: row},
		{Kind: OpDelete, Txn: 9, Table: "t", Old: old},
		{Kind: OpInsert, Txn: 9, Table: "t", Row: boxed},
		{Kind: OpDropTable, Txn: 9, Table: "t"},
	} {
		want := journal.AppendFrame([]byte("before"), journal.FrameType(op.Kind), encodeOp(appendUvarint(nil, op.Txn), op))
		for _, room := range []int{0, 1 << 12} {
			got := AppendOp(append(make([]byte, 0, room), "before"...), op)
			if string(got) != string(want) {
				t.Fatalf("%v (room %d): %x, want %x", op.Kind, room, got, want)
			}
		}
		typ, payload, size, ok := journal.DecodeFrame(want[len("before"):])
		if !ok || size != len(want)-len("before") || typ != journal.FrameType(op.Kind) {
			t.Fatalf("%v: frame does not decode", op.Kind)
		}
		if _, err := DecodeOp(OpKind(typ), payload); err != nil {
			t.Fatalf("%v: %v", op.Kind, err)
		}
		if op.Row != nil && op.Row.isCompact() || op.Old != nil && op.Old.isCompact() {
			if n := len(AppendOp(nil, op)); n > op.sizeHint() {
				t.Fatalf("%v: %d bytes, hint %d", op.Kind, n, op.sizeHint())
			}
		}
	}
}
