package sqlserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// The server's own files: SELECT … INTO OUTFILE / DUMPFILE, LOAD DATA
// INFILE (without LOCAL) and LOAD_FILE() read and write files where the
// server runs, with its rights. As in MySQL 8's packages, they are kept to
// one folder by default, secure_file_priv: ROOT/miraj/files, made at
// startup (Config.FileDir names another; Config.AnyFile lifts the limit,
// secure_file_priv empty, with a warning in the log). A path outside it
// gets 1290 (ER_OPTION_PREVENTS_STATEMENT), MySQL's answer.

// fileDirName is the default folder's name in the server's state folder.
const fileDirName = "files"

// setFileDir makes the folder of the server's files and publishes it as
// secure_file_priv (with a final separator, as MySQL shows it); "" when
// cfg lifts the limit.
func setFileDir(cfg Config) (string, error) {
	dir := ""
	if !cfg.AnyFile {
		dir = cfg.FileDir
		if dir == "" {
			dir = filepath.Join(StateDir(cfg.Root), fileDirName)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", fmt.Errorf("secure_file_priv %s: %w", dir, err)
		}
		if err := os.MkdirAll(abs, 0o750); err != nil {
			return "", fmt.Errorf("secure_file_priv: %w", err)
		}
		dir = abs + string(filepath.Separator)
	}
	if err := sql.SystemVariables.AssignValues(map[string]any{"secure_file_priv": dir}); err != nil {
		return "", fmt.Errorf("system variable secure_file_priv: %w", err)
	}
	return dir, nil
}

// errFileDir is MySQL's answer to a file outside secure_file_priv.
func errFileDir() error {
	return mysql.NewSQLError(mysql.EROptionPreventsStatement, "HY000",
		"The MySQL server is running with the --secure-file-priv option so it cannot execute this statement")
}

// checkFileDir fails with 1290 unless file is inside the folder of the
// server's files (secure_file_priv; anywhere when it is empty). Links are
// followed: a link in the folder to a file outside it is outside.
func checkFileDir(file string) error {
	_, v, _ := sql.SystemVariables.GetGlobal("secure_file_priv")
	dir, _ := v.(string)
	if dir == "" {
		return nil
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return errFileDir()
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return errFileDir()
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		// A file that does not exist: its folder must be the one.
		parent, perr := filepath.EvalSymlinks(filepath.Dir(abs))
		if perr != nil {
			return errFileDir()
		}
		real = filepath.Join(parent, filepath.Base(abs))
	}
	if !strings.HasPrefix(real, realDir+string(filepath.Separator)) {
		return errFileDir()
	}
	return nil
}
