package tuning

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nettune/nettune/internal/hostfs"
)

// OpenFilesLimit returns this process's RLIMIT_NOFILE (getrlimit(2)).
// Note that Go raises its own soft limit to the hard limit at start-up and
// gives children the original soft limit back unless the program sets the
// limit itself, as SetOpenFilesLimit, RaiseOpenFilesLimit and
// StartWithOpenFiles do; after that, children inherit the value returned
// here.
func OpenFilesLimit() (FileLimit, error) { return ProcessOpenFilesLimit(0) }

// ProcessOpenFilesLimit returns the RLIMIT_NOFILE of process pid (0 for
// this one) with prlimit(2), as `prlimit --pid PID --nofile` shows it.
// Reading another user's process needs CAP_SYS_RESOURCE.
func ProcessOpenFilesLimit(pid int) (FileLimit, error) {
	var rl unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &rl); err != nil {
		return FileLimit{}, fmt.Errorf("tuning: read open-files limit of pid %d: %w", pid, mapErrno(err))
	}
	return FileLimit{Soft: rl.Cur, Hard: rl.Max}, nil
}

// SetProcessOpenFilesLimit sets the RLIMIT_NOFILE of process pid (0 for
// this one) to l with prlimit(2) and returns the limit it had, so the
// change can be undone with another call. Lowering is allowed. Raising the
// hard limit, or changing another user's process, needs CAP_SYS_RESOURCE;
// the hard limit may not exceed fs.nr_open. Errors are *LimitError; a
// soft value above the hard one is ErrLimit, checked before any call.
func SetProcessOpenFilesLimit(pid int, l FileLimit) (prev FileLimit, err error) {
	return setLimit(pid, l, false)
}

// setLimit is SetProcessOpenFilesLimit; with always, it makes the call
// even when the limit is unchanged, so Go's runtime stops handing children
// its original soft limit.
func setLimit(pid int, l FileLimit, always bool) (prev FileLimit, err error) {
	prev, err = ProcessOpenFilesLimit(pid)
	if err != nil {
		return FileLimit{}, err
	}
	if l.Soft > l.Hard {
		return prev, fmt.Errorf("%w: soft %s above hard %s", ErrLimit, limitString(l.Soft), limitString(l.Hard))
	}
	if l == prev && !always {
		return prev, nil
	}
	rl := unix.Rlimit{Cur: l.Soft, Max: l.Hard}
	// unix.Prlimit on this process goes through the syscall package, which
	// then stops handing children Go's original soft limit: they inherit
	// this one.
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &rl, nil); err != nil {
		return prev, &LimitError{PID: pid, Want: l, Have: prev, Err: mapErrno(err), hint: limitHint(pid, l, prev, err)}
	}
	return prev, nil
}

// SetOpenFilesLimit sets this process's RLIMIT_NOFILE to l and returns
// the previous limit; see SetProcessOpenFilesLimit.
func SetOpenFilesLimit(l FileLimit) (prev FileLimit, err error) {
	return SetProcessOpenFilesLimit(0, l)
}

// RaiseOpenFilesLimit makes this process's soft RLIMIT_NOFILE at least n,
// as `ulimit -n n` does before the seeds start Tomcat, and returns the
// limit before, for SetOpenFilesLimit to restore. It never lowers a limit.
// Up to the hard limit no privilege is needed; above it the hard limit is
// raised too, which needs CAP_SYS_RESOURCE (errors.Is(err,
// os.ErrPermission) otherwise, with nothing changed) and is capped by
// fs.nr_open.
func RaiseOpenFilesLimit(n uint64) (prev FileLimit, err error) {
	cur, err := OpenFilesLimit()
	if err != nil {
		return FileLimit{}, err
	}
	// Set it even when unchanged, so children inherit it rather than
	// the soft limit this process started with (see OpenFilesLimit).
	return setLimit(0, OpenFilesTarget(cur, n), true)
}

// StartWithOpenFiles starts cmd (as cmd.Start does) so that the child
// begins with a soft RLIMIT_NOFILE of at least n, and returns the limit
// the child has, read with prlimit(2) after the start.
//
// The limit is inherited, not imposed after the fact: this process's own
// limit is raised first with RaiseOpenFilesLimit (never lowered), so the
// child has the limit from its first instruction; a JVM sizes its file
// table when it starts, so setting the child's limit with prlimit(2)
// once it runs would race with it. The cost is that this process keeps
// the raised limit, and other children started meanwhile inherit it too.
// Raising above the hard limit needs CAP_SYS_RESOURCE, as for
// RaiseOpenFilesLimit.
func StartWithOpenFiles(cmd *exec.Cmd, n uint64) (FileLimit, error) {
	if _, err := RaiseOpenFilesLimit(n); err != nil {
		return FileLimit{}, err
	}
	if err := cmd.Start(); err != nil {
		return FileLimit{}, fmt.Errorf("tuning: start %s: %w", cmd.Path, err)
	}
	got, err := ProcessOpenFilesLimit(cmd.Process.Pid)
	if err != nil {
		// The child may already have exited; it was started with the
		// inherited limit all the same.
		if errors.Is(err, os.ErrNotExist) {
			return OpenFilesLimit()
		}
		return FileLimit{}, err
	}
	return got, nil
}

// mapErrno keeps the errno (so errors.Is(err, syscall.EPERM) works) and
// makes ESRCH, a process that does not exist, match os.ErrNotExist.
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

// limitHint explains an EPERM from prlimit(2): the kernel gives the same
// errno for a hard limit above fs.nr_open and for a missing privilege.
func limitHint(pid int, want, have FileLimit, err error) string {
	if !errors.Is(err, syscall.EPERM) {
		return ""
	}
	if want.Hard > have.Hard {
		if nr, rerr := hostfs.ReadInt(hostfs.Default().Proc("sys", "fs", "nr_open")); rerr == nil && want.Hard > uint64(nr) {
			return fmt.Sprintf("the hard limit may not exceed fs.nr_open (%d)", nr)
		}
		if !hasCapability(capSysResource) {
			return fmt.Sprintf("raising the hard limit above %s needs CAP_SYS_RESOURCE, which this process lacks", limitString(have.Hard))
		}
	}
	if pid != 0 && pid != os.Getpid() {
		return "changing another user's process needs CAP_SYS_RESOURCE"
	}
	return ""
}
