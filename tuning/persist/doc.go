// Package persist carries a kept tuning across reboots and checks that
// it still holds: it writes the
// files that reapply it at every boot, /etc/tuned/NAME/tuned.conf for
// tuned (Debian's and RHEL's tuned 2.x,
// https://github.com/redhat-performance/tuned), a file of /etc/sysctl.d
// for systemd-sysctl (sysctl.d(5)) and a oneshot systemd unit of
// /etc/systemd/system (systemd.service(5)), and switches tuned's active
// profile with tuned-adm(8); VerifyJournal checks, reading only, that
// the host still holds what a journal keeps in force. What package
// tuning changes on the live kernel is gone after a reboot; what this
// package writes is not.
//
// # tuned profiles
//
// tuned applies a profile, /etc/tuned/NAME/tuned.conf, at every start and
// reverts it when another profile is chosen. TunedProfile is such a
// profile as a plain value: [main] include= (build on the active profile)
// and summary=, [sysfs] (OfflineCPUs gives
// /sys/devices/system/cpu/cpuN/online=0 lines), [sysctl], [bootloader]
// cmdline=, and further sections such as package nic's [net] instance.
// ParseTunedConf and TunedConf.Render read and write tuned.conf as tuned's
// own parser (Python's configparser with "=" as the only delimiter and
// " #" as an inline comment) reads it. Tuned drives tuned-adm (profile,
// active, verify, off) through a CommandRunner; Host.ActiveTunedProfile
// reads /etc/tuned/active_profile.
//
// # Without tuned
//
// Where tuned is absent, SysctlConf is a file of /etc/sysctl.d and
// CPUOnlineUnit a oneshot systemd unit that takes CPUs offline at boot.
//
// # Reversible writes
//
// A Host reads and writes under one host root (New("/") or NewDefault for
// the running host, a fixture tree or a mounted image otherwise). Every
// file is written as a FileEdit (Host.PlanTunedProfile, PlanSysctlConf,
// PlanCPUOnlineUnit, or PlanFile), and a profile switch is a
// TunedActivation (Tuned.PlanActivate): tuning.Reversible values that
// hold what Undo puts back (the file existed? its bytes and mode; the
// directories created; the profiles active before), journaled with
// tuning.ChangeFor and reverted through tuning.AddReverter. Their journal
// kinds, "persist-file" and "tuned-activation", are those package tuning
// wrote before these types moved here, so an older journal reverts.
//
// # Verification
//
// VerifyJournal is the read-only twin of tuning.RevertJournal, as
// `tuned-adm verify` is to a profile: for every change a journal holds in
// force (a run that kept its changes, persistent writes) it rebuilds the
// change from its record and checks the host still holds it, through
// Verifiers (Host.Verifiers for package tuning's kinds, whose records
// carry the state set as well as the state before; AddVerifier for a
// tuning.Kinded value). A record that cannot be checked matches
// ErrNotVerifiable.
//
// # Privileges
//
// Planning, reading and verifying need none (a sysctl or a file that
// only root may read aside). Writing under /etc and running
// tuned-adm profile or off need root.
package persist
