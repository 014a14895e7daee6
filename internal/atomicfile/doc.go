// Package atomicfile replaces a configuration file (/etc/default/grub,
// conf/server.xml) so that a crash, a full disk or a refused rename never
// leaves it half written, and so that the admin's original is kept.
//
// WriteFile follows the order that makes a replace durable: refuse a
// non-regular target; resolve a symlink and replace its target; skip the
// write entirely when the bytes are unchanged; copy the original to a backup
// the first time (never overwriting an existing backup, so it can never be
// replaced by our own output); create a temp file in the same directory with
// O_EXCL; write, fsync, close; give it the original mode and owner; rename
// it over the target; fsync the directory. Any error removes the temp file
// and leaves the target as it was.
//
// A file that cannot be renamed over because it is a bind mount (EBUSY, as
// in containers) or sits across filesystems (EXDEV) is rewritten in place
// instead, and the Result says so.
//
// # Privileges
//
// Writing a file needs write permission on its directory; keeping the
// owner of a root-owned or group-owned file (Debian ships Tomcat's
// server.xml as root:tomcat 0640) needs root.
package atomicfile
