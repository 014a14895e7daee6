//go:build !linux

package rlimit

import (
	"errors"
	"fmt"
	"strconv"
)

var errUnsupported = fmt.Errorf("open-files limits are only implemented on linux: %w", errors.ErrUnsupported)

// Get is only implemented on Linux.
func Get(pid int) (Limit, error) { return Limit{}, errUnsupported }

// Set is only implemented on Linux.
func Set(pid int, l Limit) error { return errUnsupported }

// Raise is only implemented on Linux.
func Raise(n uint64) (Limit, error) { return Limit{}, errUnsupported }

// WithNoFile is only implemented on Linux.
func WithNoFile(n uint64, fn func() error) error { return errUnsupported }

// Hint is only implemented on Linux.
func Hint(pid int, want, have Limit, err error) string { return "" }

// String formats one limit value as ulimit does.
func String(v uint64) string {
	if v == ^uint64(0) {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}
