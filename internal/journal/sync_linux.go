package journal

import (
	"os"
	"syscall"
)

// syncData makes f's data durable with the metadata needed to read it back
// (its size), but not its times: fdatasync(2). A write over the zeros ahead
// of the log then needs no journal commit of the file system. The call
// holds f's descriptor (a concurrent Close waits for it, and a closed f is
// an error rather than another file's descriptor).
func syncData(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if serr = syscall.Fdatasync(int(fd)); serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}
