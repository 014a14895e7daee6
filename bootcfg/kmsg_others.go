//go:build !linux

package bootcfg

import "errors"

var errUnsupported = errors.New("bootcfg: the kernel log is only read on Linux")

// KernelLog is only implemented on Linux.
func (h *Host) KernelLog() (string, error) { return "", errUnsupported }
