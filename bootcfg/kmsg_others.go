//go:build !linux

package bootcfg

import "errors"

var errUnsupported = errors.New("bootcfg: the kernel log is only read on Linux")

// kernelLog is only implemented on Linux.
func (h *Host) kernelLog() (string, error) { return "", errUnsupported }
