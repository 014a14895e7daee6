package tomcatconf

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// setPdeathsig has the kernel send SIGKILL to the child when the thread
// that forked it ends (PR_SET_PDEATHSIG).
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// setThreadCPUs sets the calling thread's CPU affinity (the caller has
// locked it to its goroutine).
func setThreadCPUs(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= len(set)*64 {
			return fmt.Errorf("CPU %d out of range", c)
		}
		set.Set(c)
	}
	return unix.SchedSetaffinity(0, &set)
}
