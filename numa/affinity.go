package numa

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/hostfs"
)

// ThreadAffinity is the CPU affinity of one thread.
type ThreadAffinity struct {
	TID  int
	CPUs CPUSet
}

// ProcessAffinity is the CPU affinity of every thread of a process at one
// moment; Pin returns it as the state to restore.
type ProcessAffinity struct {
	PID     int
	Threads []ThreadAffinity
}

// AffinityError reports a failed sched_setaffinity or sched_getaffinity.
// It unwraps to the errno; errors.Is(err, os.ErrPermission) holds for EPERM
// and errors.Is(err, os.ErrNotExist) for ESRCH (the thread is gone).
type AffinityError struct {
	Op   string // "set" or "get"
	PID  int    // the process
	TID  int    // the thread
	CPUs CPUSet // the CPUs asked for ("set" only)
	Err  error
}

// Error names the process, thread, CPUs and errno.
func (e *AffinityError) Error() string {
	what := fmt.Sprintf("thread %d of process %d", e.TID, e.PID)
	if e.TID == e.PID {
		what = fmt.Sprintf("process %d", e.PID)
	}
	if e.Op == "set" {
		hint := ""
		if errors.Is(e.Err, syscall.EINVAL) {
			hint = " (none of these cpus is online and allowed by the thread's cpuset)"
		}
		return fmt.Sprintf("numa: pin %s to cpus %q: %v%s", what, e.CPUs.String(), e.Err, hint)
	}
	return fmt.Sprintf("numa: read cpu affinity of %s: %v", what, e.Err)
}

// Unwrap returns the errno.
func (e *AffinityError) Unwrap() error { return e.Err }

// Is maps ESRCH (no such thread) to os.ErrNotExist.
func (e *AffinityError) Is(target error) bool {
	return target == os.ErrNotExist && errors.Is(e.Err, syscall.ESRCH)
}

// AllowedCPUs returns the CPUs process pid may run on, from the
// Cpus_allowed_list line of /proc/PID/status (the main thread's view). No
// privilege needed.
func (h *Host) AllowedCPUs(pid int) (CPUSet, error) {
	p := h.root.Proc(fmt.Sprint(pid), "status")
	b, err := hostfs.ReadFile(p)
	if err != nil {
		return CPUSet{}, fmt.Errorf("numa: %w", err)
	}
	return parseStatusCPUs(string(b), p)
}

// parseStatusCPUs finds "Cpus_allowed_list:\t0-3" in a /proc/PID/status.
func parseStatusCPUs(text, path string) (CPUSet, error) {
	for i, line := range strings.Split(text, "\n") {
		v, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		set, err := cpuset.ParseNamed(v, path)
		if err != nil {
			return CPUSet{}, &ParseError{Path: path, Line: i + 1, Text: line, Reason: "expected a cpu list like 0-3,8"}
		}
		return set, nil
	}
	return CPUSet{}, &ParseError{Path: path, Text: firstLine(text), Reason: "no Cpus_allowed_list line; expected a /proc/PID/status file"}
}

// threadIDs lists /proc/PID/task.
func (h *Host) threadIDs(pid int) ([]int, error) {
	dir := h.root.Proc(fmt.Sprint(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("numa: process %d: %w", pid, &hostfs.PathError{Op: "read", Path: dir, Err: unwrapPathErr(err)})
	}
	var tids []int
	for _, e := range ents {
		var tid int
		if _, err := fmt.Sscan(e.Name(), &tid); err == nil && tid > 0 {
			tids = append(tids, tid)
		}
	}
	if len(tids) == 0 {
		return nil, fmt.Errorf("numa: process %d: no threads in %s: %w", pid, dir, os.ErrNotExist)
	}
	return tids, nil
}
