package loadgen

import (
	"os"
	"strconv"
	"strings"
	"time"
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
// skips that bookkeeping; so does the blocking epoll_pwait when a P is left
// for the rest of the process (waitRaw), and otherwise it uses Syscall.

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

// waitRaw blocks in epoll_pwait until an event is ready, through
// RawSyscall: the goroutine keeps its P while the thread sleeps, so the
// runtime sees a running goroutine, not a syscall. Through Syscall, every
// sleep longer than sysmon's 20 µs tick is a P to retake: sysmon never
// backs off from its 20 µs polling (measured: ~6000 wake-ups/s, 8-9 % of
// the process's CPU in a closed loop at 40k req/s), and the P is handed
// to another thread and back (futex wake-ups). The sleep stays
// interruptible: the runtime's preemption signal (sysmon's every 10 ms,
// a stop-the-world's) ends it with EINTR and the goroutine yields at its
// next function call; and the caller's timerfd bounds it.
//
// The loops may hold their Ps only while a P is left for everything else
// in the process (fewer loops than GOMAXPROCS; Run raises GOMAXPROCS for
// the run to make it so: reserveProcs): with every P held by a sleeping loop, other goroutines (an
// in-process server, timers, the interval collector) would run only when
// sysmon preempts a loop, every 10 ms.
func waitRaw(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), ^uintptr(0), 0, 0)
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

// threadCPU returns the calling thread's CPU time in ns (user and
// system), or -1 when the clock cannot be read.
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return -1
	}
	return ts.Nano()
}

// threadSched is the calling thread's scheduler figures: the time it has
// spent runnable on a run queue, waiting for a CPU (the second field of
// /proc/thread-self/schedstat), and its involuntary context switches
// (nonvoluntary_ctxt_switches of /proc/thread-self/status). ok is false
// when either cannot be read (a kernel without schedstats).
type threadSched struct {
	wait      time.Duration
	preempted uint64
	ok        bool
}

// readThreadSched reads the calling thread's threadSched; the caller is
// locked to its OS thread.
func readThreadSched() threadSched {
	st, err1 := os.ReadFile("/proc/thread-self/schedstat")
	status, err2 := os.ReadFile("/proc/thread-self/status")
	if err1 != nil || err2 != nil {
		return threadSched{}
	}
	wait, ok1 := parseSchedstatWait(string(st))
	pre, ok2 := parseNonvoluntary(string(status))
	return threadSched{wait: wait, preempted: pre, ok: ok1 && ok2}
}

// since is what the thread accrued after an earlier reading; zero when
// either reading failed.
func (s threadSched) since(before threadSched) threadSched {
	if !s.ok || !before.ok || s.wait < before.wait || s.preempted < before.preempted {
		return threadSched{}
	}
	return threadSched{wait: s.wait - before.wait, preempted: s.preempted - before.preempted, ok: true}
}

// parseSchedstatWait reads the run-queue wait (ns) of a schedstat line
// "RUN_NS WAIT_NS TIMESLICES".
func parseSchedstatWait(s string) (time.Duration, bool) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return 0, false
	}
	w, err := strconv.ParseUint(f[1], 10, 63)
	if err != nil {
		return 0, false
	}
	return time.Duration(w), true
}

// parseNonvoluntary reads nonvoluntary_ctxt_switches from a
// /proc/PID/status text.
func parseNonvoluntary(s string) (uint64, bool) {
	for line := range strings.Lines(s) {
		if v, ok := strings.CutPrefix(line, "nonvoluntary_ctxt_switches:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
