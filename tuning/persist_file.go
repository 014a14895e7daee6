package tuning

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/nettune/nettune/internal/atomicfile"
)

// undoPersist is the Undo kind of a persistent configuration file that
// may not have existed before (a tuned profile, a sysctl.d file, a unit);
// its data is a FileWrite and revertPersist reverts it.
const undoPersist = "persist-file"

// FileWrite says what writing one persistent configuration file did, and
// holds what is needed to undo it (RestoreFile, or the Undo of the Change
// that wrote it): whether the file existed, its bytes and mode before, and
// the directories the write created.
type FileWrite struct {
	Path     string      `json:"path"`               // the file, under the host root
	Existed  bool        `json:"existed"`            // a file was there before
	Previous []byte      `json:"previous,omitempty"` // its bytes (base64 in a journal); nil when it did not exist
	Mode     os.FileMode `json:"mode,omitempty"`     // its mode; 0 when it did not exist
	// Created lists the directories the write made, deepest first:
	// RestoreFile removes them again when they are empty.
	Created []string `json:"created,omitempty"`
	Changed bool     `json:"changed"` // false when the file already held these bytes
}

// planFileWrite reads what is at path now.
func planFileWrite(path string) (FileWrite, error) {
	w := FileWrite{Path: path}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return w, nil
	case err != nil:
		return w, fmt.Errorf("tuning: %w", err)
	case !fi.Mode().IsRegular():
		return w, fmt.Errorf("tuning: %s is a %s, want a regular file or none", path, fi.Mode().Type())
	}
	if w.Previous, err = os.ReadFile(path); err != nil {
		return w, fmt.Errorf("tuning: %w", err)
	}
	w.Existed, w.Mode = true, fi.Mode().Perm()
	return w, nil
}

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

// writePersistent writes data to path safely (atomicfile: temp file,
// fsync, rename; no backup, the returned FileWrite is the backup),
// creating its directory, and returns what RestoreFile needs.
func writePersistent(path string, data []byte, perm os.FileMode) (FileWrite, error) {
	w, err := planFileWrite(path)
	if err != nil {
		return w, err
	}
	if w.Existed && bytes.Equal(w.Previous, data) {
		return w, nil
	}
	w.Created = missingDirs(filepath.Dir(path))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return w, fmt.Errorf("tuning: directory of %s: %w", path, err)
	}
	r, err := atomicfile.WriteFile(path, data, &atomicfile.Options{NoBackup: true, Perm: perm})
	if err != nil {
		// Leave no empty directory of ours behind.
		removeEmpty(w.Created)
		return w, fmt.Errorf("tuning: write %s: %w", path, err)
	}
	w.Changed = r.Changed
	return w, nil
}

// removeEmpty removes the directories in dirs (deepest first) that are
// empty, and reports the first error other than "not empty" or "gone".
func removeEmpty(dirs []string) error {
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) && !isDirNotEmpty(err) {
			return fmt.Errorf("tuning: remove directory %s: %w", d, err)
		}
	}
	return nil
}

// RestoreFile puts back what w recorded: the previous bytes and mode when
// the file existed, no file (and none of the directories the write
// created, when they are empty) when it did not. Restoring twice is not
// an error. It needs write access to the file's directory.
func RestoreFile(w FileWrite) error {
	if w.Path == "" {
		return errors.New("tuning: file restore record has no path")
	}
	if w.Existed {
		perm := w.Mode
		if perm == 0 {
			perm = 0o644
		}
		if err := os.MkdirAll(filepath.Dir(w.Path), 0o755); err != nil {
			return fmt.Errorf("tuning: restore %s: %w", w.Path, err)
		}
		if _, err := atomicfile.WriteFile(w.Path, w.Previous, &atomicfile.Options{NoBackup: true, Perm: perm}); err != nil {
			return fmt.Errorf("tuning: restore %s: %w", w.Path, err)
		}
		return nil
	}
	if err := os.Remove(w.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("tuning: remove %s: %w", w.Path, err)
	}
	return removeEmpty(w.Created)
}

// PersistFileChange prepares a Change that writes data to path (a file that
// may not exist yet: a tuned profile, /etc/sysctl.d/NN-name.conf, a
// systemd unit). Its Undo record (kind "persist-file", reverted by
// Host.Reverters) holds the FileWrite to restore: the previous bytes, or
// no file. Apply writes safely, Verify re-reads the file. An unchanged
// file gives a Change without Apply.
func PersistFileChange(path string, data []byte) (*Change, error) {
	w, err := planFileWrite(path)
	if err != nil {
		return nil, err
	}
	if w.Existed && bytes.Equal(w.Previous, data) {
		return &Change{Describe: path + " already up to date"}, nil
	}
	w.Created = missingDirs(filepath.Dir(path))
	undo, err := NewUndo(undoPersist, w)
	if err != nil {
		return nil, err
	}
	verb := "write"
	if w.Existed {
		verb = "rewrite"
	}
	return &Change{
		Describe: fmt.Sprintf("%s %s (%d bytes)", verb, path, len(data)),
		Undo:     []Undo{undo},
		Apply: func(context.Context) error {
			_, err := writePersistent(path, data, 0o644)
			return err
		},
		Verify: func(context.Context) error {
			got, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("tuning: verify %s: %w", path, err)
			}
			if !bytes.Equal(got, data) {
				return fmt.Errorf("tuning: verify %s: content differs from what was written", path)
			}
			return nil
		},
	}, nil
}

// revertPersist reverts an undoPersist record with RestoreFile.
func revertPersist(_ context.Context, data json.RawMessage) error {
	var w FileWrite
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("tuning: persist-file undo record: %w", err)
	}
	return RestoreFile(w)
}

func isDirNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
