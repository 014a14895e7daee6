// Package cpuset parses, combines and formats the CPU lists the Linux kernel
// prints and accepts: the cpulist form of /sys/devices/system/cpu/online,
// /sys/devices/system/node/nodeN/cpulist and /proc/irq/N/smp_affinity_list
// ("0-7,96-103"), and the hexadecimal mask form of smp_affinity and
// local_cpus ("ffffffff,000000ff").
//
// The format is described in the kernel's Documentation/admin-guide/cputopology.rst
// and implemented by bitmap_parselist / bitmap_print_to_pagebuf. A Set is an
// immutable value: every operation returns a new Set, so Sets can be shared
// between goroutines and stored in snapshots without copying.
//
// This package touches no files and needs no privileges.
package cpuset
