//go:build linux

package numa

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/nettune/nettune/internal/cpuset"
	"golang.org/x/sys/unix"
)

// maxPinPasses bounds how often Pin re-lists /proc/PID/task to catch
// threads created while it pins. A new thread inherits the affinity of the
// thread that creates it, so once all existing threads are pinned no new
// unpinned thread can appear; the extra passes cover the race.
const maxPinPasses = 8

// threadCPUs returns the CPU affinity of thread tid (a PID is its main
// thread's TID) with sched_getaffinity(2), sized dynamically so CPU ids
// above 1023 work. No privilege needed.
func threadCPUs(tid int) (CPUSet, error) {
	for n := 1024; n <= cpuset.MaxID+1; n *= 2 {
		set := unix.NewCPUSet(n)
		err := unix.SchedGetaffinityDynamic(tid, set)
		if errors.Is(err, syscall.EINVAL) {
			continue // the kernel's mask is wider: grow
		}
		if err != nil {
			return CPUSet{}, &AffinityError{Op: "get", PID: tid, TID: tid, Err: err}
		}
		var ids []int
		for id := 0; id < n; id++ {
			if set.IsSet(id) {
				ids = append(ids, id)
			}
		}
		return cpuset.Of(ids...), nil
	}
	return CPUSet{}, &AffinityError{Op: "get", PID: tid, TID: tid, Err: syscall.EINVAL}
}

// setThreadCPUs sets the CPU affinity of thread tid to cpus with
// sched_setaffinity(2). Another user's thread needs CAP_SYS_NICE
// (errors.Is(err, os.ErrPermission) otherwise).
func setThreadCPUs(tid int, cpus CPUSet) error {
	if err := setAffinity(tid, cpus); err != nil {
		return &AffinityError{Op: "set", PID: tid, TID: tid, CPUs: cpus, Err: err}
	}
	return nil
}

func setAffinity(tid int, cpus CPUSet) error {
	if cpus.IsEmpty() {
		return syscall.EINVAL
	}
	set := unix.NewCPUSet(cpus.Max() + 1)
	for _, id := range cpus.IDs() {
		set.Set(id)
	}
	return unix.SchedSetaffinityDynamic(tid, set)
}

// Affinity returns the CPU affinity of every thread of process pid, listing
// /proc/PID/task and calling sched_getaffinity(2) per thread. Threads that
// exit while it runs are left out. No privilege needed.
func (h *Host) Affinity(pid int) (ProcessAffinity, error) {
	tids, err := h.threadIDs(pid)
	if err != nil {
		return ProcessAffinity{}, err
	}
	pa := ProcessAffinity{PID: pid}
	for _, tid := range tids {
		cpus, err := threadCPUs(tid)
		if errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			return ProcessAffinity{}, &AffinityError{Op: "get", PID: pid, TID: tid, Err: errors.Unwrap(err)}
		}
		pa.Threads = append(pa.Threads, ThreadAffinity{TID: tid, CPUs: cpus})
	}
	return pa, nil
}

// Pin sets the CPU affinity of process pid and all its threads
// (/proc/PID/task/*) to cpus with sched_setaffinity(2): the non-destructive
// alternative to taking CPUs offline. It returns each thread's affinity
// from before, for RestoreAffinity. If a thread cannot be pinned, the
// threads already pinned are put back and the error is an *AffinityError
// (errors.Is(err, os.ErrPermission) without CAP_SYS_NICE for another
// user's process; syscall.EINVAL when no CPU of cpus is online). When
// putting a thread back fails too, that error (an *AffinityError naming
// the thread and the CPUs it should have got back) is joined to it with
// errors.Join, so the caller learns that some threads stay pinned.
// Threads that exit meanwhile are skipped.
func (h *Host) Pin(pid int, cpus CPUSet) (ProcessAffinity, error) {
	before := ProcessAffinity{PID: pid}
	if cpus.IsEmpty() {
		return before, &AffinityError{Op: "set", PID: pid, TID: pid, CPUs: cpus, Err: fmt.Errorf("empty cpu set: %w", syscall.EINVAL)}
	}
	done := map[int]bool{}
	for pass := 0; pass < maxPinPasses; pass++ {
		tids, err := h.threadIDs(pid)
		if err != nil {
			return ProcessAffinity{PID: pid}, h.undo(before, err)
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh++
			old, err := threadCPUs(tid)
			if errors.Is(err, syscall.ESRCH) {
				continue
			}
			if err == nil {
				err = h.set(tid, cpus)
				if errors.Is(err, syscall.ESRCH) {
					continue
				}
			}
			if err != nil {
				var ae *AffinityError
				if errors.As(err, &ae) {
					err = ae.Err
				}
				return ProcessAffinity{PID: pid}, h.undo(before, &AffinityError{Op: "set", PID: pid, TID: tid, CPUs: cpus, Err: err})
			}
			done[tid] = true
			before.Threads = append(before.Threads, ThreadAffinity{TID: tid, CPUs: old})
		}
		if fresh == 0 {
			break
		}
	}
	return before, nil
}

// RestoreAffinity sets every thread in before back to its recorded CPUs.
// Threads that have exited are skipped; a thread created after the
// snapshot keeps what it inherited. It returns the first error after
// trying every thread.
func (h *Host) RestoreAffinity(before ProcessAffinity) error {
	var first error
	for _, th := range before.Threads {
		if err := h.set(th.TID, th.CPUs); err != nil && !errors.Is(err, syscall.ESRCH) && first == nil {
			first = &AffinityError{Op: "set", PID: before.PID, TID: th.TID, CPUs: th.CPUs, Err: err}
		}
	}
	return first
}

func (h *Host) set(tid int, cpus CPUSet) error {
	if h.setAffinity != nil {
		return h.setAffinity(tid, cpus)
	}
	return setAffinity(tid, cpus)
}

// undo puts the threads pinned so far back after err stopped Pin, and
// returns err with the rollback's own failure, if any, joined to it.
func (h *Host) undo(before ProcessAffinity, err error) error {
	if rerr := h.RestoreAffinity(before); rerr != nil {
		return errors.Join(err, fmt.Errorf("numa: putting back the threads already pinned: %w", rerr))
	}
	return err
}
