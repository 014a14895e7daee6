//go:build !linux

package tomcatconf

import (
	"errors"
	"syscall"
)

// setPdeathsig does nothing where there is no PR_SET_PDEATHSIG: the child
// outlives this program.
func setPdeathsig(*syscall.SysProcAttr) {}

// setThreadCPUs cannot set a thread's CPUs here.
func setThreadCPUs([]int) error { return errors.New("CPU affinity needs Linux") }
