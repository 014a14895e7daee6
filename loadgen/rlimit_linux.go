package loadgen

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// raiseNoFile makes sure the process may hold need file descriptors,
// raising the soft RLIMIT_NOFILE to the hard limit (what the seeds' ulimit
// -n 65535 does) and, when that is not enough and the process may (root,
// CAP_SYS_RESOURCE), the hard limit too.
func raiseNoFile(need uint64) (RlimitChange, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return RlimitChange{}, fmt.Errorf("loadgen: getrlimit(RLIMIT_NOFILE): %w", err)
	}
	ch := RlimitChange{Before: rl.Cur, After: rl.Cur, Max: rl.Max}
	if rl.Cur >= need {
		return ch, nil
	}
	if rl.Max >= need {
		want := unix.Rlimit{Cur: rl.Max, Max: rl.Max}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err != nil {
			return ch, fmt.Errorf("%w: need %d open files for the connections, soft limit is %d (hard %d), and raising it failed: %v", ErrOpenFiles, need, rl.Cur, rl.Max, err)
		}
		ch.After = rl.Max
		return ch, nil
	}
	want := unix.Rlimit{Cur: need, Max: need}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err != nil {
		return ch, fmt.Errorf("%w: need %d open files for the connections, but RLIMIT_NOFILE is %d (hard %d) and only root can raise the hard limit (%v): run as root, raise it (ulimit -Hn / limits.conf), or use fewer connections", ErrOpenFiles, need, rl.Cur, rl.Max, err)
	}
	ch.After, ch.Max = need, need
	return ch, nil
}
