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
//	2  adds epoch-mark frames (OpEpoch) to journals and checkpoints
//
// A version 1 directory is readable as version 2 (it only lacks marks), so
// it is upgraded by writing the file. A directory of a newer version than
// this server knows is refused: its journals may hold frames it would
// misread.
const (
	formatVersion = 2
	formatFile    = "format"
	formatPrefix  = "miraj data format "
)

// checkFormat upgrades or refuses the data directory root.
func checkFormat(root string, hasDatabases bool) (upgradedFrom int, err error) {
	dir := filepath.Join(root, ReservedDir)
	path := filepath.Join(dir, formatFile)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		from := 0
		if hasDatabases {
			from = 1
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		return from, atomicfile.Write(path, []byte(fmt.Sprintf("%s%d\n", formatPrefix, formatVersion)), 0o644)
	case err != nil:
		return 0, err
	}
	line := strings.TrimSpace(string(data))
	v, perr := strconv.Atoi(strings.TrimPrefix(line, formatPrefix))
	if !strings.HasPrefix(line, formatPrefix) || perr != nil || v < 1 {
		return 0, fmt.Errorf("%s: not a Miraj format line: %q", path, line)
	}
	if v > formatVersion {
		return 0, fmt.Errorf("%s: data directory of format version %d; this server reads versions 1 to %d (upgrade the server)", path, v, formatVersion)
	}
	if v < formatVersion {
		return v, atomicfile.Write(path, []byte(fmt.Sprintf("%s%d\n", formatPrefix, formatVersion)), 0o644)
	}
	return 0, nil
}
