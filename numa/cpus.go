package numa

import "github.com/nettune/nettune/internal/cpuset"

// CPUSet is an immutable set of CPU ids, printed in the kernel's cpulist
// form ("0-7,96-103") by String and as numactl lists a node's CPUs
// ("0 1 2 3") by Spaced. The zero value is the empty set.
type CPUSet = cpuset.Set

// ParseCPUList parses a kernel cpulist such as "0-7,96-103" or "0,2,4"
// (the form of nodeN/cpulist, local_cpulist and Cpus_allowed_list). The
// error matches errors.Is(err, ErrSyntax).
func ParseCPUList(s string) (CPUSet, error) { return cpuset.Parse(s) }

// CPUs returns the set holding ids. It panics on a negative id, which is a
// programming error.
func CPUs(ids ...int) CPUSet { return cpuset.Of(ids...) }

// ErrSyntax is matched by errors.Is for a cpulist that does not parse.
var ErrSyntax = cpuset.ErrSyntax
