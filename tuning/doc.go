// Package tuning changes live kernel knobs reversibly: CPU hotplug through
// /sys/devices/system/cpu/cpuN/online, sysctls through /proc/sys, and the
// open-files limit (RLIMIT_NOFILE, `ulimit -n`); and it runs a plan of
// named tuning steps with an on-disk journal so a whole run can be undone,
// even after a crash.
//
// CPU hotplug is described in the kernel's Documentation/core-api/cpu_hotplug.rst
// (https://docs.kernel.org/core-api/cpu_hotplug.html); sysctls in
// Documentation/admin-guide/sysctl/ (https://docs.kernel.org/admin-guide/sysctl/);
// resource limits in getrlimit(2) and prlimit(2).
//
// # CPU hotplug
//
// A Host reads and writes under one host root (New("/") or NewDefault for
// the running host, a fixture tree or a mounted image otherwise).
// CPUState reads /sys/devices/system/cpu/{possible,present,online,offline}
// and, for each cpuN, whether cpuN/online exists (a CPU without it, such as
// x86 cpu0, is not hot-pluggable) and its cpuN/nodeM link. SetOnline writes
// one cpuN/online; KeepOnline is the Arm Neoverse Tomcat tuning guide's
//
//	for no in {8..191}; do echo 0 > /sys/devices/system/cpu/cpu${no}/online; done
//
// as one call: it brings the wanted CPUs online first, then takes the rest
// offline, refuses to offline every CPU, re-reads
// /sys/devices/system/cpu/online to verify, rolls back on the first
// failure (or keeps going with KeepOptions.BestEffort), and returns a
// CPUSnapshot of the state before, which RestoreCPUs puts back
// idempotently. PlanKeepOnline is the dry run. Failures are a
// *HotplugError listing every CPU and the kernel's reason.
//
// Summary renders what lscpu prints about CPUs: the On-line and Off-line
// lists and each NUMA node's CPUs, read from
// /sys/devices/system/node/nodeN/cpulist (offline CPUs leave it but keep
// their cpuN/nodeM link).
//
// # Sysctls
//
// Sysctl and SetSysctl read and write /proc/sys/... by dotted name
// (net.ipv4.tcp_max_tw_buckets) or slashed name; SetSysctl returns the
// previous value and verifies what the kernel kept. Names that are
// absolute or hold "." or ".." components are refused.
//
// # Open files
//
// OpenFilesLimit and SetOpenFilesLimit read and set the RLIMIT_NOFILE of
// a process (0 for this one) with prlimit(2). RaiseOpenFilesLimit raises
// this process's soft limit before it starts a server (Tomcat), so the
// child inherits the limit from its first instruction, which Go's runtime
// would otherwise reset for children; it returns the limit to restore.
//
// # Plans and the journal
//
// A Runner runs Steps in order. Each Step's Prepare returns a Change (the
// dry run: what it would do), whose Undo records a Journal saves, fsynced,
// before Apply touches the host; the Runner reverts every change when a
// step fails, when ctx is cancelled, and at the end unless told to keep
// them. RevertJournal puts the host back from another process after a
// crash. The journal's owner holds an flock on it until Close (the kernel
// drops it when the owner dies), so neither a second run nor a revert can
// touch a live run's journal; a failed append is cut back so the file
// never ends in a torn line, and a record torn by a crash is reverted from
// its whole undo records and reported. FileChange, Host.KeepOnlineChange
// and Host.SysctlChange prepare this package's changes, and Host.Reverters
// undoes them.
//
// Host.VerifyUndo is the read-only twin of Host.Reverters: it checks that
// the host still holds what one record of this package's kinds set;
// tuning/persist's VerifyJournal checks a whole journal with it.
//
// # Persistence
//
// What the live knobs do is gone after a reboot. Package
// tuning/persist writes what reapplies them at every boot (a tuned
// profile, a file of /etc/sysctl.d, a systemd unit) as Reversible values
// a Runner journals like any other change, and checks, reading only, that
// what a journal keeps in force still holds.
//
// # Errors
//
// Callers branch with errors.Is on ErrNotHotpluggable (also
// errors.ErrUnsupported), ErrUnknownCPU, ErrAllOffline, ErrNotApplied and
// ErrPendingJournal, ErrJournalLocked and ErrTornJournal, on
// os.ErrPermission and os.ErrNotExist, and on the kernel's errno
// (syscall.EBUSY, syscall.EINVAL, syscall.EROFS, syscall.EPERM); errors.As
// gives *CPUError, *HotplugError and *TornRecordError. Each error names
// the file and the value.
//
// # Privileges
//
// Reading needs none. Onlining or offlining a CPU and writing sysctls need
// root (CAP_SYS_ADMIN; CAP_NET_ADMIN for net.* in a network namespace).
// Raising the soft open-files limit up to the hard one needs nothing;
// raising the hard limit, or changing another user's process, needs
// CAP_SYS_RESOURCE, which root in a container often lacks; the hard limit
// can never exceed the fs.nr_open sysctl.
package tuning
