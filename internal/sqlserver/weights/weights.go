package weights

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
)

// Weight strings and sort keys of strings under a collation, as
// go-mysql-server computes them rune by rune, but with the weights of the
// ASCII runes taken from a table instead of the collation's sorter (for
// the 0900 collations a map lookup per rune).
//
// A weight string (AppendWeights) is what sql.CollationID.WriteWeightString
// writes: two strings have the same weight string exactly when the
// collation takes them for equal.
//
//	binary collation:  the bytes of the string
//	other collations:  per rune, its weight as 4 bytes little-endian
//
// A sort key (AppendSortKey) orders as types.StringType.Compare does:
//
//	binary collation:  the bytes of the string (Compare walks bytes)
//	other collations:  per rune, uint32(weight) ^ 0x80000000 as 4 bytes
//	                   big-endian
//
// Compare orders by the signed weights of the runes, one after the other,
// and a proper prefix first. Flipping the sign bit makes the unsigned
// big-endian order of a weight the signed order, so bytes.Compare of two
// keys meets the first differing rune at the same place, and a key that is
// a proper prefix of another comes first. Compare pads nothing (a PAD SPACE
// collation compares 'a' below 'a '), and neither does a key.
//
// A byte that is not valid UTF-8 weighs as U+FFFD in both: Compare and
// WriteWeightString decode with utf8.DecodeRuneInString, and their checks
// for a malformed string compare the decoded length with utf8.RuneError,
// which a length never equals.

// errNoSorter is returned for a collation go-mysql-server has no weights
// for (its WriteWeightString would dereference a nil sorter).
var errNoSorter = errors.New("sqlserver: collation has no sort order")

// asciiWeightCollations bounds the collation ids that get a table of ASCII
// weights; go-mysql-server's ids end at 323. A larger id uses its sorter
// for every rune.
const asciiWeightCollations = 512

// asciiWeights holds, per collation id, the weights of runes 0 to 127,
// built on the collation's first use. Two goroutines may both build a
// table; they build the same one, and either may be kept.
var asciiWeights [asciiWeightCollations]atomic.Pointer[[utf8.RuneSelf]int32]

// weightsOf returns the collation's sorter and, when it has one, its table
// of ASCII weights (nil for a collation without a table).
func weightsOf(c sql.CollationID) (sql.CollationSorter, *[utf8.RuneSelf]int32) {
	sorter := c.Sorter()
	if sorter == nil || int(c) >= asciiWeightCollations {
		return sorter, nil
	}
	if t := asciiWeights[c].Load(); t != nil {
		return sorter, t
	}
	t := new([utf8.RuneSelf]int32)
	for r := range t {
		t[r] = sorter(rune(r))
	}
	asciiWeights[c].Store(t)
	return sorter, t
}

// AppendWeights appends to b the weight string of s under c: the bytes
// c.WriteWeightString writes for s.
func AppendWeights(b []byte, c sql.CollationID, s string) ([]byte, error) {
	if c == sql.Collation_binary {
		return append(b, s...), nil
	}
	sorter, table := weightsOf(c)
	if sorter == nil {
		return b, fmt.Errorf("weight string under %s: %w", c.Name(), errNoSorter)
	}
	return appendRuneWeights(b, sorter, table, s, false), nil
}

// errNoSortKey is returned by AppendSortKey for a collation whose
// comparison a sort key does not follow.
var errNoSortKey = errors.New("sqlserver: no sort key for collation")

// AppendSortKey appends to b the sort key of s under c, whose bytes.Compare
// with another key of the same collation is types.StringType.Compare of the
// strings under c. It returns errNoSortKey for a collation whose
// comparison a key does not follow: one without a sorter, or one that
// would decode a string other than as UTF-8 (every character set
// go-mysql-server gives a sorter to, but binary, decodes its strings as
// UTF-8).
func AppendSortKey(b []byte, c sql.CollationID, s string) ([]byte, error) {
	if c == sql.Collation_binary {
		return append(b, s...), nil
	}
	if !HasSortKey(c) {
		return b, fmt.Errorf("%s: %w", c.Name(), errNoSortKey)
	}
	sorter, table := weightsOf(c)
	return appendRuneWeights(b, sorter, table, s, true), nil
}

// appendRuneWeights appends the weight of each rune of s: as 4 bytes
// little-endian, or for a sort key as uint32(weight) ^ 0x80000000 in 4
// bytes big-endian. table, if not nil, holds the weights of the ASCII
// runes.
func appendRuneWeights(b []byte, sorter sql.CollationSorter, table *[utf8.RuneSelf]int32, s string, sortKey bool) []byte {
	b = slices.Grow(b, 4*len(s))
	for i := 0; i < len(s); {
		var w int32
		if ch := s[i]; ch < utf8.RuneSelf && table != nil {
			w = table[ch]
			i++
		} else {
			r, n := utf8.DecodeRuneInString(s[i:])
			w = sorter(r)
			i += n
		}
		if sortKey {
			b = binary.BigEndian.AppendUint32(b, uint32(w)^0x80000000)
		} else {
			b = binary.LittleEndian.AppendUint32(b, uint32(w))
		}
	}
	return b
}

// HasSortKey reports whether AppendSortKey makes keys under c.
func HasSortKey(c sql.CollationID) bool {
	if c == sql.Collation_binary {
		return true
	}
	cs := c.CharacterSet()
	return c.Sorter() != nil && cs != sql.CharacterSet_Unspecified && cs != sql.CharacterSet_binary
}

// Prefix is a number that orders strings under c as
// Compare does wherever two strings' numbers differ: the sort-key
// weights of their first two runes (under binary, their first 8 bytes), a
// missing rune below any other. Equal numbers say nothing. Sorting by it
// first spares most comparisons their rune-by-rune walk.
func Prefix(c sql.CollationID, s string) uint64 {
	if c == sql.Collation_binary {
		var b [8]byte
		copy(b[:], s)
		return binary.BigEndian.Uint64(b[:])
	}
	sorter, table := weightsOf(c)
	var p uint64
	for k := 0; k < 2; k++ {
		p <<= 32
		if len(s) == 0 {
			continue
		}
		var w int32
		if ch := s[0]; ch < utf8.RuneSelf && table != nil {
			w, s = table[ch], s[1:]
		} else {
			r, n := utf8.DecodeRuneInString(s)
			w, s = sorter(r), s[n:]
		}
		p |= uint64(uint32(w) ^ 0x80000000)
	}
	return p
}

// Compare is types.StringType.Compare of two strings under c, for
// a collation HasSortKey accepts: rune weights one after the other,
// then the shorter string first.
func Compare(c sql.CollationID, a, b string) int {
	if a == b {
		return 0
	}
	if c == sql.Collation_binary {
		return strings.Compare(a, b)
	}
	sorter, table := weightsOf(c)
	for len(a) > 0 && len(b) > 0 {
		var wa, wb int32
		if ch := a[0]; ch < utf8.RuneSelf && table != nil {
			wa, a = table[ch], a[1:]
		} else {
			r, n := utf8.DecodeRuneInString(a)
			wa, a = sorter(r), a[n:]
		}
		if ch := b[0]; ch < utf8.RuneSelf && table != nil {
			wb, b = table[ch], b[1:]
		} else {
			r, n := utf8.DecodeRuneInString(b)
			wb, b = sorter(r), b[n:]
		}
		if wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}
