package tuning

import (
	"errors"
	"fmt"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/hostfs"
)

// CPUSet is an immutable set of CPU ids. String prints it in the kernel's
// list form ("0-7,96-103"), Lscpu as lscpu does ("0,1,8-15"), and it
// marshals to JSON as the kernel's form. It is the same type as
// numa.CPUSet; build one with ParseCPUList. The zero value is the empty
// set.
type CPUSet = cpuset.Set

// ParseCPUList parses a CPU list in the kernel's form: "0-7,96-103",
// "0,2,4", "" (the empty set); surrounding white space and a trailing
// newline are ignored. A malformed list or a negative id is an error
// naming the text and the expected form.
func ParseCPUList(s string) (CPUSet, error) { return cpuset.ParseFor("tuning", s) }

// Errors callers branch on with errors.Is.
var (
	// ErrNotHotpluggable: the CPU has no cpuN/online file, so the kernel
	// cannot take it offline (x86 cpu0 on most machines). It also matches
	// errors.ErrUnsupported.
	ErrNotHotpluggable error = unsupported("tuning: cpu is not hot-pluggable")
	// ErrUnknownCPU: a negative CPU id, or one the host does not have
	// (not in /sys/devices/system/cpu/present).
	ErrUnknownCPU = errors.New("tuning: no such cpu")
	// ErrAllOffline: the change would leave no CPU online.
	ErrAllOffline = errors.New("tuning: refusing to take every cpu offline")
	// ErrNotApplied: the kernel accepted a write but reading the state
	// back shows a different value.
	ErrNotApplied = errors.New("tuning: change not applied")
)

// Host drives the live kernel knobs (CPU hotplug, sysctls) of one host
// root. The zero value is not usable; build one with New or NewDefault. A
// Host holds no open files and is safe for concurrent use, though two
// concurrent changes to the same CPUs race as two shells would.
type Host struct {
	root hostfs.Root
}

// New returns a Host for the tree at root ("/" for the running host; a
// fixture tree or a mounted image otherwise). root must exist and be a
// directory; it needs sys/devices/system/cpu for the CPU calls and
// proc/sys for the sysctl calls.
func New(root string) (*Host, error) {
	r, err := hostfs.New(root)
	if err != nil {
		return nil, fmt.Errorf("tuning: %w", err)
	}
	return &Host{root: r}, nil
}

// NewDefault returns a Host for the running host, "/".
func NewDefault() *Host { return &Host{root: hostfs.Default()} }

// Root returns the host root directory the Host reads and writes under.
func (h *Host) Root() string { return h.root.Dir() }

// unsupported is a sentinel that also matches errors.ErrUnsupported.
type unsupported string

// Error returns the message.
func (e unsupported) Error() string { return string(e) }

// Is reports whether target is errors.ErrUnsupported.
func (e unsupported) Is(target error) bool { return target == errors.ErrUnsupported }
