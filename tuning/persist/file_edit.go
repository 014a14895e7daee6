package persist

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/nettune/nettune/internal/persistfile"
)

// FileEdit is writing one persistent configuration file (a tuned profile,
// a file of /etc/sysctl.d, a systemd unit) as a value, in the shape of
// tuning.Reversible: the bytes it gets, and what was there before (the file
// existed? its bytes and mode; the directories the write creates), which
// is what Undo puts back. Marshalled as JSON it is all a journal needs:
// journal it with tuning.ChangeFor(edit) and revert it through
// tuning.AddReverter[FileEdit]. Build one with PlanFile or the Host's
// Plan methods; Write methods plan and apply at once.
type FileEdit struct {
	Path     string      `json:"path"`
	Data     []byte      `json:"data"`               // what Apply writes (base64 in a journal)
	Existed  bool        `json:"existed"`            // a file was there when planned
	Previous []byte      `json:"previous,omitempty"` // its bytes; nil when it did not exist
	Mode     os.FileMode `json:"mode,omitempty"`     // its mode; 0 when it did not exist
	// Created lists the directories Apply makes, deepest first: Undo
	// removes them again when they are empty.
	Created []string `json:"created,omitempty"`
}

// Kind is the journal kind of FileEdit records: a persistent file written (a profile, a boot unit).
func (FileEdit) Kind() string { return "persist-file" }

// PlanFile returns the edit that writes data to path, reading what is
// there now; it changes nothing. A path that is not a regular file (a
// directory) is an error.
func PlanFile(path string, data []byte) (FileEdit, error) {
	r, err := persistfile.Plan(path)
	if err != nil {
		return FileEdit{}, fmt.Errorf("persist: %w", err)
	}
	return FileEdit{Path: path, Data: data, Existed: r.Existed, Previous: r.Previous, Mode: r.Mode, Created: r.Created}, nil
}

func (e FileEdit) record() persistfile.Record {
	return persistfile.Record{Path: e.Path, Existed: e.Existed, Previous: e.Previous, Mode: e.Mode, Created: e.Created}
}

// Changed reports whether Apply changes the file.
func (e FileEdit) Changed() bool { return !e.Existed || !bytes.Equal(e.Previous, e.Data) }

// Describe names the file, whether it is new, and its size.
func (e FileEdit) Describe() string {
	switch {
	case !e.Changed():
		return e.Path + " already up to date"
	case e.Existed:
		return fmt.Sprintf("rewrite %s (%d bytes, was %d)", e.Path, len(e.Data), len(e.Previous))
	}
	return fmt.Sprintf("write %s (%d bytes, new)", e.Path, len(e.Data))
}

// Apply writes Data safely (temp file, fsync, rename; mode and owner of an
// existing file kept), creating the directory. It needs write access to
// the directory (root for /etc).
func (e FileEdit) Apply(context.Context) error {
	if _, err := persistfile.Write(e.Path, e.Data, 0o644); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	return nil
}

// Verify re-reads the file and checks it holds Data; the error names the
// first line that differs.
func (e FileEdit) Verify(context.Context) error {
	if err := persistfile.Verify(e.Path, e.Data); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	return nil
}

// Undo puts back what was there when the edit was planned: the previous
// bytes and mode, or no file (and none of the directories Apply created,
// when they are empty). Undoing twice, or an edit never applied, is not
// an error.
func (e FileEdit) Undo(context.Context) error {
	if err := persistfile.Restore(e.record()); err != nil {
		return fmt.Errorf("persist: %w", err)
	}
	return nil
}

// planAndWrite plans and applies an edit.
func planAndWrite(path string, data []byte) (FileEdit, error) {
	e, err := PlanFile(path, data)
	if err != nil {
		return e, err
	}
	if !e.Changed() {
		return e, nil
	}
	return e, e.Apply(context.Background())
}
