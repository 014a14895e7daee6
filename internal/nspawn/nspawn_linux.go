package nspawn

import "syscall"

// bootProcAttr starts the shell that mounts the overlay in a new mount
// namespace (which Go makes private), in its own process group, and with
// SIGTERM as its parent-death signal, so a test process that dies halts
// its container.
func bootProcAttr() (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Setpgid: true, Pdeathsig: syscall.SIGTERM}, nil
}
