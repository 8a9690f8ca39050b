package storage

import (
	"math"
	"slices"

	"github.com/tidwall/btree"
)

// The trees of an index of integers.
//
// An entry is two integers of up to 64 bits each (intEntry). When both of
// the index's kinds take 32 bits or fewer (INT and smaller, signed or not),
// the tree holds each entry packed into one 64-bit integer whose order is
// the entries' order: half the memory of two, and a comparison of one
// unsigned integer. A wider kind (BIGINT, or the row number of a table
// without a primary key) gets a tree of two.

// entryTree is the tree of an index of integers.
type entryTree interface {
	Len() int
	// set adds e; whether it replaced an entry equal to it.
	set(e intEntry, hint *btree.PathHint) (replaced bool)
	// fill fills the empty tree with the n entries entries gives, sorted
	// first, then loaded in order, then copied into nodes of their own
	// (see unshared); false, and the tree left empty, when entries does.
	fill(n int, entries func(fn func(intEntry)) bool) bool
	// remove takes e out; whether the tree held it.
	remove(e intEntry) bool
	// walk calls fn for the entries from the first not below from on,
	// or down from the last not above it (from nil: from the first, or
	// the last), until fn returns false. from's integers may lie outside
	// the index's kinds.
	walk(from *intEntry, down bool, fn func(intEntry) bool)
	iter() entryIter
	copy() entryTree
}

// entryIter steps through an entryTree.
type entryIter interface {
	first() bool
	// seek moves to the first entry not below e (whose integers may lie
	// outside the index's kinds).
	seek(e intEntry) bool
	next() bool
	item() intEntry
	release()
}

// newEntryTree returns an empty tree for entries of a key and a primary key
// of the kinds of tags keyTag and pkTag.
func newEntryTree(keyTag, pkTag byte) entryTree {
	ks, ps := signedTag(keyTag), signedTag(pkTag)
	if narrowTag(keyTag) && narrowTag(pkTag) {
		return &narrowTree{t: btree.NewBTreeGOptions(func(a, b uint64) bool { return a < b }, btreeOpts), keySigned: ks, pkSigned: ps}
	}
	return &wideTree{t: btree.NewBTreeGOptions(intLess(ks, ps), btreeOpts)}
}

// narrowTag reports whether every integer of the kind of tag takes 32 bits.
func narrowTag(tag byte) bool {
	switch tag {
	case tagInt8, tagInt16, tagInt32, tagUint8, tagUint16, tagUint32:
		return true
	}
	return false
}

// wideTree holds entries as they are.
type wideTree struct{ t *btree.BTreeG[intEntry] }

func (w *wideTree) Len() int { return w.t.Len() }

func (w *wideTree) set(e intEntry, hint *btree.PathHint) bool {
	_, replaced := w.t.SetHint(e, hint)
	return replaced
}

