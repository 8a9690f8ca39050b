// Package weights computes the weight strings (AppendWeights) and sort
// keys (AppendSortKey, Prefix, Compare) of strings under a collation, as
// go-mysql-server does rune by rune, with the ASCII runes' weights taken
// from a table built at a collation's first use (weights.go explains the
// formats).
//
// It is a cut of its own, below the rest of the SQL layer, because both
// the compiled statements (range plans compare keys by it) and the
// MySQL-compatibility execution (ORDER BY, DISTINCT, hash joins) use it.
// It imports go-mysql-server's sql package only, and no package of the SQL
// layer. Its functions are safe to call concurrently.
//
//	key, err := weights.AppendSortKey(nil, sql.Collation_utf8mb4_0900_ai_ci, "Éclair")
package weights
