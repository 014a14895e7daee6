//go:build !linux

package persist

import "errors"

// errUnsupported: /proc/locks is Linux's.
var errUnsupported = errors.New("persist: /proc/locks is Linux only")

// journalHolder cannot tell who holds a journal off Linux.
func journalHolder(locks, path string) (int, error) { return 0, errUnsupported }
