//go:build linux

// Package study is the Arm Neoverse Tomcat tuning guide's procedure,
// composed from the nettune packages, for the tomcat-tuning program:
//
//  1. Discover reads the host into a Host value: its CPUs and NUMA nodes
//     (tuning, numa), the Tomcat instance and its HTTP Connector
//     (tomcatconf), the NIC that carries the measured URL (nic) and the
//     boot configuration (bootcfg). WriteHost prints it.
//  2. Steps plans the guide's steps from the Host, in its order: iommu
//     (always skipped: a reboot), cpus (N CPUs, by hotplug or affinity),
//     open-files (ulimit -n 65535), access-log (off), threads (maxThreads
//     from a thread census), nic-queues (queues = CPUs), numa-local (CPUs
//     of the NIC's node). Each change is the value of the package that
//     owns it (tuning.KeepOnlineChange, tomcatconf.ServerXMLEdit and
//     DropInChange, nic.ChannelsEdit), adapted with tuning.ChangeFor; the
//     journal holds the values, and Reverters undoes them through
//     tuning.AddReverter, so a revert after a crash needs no code of its own.
//  3. Plan prints every step's change without making it and measures a
//     baseline; Apply runs the steps through a tuning.Runner with a
//     journal, restarting Tomcat (tomcatconf.RestartChange) and measuring
//     after each step with loadgen.MeasureStep, every load derived from
//     one Config (Options.LoadConfig). The thread census taken under the
//     baseline's load is passed forward (Findings) to plan the threads
//     step. Both return Results as data; DocumentOf and WriteOutputs give
//     -json and -plot.
//  4. Revert undoes what a journal records, after a kill or -keep.
//
// Options holds every flag and checks them all in Check, before anything
// is read or changed. Loads run here, or elsewhere through
// internal/remoteload: in a worker process inside a network namespace
// (remoteload.NetNSLoad) or on client machines over ssh
// (remoteload.Clients); this package starts no ssh or scp itself.
package study
