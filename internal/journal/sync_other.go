//go:build !linux

package journal

import "os"

// syncData makes f durable (fsync: fdatasync is Linux's).
func syncData(f *os.File) error { return f.Sync() }
