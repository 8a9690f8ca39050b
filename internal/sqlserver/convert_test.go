package sqlserver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// convertValue skips go-mysql-server's conversion of a string only where
// that conversion gives the string back: for every column type and string
// here it answers as the conversion does (value, range, error or not).
func TestConvertValueAnswersAsTheConversion(t *testing.T) {
	ctx := sql.NewEmptyContext()
	mustType := func(typ sql.Type, err error) sql.Type {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return typ
	}
	cols := map[string]sql.Type{
		"CHAR(3)":            mustType(types.CreateString(sqltypes.Char, 3, sql.Collation_utf8mb4_0900_bin)),
		"VARCHAR(5)":         mustType(types.CreateString(sqltypes.VarChar, 5, sql.Collation_Default)),
		"VARCHAR(4) latin1":  mustType(types.CreateString(sqltypes.VarChar, 4, sql.Collation_latin1_swedish_ci)),
		"CHAR(120)":          mustType(types.CreateString(sqltypes.Char, 120, sql.Collation_Default)),
		"TINYTEXT":           types.TinyText,
		"TEXT":               types.Text,
		"BINARY(3)":          mustType(types.CreateBinary(sqltypes.Binary, 3)),
		"VARBINARY(4)":       mustType(types.CreateBinary(sqltypes.VarBinary, 4)),
		"BLOB":               types.Blob,
		"INT":                types.Int32,
		"ENUM('a','b')":      mustType(types.CreateEnumType([]string{"a", "b"}, sql.Collation_Default)),
		"SET('a','b')":       mustType(types.CreateSetType([]string{"a", "b"}, sql.Collation_Default)),
		"VARCHAR(2) ascii":   mustType(types.CreateString(sqltypes.VarChar, 2, sql.Collation_ascii_general_ci)),
		"DATETIME":           types.DatetimeMaxPrecision,
		"VARCHAR(3) utf8mb3": mustType(types.CreateString(sqltypes.VarChar, 3, sql.Collation_utf8mb3_general_ci)),
	}
	values := []string{
		"", "a", "ab", "abc", "abcd", "abcde", "abcdef", "a ", "abc  ",
		"é", "éé", "ééé", "éééé", "日本語", "日本語x", "😀", "😀😀😀",
		"\xff", "a\xffb", "\xc3", "12", "2024-01-02 03:04:05",
		strings.Repeat("x", 120), strings.Repeat("x", 121), strings.Repeat("é", 120), strings.Repeat("y", 256),
	}
	fast := 0
	for name, typ := range cols {
		for _, v := range values {
			want, wantRange, wantErr := typ.Convert(ctx, v)
			got, gotRange, gotErr := convertValue(ctx, typ, v)
			if (gotErr != nil) != (wantErr != nil) || gotRange != wantRange || !reflect.DeepEqual(got, want) {
				t.Errorf("%s of %q: got %#v, %v, %v; the conversion gives %#v, %v, %v",
					name, v, got, gotRange, gotErr, want, wantRange, wantErr)
			}
			if sameText(typ, v) {
				fast++
			}
		}
	}
	if fast == 0 {
		t.Fatal("no string took the way around the conversion")
	}
}
