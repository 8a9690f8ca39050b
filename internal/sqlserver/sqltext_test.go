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
	// A bulk INSERT's text is searched without a copy of it. AllocsPerRun
	// counts the whole process's allocations, so a goroutine of another
	// test that allocates meanwhile counts too: the least of a few runs
	// is indexFold's own (it allocates in every run if it allocates).
	q := "INSERT INTO t VALUES " + strings.Repeat("(1, 'abc'),", 10000) + "(2, 'x')"
	least := -1.0
	for range 5 {
		if n := testing.AllocsPerRun(10, func() { indexFold(q, "for") }); least < 0 || n < least {
			least = n
		}
	}
	if least != 0 {
		t.Errorf("indexFold allocates %v times", least)
	}
	if got := selectList("SELECT 'İ', b FROM t"); got != "SELECT 'İ', b " {
		t.Errorf("selectList = %q", got)
	}
}
