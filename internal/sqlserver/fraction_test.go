package sqlserver

import (
	"testing"
)

// A TIMESTAMP(n) column's value reaches the client with its n digits, in
// the text protocol and in the binary one (where the client reads the
// fraction only up to the column's digits), by a compiled point lookup and
// through the planner alike.
func TestTimestampFractionReachesTheClient(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE tf",
		"CREATE TABLE tf.t (id INT PRIMARY KEY, ts TIMESTAMP(3) NULL, t0 TIMESTAMP NULL, d3 DATETIME(3))",
		"INSERT INTO tf.t VALUES (1, '2020-01-01 10:00:00.5', '2020-01-01 10:00:00', '2020-01-01 10:00:00.25')")
	want := [3]string{"2020-01-01 10:00:00.500", "2020-01-01 10:00:00", "2020-01-01 10:00:00.250"}
	for _, q := range []string{
		"SELECT ts, t0, d3 FROM tf.t WHERE id = 1",   // compiled, text
		"SELECT ts, t0, d3 FROM tf.t WHERE id+0 = 1", // planner, text
	} {
		var got [3]string
		if err := db.QueryRow(q).Scan(&got[0], &got[1], &got[2]); err != nil || got != want {
			t.Errorf("%s: %q (%v), want %q", q, got, err, want)
		}
	}
	for _, q := range []string{
		"SELECT ts, t0, d3 FROM tf.t WHERE id = ?",   // compiled, binary
		"SELECT ts, t0, d3 FROM tf.t WHERE id+0 = ?", // planner, binary
	} {
		var got [3]string
		if err := db.QueryRow(q, 1).Scan(&got[0], &got[1], &got[2]); err != nil || got != want {
			t.Errorf("%s: %q (%v), want %q", q, got, err, want)
		}
	}
	rows, err := db.Query("SELECT ts FROM tf.t WHERE id+0 = ?", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if _, scale, ok := types[0].DecimalSize(); !ok || scale != 3 {
		t.Errorf("TIMESTAMP(3) column: decimals %d (%v), want 3", scale, ok)
	}
}
