package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/miraj-db/miraj/internal/atomicfile"
	"github.com/miraj-db/miraj/internal/vfs"
)

// Each database folder records the format of its journal and checkpoints
// in a file "format" ("miraj data format 2"), written when the folder is
// made (CREATE DATABASE, a copy installed). The folder carries it wherever
// it goes: a database moved to quarantine and copied into another data
// directory opens there as it is.
//
//	1  (no file) journals of row, DDL and commit frames
//	2  every frame's payload starts with its transaction id; commit and
//	   abort frames carry the id and the end time; epoch-mark frames
//	   (OpEpoch) in journals and checkpoints
//
// A database of another version stops the start-up with its folder and the
// version it holds, and nothing in it is touched: version 1 frames do not
// decode as version 2 (their payloads lack the transaction id), so it
// cannot be read in place; the way over is a dump taken with the earlier
// server, loaded into a new data directory.
const (
	formatVersion = 2
	formatFile    = "format"
	formatPrefix  = "miraj data format "
)

// ErrFormat marks a database folder of a format this server does not read.
var ErrFormat = errors.New("storage: unsupported data format")

// writeFormat records this server's format in a new database folder.
func writeFormat(fs vfs.FS, dir string) error {
	return atomicfile.WriteFS(fs, filepath.Join(dir, formatFile), []byte(fmt.Sprintf("%s%d\n", formatPrefix, formatVersion)), 0o644)
}

// checkFormat refuses a database folder of another format.
func checkFormat(fs vfs.FS, dir string) error {
	path := filepath.Join(dir, formatFile)
	data, err := fs.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s is a database of format version 1 (no %s file); this server reads version %d only: dump it with the earlier server (mariadb-dump) and load the dump into a new data directory",
			ErrFormat, dir, formatFile, formatVersion)
	case err != nil:
		return err
	}
	line := strings.TrimSpace(string(data))
	v, perr := strconv.Atoi(strings.TrimPrefix(line, formatPrefix))
	if !strings.HasPrefix(line, formatPrefix) || perr != nil || v < 1 {
		return fmt.Errorf("%w: %s: not a Miraj format line: %q", ErrFormat, path, line)
	}
	if v != formatVersion {
		return fmt.Errorf("%w: %s: database of format version %d; this server reads version %d only", ErrFormat, path, v, formatVersion)
	}
	return nil
}
