package compat

import (
	"context"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/variables"
)

// SQLMode answers as sql.LoadSqlMode does while the session's sql_mode
// changes, its kept parse never standing for another string.
func TestSQLModeOfFollowsTheSession(t *testing.T) {
	variables.InitSystemVariables()
	ctx := sql.NewContext(context.Background(), sql.WithSession(sql.NewBaseSession()))
	for _, mode := range []string{"STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO", "ANSI_QUOTES", "", "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO", sql.DefaultSqlMode} {
		if err := ctx.SetSessionVariable(ctx, "sql_mode", mode); err != nil {
			t.Fatal(err)
		}
		got, want := SQLMode(ctx), sql.LoadSqlMode(ctx)
		for _, m := range []string{"STRICT_TRANS_TABLES", "ERROR_FOR_DIVISION_BY_ZERO", "ANSI_QUOTES", "ONLY_FULL_GROUP_BY"} {
			if got.ModeEnabled(m) != want.ModeEnabled(m) {
				t.Errorf("sql_mode %q: %s enabled %v, want %v", mode, m, got.ModeEnabled(m), want.ModeEnabled(m))
			}
		}
		if got.String() != want.String() {
			t.Errorf("sql_mode %q: %q, want %q", mode, got, want)
		}
	}
}
