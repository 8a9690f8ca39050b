package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/miraj-db/miraj/internal/atomicfile"
)

// The data directory's format version, in DIR/miraj/format:
//
//	1  (no file) journals of row, DDL and commit frames
//	2  every frame's payload starts with its transaction id; commit and
//	   abort frames carry the id and the end time; epoch-mark frames
//	   (OpEpoch) in journals and checkpoints
//
// A directory of another version is refused with the version it holds,
// and nothing in it is touched: version 1 frames do not decode as version
// 2 (their payloads lack the transaction id), so it cannot be read in
// place; the way over is a dump taken with the earlier server, loaded into
// a new data directory.
const (
	formatVersion = 2
	formatFile    = "format"
	formatPrefix  = "miraj data format "
)

// ErrFormat marks a data directory of a format this server does not read.
var ErrFormat = errors.New("storage: unsupported data directory format")

// checkFormat refuses a data directory of another format, and marks a new
// one (no database yet) as of this format.
func checkFormat(root string, hasDatabases bool) error {
	dir := filepath.Join(root, ReservedDir)
	path := filepath.Join(dir, formatFile)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && hasDatabases:
		return fmt.Errorf("%w: %s holds databases of format version 1 (no %s); this server reads version %d only: dump them with the earlier server (mariadb-dump) and load the dump into a new data directory",
			ErrFormat, root, path, formatVersion)
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return atomicfile.Write(path, []byte(fmt.Sprintf("%s%d\n", formatPrefix, formatVersion)), 0o644)
	case err != nil:
		return err
	}
	line := strings.TrimSpace(string(data))
	v, perr := strconv.Atoi(strings.TrimPrefix(line, formatPrefix))
	if !strings.HasPrefix(line, formatPrefix) || perr != nil || v < 1 {
		return fmt.Errorf("%w: %s: not a Miraj format line: %q", ErrFormat, path, line)
	}
	if v != formatVersion {
		return fmt.Errorf("%w: %s: data directory of format version %d; this server reads version %d only", ErrFormat, path, v, formatVersion)
	}
	return nil
}
