package storage

import "unsafe"

// Distinct returns the number of distinct values of the first n columns of
// an index of t: index -1 is the primary key, i ≥ 0 the secondary index
// def.Indexes[i]. NULLs count as one value (InnoDB's nulls_equal). It
// walks the index: O(rows); SHOW INDEX's cardinality, worked out when
// asked, not kept.
func (t *Table) Distinct(index, n int) int {
	s := t.shape
	if index < 0 {
		pk := s.def.PK
		if n >= len(pk) {
			return t.primary.Len()
		}
		return distinctRows(t.primary.Scan, s, pk[:n])
	}
	x := t.indexes[index]
	switch {
	case x.rows != nil:
		return distinctRows(x.rows.Scan, s, x.cols[:min(n, len(x.cols))])
	case x.ints != nil:
		count, first := 0, true
		var last uint64
		x.ints.walk(nil, false, func(e intEntry) bool {
			if first || e.key != last {
				count++
			}
			first, last = false, e.key
			return true
		})
		return count
	}
	return 0
}

// distinctRows counts the distinct values of cols among the rows scan
// gives, in an order that keeps equal values together.
func distinctRows(scan func(func(*Row) bool), s *shape, cols []int) int {
	count := 0
	var last *Row
	scan(func(r *Row) bool {
		if last == nil || s.compareCols(cols, last, r) != 0 {
			count++
		}
		last = r
		return true
	})
	return count
}

// Footprint estimates the memory t holds: data, its rows and the primary
// key's tree; index, its secondary indexes' trees. A row counts the bytes
// of its allocation (header and values: boxed values at 16 bytes each, and
// their payload encoded); a tree entry its item (a row pointer, or an
// index of integers' entry) once and a half, nodes being two-thirds full
// on average. It walks the rows: O(rows).
func (t *Table) Footprint() (data, index uint64) {
	t.primary.Scan(func(r *Row) bool {
		data += rowBytes(r)
		return true
	})
	const ptr = 8
	data += treeBytes(t.primary.Len(), ptr)
	for _, x := range t.indexes {
		switch x.ints.(type) {
		case *narrowTree:
			index += treeBytes(x.len(), 8)
		case *wideTree:
			index += treeBytes(x.len(), 16)
		default:
			index += treeBytes(x.len(), ptr)
		}
	}
	return data, index
}

// treeBytes estimates the bytes of a B-tree of n items of size bytes.
func treeBytes(n, size int) uint64 { return uint64(n) * uint64(size) * 3 / 2 }

// rowBytes is the size of a stored row's allocation.
func rowBytes(r *Row) uint64 {
	if r.isCompact() {
		s, _, _ := r.compactVals()
		return uint64(compactBytes(len(s)))
	}
	e := r.ext()
	if e.of != nil {
		s, _, _ := e.of.compactVals()
		return uint64(unsafe.Sizeof(rowExt{}) + uintptr(compactBytes(len(s))))
	}
	return uint64(unsafe.Sizeof(rowExt{})) + uint64(16*len(e.vals)+encodedSize(e.vals))
}
