package sqlserver

import (
	"context"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// TestRowChecksumIsMariaDBs checks rows' CRC-32s against the CHECKSUM TABLE
// values MariaDB 10.11 gave for one-row InnoDB tables of the same
// definition (test/diff/corpus/checksum.sql compares whole tables with a
// running MariaDB).
func TestRowChecksumIsMariaDBs(t *testing.T) {
	intCol := func(nullable bool) *sql.Column {
		return &sql.Column{Name: "a", Type: types.Int32, Nullable: nullable}
	}
	latin1Char3 := types.MustCreateString(sqltypes.Char, 3, sql.Collation_latin1_swedish_ci)
	varchar10 := types.MustCreateString(sqltypes.VarChar, 10, sql.Collation_Default)
	nullableInts := func(n int) sql.Schema {
		var s sql.Schema
		for range n {
			s = append(s, intCol(true))
		}
		return s
	}
	for _, c := range []struct {
		name string
		sch  sql.Schema
		row  sql.Row
		want uint32
	}{
		// No variable-length column: the first null bit is always set.
		{"INT NOT NULL", sql.Schema{intCol(false)}, sql.Row{int32(1)}, 3036305396},
		{"INT NULL", sql.Schema{intCol(true)}, sql.Row{int32(1)}, 3459908756},
		{"INT NULL, VARCHAR(10)", sql.Schema{intCol(true), {Name: "b", Type: varchar10, Nullable: true}}, sql.Row{int32(1), "ab"}, 716441316},
		{"INT NOT NULL, latin1 CHAR(3) NOT NULL", sql.Schema{intCol(false), {Name: "b", Type: latin1Char3}}, sql.Row{int32(1), "ab"}, 3232651969},
		{"8 nullable INTs, one NULL", nullableInts(8), sql.Row{int32(1), nil, int32(3), int32(4), int32(5), int32(6), int32(7), int32(8)}, 1962045693},
		{"INT, generated INT", sql.Schema{intCol(true), {Name: "b", Type: types.Int32, Nullable: true, Generated: &sql.ColumnDefaultValue{}}}, sql.Row{int32(1), int32(2)}, 3459908756},
	} {
		cs, err := newRowChecksum(c.sch)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := cs.row(c.row)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: CRC %d, MariaDB's %d", c.name, got, c.want)
		}
	}
}

// TestChecksumTableAnswers: what CHECKSUM TABLE answers besides a sum, as
// MariaDB does: a table the account may not read fails the statement
// (1142), an unqualified name without a current database too (1046); a
// table that does not exist, or a view, is NULL with an Error-level
// warning (1146, 1347) and the other tables are still summed.
func TestChecksumTableAnswers(t *testing.T) {
	_, open := startServer(t)
	root := open("root", "", "")
	execAll(t, root, "CREATE DATABASE ck", "CREATE TABLE ck.t (a INT NOT NULL)", "INSERT INTO ck.t VALUES (1)",
		"CREATE TABLE ck.hidden (a INT)", "CREATE VIEW ck.v AS SELECT a FROM ck.t",
		"CREATE USER 'only'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT ON ck.t TO 'only'@'%'")
	c := dbConn(t, open("root", "", "ck"))
	ctx := context.Background()
	r, err := query(t, c, "CHECKSUM TABLE t, nosuch, v, nodb.t")
	if err != nil {
		t.Fatal(err)
	}
	// INT NOT NULL 1: MariaDB's 3036305396 (TestRowChecksumIsMariaDBs).
	if got, want := strings.Join(r.rows, ";"), "ck.t|3036305396;ck.nosuch|NULL;ck.v|NULL;nodb.t|NULL"; got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
	w, err := query(t, c, "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(w.rows, ";"), "Error|1146|Table 'ck.nosuch' doesn't exist;Error|1347|'ck.v' is not of type 'BASE TABLE';Error|1146|Table 'nodb.t' doesn't exist"; got != want {
		t.Fatalf("warnings %q, want %q", got, want)
	}
	only := open("only", "pw", "")
	if _, err := only.ExecContext(ctx, "CHECKSUM TABLE ck.t"); err != nil {
		t.Fatalf("with SELECT: %v", err)
	}
	if _, err := only.ExecContext(ctx, "CHECKSUM TABLE ck.t, ck.hidden"); !strings.HasPrefix(mysqlErr(err), "1142 42000 SELECT command denied to user 'only'@") {
		t.Fatalf("without SELECT: %s", mysqlErr(err))
	}
	if _, err := open("root", "", "").ExecContext(ctx, "CHECKSUM TABLE t"); !strings.HasPrefix(mysqlErr(err), "1046 3D000") {
		t.Fatalf("no database: %s", mysqlErr(err))
	}
}
