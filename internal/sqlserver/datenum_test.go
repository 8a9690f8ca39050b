package sqlserver

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
)

// NumberAsDate reads a number's digits as MySQL's number_to_datetime does.
func TestNumberAsDate(t *testing.T) {
	for _, c := range []struct {
		in   any
		want any
	}{
		{int64(20240305), "2024-03-05 00:00:00"},
		{int32(240305), "2024-03-05 00:00:00"},
		{int64(691231), "2069-12-31 00:00:00"},
		{int64(700101), "1970-01-01 00:00:00"},
		{int64(991231), "1999-12-31 00:00:00"},
		{int64(101), "2000-01-01 00:00:00"},
		{uint64(20240305143000), "2024-03-05 14:30:00"},
		{int64(240305143000), "2024-03-05 14:30:00"},
		{int64(990305143000), "1999-03-05 14:30:00"},
		{20240305143000.25, "2024-03-05 14:30:00.250000"},
		{decimal.RequireFromString("20240305143000.5"), "2024-03-05 14:30:00.500000"},
		{int64(20240229), "2024-02-29 00:00:00"},
		// Numbers that spell no date stay as they are (the conversion
		// after refuses them).
		{int64(20230229), int64(20230229)},
		{int64(20241301), int64(20241301)},
		{int64(20240305246000), int64(20240305246000)},
		{int64(5), int64(5)},
		{int64(695000), int64(695000)},
		{int64(0), int64(0)},
		{int64(-20240305), int64(-20240305)},
		{"20240305", "20240305"},
	} {
		if got := funcs.NumberAsDate(c.in); got != c.want {
			t.Errorf("numberAsDate(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// A number a client binds to a date column's parameter is the date it
// spells too.
func TestBoundNumberAsDate(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	execAll(t, db, "CREATE DATABASE dn", "CREATE TABLE dn.t (id INT PRIMARY KEY, d DATE)")
	if _, err := db.Exec("INSERT INTO dn.t VALUES (?, ?)", 1, 20240305); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE dn.t SET d = ? WHERE id = ?", 991231, 1); err != nil {
		t.Fatal(err)
	}
	var d string
	if err := db.QueryRow("SELECT d FROM dn.t WHERE d = ?", 19991231).Scan(&d); err != nil || d != "1999-12-31" {
		t.Errorf("d = %q (%v), want 1999-12-31", d, err)
	}
}

// withFraction writes a date and time with the digits of its column.
func TestWithFraction(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"2024-03-05 14:30:00", 6, "2024-03-05 14:30:00.000000"},
		{"2024-03-05 14:30:00.5", 3, "2024-03-05 14:30:00.500"},
		{"2024-03-05 14:30:00.123", 3, "2024-03-05 14:30:00.123"},
		{"2024-03-05 14:30:00.123456", 2, "2024-03-05 14:30:00.12"},
		{"0000-00-00 00:00:00", 1, "0000-00-00 00:00:00.0"},
		{"2024-03-05", 2, "2024-03-05"},
	} {
		if got, _ := withFraction(c.in, c.n); got != c.want {
			t.Errorf("withFraction(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
