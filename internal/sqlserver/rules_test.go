package sqlserver

import "testing"

// TestRuleIDsUnique: go-mysql-server tells rules apart by id, so no two of
// this package's rules share one.
func TestRuleIDsUnique(t *testing.T) {
	seen := map[int]bool{}
	for _, id := range allRuleIDs {
		if seen[int(id)] {
			t.Errorf("analyzer rule id %d used twice", int(id))
		}
		seen[int(id)] = true
		if id < 10_000 {
			t.Errorf("analyzer rule id %d is in go-mysql-server's range", int(id))
		}
	}
}
