package numa

import (
	"fmt"

	"github.com/nettune/nettune/internal/hostfs"
)

// Host reads the NUMA topology of one host root. The zero value is not
// usable; build one with New or NewDefault.
type Host struct {
	root hostfs.Root
	// setAffinity replaces sched_setaffinity in whitebox tests that inject
	// a failure part-way through a Pin; nil means the real call.
	setAffinity func(tid int, cpus CPUSet) error
}

// New returns a Host reading sysfs and procfs under root: "/" for the
// running host, or a directory holding a captured or mounted tree (its
// sys/ and proc/). root must exist and be a directory.
func New(root string) (*Host, error) {
	r, err := hostfs.New(root)
	if err != nil {
		return nil, fmt.Errorf("numa: %w", err)
	}
	return &Host{root: r}, nil
}

// NewDefault returns a Host for the running host, root "/".
func NewDefault() *Host { return &Host{root: hostfs.Default()} }

// Root returns the host root directory.
func (h *Host) Root() string { return h.root.Dir() }
