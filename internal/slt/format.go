package slt

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Column kinds, as sqllogictest's schema letters.
const (
	kindInt   = 'I' // integers (and BIT)
	kindReal  = 'R' // FLOAT, DOUBLE, DECIMAL
	kindText  = 'T' // everything else: strings, dates, JSON…
	kindNull  = 'N' // the type of a bare NULL: matches any expected letter
	nullValue = "NULL"
)

// columnKind maps a column's type, as go-sql-driver names it
// (ColumnType.DatabaseTypeName: "INT", "UNSIGNED BIGINT", "DECIMAL",
// "VARCHAR"…), to its schema letter.
func columnKind(dbType string) byte {
	t := strings.TrimPrefix(dbType, "UNSIGNED ")
	switch t {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR", "BIT":
		return kindInt
	case "DECIMAL", "FLOAT", "DOUBLE":
		return kindReal
	case "NULL":
		return kindNull
	}
	return kindText
}

// formatValue writes one value as sqllogictest does. v is the value in the
// text protocol (nil for NULL); dbType is its column's type name.
func formatValue(v []byte, dbType string) string {
	if v == nil {
		return nullValue
	}
	switch columnKind(dbType) {
	case kindInt:
		if strings.HasSuffix(dbType, "BIT") {
			// BIT values come as big-endian bytes, not digits.
			var b [8]byte
			copy(b[8-min(len(v), 8):], v[max(0, len(v)-8):])
			return strconv.FormatUint(binary.BigEndian.Uint64(b[:]), 10)
		}
		return string(v)
	case kindReal:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return string(v)
		}
		return fmt.Sprintf("%.3f", f)
	}
	if len(v) == 0 {
		return "(empty)"
	}
	b := []byte(string(v))
	for i, c := range b {
		if c < ' ' || c > '~' {
			b[i] = '@'
		}
	}
	return string(b)
}

// schemaCompatible reports whether the column kinds a server returned
// (got) may stand for the record's schema (want): the same letters, except
// that I and R stand for each other (MySQL types "- - 8" as DECIMAL, SQLite
// as an integer) and the type of a bare NULL stands for any letter.
func schemaCompatible(want, got string) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range len(want) {
		w, g := want[i], got[i]
		switch {
		case w == g, g == kindNull:
		case (w == kindInt || w == kindReal) && (g == kindInt || g == kindReal):
		default:
			return false
		}
	}
	return true
}

// normalize rewrites values so that an integer stands for an expected
// float ("3" → "3.000") and a whole float for an expected integer
// ("3.000" → "3"); anything else is left to fail the comparison. It is
// dolthub's normalizeResults.
func normalize(values []string, schema string) {
	if schema == "" {
		return
	}
	for i, v := range values {
		switch schema[i%len(schema)] {
		case kindReal:
			if !strings.Contains(v, ".") {
				if _, err := strconv.ParseInt(v, 10, 64); err == nil {
					values[i] = v + ".000"
				}
			}
		case kindInt:
			if strings.Contains(v, ".") {
				if f, err := strconv.ParseFloat(v, 64); err == nil && math.Trunc(f) == f && math.Abs(f) < 1<<63 {
					values[i] = strconv.FormatInt(int64(f), 10)
				}
			}
		}
	}
}

// sortValues orders values by the record's sort mode: rowsort sorts the
// rows (ncols values each) by comparing their values in turn as strings,
// valuesort sorts all values, nosort (or none given) keeps the server's
// order.
func sortValues(values []string, mode string, ncols int) error {
	switch mode {
	case "", "nosort":
	case "valuesort":
		sort.Strings(values)
	case "rowsort":
		if ncols == 0 || len(values)%ncols != 0 {
			return fmt.Errorf("%d values are not rows of %d columns", len(values), ncols)
		}
		rows := make([][]string, len(values)/ncols)
		for i := range rows {
			rows[i] = values[i*ncols : (i+1)*ncols : (i+1)*ncols]
		}
		sort.SliceStable(rows, func(i, j int) bool {
			for k := range rows[i] {
				if rows[i][k] != rows[j][k] {
					return rows[i][k] < rows[j][k]
				}
			}
			return false
		})
		sorted := make([]string, 0, len(values))
		for _, r := range rows {
			sorted = append(sorted, r...)
		}
		copy(values, sorted)
	default:
		return fmt.Errorf("unknown sort mode %q", mode)
	}
	return nil
}

// hashValues is sqllogictest's result hash: the MD5 of each value followed
// by a newline, in hexadecimal.
func hashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
