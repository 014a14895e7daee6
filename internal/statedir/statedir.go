// Package statedir says where the example programs keep state that must
// outlive a run: the study's journal of changes to undo, CPU snapshots.
package statedir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nettune/nettune/internal/lockfile"
)

// Root is the state directory of a program run as root.
const Root = "/var/lib/nettune"

// Dir returns this process's state directory; see For.
func Dir() string { return For(os.Geteuid(), os.Getenv, os.UserHomeDir) }

// For returns the state directory of a process with effective UID euid:
// Root for root; else $XDG_STATE_HOME/nettune when that is an absolute
// path (the XDG base directory rule), else ~/.local/state/nettune, else,
// without a home, nettune in the temporary directory.
func For(euid int, getenv func(string) string, home func() (string, error)) string {
	if euid == 0 {
		return Root
	}
	dir := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		h, err := home()
		if err != nil || h == "" {
			return filepath.Join(os.TempDir(), "nettune")
		}
		dir = filepath.Join(h, ".local", "state")
	}
	return filepath.Join(dir, "nettune")
}

// HostLock names the lock of the host's CPU and NIC state (CPU hotplug,
// ethtool channels, IRQ affinity): one study at a time may change them.
const HostLock = "host"

// BaseLock returns the name of the lock of one CATALINA_BASE, so that two
// studies never rewrite and restart the same Tomcat: "base" followed by the
// cleaned absolute path, escaped as systemd escapes a path into a unit name
// ("/var/lib/tomcat10" is "base-var-lib-tomcat10", and a '-' inside a name
// is "\x2d"), so two paths never share a name.
func BaseLock(catalinaBase string) (string, error) {
	abs, err := filepath.Abs(catalinaBase)
	if err != nil {
		return "", fmt.Errorf("statedir: CATALINA_BASE %q: %w", catalinaBase, err)
	}
	var b strings.Builder
	b.WriteString("base")
	for _, part := range strings.Split(strings.Trim(abs, "/"), "/") {
		if part == "" {
			continue
		}
		b.WriteByte('-')
		for i := 0; i < len(part); i++ {
			c := part[i]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' && i > 0 {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "\\x%02x", c)
			}
		}
	}
	return b.String(), nil
}

// LockPath returns the file of the named lock in the state directory dir:
// dir/locks/NAME.lock.
func LockPath(dir, name string) string { return filepath.Join(dir, "locks", name+".lock") }

// Lock takes the named lock in the state directory dir (see HostLock and
// BaseLock), creating dir/locks as needed. The kernel releases it when the
// process dies; Unlock releases it before. When another process holds it,
// the error matches lockfile.ErrLocked and names that process's PID.
func Lock(dir, name string) (*lockfile.Lock, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("statedir: lock name %q: expected a file name (HostLock, or BaseLock's result)", name)
	}
	l, err := lockfile.Acquire(LockPath(dir, name))
	if err != nil {
		return nil, fmt.Errorf("statedir: lock %q: %w", name, err)
	}
	return l, nil
}
