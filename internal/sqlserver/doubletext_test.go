package sqlserver

import (
	"testing"

	"github.com/miraj-db/miraj/internal/sqlserver/compat/funcs"
	"github.com/miraj-db/miraj/internal/sqlserver/compat/show"
)

func TestMySQLDoubleText(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{3020399, "3020399"},
		{1e-6, "0.000001"},
		{1e15, "1e15"},
		{1e14, "100000000000000"},
		{1.5e-7, "0.00000015"},
		{1e16, "1e16"},
		{-1e15, "-1e15"},
		{123456789012345678, "1.2345678901234568e17"},
		{1.23456789012345e20, "1.23456789012345e20"},
		{1234567890.12345, "1234567890.12345"},
		{1e-15, "0.000000000000001"},
		{1e-16, "1e-16"},
		{3e-15 + 2e-31, "0.0000000000000030000000000000002"},
		{1e100, "1e100"},
		{1e-100, "1e-100"},
		{0, "0"},
		{0.1, "0.1"},
		{-2.5e20, "-2.5e20"},
	} {
		if got := funcs.MySQLDoubleText(c.v); got != c.want {
			t.Errorf("mysqlDoubleText(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestShowLikeHeaderPattern(t *testing.T) {
	for q, want := range map[string]string{
		"SHOW TABLES LIKE 'p%'":            "'p%'",
		"show full tables from d like 'a'": "'a'",
		"SHOW DATABASES LIKE 'x\\_%';":     "'x\\_%'",
		"SHOW TABLES":                      "",
	} {
		m := show.ShowLikeRE.FindStringSubmatch(q)
		got := ""
		if m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%q: pattern %q, want %q", q, got, want)
		}
	}
}
