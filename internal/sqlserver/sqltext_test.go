package sqlserver

import (
	"strings"
	"testing"
)

func TestIndexFold(t *testing.T) {
	for _, c := range []struct {
		s, word string
		want    int
	}{
		{"SELECT a FROM t", "from", 9},
		{"select a from t", "FROM", 9},
		{"select a FrOm t", "from", 9},
		{"select 'İİ' from t", "from", 14}, // ToLower would move it: İ is 2 bytes, its lower case 3
		{"select 1", "from", -1},
		{"fro", "from", -1},
		{"insert into t values (1, 'lock')", "LOCK", 26},
		{"@OR", "`or", -1}, // '@' and '`' differ only in the bit ASCII case uses
		{"", "for", -1},
		{"x", "", 0},
	} {
		if got := indexFold(c.s, c.word); got != c.want {
			t.Errorf("indexFold(%q, %q) = %d, want %d", c.s, c.word, got, c.want)
		}
	}
	// A bulk INSERT's text is searched without a copy of it.
	q := "INSERT INTO t VALUES " + strings.Repeat("(1, 'abc'),", 10000) + "(2, 'x')"
	if n := testing.AllocsPerRun(10, func() { indexFold(q, "for") }); n != 0 {
		t.Errorf("indexFold allocates %v times", n)
	}
	if got := selectList("SELECT 'İ', b FROM t"); got != "SELECT 'İ', b " {
		t.Errorf("selectList = %q", got)
	}
}
