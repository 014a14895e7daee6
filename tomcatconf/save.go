package tomcatconf

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/nettune/nettune/internal/atomicfile"
)

// ErrModified: the file changed on disk after it was loaded; saving would
// lose that change.
var ErrModified = errors.New("tomcatconf: file changed on disk since it was loaded")

// SaveOptions tune Save. A nil *SaveOptions means the defaults.
type SaveOptions struct {
	// NoBackup skips the backup copy (<file>.nettune.bak). Default: false,
	// the first save keeps the original there.
	NoBackup bool
	// Force overwrites a file that changed on disk since Load. Default:
	// false, which fails with ErrModified.
	Force bool

	fs atomicfile.FS // fault injection in tests; nil is the real file system
}

// SaveResult says what Save did.
type SaveResult struct {
	Path    string // the file replaced (a symlink's target: Debian's conf/ is a link to /etc/tomcat10)
	Changed bool   // false when the file already held these bytes: nothing was written
	Backup  string // the backup written by this call, "" when none
}

// Save writes the current contents to the file the Config was loaded
// from, safely: nothing is written when the bytes are unchanged; otherwise
// the original is backed up to <file>.nettune.bak the first time, a temp
// file in the same directory is written, synced and renamed over the file,
// and the mode and owner are kept (Debian ships server.xml root:tomcat
// 0640, so keeping the owner needs root). On error the file is unchanged.
// After a successful Save, Diff compares against the saved bytes.
func (c *Config) Save(opts *SaveOptions) (SaveResult, error) {
	var o SaveOptions
	if opts != nil {
		o = *opts
	}
	if !o.Force {
		disk, err := os.ReadFile(c.path)
		if err != nil {
			return SaveResult{}, fmt.Errorf("tomcatconf: save: %w", err)
		}
		if !bytes.Equal(disk, c.orig) {
			return SaveResult{}, fmt.Errorf("%w: %s (reload it, or save with Force)", ErrModified, c.path)
		}
	}
	res, err := atomicfile.WriteFile(c.path, c.src, &atomicfile.Options{NoBackup: o.NoBackup, FS: o.fs})
	if err != nil {
		return SaveResult{}, fmt.Errorf("tomcatconf: save %s: %w", c.path, err)
	}
	c.orig = bytes.Clone(c.src)
	return SaveResult{Path: res.Path, Changed: res.Changed, Backup: res.Backup}, nil
}
