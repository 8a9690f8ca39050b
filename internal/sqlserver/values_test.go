package sqlserver_test

import (
	"context"
	"fmt"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/miraj-db/miraj/internal/sqlserver"
	"github.com/miraj-db/miraj/internal/storage"
)

// TestValuesSurviveRestart writes values of go-mysql-server's own Go types
// (TIME, JSON, spatial) and reads them back after a restart, with each
// save policy's recovery path: the journal (commit) or a checkpoint
// (manual, saved at Close).
func TestValuesSurviveRestart(t *testing.T) {
	for _, policy := range []storage.SavePolicy{storage.SaveCommit, storage.SaveManual} {
		t.Run(policy.String(), func(t *testing.T) {
			root := t.TempDir()
			query := func(p *sqlserver.InProcess, q string) []sql.Row {
				t.Helper()
				e := sqle.NewDefault(p.Provider())
				ctx := sql.NewContext(context.Background(), sql.WithSession(p.NewSession(sql.NewBaseSession())))
				ctx.SetCurrentDatabase("db")
				_, iter, _, err := e.Query(ctx, q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				rows, err := sql.RowIterToRows(ctx, iter)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return rows
			}
			open := func() *sqlserver.InProcess {
				p, err := sqlserver.OpenInProcess(sqlserver.InProcessOptions{Root: root, Policy: policy, Logger: quietLogger})
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			const sel = "SELECT id, tm, tm IS NULL, CAST(doc AS CHAR), ST_AsText(pt), ST_SRID(pt) FROM v ORDER BY id"
			p := open()
			query(p, "CREATE DATABASE db")
			query(p, "CREATE TABLE v (id INT PRIMARY KEY, tm TIME(6), doc JSON, pt POINT)")
			query(p, `INSERT INTO v VALUES (1, '-838:59:59', '{"a": [1, "x", null, true]}', POINT(1.5, -2)),
				(2, '12:34:56.789012', '"text"', ST_GeomFromText('POINT(0 0)', 4326)), (3, NULL, NULL, NULL)`)
			want := fmt.Sprint(query(p, sel))
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			p = open()
			defer p.Close()
			if got := fmt.Sprint(query(p, sel)); got != want {
				t.Fatalf("after restart:\n got %s\nwant %s", got, want)
			}
			t.Log(want)
		})
	}
}
