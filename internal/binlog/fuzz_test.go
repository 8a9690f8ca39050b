package binlog

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenFile: a file of the log after a crash or a disk fault may hold
// anything; opening the log (recovery), listing its events and computing
// a GTID position must refuse it or cut it, never panic.
func FuzzOpenFile(f *testing.F) {
	dir := f.TempDir()
	l, err := Open(Options{Dir: dir, ServerID: 1})
	if err != nil {
		f.Fatal(err)
	}
	g := NewGroup(GroupInfo{ServerID: 1})
	g.Row(WriteRowsEventV1, testTable, nil, []any{int64(1), "a", "1.00", nil, nil})
	l.Append(g)
	name := l.End().File
	l.Close()
	seed, _ := os.ReadFile(filepath.Join(dir, name+fileExt))
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add([]byte{0xfe, 'b', 'i', 'n'})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "miraj-bin.000001.mrb"), data, 0o600)
		os.WriteFile(filepath.Join(d, "miraj-bin.mrbi"), []byte("./miraj-bin.000001.mrb\n"), 0o600)
		l, err := Open(Options{Dir: d, ServerID: 1})
		if err != nil {
			return
		}
		defer l.Close()
		l.Events("miraj-bin.000001", 0, 0, -1)
		l.GTIDPosAt("miraj-bin.000001", 1<<20)
	})
}
