package sqltext

import (
	"math/rand/v2"
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
		if got := IndexFold(c.s, c.word); got != c.want {
			t.Errorf("IndexFold(%q, %q) = %d, want %d", c.s, c.word, got, c.want)
		}
	}
	// A bulk INSERT's text is searched without a copy of it. AllocsPerRun
	// counts the whole process's allocations, so a goroutine of another
	// test that allocates meanwhile counts too: the least of a few runs
	// is IndexFold's own (it allocates in every run if it allocates).
	q := "INSERT INTO t VALUES " + strings.Repeat("(1, 'abc'),", 10000) + "(2, 'x')"
	least := -1.0
	for range 5 {
		if n := testing.AllocsPerRun(10, func() { IndexFold(q, "for") }); least < 0 || n < least {
			least = n
		}
	}
	if least != 0 {
		t.Errorf("IndexFold allocates %v times", least)
	}
	// Against the byte-by-byte search, on random texts of few letters.
	plain := func(s, word string) int {
		for i := 0; i+len(word) <= len(s); i++ {
			if s[i]|0x20 == word[0]|0x20 && strings.EqualFold(s[i:i+len(word)], word) {
				return i
			}
		}
		return -1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "fFoOrR@`( x"
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		w := []string{"for", "FoR", "r", "`or", "@", "( x", "or"}[rng.IntN(7)]
		if got, want := IndexFold(string(b), w), plain(string(b), w); got != want {
			t.Fatalf("IndexFold(%q, %q) = %d, want %d", b, w, got, want)
		}
	}
}
