package loadgen

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loops make three system calls per request on non-blocking
// sockets: read, write, and (amortised) epoll_wait. On loopback a write
// runs the whole TCP path, often longer than the 20 µs after which the Go
// runtime's sysmon takes the P of a goroutine in a syscall and hands it to
// another thread; getting it back costs futex wake-ups, and sysmon's own
// sleeps add more (measured with strace: ~0.3 futex and ~0.6 nanosleep per
// request). Calls that cannot block therefore go through RawSyscall, which
// skips that bookkeeping; only a blocking epoll_wait uses Syscall.

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, errnoErr(e)
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, errnoErr(e)
	}
	return int(n), nil
}

// pollNow returns the ready events without blocking.
func pollNow(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

// armTimer sets the timerfd to expire once after d nanoseconds.
func armTimer(tfd int, d int64) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d)}
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(tfd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	return errnoErr(e)
}
