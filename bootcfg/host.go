package bootcfg

import (
	"fmt"

	"github.com/nettune/nettune/internal/hostfs"
)

// Host reads and edits one host's boot configuration, under a root
// directory standing for its "/" (a mounted image, a container's view of
// the host at "/host", a test's fixture tree).
type Host struct {
	root hostfs.Root
}

// New returns a Host rooted at dir, which must be an existing directory.
func New(dir string) (*Host, error) {
	r, err := hostfs.New(dir)
	if err != nil {
		return nil, fmt.Errorf("bootcfg: %w", err)
	}
	return &Host{root: r}, nil
}

// NewDefault returns the Host for the running system, rooted at "/".
func NewDefault() *Host { return &Host{root: hostfs.Default()} }

// Root returns the host's root directory.
func (h *Host) Root() string { return h.root.Dir() }

// DefaultGrubPath returns the path of /etc/default/grub under the root.
func (h *Host) DefaultGrubPath() string { return h.root.Etc("default", "grub") }

// DefaultGrub reads /etc/default/grub and /etc/default/grub.d/*.cfg
// under the root (see LoadConfig). It needs no privilege.
func (h *Host) DefaultGrub() (*Config, error) { return LoadConfig(h.DefaultGrubPath()) }

// Cmdline reads the running kernel's command line from /proc/cmdline
// under the root and parses it like a GRUB value. It needs no privilege.
func (h *Host) Cmdline() (*Cmdline, error) {
	p := h.root.Proc("cmdline")
	b, err := hostfs.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("bootcfg: running command line: %w", err)
	}
	c, err := ParseCmdline(string(b))
	if err != nil {
		return nil, fmt.Errorf("bootcfg: %s: %w", p, err)
	}
	return c, nil
}

// Pending is what a reboot would still change: parameters the GRUB file
// sets (or removes) that the running kernel does not have (or still has).
type Pending struct {
	Set     []Param  // in the file, not (or with another value) in the running kernel
	Removed []string // removed from the file, still on the running kernel
}

// RebootRequired reports whether anything is pending.
func (p Pending) RebootRequired() bool { return len(p.Set) > 0 || len(p.Removed) > 0 }

// PendingReboot compares the desired parameters with the file's boot
// command line (Config.BootCmdline) and the running one (Host.Cmdline). A
// parameter is pending when the file has it and the running kernel does
// not; a removed key is pending when the file no longer has it and the
// running kernel does. A parameter not yet in the file is not pending:
// the file must be edited first.
func PendingReboot(file, running *Cmdline, set []Param, removed []string) Pending {
	var p Pending
	for _, want := range set {
		if file.Has(want) && !running.Has(want) {
			p.Set = append(p.Set, want)
		}
	}
	for _, k := range removed {
		if len(file.GetAll(k)) == 0 && len(running.GetAll(k)) > 0 {
			p.Removed = append(p.Removed, k)
		}
	}
	return p
}
