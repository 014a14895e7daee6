//go:build !linux

package numa

import "errors"

var errUnsupported = errors.New("numa: cpu affinity is only supported on linux")

// threadCPUs is only supported on Linux.
func threadCPUs(tid int) (CPUSet, error) { return CPUSet{}, errUnsupported }

// setThreadCPUs is only supported on Linux.
func setThreadCPUs(tid int, cpus CPUSet) error { return errUnsupported }

// Affinity is only supported on Linux.
func (h *Host) Affinity(pid int) (ProcessAffinity, error) { return ProcessAffinity{}, errUnsupported }

// Pin is only supported on Linux.
func (h *Host) Pin(pid int, cpus CPUSet) (ProcessAffinity, error) {
	return ProcessAffinity{}, errUnsupported
}

// RestoreAffinity is only supported on Linux.
func (h *Host) RestoreAffinity(before ProcessAffinity) error { return errUnsupported }
