package sqlserver

import (
	"context"
	"testing"
)

// ENUM, SET and date columns read as their text by string functions and
// LIKE, prepared or not (go-mysql-server read an ENUM as its member's
// number: e LIKE 'b' was false, CONCAT(e) '2'); test/diff's corpus
// compares the text statements with MariaDB.
func TestEnumSetAndDatesAsText(t *testing.T) {
	_, open := startServer(t)
	c := dbConn(t, open("root", "", ""))
	ctx := context.Background()
	connExecAll(t, c, "CREATE DATABASE eat", "USE eat",
		"CREATE TABLE w (id INT PRIMARY KEY, e ENUM('b','a'), s SET('x','y'), d DATE, tm TIME)",
		"INSERT INTO w VALUES (1, 'b', 'x,y', '2020-01-01', '12:34:56'), (2, 'a', 'y', '1999-12-31', '01:00:00')")
	for _, tc := range []struct {
		q    string
		arg  any
		want string
	}{
		{"SELECT GROUP_CONCAT(id) FROM w WHERE e LIKE ?", "b", "1"},
		{"SELECT GROUP_CONCAT(id) FROM w WHERE d LIKE ?", "2020%", "1"},
		{"SELECT GROUP_CONCAT(id) FROM w WHERE s LIKE ?", "%y%", "1,2"},
		{"SELECT CONCAT_WS(?, e, s, d, tm) FROM w WHERE id = 1", "|", "b|x,y|2020-01-01|12:34:56"},
		{"SELECT CONCAT(UPPER(e), LENGTH(d), LEFT(s, ?)) FROM w WHERE id = 2", 1, "A10y"},
		// MIN and MAX compare an ENUM's members as text, not by number;
		// GROUP_CONCAT gathers their text.
		{"SELECT CONCAT(MAX(e), MIN(e)) FROM w WHERE id > ?", 0, "ba"},
		{"SELECT GROUP_CONCAT(e ORDER BY id) FROM w WHERE id > ?", 0, "b,a"},
	} {
		var got string
		if err := c.QueryRowContext(ctx, tc.q, tc.arg).Scan(&got); err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		if got != tc.want {
			t.Errorf("%s (%v) = %q, want %q", tc.q, tc.arg, got, tc.want)
		}
	}
}
