package system

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// miraj-server keeps its files to ROOT/miraj/files unless told otherwise:
// INTO OUTFILE elsewhere is refused (1290); --secure-file-priv names
// another folder; --secure-file-priv= lifts the limit, with a warning in
// the log.
func TestSecureFilePriv(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	s := newServer(t, root)
	db := s.open("")
	want := filepath.Join(root, "miraj", "files") + "/"
	if got := queryString(t, db, "SELECT @@secure_file_priv"); got != want+";" {
		t.Fatalf("@@secure_file_priv = %s, want %s", got, want)
	}
	if _, err := db.Exec("SELECT 1 INTO OUTFILE '" + filepath.Join(outside, "x.txt") + "'"); err == nil {
		t.Fatal("INTO OUTFILE outside ROOT/miraj/files succeeded")
	} else if num, state := mysqlError(err); num != 1290 || state != "HY000" {
		t.Fatalf("INTO OUTFILE outside the folder: %v, want 1290", err)
	}
	mustExec(t, db, "SELECT 1 INTO OUTFILE '"+want+"x.txt'")
	if b, err := os.ReadFile(want + "x.txt"); err != nil || string(b) != "1\n" {
		t.Fatalf("the file holds %q (%v)", b, err)
	}

	other := t.TempDir()
	s2 := newServer(t, t.TempDir(), "--secure-file-priv", other)
	if got := queryString(t, s2.open(""), "SELECT @@secure_file_priv"); got != other+"/;" {
		t.Fatalf("--secure-file-priv %s: @@secure_file_priv = %s", other, got)
	}

	s3 := newServer(t, t.TempDir(), "--secure-file-priv=")
	db3 := s3.open("")
	mustExec(t, db3, "SELECT 1 INTO OUTFILE '"+filepath.Join(outside, "y.txt")+"'")
	if !strings.Contains(s3.output(), "secure_file_priv is empty") {
		t.Fatalf("no warning in the log of a server with --secure-file-priv=:\n%s", s3.output())
	}
}
