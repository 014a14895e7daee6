package tuning

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/nettune/nettune/internal/atomicfile"
	"github.com/nettune/nettune/internal/persistfile"
	"github.com/nettune/nettune/internal/udiff"
)

// undoFile is the Undo kind of a configuration file rewrite; its data is a
// fileUndo and revertFile reverts it.
const undoFile = "file"

// fileUndo is the journal record of a file rewrite: the file's bytes and
// mode before the change, and the bytes written (what Host.VerifyUndo
// checks; nil in a record from before it was kept).
type fileUndo struct {
	Path    string      `json:"path"`
	Content []byte      `json:"content"` // base64 in the journal
	Mode    os.FileMode `json:"mode"`
	Written []byte      `json:"written"`
}

// FileChange prepares a Change that rewrites the file at path with
// render(old). When render returns the same bytes, the Change has no Apply
// (the step is unchanged). Otherwise Describe is the unified diff, the Undo
// record holds the original bytes (Host.Reverters reverts it), Apply writes through atomicfile (temp
// file, fsync, rename, mode and owner kept) and Verify re-reads the file.
// render must not modify old.
func FileChange(path string, render func(old []byte) ([]byte, error)) (*Change, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("tuning: %w", err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tuning: %w", err)
	}
	next, err := render(old)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(old, next) {
		return &Change{}, nil
	}
	undo, err := NewUndo(undoFile, fileUndo{Path: path, Content: old, Mode: fi.Mode().Perm(), Written: append([]byte{}, next...)})
	if err != nil {
		return nil, err
	}
	return &Change{
		Describe: udiff.Unified("a"+path, "b"+path, old, next),
		Undo:     []Undo{undo},
		Apply: func(context.Context) error {
			_, err := atomicfile.WriteFile(path, next, &atomicfile.Options{NoBackup: true})
			return err
		},
		Verify: func(context.Context) error { return verifyFile(path, next) },
	}, nil
}

// verifyFile re-reads the file at path and checks it holds want; the
// error names the first line that differs.
func verifyFile(path string, want []byte) error {
	if err := persistfile.Verify(path, want); err != nil {
		return fmt.Errorf("tuning: %w", err)
	}
	return nil
}

// revertFile reverts an undoFile record: it writes the recorded bytes
// back (safely, keeping owner) unless the file already holds them.
func revertFile(_ context.Context, data json.RawMessage) error {
	var u fileUndo
	if err := json.Unmarshal(data, &u); err != nil {
		return fmt.Errorf("tuning: file undo record: %w", err)
	}
	if u.Path == "" {
		return errors.New("tuning: file undo record has no path")
	}
	_, err := atomicfile.WriteFile(u.Path, u.Content, &atomicfile.Options{NoBackup: true, Perm: u.Mode})
	return err
}
