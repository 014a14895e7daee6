package persist

import (
	"os"

	"golang.org/x/sys/unix"
)

// journalHolder returns the PID that holds an flock on the file at path,
// as the kernel's lock table (locks, /proc/locks) lists it; 0 when none.
func journalHolder(locks, path string) (int, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	f, err := os.Open(locks)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseLocks(f, unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
}
