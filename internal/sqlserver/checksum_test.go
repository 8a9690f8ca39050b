package sqlserver

import (
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
