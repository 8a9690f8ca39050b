package weights

import (
	"bytes"
	"cmp"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// stringPieces are the parts randomString joins: ASCII of every kind,
// letters that fold to others under accent- or case-insensitive
// collations, characters outside the BMP, and bytes that are not UTF-8.
var stringPieces = []string{
	"a", "A", "b", "B", "c", "z", "Z", "e", "E", "s", "ss", "o", "0", "9",
	" ", "  ", "\t", "\n", "\x00", "\x7f", "-", "_", ".", ",", "'", "\"", "%", "~", "@", "[", "`",
	"é", "É", "è", "ê", "ë", "á", "Á", "à", "å", "ä", "Ä", "æ", "ø", "ö", "ñ", "Ñ", "ß", "ç", "ł", "ı", "İ",
	"\u00a0", "\u0301", "\u200b", "€", "ﬁ", "Ⅻ", "中", "文", "ア", "ｱ", "한",
	"😀", "👍🏽", "𝔸", "\U0010ffff",
	"\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\x80",
}

// randomString returns a string of up to 8 pieces, or of random ASCII.
func randomString(rng *rand.Rand) string {
	var sb strings.Builder
	n := rng.Intn(9)
	if rng.Intn(4) == 0 {
		for range n {
			sb.WriteByte(byte(rng.Intn(128)))
		}
		return sb.String()
	}
	for range n {
		sb.WriteString(stringPieces[rng.Intn(len(stringPieces))])
	}
	return sb.String()
}

// relatedString returns a string that often shares a prefix with s, or
// differs from it in case or accents only, so that comparisons reach
// beyond the first rune and meet equal weights.
func relatedString(rng *rand.Rand, s string) string {
	switch rng.Intn(5) {
	case 0:
		return randomString(rng)
	case 1:
		return strings.ToUpper(s)
	case 2:
		return s[:rng.Intn(len(s)+1)]
	case 3:
		return s[:rng.Intn(len(s)+1)] + randomString(rng)
	default:
		return s + stringPieces[rng.Intn(len(stringPieces))]
	}
}

// sortKeyTestCollations lists every collation go-mysql-server knows, and
// the unspecified one (id 0, with the default collation's sorter).
func sortKeyTestCollations(t *testing.T) []sql.CollationID {
	ids := []sql.CollationID{sql.Collation_Unspecified}
	it := sql.NewCollationsIterator()
	for {
		c, ok := it.Next()
		if !ok {
			break
		}
		ids = append(ids, c.ID)
	}
	for _, want := range []sql.CollationID{
		sql.Collation_utf8mb4_0900_ai_ci, sql.Collation_utf8mb4_0900_bin, sql.Collation_utf8mb4_general_ci,
		sql.Collation_utf8mb4_unicode_ci, sql.Collation_utf8mb4_bin, sql.Collation_latin1_swedish_ci,
		sql.Collation_utf8mb3_general_ci, sql.Collation_binary,
	} {
		found := false
		for _, id := range ids {
			found = found || id == want
		}
		if !found {
			t.Fatalf("collation %s is not iterated", want.Name())
		}
	}
	return ids
}

type bufWriter struct{ bytes.Buffer }

// AppendWeights writes WriteWeightString's bytes for every collation with
// a sorter, and refuses the others (where WriteWeightString would call a
// nil sorter).
func TestWeightsMatchWriteWeightString(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, c := range sortKeyTestCollations(t) {
		if c.Sorter() == nil {
			if _, err := AppendWeights(nil, c, "a"); !errors.Is(err, errNoSorter) {
				t.Errorf("%s has no sorter: AppendWeights error %v, want errNoSorter", c.Name(), err)
			}
			continue
		}
		prefix := []byte("prefix")
		for i := 0; i < 2000; i++ {
			s := randomString(rng)
			var w bufWriter
			wantErr := c.WriteWeightString(&w, s)
			got, err := AppendWeights(prefix, c, s)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("%s %q: error %v, WriteWeightString's %v", c.Name(), s, err, wantErr)
			}
			if err != nil {
				continue
			}
			if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], w.Bytes()) {
				t.Fatalf("%s %q: weights %x, WriteWeightString's %x", c.Name(), s, got[len(prefix):], w.Bytes())
			}
		}
	}
}

// bytes.Compare of two sort keys is types.StringType.Compare of their
// strings, for every collation that has sort keys; the others are refused.
func TestSortKeysMatchStringCompare(t *testing.T) {
	ctx := sql.NewEmptyContext()
	rng := rand.New(rand.NewSource(2))
	keyed, prefixed := 0, 0
	for _, c := range sortKeyTestCollations(t) {
		if !HasSortKey(c) {
			if _, err := AppendSortKey(nil, c, "a"); !errors.Is(err, errNoSortKey) {
				t.Errorf("%s: AppendSortKey error %v, want errNoSortKey", c.Name(), err)
			}
			continue
		}
		keyed++
		typ := types.MustCreateString(sqltypes.VarChar, 1000, c)
		if c == sql.Collation_binary {
			typ = types.MustCreateString(sqltypes.VarBinary, 1000, c)
		}
		var ka, kb []byte
		for i := 0; i < 3000; i++ {
			a := randomString(rng)
			b := relatedString(rng, a)
			if rng.Intn(2) == 0 {
				a, b = b, a
			}
			want, err := typ.Compare(ctx, a, b)
			if err != nil {
				t.Fatalf("%s: Compare(%q, %q): %v", c.Name(), a, b, err)
			}
			if ka, err = AppendSortKey(ka[:0], c, a); err != nil {
				t.Fatal(err)
			}
			if kb, err = AppendSortKey(kb[:0], c, b); err != nil {
				t.Fatal(err)
			}
			if got := bytes.Compare(ka, kb); got != want {
				t.Fatalf("%s: keys of %q and %q compare %d, Compare says %d", c.Name(), a, b, got, want)
			}
			if got := Compare(c, a, b); got != want {
				t.Fatalf("%s: Compare(%q, %q) = %d, Compare says %d", c.Name(), a, b, got, want)
			}
			if pa, pb := Prefix(c, a), Prefix(c, b); pa != pb {
				prefixed++
				if got := cmp.Compare(pa, pb); got != want {
					t.Fatalf("%s: prefixes of %q and %q compare %d, Compare says %d", c.Name(), a, b, got, want)
				}
			}
		}
	}
	if keyed < 100 {
		t.Errorf("only %d collations have sort keys", keyed)
	}
	if prefixed < 10000 {
		t.Errorf("only %d pairs of strings had different prefixes", prefixed)
	}
}

// The table of ASCII weights is built once per collation, from any
// number of goroutines.
func TestWeightsConcurrentFirstUse(t *testing.T) {
	c := sql.Collation_utf8mb4_0900_as_cs
	var w bufWriter
	if err := c.WriteWeightString(&w, "Hello, World"); err != nil {
		t.Fatal(err)
	}
	done := make(chan []byte)
	for range 8 {
		go func() {
			b, _ := AppendWeights(nil, c, "Hello, World")
			done <- b
		}()
	}
	for range 8 {
		if b := <-done; !bytes.Equal(b, w.Bytes()) {
			t.Errorf("weights %x, want %x", b, w.Bytes())
		}
	}
}
