// Package numa discovers the host's NUMA topology from sysfs
// (/sys/devices/system/node/nodeN: cpulist, meminfo, distance; the
// cpuN/nodeM links), finds the node a network interface or PCI device sits
// on (device/numa_node, local_cpulist), picks CPUs local to it, pins a
// process and all its threads to CPUs with sched_setaffinity(2), and renders
// the topology as `numactl -H` prints it.
//
// Sysfs node attributes: Documentation/ABI/stable/sysfs-devices-node.
//
// # Privileges
//
// Discovery needs none. Pinning another user's process needs CAP_SYS_NICE.
package numa
