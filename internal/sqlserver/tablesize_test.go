package sqlserver

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// SHOW TABLE STATUS and information_schema.TABLES give the memory a table
// holds: its rows' bytes (not its column types' widths), its secondary
// indexes, the next AUTO_INCREMENT value, and no invented creation time.
func TestTableSizes(t *testing.T) {
	_, open := startServer(t)
	db := open("root", "", "")
	exec := func(qs ...string) { t.Helper(); execAll(t, db, qs...) }
	exec("CREATE DATABASE sz",
		"CREATE TABLE sz.wide (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(255), n INT, KEY (n), KEY (s))",
		"CREATE TABLE sz.bare (id INT PRIMARY KEY, s VARCHAR(255))")
	insert := func(table string, from, to int) {
		t.Helper()
		var vals []string
		for i := from; i < to; i++ {
			if table == "sz.wide" {
				vals = append(vals, fmt.Sprintf("('v%05d', %d)", i, i%7))
			} else {
				vals = append(vals, fmt.Sprintf("(%d, 'v%05d')", i, i))
			}
		}
		cols := ""
		if table == "sz.wide" {
			cols = " (s, n)"
		}
		exec("INSERT INTO " + table + cols + " VALUES " + strings.Join(vals, ","))
	}
	insert("sz.wide", 0, 1000)
	insert("sz.bare", 0, 1000)

	type size struct {
		rows, data, index uint64
		auto              sql.NullInt64
		created           sql.NullString
	}
	schema := func(table string) size {
		t.Helper()
		var s size
		if err := db.QueryRow("SELECT table_rows, data_length, index_length, auto_increment, create_time FROM information_schema.tables WHERE table_schema = 'sz' AND table_name = ?", table).
			Scan(&s.rows, &s.data, &s.index, &s.auto, &s.created); err != nil {
			t.Fatal(err)
		}
		return s
	}
	status := func(table string) size {
		t.Helper()
		rows, err := db.Query("SHOW TABLE STATUS FROM sz LIKE '" + table + "'")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(sql.RawBytes)
		}
		if !rows.Next() {
			t.Fatalf("SHOW TABLE STATUS LIKE '%s': no row", table)
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		get := func(name string) *sql.RawBytes {
			for i, c := range cols {
				if c == name {
					return vals[i].(*sql.RawBytes)
				}
			}
			t.Fatalf("no column %s", name)
			return nil
		}
		var s size
		fmt.Sscan(string(*get("Rows")), &s.rows)
		fmt.Sscan(string(*get("Data_length")), &s.data)
		fmt.Sscan(string(*get("Index_length")), &s.index)
		if a := *get("Auto_increment"); a != nil {
			s.auto.Valid = true
			fmt.Sscan(string(a), &s.auto.Int64)
		}
		if c := *get("Create_time"); c != nil {
			s.created = sql.NullString{String: string(c), Valid: true}
		}
		return s
	}

	wide, bare := schema("wide"), schema("bare")
	// A row's values are about 15 bytes (two integers and a six-byte
	// string): its bytes are that and a header, far below the 255 × 4
	// bytes its VARCHAR(255) could take.
	if wide.rows != 1000 || wide.data < 1000*15 || wide.data > 1000*100 {
		t.Errorf("sz.wide: %d rows, data_length %d: want 1,000 rows of 15 to 100 bytes", wide.rows, wide.data)
	}
	if wide.index == 0 || bare.index != 0 {
		t.Errorf("index_length: sz.wide (two indexes) %d, sz.bare (none) %d", wide.index, bare.index)
	}
	if !wide.auto.Valid || wide.auto.Int64 != 1001 || bare.auto.Valid {
		t.Errorf("auto_increment: sz.wide %v, sz.bare %v; want 1001 and NULL", wide.auto, bare.auto)
	}
	if wide.created.Valid {
		t.Errorf("create_time: %q, want NULL", wide.created.String)
	}
	if st := status("wide"); st.data != wide.data || st.index != wide.index || st.auto != wide.auto || st.created.Valid {
		t.Errorf("SHOW TABLE STATUS: %+v; information_schema.TABLES: %+v", st, wide)
	}

	// Twice the rows, about twice the bytes.
	insert("sz.wide", 1000, 2000)
	if grown := schema("wide"); grown.data < wide.data*19/10 || grown.data > wide.data*21/10 || grown.index < wide.index*19/10 {
		t.Errorf("after doubling the rows: data_length %d → %d, index_length %d → %d", wide.data, grown.data, wide.index, grown.index)
	}
}
