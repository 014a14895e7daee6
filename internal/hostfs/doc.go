// Package hostfs is the one place nettune builds paths to the host's /sys,
// /proc and /etc from, and reads and writes kernel attribute files.
//
// Every host-touching package holds a Root (default "/"). Tests point it at a
// fixture tree; a container points it at "/host"; a user inspects a mounted
// image. Paths are only ever built with Root.Sys, Root.Proc, Root.Etc and
// Root.Path, so no other file in nettune names those directories.
//
// Reads of sysfs attributes are one read(2) into a page-sized buffer and no
// stat, because sysfs reports sizes that lie and some drivers answer EAGAIN
// to a second read. Writes of kernel attributes are done in place: open
// O_WRONLY without O_CREAT or O_TRUNC, one write(2), no temp file — the way
// `echo 0 > /sys/.../online` does it. When the root is "/", a write first
// checks with statfs(2) that the file is on sysfs or procfs, so a mistaken
// path can never overwrite an ordinary file.
//
// # Errors
//
// Every error is a *PathError naming the operation, the path and, for
// writes, the value. It unwraps to the syscall.Errno, so callers can test
// errors.Is(err, os.ErrPermission) (EPERM, EACCES), errors.Is(err,
// os.ErrNotExist) (ENOENT, and ENODEV from a device that went away) and
// errors.Is(err, syscall.EBUSY).
//
// # Privileges
//
// Reading needs none for almost every file; writing kernel attributes needs
// root (CAP_SYS_ADMIN for CPU hotplug, CAP_NET_ADMIN for net sysctls).
package hostfs
