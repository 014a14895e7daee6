package tomcatconf

import "syscall"

// setPdeathsig has the kernel send SIGKILL to the child when the thread
// that forked it ends (PR_SET_PDEATHSIG).
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
