//go:build linux

package study

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// ownerLock is the lock file the owner of a temporary folder holds in it
// (ownedTempDir).
const ownerLock = ".nettune-owner.lock"

// ownedTempDir makes a private folder prefix* in the temporary directory
// and takes its owner's lock: an flock(2) on a file inside, which the
// kernel releases when this process dies, so that a later run can tell a
// folder a killed run left (removeStale). Close the lock after removing
// the folder.
func ownedTempDir(prefix string) (string, *os.File, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ownerLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			err = fmt.Errorf("lock %s: %w", f.Name(), err)
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, f, nil
}

// removeStale removes the folders prefix* in the temporary directory that
// runs which did not end left (ownedTempDir): those whose owner's lock is
// free and that inUse does not claim (nil: none is), each said on log as
// what ("the temporary copy").
func removeStale(log io.Writer, prefix, what string, inUse func(dir string) bool) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, dir := range dirs {
		f, err := os.Open(filepath.Join(dir, ownerLock))
		if err != nil {
			continue // not ours, or still being made
		}
		free := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
		if free && (inUse == nil || !inUse(dir)) {
			if err := os.RemoveAll(dir); err == nil {
				fmt.Fprintf(log, "removed %s, %s of a run that did not end\n", dir, what)
			}
		}
		f.Close()
	}
}
