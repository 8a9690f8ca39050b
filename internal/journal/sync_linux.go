package journal

import (
	"os"
	"syscall"
)

// syncData makes f's data durable with the metadata needed to read it back
// (its size), but not its times: fdatasync(2). A write over the zeros ahead
// of the log then needs no journal commit of the file system.
func syncData(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
