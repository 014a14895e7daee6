package persistfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteRestore(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "a", "b", "f.conf")
	r, err := Write(p, []byte("x\n"), 0o640)
	require.NoError(t, err)
	assert.False(t, r.Existed)
	assert.True(t, r.Changed)
	assert.Equal(t, []string{filepath.Join(root, "a", "b"), filepath.Join(root, "a")}, r.Created)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())

	// Someone else's file in a directory we made keeps that directory.
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "other"), nil, 0o644))
	require.NoError(t, Restore(r))
	assert.NoFileExists(t, p)
	assert.NoDirExists(t, filepath.Join(root, "a", "b"))
	assert.FileExists(t, filepath.Join(root, "a", "other"))
	require.NoError(t, Restore(r), "twice")

	// An existing file: same bytes is no change; new bytes restore to old.
	p = filepath.Join(root, "a", "g.conf")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
	r, err = Write(p, []byte("old"), 0o644)
	require.NoError(t, err)
	assert.False(t, r.Changed)
	r, err = Write(p, []byte("new"), 0o644)
	require.NoError(t, err)
	require.NoError(t, Restore(r))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "old", string(got))
}

func TestPlanRefusesADirectory(t *testing.T) {
	_, err := Plan(t.TempDir())
	assert.ErrorContains(t, err, "want a regular file or none")
	assert.Error(t, Restore(Record{}))
}
