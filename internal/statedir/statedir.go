// Package statedir says where the example programs keep state that must
// outlive a run: the study's journal of changes to undo, CPU snapshots.
package statedir

import (
	"os"
	"path/filepath"
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
