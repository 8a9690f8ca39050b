package slt

import (
	"slices"
	"strings"
	"testing"
)

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v      []byte
		dbType string
		want   string
	}{
		{nil, "INT", "NULL"},
		{nil, "VARCHAR", "NULL"},
		{[]byte("-42"), "BIGINT", "-42"},
		{[]byte("18446744073709551615"), "UNSIGNED BIGINT", "18446744073709551615"},
		{[]byte{0x01, 0x02}, "BIT", "258"},
		{[]byte("2.5"), "DECIMAL", "2.500"},
		{[]byte("-0.0005"), "DOUBLE", "-0.001"},
		{[]byte("1e3"), "FLOAT", "1000.000"},
		{[]byte(""), "VARCHAR", "(empty)"},
		{[]byte("a\tb\xc3\xa9"), "TEXT", "a@b@@"},
		{[]byte("2024-01-02"), "DATE", "2024-01-02"},
	} {
		if got := formatValue(c.v, c.dbType); got != c.want {
			t.Errorf("formatValue(%q, %s) = %q, want %q", c.v, c.dbType, got, c.want)
		}
	}
}

func TestSchemaCompatible(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"III", "III", true},
		{"IR", "RI", true},
		{"IT", "IT", true},
		{"IT", "II", false},
		{"T", "R", false},
		{"I", "N", true},
		{"II", "I", false},
	} {
		if got := schemaCompatible(c.want, c.got); got != c.ok {
			t.Errorf("schemaCompatible(%s, %s) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}

func TestNormalize(t *testing.T) {
	v := []string{"3", "3.000", "3.500", "NULL", "4", "x"}
	normalize(v, "RIIIRT")
	want := []string{"3.000", "3", "3.500", "NULL", "4.000", "x"}
	if !slices.Equal(v, want) {
		t.Errorf("normalize = %v, want %v", v, want)
	}
}

func TestSortValues(t *testing.T) {
	v := []string{"b", "2", "a", "9", "a", "1"}
	if err := sortValues(v, "rowsort", 2); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "1", "a", "9", "b", "2"}; !slices.Equal(v, want) {
		t.Errorf("rowsort = %v, want %v", v, want)
	}
	v = []string{"b", "2", "a", "9"}
	sortValues(v, "valuesort", 2)
	if want := []string{"2", "9", "a", "b"}; !slices.Equal(v, want) {
		t.Errorf("valuesort = %v, want %v", v, want)
	}
	v = []string{"b", "a"}
	sortValues(v, "nosort", 1)
	if want := []string{"b", "a"}; !slices.Equal(v, want) {
		t.Errorf("nosort = %v, want %v", v, want)
	}
	if err := sortValues([]string{"a", "b", "c"}, "rowsort", 2); err == nil {
		t.Error("rowsort of 3 values in rows of 2: no error")
	}
	if err := sortValues(nil, "sideways", 1); err == nil {
		t.Error("unknown sort mode: no error")
	}
}

func TestHashValues(t *testing.T) {
	// printf '1\n3\n' | md5sum
	if got := hashValues([]string{"1", "3"}); got != "0a88863510308751293f4b91afc07dd6" {
		t.Errorf("hashValues = %s", got)
	}
}

func TestParseKnown(t *testing.T) {
	l, err := ParseKnown(strings.NewReader("# c\n\nselect5.test:12 known planner: 20-table join\nevidence/in1.test:7 intended MySQL refuses IN ()\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 2 || l.entries["evidence/in1.test:7"].Reason != "MySQL refuses IN ()" {
		t.Errorf("parsed %+v", l.ordered)
	}
	for _, bad := range []string{
		"select5.test:12 known",        // no reason
		"select5.test known reason",    // no line
		"select5.test:12 maybe reason", // not known/intended
		"a.test:1 known r\na.test:1 known r",
	} {
		if _, err := ParseKnown(strings.NewReader(bad), "x"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
