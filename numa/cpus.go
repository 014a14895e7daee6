package numa

import "github.com/nettune/nettune/internal/cpuset"

// CPUSet is an immutable set of CPU ids. String prints it in the kernel's
// cpulist form ("0-7,96-103"), Lscpu as lscpu does ("0,1,8-15") and Spaced
// as numactl lists a node's CPUs ("0 1 2 3"); it marshals to JSON as the
// kernel's form. It is the same type as tuning.CPUSet. The zero value is
// the empty set.
type CPUSet = cpuset.Set

// ParseCPUList parses a kernel cpulist such as "0-7,96-103" or "0,2,4"
// (the form of nodeN/cpulist, local_cpulist and Cpus_allowed_list);
// surrounding white space and a trailing newline are ignored. A malformed
// list or a negative id is an error naming the text and the expected form.
func ParseCPUList(s string) (CPUSet, error) { return cpuset.ParseFor("numa", s) }

// CPUs returns the set holding ids. It panics on a negative id, which is a
// programming error.
func CPUs(ids ...int) CPUSet { return cpuset.Of(ids...) }
