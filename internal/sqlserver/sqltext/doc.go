// Package sqltext reads the text of SQL statements before (or beside) the
// parser: the words of a statement with their places (Scan, Reader),
// MySQL's versioned comments (UnwrapVersionComments), MySQL 8.0's reserved
// words (Reserved) and a case-blind search that keeps byte positions
// (IndexFold).
//
// It imports the standard library only, never go-mysql-server, so that
// any package of the SQL layer may import it; it imports none of them.
// Its functions are pure and safe to call concurrently.
//
//	w := sqltext.NewReader("SHOW /* c */ WARNINGS")
//	sqltext.IsKeyword(w.Next(), "SHOW") // true; w.Next() is then "WARNINGS"
package sqltext
