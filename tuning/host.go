package tuning

import (
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
