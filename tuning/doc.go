// Package tuning changes live kernel knobs reversibly: CPU hotplug through
// /sys/devices/system/cpu/cpuN/online, sysctls through /proc/sys, and the
// open-files limit (RLIMIT_NOFILE, `ulimit -n`); and it runs a plan of
// named tuning steps with an on-disk journal so a whole run can be undone,
// even after a crash.
//
// CPU hotplug is described in the kernel's Documentation/core-api/cpu_hotplug.rst;
// sysctls in Documentation/admin-guide/sysctl/.
//
// # Privileges
//
// Reading needs none. Onlining or offlining a CPU and writing sysctls need
// root; raising the hard open-files limit needs CAP_SYS_RESOURCE.
package tuning
