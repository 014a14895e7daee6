//go:build linux

// Command tomcat-tuning runs the Arm Neoverse Tomcat tuning guide as one
// safe, measured, reversible program. The guide's procedure
// is a baseline — IOMMU boot settings, N CPUs online, Tomcat under
// `ulimit -n 65535` — then the access log off, maxThreads = CPUs - 1 with
// the keep-alive and connection limits, NIC queues = CPUs and CPUs local to
// the NIC's NUMA node, restarting Tomcat and measuring with wrk2 after each
// step. This program is flags, signals and printing over the procedure in
// its internal/study package, which composes the nettune packages:
//
//	go run ./examples/tomcat-tuning                    # discover, plan, measure a baseline; changes nothing
//	go run ./examples/tomcat-tuning -apply             # run the steps, measure each, revert at the end
//	go run ./examples/tomcat-tuning -apply -load-host u@client    # the same, the load from a client over ssh
//	go run ./examples/tomcat-tuning -apply -keep       # leave the tuned state in place
//	go run ./examples/tomcat-tuning -plan -json p.json # every step's change, no load, no JVM
//	go run ./examples/tomcat-tuning -verify            # does the host still hold what the journal keeps?
//	go run ./examples/tomcat-tuning -revert            # undo what an earlier (killed) run left
//
// The step table fits 100 columns: each step's capacity (median and
// range), its change against the baseline and the previous step with the
// verdict, the Arm guide's figure, p99 at the common rate and errors;
// -wide prints every column (each change's interval and p, p50, max, the
// JVM's CPU). -json writes one document, schema_version 1, durations in
// ms and rates in requests/s, a capacity, a latency and a change of one
// shape wherever they appear; docs/json-schema.md describes it and
// docs/tomcat-tuning.schema.json is its JSON Schema.
//
// -h lists every flag with its default, -version the module and VCS
// commit. The exit status is 0 when done, 1 on failure, 2 for a bad
// command line, which is refused in one line before anything runs: an
// unknown flag or a bad value, or flags that contradict each other or
// would do nothing (-revert with any flag but -journal, -keep or -persist
// without -apply, -persist-steps without -persist or -export, -ssh-config
// without -load-host, ...). -capacity-rate is the guide's wrk2 -R, the
// capacity runs' offered rate; -latency-rate the latency run's, common to
// every step. A bare duration is seconds (-duration 60, as wrk2's -d60).
//
// -cpu-method auto (the default) restricts Tomcat's CPUs by affinity when
// the load runs on this host (in the study's own process, or in a network
// namespace with -load-netns), the load generator pinned to the other
// CPUs, and by hotplug, as the guide does, when it runs on -load-host's
// clients; the output and -json say which and why. A given -cpu-method
// hotplug with a load on this host would run it on Tomcat's CPUs: -apply
// refuses it, naming -load-host (one client or several, comma-separated,
// one shard each), -cpu-method affinity, and -load-shares-cpus, which
// measures anyway and marks every figure.
//
// -connections 0 (the default) sizes the load to the server on the
// baseline: from Tomcat's CPUs at the guide's ratio (wrk2 -c1280 on 192
// CPUs), doubled while the capacity grows beyond the noise band, up to 32
// times the start (at most 8192); the count kept and whether the server
// saturated are printed and in -json's "load".
//
// Steps, in the guide's order (-steps picks and orders them): iommu (the
// GRUB_CMDLINE_LINUX diff; always skipped, "reboot required" — the study
// never edits the boot configuration), cpus (hotplug, or JVM affinity),
// open-files, access-log, threads (sized from a
// thread census of the JVM under the baseline's load), nic-queues,
// numa-local. The first three form the baseline.
//
// # Kernel interfaces and files
//
// Read: /sys/devices/system/cpu/{online,offline,present,possible,cpuN/},
// /sys/devices/system/node/, /sys/class/net/IF/device/{numa_node,
// local_cpulist}, /sys/kernel/iommu_groups, /dev/kmsg, /proc/cmdline,
// /proc/PID/{stat,status,task/*/stat}, /etc/default/grub (+ grub.d),
// CATALINA_BASE/conf/server.xml; netlink (interface addresses) and the
// ETHTOOL_GCHANNELS ioctl.
//
// Written with -apply, each recorded in the journal first: server.xml
// (temp file, fsync, rename), /sys/devices/system/cpu/cpuN/online
// (hotplug), the NIC's channel counts (ETHTOOL_SCHANNELS); the JVM's and
// this process's CPU affinity (sched_setaffinity, not journaled: the JVM
// is restarted and this process restores its own); Tomcat is stopped by
// PID and started as its installation runs it (Debian's tomcat10 unit: its
// start script as user tomcat) under a raised RLIMIT_NOFILE.
//
// # Privileges
//
// Plan mode needs none beyond reading the files (Debian's /etc/tomcat10
// is root:tomcat 0640, and the kernel log needs root where
// kernel.dmesg_restrict=1). -apply and -revert need root: CAP_SYS_ADMIN
// for CPU hotplug, CAP_NET_ADMIN for channels, write access to server.xml,
// the right to signal the JVM, and CAP_SYS_RESOURCE to raise the hard
// open-files limit (without it the JVM gets the hard limit, and the
// program says so).
//
// # Safety
//
// The journal (-journal, printed at start) is written and fsynced before
// every change. Any error, and the first SIGINT or SIGTERM, reverts every
// change made so far; a second signal exits at once, keeping the journal
// for -revert. A new -apply refuses to start while a journal records
// unreverted changes. The journal's first record is Tomcat itself: -revert
// restores the files, then stops the JVM a killed run left (running with
// the tuned files) and starts Tomcat again if it ran before the run.
package main
