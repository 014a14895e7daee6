package tuning

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/nettune/nettune/internal/rlimit"
)

// FileLimit is an RLIMIT_NOFILE pair, as `ulimit -Sn` and `ulimit -Hn`
// show it; ^uint64(0) (RLIM_INFINITY) is unlimited. It marshals to JSON as
// {"soft":1024,"hard":524288}.
type FileLimit struct {
	// Soft is the limit the kernel enforces; a process may raise it up to
	// Hard.
	Soft uint64 `json:"soft"`
	// Hard is the ceiling; raising it needs CAP_SYS_RESOURCE and it can
	// never exceed the fs.nr_open sysctl.
	Hard uint64 `json:"hard"`
}

// String formats l as "soft 1024, hard 524288" ("unlimited" for
// RLIM_INFINITY).
func (l FileLimit) String() string {
	return "soft " + rlimit.String(l.Soft) + ", hard " + rlimit.String(l.Hard)
}

// errLimit is matched by errors.Is for a FileLimit whose soft value is
// above its hard value.
var errLimit = errors.New("tuning: invalid open-files limit")

// limitError is a failed change of RLIMIT_NOFILE: the process, the limits
// asked for and in force, and the errno it unwraps to.
type limitError struct {
	PID  int       // 0 for this process
	Want FileLimit // the limit asked for
	Have FileLimit // the limit in force before
	Err  error     // the errno

	hint string // what the errno most likely means here
}

// Error names the process, the limits asked for and in force, the errno
// and, for EPERM, its likely reason (CAP_SYS_RESOURCE or fs.nr_open).
func (e *limitError) Error() string {
	who := "this process"
	if e.PID != 0 {
		who = "pid " + strconv.Itoa(e.PID)
	}
	msg := fmt.Sprintf("tuning: set open-files limit of %s to %s (was %s): %v", who, e.Want, e.Have, e.Err)
	if e.hint != "" {
		msg += "; " + e.hint
	}
	return msg
}

// Unwrap returns the errno.
func (e *limitError) Unwrap() error { return e.Err }

// OpenFilesLimit returns the RLIMIT_NOFILE of process pid (0 for this
// one) with prlimit(2), as `prlimit --pid PID --nofile` shows it. Reading
// another user's process needs CAP_SYS_RESOURCE; a process that does not
// exist matches errors.Is(err, os.ErrNotExist). Off Linux the error
// matches errors.ErrUnsupported.
//
// Go raises its own soft limit to the hard limit at start-up and gives
// children the soft limit it started with unless the program sets the
// limit itself, as SetOpenFilesLimit(0, …) and RaiseOpenFilesLimit do;
// after that, children inherit the value OpenFilesLimit(0) returns.
func OpenFilesLimit(pid int) (FileLimit, error) {
	l, err := rlimit.Get(pid)
	if err != nil {
		return FileLimit{}, fmt.Errorf("tuning: read open-files limit of pid %d: %w", pid, err)
	}
	return FileLimit(l), nil
}

// SetOpenFilesLimit sets the RLIMIT_NOFILE of process pid (0 for this
// one) to l with prlimit(2) and returns the limit it had, so a second call
// undoes the change. A limit already in force is not set again. Lowering
// is allowed; raising the hard limit, or changing another user's process,
// needs CAP_SYS_RESOURCE, and the hard limit may not exceed fs.nr_open:
// errors.Is(err, os.ErrPermission) (and syscall.EPERM), with the likely
// reason in the message. A soft value above the hard one is refused before
// any call.
func SetOpenFilesLimit(pid int, l FileLimit) (prev FileLimit, err error) {
	prev, err = OpenFilesLimit(pid)
	if err != nil {
		return FileLimit{}, err
	}
	if l.Soft > l.Hard {
		return prev, fmt.Errorf("%w: soft %s above hard %s", errLimit, rlimit.String(l.Soft), rlimit.String(l.Hard))
	}
	if l == prev {
		return prev, nil
	}
	return prev, setLimit(pid, l, prev)
}

// RaiseOpenFilesLimit makes this process's soft RLIMIT_NOFILE at least n,
// as `ulimit -n n` does before a server starts (the Arm Neoverse Tomcat
// tuning guide uses 65535), and returns the limit before, for
// SetOpenFilesLimit(0, prev) to restore. It never lowers a limit. A child
// started afterwards (exec.Cmd.Start) inherits the raised limit from its
// first instruction; the limit is set even when unchanged, so Go stops
// handing children the soft limit this process started with. Up to the
// hard limit no privilege is needed; above it the hard limit is raised
// too, which needs CAP_SYS_RESOURCE (errors.Is(err, os.ErrPermission)
// otherwise, with nothing changed) and is capped by fs.nr_open.
func RaiseOpenFilesLimit(n uint64) (prev FileLimit, err error) {
	prev, err = OpenFilesLimit(0)
	if err != nil {
		return FileLimit{}, err
	}
	return prev, setLimit(0, FileLimit(rlimit.Target(rlimit.Limit(prev), n)), prev)
}

// setLimit sets the limit of pid to want, which had have, and explains a
// failure.
func setLimit(pid int, want, have FileLimit) error {
	if err := rlimit.Set(pid, rlimit.Limit(want)); err != nil {
		return &limitError{PID: pid, Want: want, Have: have, Err: err,
			hint: rlimit.Hint(pid, rlimit.Limit(want), rlimit.Limit(have), err)}
	}
	return nil
}
