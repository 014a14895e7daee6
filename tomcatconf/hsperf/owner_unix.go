//go:build unix

package hsperf

import (
	"os"
	"syscall"
)

// fileOwner returns the UID owning path.
func fileOwner(path string) (int, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
