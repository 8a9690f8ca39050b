//go:build !linux

package journal

import "os"

// syncData makes f durable (fsync: fdatasync is Linux's).
func syncData(f *os.File) error { return f.Sync() }

// directIO leaves f's writes to the page cache: direct I/O is used on
// Linux only.
func directIO(f *os.File) bool { return false }
