//go:build !linux

package tuning

import (
	"errors"
	"fmt"
	"os/exec"
)

var errUnsupported = fmt.Errorf("tuning: open-files limits are only implemented on linux: %w", errors.ErrUnsupported)

// OpenFilesLimit returns an error matching errors.ErrUnsupported off Linux.
func OpenFilesLimit() (FileLimit, error) { return FileLimit{}, errUnsupported }

// ProcessOpenFilesLimit returns an error matching errors.ErrUnsupported off Linux.
func ProcessOpenFilesLimit(pid int) (FileLimit, error) { return FileLimit{}, errUnsupported }

// SetProcessOpenFilesLimit returns an error matching errors.ErrUnsupported off Linux.
func SetProcessOpenFilesLimit(pid int, l FileLimit) (FileLimit, error) {
	return FileLimit{}, errUnsupported
}

// SetOpenFilesLimit returns an error matching errors.ErrUnsupported off Linux.
func SetOpenFilesLimit(l FileLimit) (FileLimit, error) { return FileLimit{}, errUnsupported }

// RaiseOpenFilesLimit returns an error matching errors.ErrUnsupported off Linux.
func RaiseOpenFilesLimit(n uint64) (FileLimit, error) { return FileLimit{}, errUnsupported }

// StartWithOpenFiles returns an error matching errors.ErrUnsupported off Linux.
func StartWithOpenFiles(cmd *exec.Cmd, n uint64) (FileLimit, error) {
	return FileLimit{}, errUnsupported
}
