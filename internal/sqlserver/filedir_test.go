package sqlserver

import (
	"os"
	"path/filepath"
	"testing"
)

// The server's files stay in secure_file_priv (ROOT/miraj/files by
// default): SELECT … INTO OUTFILE and LOAD DATA INFILE elsewhere get 1290,
// LOAD_FILE() elsewhere reads NULL, a link out of the folder does not
// lead out; AnyFile lifts the limit.
func TestFileDir(t *testing.T) {
	srv, open := startServer(t)
	db := open("root", "", "")
	dir := filepath.Join(StateDir(srv.cfg.Root), fileDirName)
	var priv string
	if err := db.QueryRow("SELECT @@secure_file_priv").Scan(&priv); err != nil || priv != dir+"/" {
		t.Fatalf("@@secure_file_priv = %q (%v), want %q", priv, err, dir+"/")
	}
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.csv")
	if err := os.WriteFile(secret, []byte("1,secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.csv")); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY, s VARCHAR(20))", "INSERT INTO f.t VALUES (7, 'seven')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const refused = "1290 HY000 The MySQL server is running with the --secure-file-priv option so it cannot execute this statement"
	for _, q := range []string{
		"LOAD DATA INFILE '" + secret + "' INTO TABLE f.t FIELDS TERMINATED BY ','",
		"LOAD DATA INFILE '" + filepath.Join(dir, "link.csv") + "' INTO TABLE f.t FIELDS TERMINATED BY ','",
		"LOAD DATA INFILE '" + dir + "/../../../../../../../../../.." + secret + "' INTO TABLE f.t FIELDS TERMINATED BY ','",
		"SELECT * FROM f.t INTO OUTFILE '" + filepath.Join(outside, "out.txt") + "'",
		"SELECT s FROM f.t INTO DUMPFILE '" + filepath.Join(outside, "dump.bin") + "'",
	} {
		if _, err := db.Exec(q); mysqlErr(err) != refused {
			t.Errorf("%s: %v, want 1290", q, err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
		t.Fatal("INTO OUTFILE wrote outside secure_file_priv")
	}
	var got *string
	if err := db.QueryRow("SELECT LOAD_FILE(?)", secret).Scan(&got); err != nil || got != nil {
		t.Fatalf("LOAD_FILE outside secure_file_priv: %v (%v), want NULL", got, err)
	}

	// Inside: written, read back.
	out := filepath.Join(dir, "out.csv")
	if _, err := db.Exec("SELECT id, s FROM f.t INTO OUTFILE '" + out + "' FIELDS TERMINATED BY ','"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "7,seven\n" {
		t.Fatalf("the OUTFILE holds %q (%v)", b, err)
	}
	if _, err := db.Exec("DELETE FROM f.t"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("LOAD DATA INFILE '" + out + "' INTO TABLE f.t FIELDS TERMINATED BY ','"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM f.t WHERE s = 'seven'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows loaded back (%v), want 1", n, err)
	}

	// AnyFile.
	_, open2 := startServerWith(t, Config{AnyFile: true})
	db2 := open2("root", "", "")
	if err := db2.QueryRow("SELECT @@secure_file_priv").Scan(&priv); err != nil || priv != "" {
		t.Fatalf("@@secure_file_priv = %q (%v) with AnyFile, want empty", priv, err)
	}
	if _, err := db2.Exec("SELECT 1 INTO OUTFILE '" + filepath.Join(outside, "any.txt") + "'"); err != nil {
		t.Fatalf("INTO OUTFILE with AnyFile: %v", err)
	}
}
