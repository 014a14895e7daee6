package rlimit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Get returns the RLIMIT_NOFILE of process pid (0 for this one), as
// `prlimit --pid PID --nofile` shows it. Reading another user's process
// needs CAP_SYS_RESOURCE; a process that does not exist is an error that
// matches os.ErrNotExist.
func Get(pid int) (Limit, error) {
	var rl unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &rl); err != nil {
		return Limit{}, mapErrno(err)
	}
	return Limit{Soft: rl.Cur, Hard: rl.Max}, nil
}

// Set sets the RLIMIT_NOFILE of process pid (0 for this one) to l with
// prlimit(2), even when it already is l: on this process that also stops
// Go's runtime from handing children the soft limit the process started
// with, so they inherit l. The errno is kept (errors.Is(err,
// syscall.EPERM)); a process that does not exist matches os.ErrNotExist.
func Set(pid int, l Limit) error {
	rl := unix.Rlimit{Cur: l.Soft, Max: l.Hard}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &rl, nil); err != nil {
		return mapErrno(err)
	}
	return nil
}

// Raise makes this process's soft limit at least n (Target) and returns
// the limit before. It never lowers a limit. Above the hard limit it needs
// CAP_SYS_RESOURCE, and the hard limit may not pass fs.nr_open.
func Raise(n uint64) (before Limit, err error) {
	before, err = Get(0)
	if err != nil {
		return Limit{}, err
	}
	return before, Set(0, Target(before, n))
}

// mu serialises WithNoFile: the limit it raises is the whole process's.
var mu sync.Mutex

// WithNoFile runs fn (a cmd.Start, so the child inherits the limit) with
// this process's limit raised to a soft limit of n (the hard limit raised
// to n too where this process may; else a soft limit of the hard limit, at
// most n), then puts the previous limit back. Calls are serialised.
func WithNoFile(n uint64, fn func() error) error {
	mu.Lock()
	defer mu.Unlock()
	prev, err := Get(0)
	if err != nil {
		return fmt.Errorf("read the open-files limit: %w", err)
	}
	if err := Set(0, Limit{Soft: n, Hard: max(n, prev.Hard)}); err != nil {
		want := Limit{Soft: min(n, prev.Hard), Hard: prev.Hard}
		if err := Set(0, want); err != nil {
			return fmt.Errorf("set the open-files limit to %d: %w", want.Soft, err)
		}
	}
	err = fn()
	if rerr := Set(0, prev); rerr != nil && err == nil {
		err = fmt.Errorf("restore this process's open-files limit %d/%d: %w", prev.Soft, prev.Hard, rerr)
	}
	return err
}

// Hint explains an EPERM from setting want on process pid, whose limit was
// have: the kernel gives the same errno for a hard limit above fs.nr_open,
// for a missing CAP_SYS_RESOURCE and for another user's process. It is ""
// for other errors.
func Hint(pid int, want, have Limit, err error) string {
	if !errors.Is(err, syscall.EPERM) {
		return ""
	}
	if want.Hard > have.Hard {
		if nr, ok := nrOpen(); ok && want.Hard > nr {
			return fmt.Sprintf("the hard limit may not exceed fs.nr_open (%d)", nr)
		}
		if !hasCapability(capSysResource) {
			return fmt.Sprintf("raising the hard limit above %s needs CAP_SYS_RESOURCE, which this process lacks", String(have.Hard))
		}
	}
	if pid != 0 && pid != os.Getpid() {
		return "changing another user's process needs CAP_SYS_RESOURCE"
	}
	return ""
}

// String formats one limit value as ulimit does: a number or "unlimited".
func String(v uint64) string {
	if v == unix.RLIM_INFINITY {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

// nrOpen reads fs.nr_open, the largest hard limit the kernel allows.
func nrOpen() (uint64, bool) {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// capSysResource is CAP_SYS_RESOURCE from linux/capability.h.
const capSysResource = 24

// hasCapability reports whether this process has capability c in its
// effective set (capget(2)).
func hasCapability(c uint) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// mapErrno keeps the errno and makes ESRCH, a process that does not
// exist, match os.ErrNotExist.
func mapErrno(err error) error {
	if errors.Is(err, syscall.ESRCH) {
		return &noProcess{err}
	}
	return err
}

type noProcess struct{ err error }

func (e *noProcess) Error() string        { return "no such process" }
func (e *noProcess) Unwrap() error        { return e.err }
func (e *noProcess) Is(target error) bool { return target == os.ErrNotExist }
