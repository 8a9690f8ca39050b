package storage

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
