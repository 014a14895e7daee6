//go:build !linux

package tomcatconf

import "syscall"

// setPdeathsig does nothing where there is no PR_SET_PDEATHSIG: the child
// outlives this program.
func setPdeathsig(*syscall.SysProcAttr) {}
