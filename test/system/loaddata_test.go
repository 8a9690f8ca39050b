package system

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// loadCSV writes a CSV export of n rows as a spreadsheet or another
// database writes one: a header line, quoted text holding commas, doubled
// quotes and line breaks, empty prices, \N for NULL, the word NULL as a
// name, quoted. It returns the file's path and the sum of its prices in
// cents.
func loadCSV(t *testing.T, dir string, n int) (string, int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,name,price\n")
	cents := 0
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%q", fmt.Sprintf("item %d", i))
		switch i % 7 {
		case 1:
			name = `"with, comma"`
		case 2:
			name = `"say ""hi"""`
		case 3:
			name = "\"two\nlines\""
		case 4:
			name = `\N`
		case 5:
			name = `"NULL"`
		}
		price := ""
		if i%5 != 0 {
			price = fmt.Sprintf("%d.%02d", i%100, i%97)
			cents += (i%100)*100 + i%97
		}
		fmt.Fprintf(&b, "%d,%s,%s\n", i, name, price)
	}
	path := filepath.Join(dir, "items.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, cents
}

// A CSV file loads as MySQL loads it, through the mariadb client (LOAD
// DATA LOCAL, the file sent by the client) and from the server's folder
// (LOAD DATA INFILE), and a table written with SELECT … INTO OUTFILE loads
// back the same. The file is larger than what the server reads at a time,
// so quoted fields and lines cross those reads.
func TestLoadDataCSV(t *testing.T) {
	_, client := dumpClients(t)
	root := t.TempDir()
	s := newServer(t, root)
	db := s.open("")
	const n = 30000
	path, cents := loadCSV(t, t.TempDir(), n)
	mustExec(t, db, "CREATE DATABASE shop")
	mustExec(t, db, "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(6,2))")

	load := "LOAD DATA LOCAL INFILE '" + path + "' INTO TABLE shop.items FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' " +
		"IGNORE 1 LINES (id, name, @p) SET price = NULLIF(@p, '')"
	host, port, _ := strings.Cut(s.addr, ":")
	run := func(q string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), dumpTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, client, "--local-infile=1", "-h", host, "-P", port, "-uroot", "-vvv", "-e", q).CombinedOutput()
		return string(out), err
	}
	// Refused while local_infile is off, as in MySQL 8.
	if out, err := run(load); err == nil || !strings.Contains(out, "ERROR 3948") {
		t.Fatalf("LOAD DATA LOCAL with local_infile off: %v\n%s", err, out)
	}
	mustExec(t, db, "SET GLOBAL local_infile = 1")
	out, err := run(load)
	if err != nil {
		t.Fatalf("LOAD DATA LOCAL: %v\n%s", err, out)
	}
	if want := fmt.Sprintf("Records: %d  Deleted: 0  Skipped: 0  Warnings: 0", n); !strings.Contains(out, want) {
		t.Fatalf("the client shows no %q:\n%s", want, out)
	}
	check := func(table string) {
		t.Helper()
		got := queryString(t, db, "SELECT COUNT(*), SUM(price * 100), COUNT(price), SUM(name IS NULL), SUM(name = 'NULL'), "+
			"SUM(name = 'with, comma'), SUM(name = 'say \"hi\"'), SUM(name = 'two\\nlines') FROM "+table)
		per := func(k int) int { // rows with i % 7 == k
			c := n / 7
			if n%7 >= k {
				c++
			}
			return c
		}
		want := fmt.Sprintf("%d %d.00 %d %d %d %d %d %d;", n, cents, n-n/5, per(4), per(5), per(1), per(2), per(3))
		if got != want {
			t.Fatalf("%s holds %s, want %s (rows, cents, prices, NULL names, 'NULL' names, and the quoted names)", table, got, want)
		}
	}
	check("shop.items")

	// Written out and loaded back from the server's folder: NULLs,
	// escapes and line breaks survive.
	file := filepath.Join(root, "miraj", "files", "items.txt")
	mustExec(t, db, "SELECT * FROM shop.items INTO OUTFILE '"+file+"'")
	mustExec(t, db, "CREATE TABLE shop.restored LIKE shop.items")
	res, err := db.Exec("LOAD DATA INFILE '" + file + "' INTO TABLE shop.restored")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := res.RowsAffected(); got != n {
		t.Fatalf("LOAD DATA INFILE loaded %d rows, want %d", got, n)
	}
	check("shop.restored")
	if got := queryString(t, db, "SELECT COUNT(*) FROM shop.items i JOIN shop.restored c ON c.id = i.id AND c.name <=> i.name AND c.price <=> i.price"); got != fmt.Sprintf("%d;", n) {
		t.Fatalf("%s rows of the copy equal the original's, want %d", got, n)
	}

	// A line short of a field is refused in a strict sql_mode, and
	// nothing of the file stays.
	bad := filepath.Join(root, "miraj", "files", "bad.csv")
	if err := os.WriteFile(bad, []byte("1,a,1.00\n2,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE TABLE shop.bad LIKE shop.items")
	_, err = db.Exec("LOAD DATA INFILE '" + bad + "' INTO TABLE shop.bad FIELDS TERMINATED BY ','")
	if num, _ := mysqlError(err); num != 1261 {
		t.Fatalf("a line short of a field: %v, want 1261", err)
	}
	if got := queryString(t, db, "SELECT COUNT(*) FROM shop.bad"); got != "0;" {
		t.Fatalf("after the refused LOAD DATA shop.bad holds %s rows, want 0", got)
	}
}
