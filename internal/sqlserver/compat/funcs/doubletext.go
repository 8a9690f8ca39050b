package funcs

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// DOUBLE values as MySQL's text protocol writes them (String::set_real,
// my_gcvt with its widest field): the shortest digits that read back as
// the same double, in positional notation when the decimal exponent is
// between -15 and 14 (|x| from 1e-15 to below 1e15, or a non-integer
// with more digits before its point), in exponent notation otherwise,
// without a '+' or leading zeros in the exponent: 3020399, 0.000001,
// 100000000000000, 1e15, 1.2345678901234568e17, 1e-16. go-mysql-server
// wrote Go's %g: 3.020399e+06, 1e-06, 1e+15.

// MySQLDoubles rewrites r's DOUBLE values that go-mysql-server wrote in
// exponent notation.
func MySQLDoubles(r *sqltypes.Result) {
	for i, f := range r.Fields {
		if f.Type != querypb.Type_FLOAT64 {
			continue
		}
		for _, row := range r.Rows {
			if i >= len(row) || row[i].IsNull() {
				continue
			}
			raw := row[i].Raw()
			if bytes.IndexByte(raw, 'e') < 0 {
				continue // %g writes |x| from 1e-4 to below 1e21 the same
			}
			v, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				continue
			}
			row[i] = sqltypes.MakeTrusted(querypb.Type_FLOAT64, []byte(MySQLDoubleText(v)))
		}
	}
}

// MySQLDoubleText is v as MySQL writes a DOUBLE.
func MySQLDoubleText(v float64) string {
	s := strconv.FormatFloat(v, 'e', -1, 64) // -d.ddde±XX
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	e := strings.IndexByte(s, 'e')
	exp, _ := strconv.Atoi(s[e+1:])
	digits := strings.Replace(s[:e], ".", "", 1)
	n := len(digits)
	decpt := exp + 1 // the value is 0.digits × 10^decpt
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	if decpt >= -14 && (decpt <= 15 || n > decpt) {
		switch {
		case decpt <= 0:
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -decpt))
			b.WriteString(digits)
		case decpt >= n:
			b.WriteString(digits)
			b.WriteString(strings.Repeat("0", decpt-n))
		default:
			b.WriteString(digits[:decpt])
			b.WriteByte('.')
			b.WriteString(digits[decpt:])
		}
		return b.String()
	}
	b.WriteByte(digits[0])
	if n > 1 {
		b.WriteByte('.')
		b.WriteString(digits[1:])
	}
	b.WriteByte('e')
	b.WriteString(strconv.Itoa(exp))
	return b.String()
}
