package replica

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// literal writes a value decoded from a row event as an SQL literal for
// column c: Value's, written out. ENUM and SET are written as the names of
// c's type; BIT as b'…'; byte strings of a binary column in hex.
func literal(v any, c Column) (string, error) {
	if n, ok := v.(int64); ok {
		switch t := c.Type; {
		case strings.HasPrefix(t, "enum("):
			return enumName(t, n)
		case strings.HasPrefix(t, "set("):
			return setNames(t, n)
		case strings.HasPrefix(t, "bit("):
			return "b'" + strconv.FormatUint(uint64(n), 2) + "'", nil
		}
	}
	x, err := Value(v, c)
	if err != nil {
		return "", err
	}
	switch x := x.(type) {
	case nil:
		return "NULL", nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case decimal.Decimal:
		return x.String(), nil
	case []byte:
		return hexLiteral(x), nil
	case string:
		return quoteString(x), nil
	}
	return "", fmt.Errorf("a value of Go type %T", v)
}

// Value is a value decoded from a row event as the Go value the statement
// literal would stand for (literal): integers as int64 or uint64 by the
// column's sign, ENUM and SET as their names, BIT as its bits, a binary
// column's bytes as []byte, times as the text of the literal.
func Value(v any, c Column) (any, error) {
	t := c.Type
	unsigned := strings.Contains(t, "unsigned")
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int8:
		if unsigned {
			return uint64(uint8(x)), nil
		}
		return int64(x), nil
	case int16:
		if unsigned {
			return uint64(uint16(x)), nil
		}
		return int64(x), nil
	case int32:
		if unsigned {
			if strings.HasPrefix(t, "mediumint") {
				return uint64(uint32(x) & 0xFFFFFF), nil
			}
			return uint64(uint32(x)), nil
		}
		return int64(x), nil
	case int64:
		switch {
		case strings.HasPrefix(t, "enum("), strings.HasPrefix(t, "set("):
			// The literal's text, unquoted.
			var s string
			var err error
			if strings.HasPrefix(t, "enum(") {
				s, err = enumName(t, x)
			} else {
				s, err = setNames(t, x)
			}
			if err != nil {
				return nil, err
			}
			if !strings.HasPrefix(s, "'") {
				return nil, fmt.Errorf("a name that needs an expression: %s", s)
			}
			return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
		case strings.HasPrefix(t, "bit("), unsigned:
			return uint64(x), nil
		}
		return x, nil
	case int:
		return int64(x), nil
	case uint64:
		return x, nil
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("float value %v", x)
		}
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("double value %v", x)
		}
		return x, nil
	case decimal.Decimal:
		return x, nil
	case string:
		if isBinary(t) {
			return []byte(x), nil
		}
		return x, nil
	case []byte:
		if isBinary(t) {
			return x, nil
		}
		return string(x), nil
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999"), nil
	}
	return nil, fmt.Errorf("a value of Go type %T", v)
}

// isBinary reports whether a column of that type holds bytes, not text.
func isBinary(t string) bool {
	for _, p := range []string{"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry", "point", "linestring", "polygon"} {
		if t == p || strings.HasPrefix(t, p+"(") {
			return true
		}
	}
	return false
}

func hexLiteral(b []byte) string {
	if len(b) == 0 {
		return "''"
	}
	return "X'" + hex.EncodeToString(b) + "'"
}

// quoteString writes s as a string literal that means s whatever
// NO_BACKSLASH_ESCAPES says: quotes doubled; a backslash is written as
// CHAR(92) pieces only when there is one.
func quoteString(s string) string {
	if !strings.ContainsAny(s, "\\\x00") {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	// Rare: split on the bytes backslash escaping would change.
	var parts []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, "'"+strings.ReplaceAll(cur.String(), "'", "''")+"'")
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			flush()
			parts = append(parts, "CHAR(92 USING utf8mb4)")
		case 0:
			flush()
			parts = append(parts, "CHAR(0 USING utf8mb4)")
		default:
			cur.WriteByte(s[i])
		}
	}
	flush()
	return "CONCAT(" + strings.Join(parts, ",") + ")"
}

// typeValues reads the names of an enum('a','b') or set('a','b') type.
func typeValues(t string) []string {
	open := strings.IndexByte(t, '(')
	if open < 0 || !strings.HasSuffix(t, ")") {
		return nil
	}
	body := t[open+1 : len(t)-1]
	var out []string
	for i := 0; i < len(body); i++ {
		if body[i] != '\'' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(body); j++ {
			if body[j] == '\'' {
				if j+1 < len(body) && body[j+1] == '\'' {
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			b.WriteByte(body[j])
		}
		out = append(out, b.String())
		i = j
	}
	return out
}

func enumName(t string, idx int64) (string, error) {
	names := typeValues(t)
	switch {
	case idx == 0:
		return "''", nil
	case idx < 0 || int(idx) > len(names):
		return "", fmt.Errorf("ENUM index %d out of the %d values of %s", idx, len(names), t)
	}
	return quoteString(names[idx-1]), nil
}

func setNames(t string, bits int64) (string, error) {
	names := typeValues(t)
	var out []string
	for i := range 64 {
		if bits&(1<<i) == 0 {
			continue
		}
		if i >= len(names) {
			return "", fmt.Errorf("SET bit %d beyond the %d values of %s", i, len(names), t)
		}
		out = append(out, names[i])
	}
	return quoteString(strings.Join(out, ",")), nil
}