func (w *wideTree) fill(n int, entries func(fn func(intEntry)) bool) bool {
	es := make([]intEntry, 0, n)
	if !entries(func(e intEntry) { es = append(es, e) }) {
		return false
	}
	less := w.t.Less
	slices.SortFunc(es, func(a, b intEntry) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
	w.t = loadInOrder(w.t, es)
	return true
}

func (w *wideTree) remove(e intEntry) bool {
	_, ok := w.t.Delete(e)
	return ok
}

func (w *wideTree) walk(from *intEntry, down bool, fn func(intEntry) bool) {
	var at intEntry
	if from != nil {
		at = *from
	}
	walkTree(w.t, at, from == nil, down, fn)
}

func (w *wideTree) iter() entryIter { return &wideIter{it: w.t.Iter()} }
func (w *wideTree) copy() entryTree { return &wideTree{t: w.t.Copy()} }

type wideIter struct{ it btree.IterG[intEntry] }

func (w *wideIter) first() bool          { return w.it.First() }
func (w *wideIter) seek(e intEntry) bool { return w.it.Seek(e) }
func (w *wideIter) next() bool           { return w.it.Next() }
func (w *wideIter) item() intEntry       { return w.it.Item() }
func (w *wideIter) release()             { w.it.Release() }

// narrowTree holds each entry packed: the key's 32 bits above the primary
// key's, each signed kind offset by 2^31 so that unsigned order is theirs.
type narrowTree struct {
	t                   *btree.BTreeG[uint64]
	keySigned, pkSigned bool
}

// half maps v, an integer of a kind of 32 bits or fewer (signed: as intAt
// gives it), onto 32 bits in its order.
func half(v uint64, signed bool) uint32 {
	if signed {
		return uint32(v) ^ 1<<31
	}
	return uint32(v)
}

// whole is the inverse of half.
func whole(h uint32, signed bool) uint64 {
	if signed {
		return uint64(int64(int32(h ^ 1<<31)))
	}
	return uint64(h)
}

func (n *narrowTree) pack(e intEntry) uint64 {
	return uint64(half(e.key, n.keySigned))<<32 | uint64(half(e.pk, n.pkSigned))
}

func (n *narrowTree) unpack(u uint64) intEntry {
	return intEntry{key: whole(uint32(u>>32), n.keySigned), pk: whole(uint32(u), n.pkSigned)}
}

// place says where v, an integer of 64 bits (signed or not), falls among
// those of 32: below them all (-1), above them all (1), or among them, at h.
func place(v uint64, signed bool) (side int, h uint32) {
	switch {
	case signed && int64(v) < math.MinInt32:
		return -1, 0
	case signed && int64(v) > math.MaxInt32, !signed && v > math.MaxUint32:
		return 1, 0
	}
	return 0, half(v, signed)
}

// ceil returns the least packed entry not below e; false when every entry
// of the tree's kinds is below e.
func (n *narrowTree) ceil(e intEntry) (uint64, bool) {
	ks, k := place(e.key, n.keySigned)
	switch ks {
	case -1:
		return 0, true
	case 1:
		return 0, false
	}
	ps, p := place(e.pk, n.pkSigned)
	switch {
	case ps < 0:
		p = 0
	case ps > 0 && k == math.MaxUint32:
		return 0, false
	case ps > 0:
		k, p = k+1, 0
	}
	return uint64(k)<<32 | uint64(p), true
}

// floor returns the greatest packed entry not above e; false when every
// entry of the tree's kinds is above e.
func (n *narrowTree) floor(e intEntry) (uint64, bool) {
	ks, k := place(e.key, n.keySigned)
	switch ks {
	case 1:
		return math.MaxUint64, true
	case -1:
		return 0, false
	}
	ps, p := place(e.pk, n.pkSigned)
	switch {
	case ps > 0:
		p = math.MaxUint32
	case ps < 0 && k == 0:
		return 0, false
	case ps < 0:
		k, p = k-1, math.MaxUint32
	}
	return uint64(k)<<32 | uint64(p), true
}

func (n *narrowTree) Len() int { return n.t.Len() }

func (n *narrowTree) set(e intEntry, hint *btree.PathHint) bool {
	_, replaced := n.t.SetHint(n.pack(e), hint)
	return replaced
}

func (n *narrowTree) fill(size int, entries func(fn func(intEntry)) bool) bool {
	us := make([]uint64, 0, size)
	if !entries(func(e intEntry) { us = append(us, n.pack(e)) }) {
		return false
	}
	slices.Sort(us)
	n.t = loadInOrder(n.t, us)
	return true
}

func (n *narrowTree) remove(e intEntry) bool {
	_, ok := n.t.Delete(n.pack(e))
	return ok
}

func (n *narrowTree) walk(from *intEntry, down bool, fn func(intEntry) bool) {
	each := func(u uint64) bool { return fn(n.unpack(u)) }
	var at uint64
	if from != nil {
		ok := false
		if down {
			at, ok = n.floor(*from)
		} else {
			at, ok = n.ceil(*from)
		}
		if !ok {
			return
		}
	}
	walkTree(n.t, at, from == nil, down, each)
}

func (n *narrowTree) iter() entryIter { return &narrowIter{n: n, it: n.t.Iter()} }

func (n *narrowTree) copy() entryTree {
	c := *n
	c.t = n.t.Copy()
	return &c
}

type narrowIter struct {
	n  *narrowTree
	it btree.IterG[uint64]
}

func (i *narrowIter) first() bool { return i.it.First() }

func (i *narrowIter) seek(e intEntry) bool {
	u, ok := i.n.ceil(e)
	return ok && i.it.Seek(u)
}

func (i *narrowIter) next() bool     { return i.it.Next() }
func (i *narrowIter) item() intEntry { return i.n.unpack(i.it.Item()) }
func (i *narrowIter) release()       { i.it.Release() }
