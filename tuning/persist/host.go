package persist

import (
	"fmt"

	"github.com/nettune/nettune/internal/hostfs"
	"github.com/nettune/nettune/tuning"
)

// Host writes and reads the persistent configuration of one host root:
// /etc/tuned, /etc/sysctl.d and /etc/systemd/system under it. The zero
// value is not usable; build one with New or NewDefault. A Host holds no
// open files and is safe for concurrent use.
type Host struct {
	root hostfs.Root
	live *tuning.Host // the same root's live knobs, for Verifiers
}

// New returns a Host for the tree at root ("/" for the running host; a
// fixture tree or a mounted image otherwise). root must exist and be a
// directory.
func New(root string) (*Host, error) {
	r, err := hostfs.New(root)
	if err != nil {
		return nil, fmt.Errorf("persist: %w", err)
	}
	live, err := tuning.New(root)
	if err != nil {
		return nil, err
	}
	return &Host{root: r, live: live}, nil
}

// NewDefault returns a Host for the running host, "/".
func NewDefault() *Host { return &Host{root: hostfs.Default(), live: tuning.NewDefault()} }

// Root returns the host root directory the Host reads and writes under.
func (h *Host) Root() string { return h.root.Dir() }
