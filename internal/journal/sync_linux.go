package journal

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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

// directIO turns on direct I/O (O_DIRECT) for f when its file system takes
// it at blockBytes alignment of offsets, lengths and buffers (statx's
// STATX_DIOALIGN says), and reports whether it did.
func directIO(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	on := false
	rc.Control(func(fd uintptr) {
		var st unix.Statx_t
		if unix.Statx(int(fd), "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &st) != nil ||
			st.Mask&unix.STATX_DIOALIGN == 0 || st.Dio_offset_align == 0 || st.Dio_mem_align == 0 ||
			blockBytes%st.Dio_offset_align != 0 || blockBytes%st.Dio_mem_align != 0 {
			return
		}
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			return
		}
		_, err = unix.FcntlInt(fd, unix.F_SETFL, flags|unix.O_DIRECT)
		on = err == nil
	})
	return on
}
