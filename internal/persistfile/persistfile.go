// Package persistfile writes the configuration files that make a tuning
// persistent (a tuned profile, a sysctl.d file, a systemd unit, drop-in or
// .link file), which may not exist before, and puts back what was there:
// the previous bytes and mode, or no file and none of the directories the
// write created. The public packages convert Record to their own exported
// type of the same shape (persist.FileEdit, nic.LinkFileEdit,
// tomcatconf.DropInResult's fields).
package persistfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/nettune/nettune/internal/atomicfile"
	"github.com/nettune/nettune/internal/udiff"
)

// Record says what writing one file did and holds what Restore needs.
type Record struct {
	Path     string      `json:"path"`
	Existed  bool        `json:"existed"`
	Previous []byte      `json:"previous,omitempty"`
	Mode     os.FileMode `json:"mode,omitempty"`
	Created  []string    `json:"created,omitempty"` // directories made by the write, deepest first
	Changed  bool        `json:"changed"`
}

// Plan reads what is at path now; it changes nothing. Created lists the
// directories a write would make.
func Plan(path string) (Record, error) {
	r := Record{Path: path}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		r.Created = missingDirs(filepath.Dir(path))
		return r, nil
	case err != nil:
		return r, err
	case !fi.Mode().IsRegular():
		return r, fmt.Errorf("%s is a %s, want a regular file or none", path, fi.Mode().Type())
	}
	if r.Previous, err = os.ReadFile(path); err != nil {
		return r, err
	}
	r.Existed, r.Mode = true, fi.Mode().Perm()
	return r, nil
}

// Unchanged reports whether the file already holds data.
func (r Record) Unchanged(data []byte) bool { return r.Existed && bytes.Equal(r.Previous, data) }

// missingDirs returns dir and its missing ancestors, deepest first.
func missingDirs(dir string) []string {
	var res []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			return res
		}
		res = append(res, d)
	}
}

// Write writes data to path safely (atomicfile: temp file, fsync, rename;
// no backup, the Record is the backup), creating its directory, and
// returns what Restore needs. On error nothing of ours is left.
func Write(path string, data []byte, perm os.FileMode) (Record, error) {
	r, err := Plan(path)
	if err != nil || r.Unchanged(data) {
		return r, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return r, fmt.Errorf("directory of %s: %w", path, err)
	}
	w, err := atomicfile.WriteFile(path, data, &atomicfile.Options{NoBackup: true, Perm: perm})
	if err != nil {
		removeEmpty(r.Created)
		return r, fmt.Errorf("write %s: %w", path, err)
	}
	r.Changed = w.Changed
	return r, nil
}

// Restore puts back what r recorded: the previous bytes and mode when the
// file existed; otherwise no file, and none of the directories the write
// created when they are empty. Restoring twice is not an error.
func Restore(r Record) error {
	if r.Path == "" {
		return errors.New("restore record has no path")
	}
	if r.Existed {
		perm := r.Mode
		if perm == 0 {
			perm = 0o644
		}
		if err := os.MkdirAll(filepath.Dir(r.Path), 0o755); err != nil {
			return fmt.Errorf("restore %s: %w", r.Path, err)
		}
		if _, err := atomicfile.WriteFile(r.Path, r.Previous, &atomicfile.Options{NoBackup: true, Perm: perm}); err != nil {
			return fmt.Errorf("restore %s: %w", r.Path, err)
		}
		return nil
	}
	if err := os.Remove(r.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", r.Path, err)
	}
	return removeEmpty(r.Created)
}

// removeEmpty removes the directories in dirs (deepest first) that are
// empty.
func removeEmpty(dirs []string) error {
	for _, d := range dirs {
		err := os.Remove(d)
		if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("remove directory %s: %w", d, err)
		}
	}
	return nil
}

// Verify re-reads the file at path and checks it holds want; the error
// names the path and the first line that differs. The caller adds its
// package's prefix.
func Verify(path string, want []byte) error {
	got, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("verify %s: content differs from what was written: %s", path, udiff.FirstDifference(got, want))
	}
	return nil
}
