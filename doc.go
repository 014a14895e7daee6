// Package nettune tunes and measures network workloads on Linux servers.
//
// It turns a published tuning procedure — an Arm Neoverse guide that takes
// Apache Tomcat from 244k to 379k requests/s on a 192-core host, step by
// step, measuring each step with wrk2; an ApacheBench walkthrough; and an
// IBM "tuning variations" load-sweep study — into packages that each own
// one concern and can be imported alone:
//
//   - [github.com/nettune/nettune/bootcfg]: kernel parameters in
//     /etc/default/grub (GRUB_CMDLINE_LINUX and _DEFAULT), the running
//     /proc/cmdline, IOMMU state, regenerating the bootloader config.
//   - [github.com/nettune/nettune/tuning]: live kernel knobs — CPU hotplug,
//     sysctls, the open-files limit — and a plan of reversible steps with an
//     on-disk journal, so a whole tuning run can be undone.
//   - [github.com/nettune/nettune/numa]: NUMA topology, the node a NIC sits
//     on, picking CPUs local to it, pinning a process, `numactl -H` output.
//   - [github.com/nettune/nettune/nic]: the interface holding an address,
//     ethtool channel counts, which IRQ serves which queue, IRQ affinity.
//   - [github.com/nettune/nettune/tomcatconf]: Tomcat's server.xml edited
//     with minimal diffs, a Tomcat instance started and stopped, a census
//     of its threads to size maxThreads.
//   - [github.com/nettune/nettune/loadgen]: an HTTP/1.1 load generator with
//     wrk2's coordinated-omission correction and ab's closed model, with
//     wrk2, ab, JSON and HdrHistogram-log reports.
//
// # How they compose
//
// Every host-touching package is built around a value that knows its host
// root (default "/"), so the same code inspects the running host, a
// container's view of it ("/host") or a captured tree in a test. Every
// change returns the state before it, so a caller can restore it; config
// files are rewritten safely, with a backup and an unchanged file never
// rewritten. The programs under examples/ wire the packages together;
// examples/tomcat-tuning runs the whole study.
//
// # Where to start
//
// To measure a server, read loadgen. To reproduce the study, read the
// README and run examples/tomcat-tuning without flags: it only discovers and
// plans until given -apply.
package nettune
