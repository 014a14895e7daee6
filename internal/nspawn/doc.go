// Package nspawn gives nettune's tests a real systemd: a Debian root file
// system built once with debootstrap(8) and cached, booted with
// systemd-nspawn(1) on a throw-away overlay so that every boot starts from
// the same pristine tree, and commands run inside with nsenter(1).
//
// # Root file system
//
// The packages come from the host's apt source for the suite
// (HostMirror), or debootstrap's default when the host names none.
//
// Ensure builds Image into CacheDir/NAME (NAME holds a hash of the suite,
// variant and package list, so a changed Image is a new tree) by
// running debootstrap into a temporary directory beside it and renaming it
// into place only when debootstrap succeeded: a tree at NAME is always
// complete. A flock(2) on CacheDir/.NAME.lock keeps concurrent test
// processes from building twice; leftovers of a build that crashed are
// removed by the next one.
//
// # Booting
//
// Boot mounts an overlay (lower: the cached tree; upper and work: the
// Container's own directory) in a private mount namespace of the
// systemd-nspawn process, so the mount disappears with it and the cache is
// never written. Files placed in Container.Upper before Boot appear in the
// container. The container has its own PID, mount, UTS, IPC and network
// namespaces (--private-network: only its own loopback). Boots are
// serialised across processes by a flock(2) on CacheDir/.boot.lock, held
// until Stop, because without a systemd on the host every container shares
// the caller's cgroup. Container.Interfaces are moved in at Boot
// (--network-interface=) and back out at Stop; Reboot boots the same
// overlay again, so what one boot wrote is there at the next.
//
// # Privileges
//
// Everything here needs root: debootstrap, mount, systemd-nspawn and
// nsenter. Tests use ForTest, which skips when not root or when a tool is
// missing (and fails instead under CI=true).
package nspawn
