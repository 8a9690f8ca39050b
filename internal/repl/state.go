package repl

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/miraj-db/miraj/internal/atomicfile"
	"github.com/miraj-db/miraj/internal/vfs"
)

// Role is a node's place in the cluster.
type Role string

const (
	RoleSecondary Role = "SECONDARY"
	RolePromoting Role = "PROMOTING"
	RolePrimary   Role = "PRIMARY"
	// RoleFenced: a former primary that saw proof of a higher epoch;
	// read-only until an administrator makes it a secondary (§17.4.2).
	RoleFenced Role = "FENCED"
	// RoleLogStore is how a log-store node is shown (SHOW CLUSTER
	// STATUS, MIRAJ_NODES): a secondary in the core's state that keeps
	// the log only.
	RoleLogStore Role = "LOG_STORE"
)

// State is the node state that survives a restart, written atomically
// to DIR/miraj/cluster-state.json.
type State struct {
	Role    Role   `json:"role"`
	Epoch   Epoch  `json:"epoch"`
	Primary string `json:"primary"`
	// Vote: in raft mode, the member this node voted for in Epoch (""
	// none yet); at most one per term, saved before the vote is sent.
	Vote string `json:"vote,omitempty"`
}

const stateFile = "cluster-state.json"

// LoadState reads the state saved in dir (a new node's, if none is).
func LoadState(fs vfs.FS, dir string) (State, error) {
	p := filepath.Join(dir, stateFile)
	data, err := fs.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		// Never two primaries by default: a new node is a secondary.
		return State{Role: RoleSecondary}, nil
	}
	if err != nil {
		return State{}, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return State{}, fmt.Errorf("%s: %w", p, err)
	}
	switch st.Role {
	case RolePrimary, RoleFenced, RoleSecondary:
	default:
		st.Role = RoleSecondary // a promotion interrupted by a stop did not happen
	}
	return st, nil
}

// SaveState replaces the state saved in dir with st, atomically and
// durably: a crash leaves the old state or st.
func SaveState(fs vfs.FS, dir string, st State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFS(fs, filepath.Join(dir, stateFile), data, 0o600)
}
