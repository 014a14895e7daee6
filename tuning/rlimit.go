package tuning

import (
	"errors"
	"fmt"
	"strconv"
)

// DefaultOpenFiles is the open-files limit the seeds give Tomcat and wrk
// (`ulimit -n 65535`).
const DefaultOpenFiles = 65535

// Unlimited is the value of an unlimited resource limit (RLIM_INFINITY).
const Unlimited = ^uint64(0)

// FileLimit is an RLIMIT_NOFILE pair, as `ulimit -Sn` and `ulimit -Hn`
// show it. It marshals to JSON as {"soft":1024,"hard":524288}.
type FileLimit struct {
	// Soft is the limit the kernel enforces; a process may raise it up to
	// Hard.
	Soft uint64 `json:"soft"`
	// Hard is the ceiling; raising it needs CAP_SYS_RESOURCE and it can
	// never exceed the fs.nr_open sysctl.
	Hard uint64 `json:"hard"`
}

// String formats l as "soft 1024, hard 524288" ("unlimited" for Unlimited).
func (l FileLimit) String() string {
	return "soft " + limitString(l.Soft) + ", hard " + limitString(l.Hard)
}

func limitString(v uint64) string {
	if v == Unlimited {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

// ErrLimit is matched by errors.Is for a FileLimit whose soft value is
// above its hard value.
var ErrLimit = errors.New("tuning: invalid open-files limit")

// LimitError is a failed change of RLIMIT_NOFILE. errors.Is(err,
// os.ErrPermission) reports a missing privilege, or a hard limit above
// fs.nr_open; errors.Is(err, os.ErrNotExist) a process that is gone.
type LimitError struct {
	PID  int       // 0 for this process
	Want FileLimit // the limit asked for
	Have FileLimit // the limit in force before
	Err  error     // the errno

	hint string // what the errno most likely means here
}

// Error names the process, the limits asked for and in force, the errno
// and, for EPERM, its likely reason (CAP_SYS_RESOURCE or fs.nr_open).
func (e *LimitError) Error() string {
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
func (e *LimitError) Unwrap() error { return e.Err }

// OpenFilesTarget returns the limit RaiseOpenFilesLimit(n) would set given
// the current limit cur: unchanged when cur.Soft is already n or more;
// otherwise a soft limit of n, with the hard limit raised to n when it is
// lower (which needs privilege).
func OpenFilesTarget(cur FileLimit, n uint64) FileLimit {
	if cur.Soft >= n {
		return cur
	}
	want := FileLimit{Soft: n, Hard: cur.Hard}
	if want.Hard < n {
		want.Hard = n
	}
	return want
}
