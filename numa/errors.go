package numa

import (
	"errors"
	"fmt"
)

// Errors callers branch on with errors.Is.
var (
	// ErrParse is matched by every error about a sysfs or procfs file whose
	// content is not in the kernel's form.
	ErrParse = errors.New("numa: malformed kernel file")
	// ErrNotEnoughCPUs is matched when a node (or a device's node) has fewer
	// CPUs than a pick asked for. The error is a *NotEnoughCPUsError.
	ErrNotEnoughCPUs = errors.New("numa: not enough cpus")
	// ErrUnknownNode is matched when a device has no NUMA affinity the
	// kernel reports (a virtual interface, or numa_node -1 on a host with
	// more than one node), so no CPUs are local to it.
	ErrUnknownNode = errors.New("numa: device has no known numa node")
	// ErrNoSuchNode is matched when a node id is not present on the host.
	ErrNoSuchNode = errors.New("numa: no such node")
)

// ParseError reports a kernel file whose content could not be parsed. It
// matches errors.Is(err, ErrParse).
type ParseError struct {
	Path   string // full path of the file
	Line   int    // 1-based line number; 0 when the file is one value
	Text   string // the offending text
	Reason string // what is wrong, and the expected form
}

// Error names the file, the line, the text and the expected form.
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("numa: %s line %d %q: %s", e.Path, e.Line, e.Text, e.Reason)
	}
	return fmt.Sprintf("numa: %s %q: %s", e.Path, e.Text, e.Reason)
}

// Is reports whether target is ErrParse.
func (e *ParseError) Is(target error) bool { return target == ErrParse }

// NotEnoughCPUsError reports a pick that asked for more CPUs than a node
// can give. It matches errors.Is(err, ErrNotEnoughCPUs).
type NotEnoughCPUsError struct {
	Node       int    // the node picked from
	Want       int    // CPUs asked for
	Have       CPUSet // the CPUs the node could give
	OnlineOnly bool   // whether offline CPUs were left out of Have
	Excluded   CPUSet // CPUs the caller excluded, also left out of Have
}

// Error names the node, the CPUs it has and the count asked for.
func (e *NotEnoughCPUsError) Error() string {
	which := "cpus"
	if e.OnlineOnly {
		which = "online cpus"
	}
	have := e.Have.String()
	if have == "" {
		have = "none"
	}
	if !e.Excluded.IsEmpty() {
		which += " outside " + e.Excluded.String()
	}
	return fmt.Sprintf("numa: node %d has %d %s (%s), asked for %d", e.Node, e.Have.Len(), which, have, e.Want)
}

// Is reports whether target is ErrNotEnoughCPUs.
func (e *NotEnoughCPUsError) Is(target error) bool { return target == ErrNotEnoughCPUs }
