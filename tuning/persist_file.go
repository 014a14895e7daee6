package tuning

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/nettune/nettune/internal/persistfile"
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

// writePersistent writes data to path safely (temp file, fsync, rename),
// creating its directory, and returns what RestoreFile needs.
func writePersistent(path string, data []byte, perm os.FileMode) (FileWrite, error) {
	r, err := persistfile.Write(path, data, perm)
	if err != nil {
		return FileWrite(r), fmt.Errorf("tuning: %w", err)
	}
	return FileWrite(r), nil
}

// RestoreFile puts back what w recorded: the previous bytes and mode when
// the file existed, no file (and none of the directories the write
// created, when they are empty) when it did not. Restoring twice is not
// an error. It needs write access to the file's directory.
func RestoreFile(w FileWrite) error {
	if err := persistfile.Restore(persistfile.Record(w)); err != nil {
		return fmt.Errorf("tuning: %w", err)
	}
	return nil
}

// PersistFileChange prepares a Change that writes data to path (a file that
// may not exist yet: a tuned profile, /etc/sysctl.d/NN-name.conf, a
// systemd unit). Its Undo record (kind "persist-file", reverted by
// Host.Reverters) holds the FileWrite to restore: the previous bytes, or
// no file. Apply writes safely, Verify re-reads the file. An unchanged
// file gives a Change without Apply.
func PersistFileChange(path string, data []byte) (*Change, error) {
	r, err := persistfile.Plan(path)
	if err != nil {
		return nil, fmt.Errorf("tuning: %w", err)
	}
	if r.Unchanged(data) {
		return &Change{Describe: path + " already up to date"}, nil
	}
	w := FileWrite(r)
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
