// Package lockfile is an exclusive flock(2) on a named file, for "one owner
// at a time" between processes: one study per CATALINA_BASE, one owner of
// the host's CPU and NIC state, one writer of a journal.
//
// The lock belongs to an open file description, so the kernel drops it
// when the owner closes the file or dies, SIGKILL included: a lock is
// never left behind by a crash, and no stale-lock cleanup is needed. The
// owner writes its PID into the file after it has the lock, so a refusal
// can name the process that holds it.
//
// flock locks are advisory: they keep out only the processes that ask.
// They work on local file systems and tmpfs; on NFS, Linux emulates them
// with byte-range locks.
package lockfile
