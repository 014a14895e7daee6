package tomcatconf

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/atomicfile"
)

// faultFS fails one operation the way a read-only or full file system does.
type faultFS struct {
	atomicfile.OS
	createErr, renameErr error
}

func (f faultFS) CreateTemp(dir, pattern string) (atomicfile.File, error) {
	if f.createErr != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, pattern), Err: f.createErr}
	}
	return f.OS.CreateTemp(dir, pattern)
}

func (f faultFS) Rename(oldpath, newpath string) error {
	if f.renameErr != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: f.renameErr}
	}
	return f.OS.Rename(oldpath, newpath)
}

func TestSaveUnwritable(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "debian-tomcat10-10.1.60-server.xml"))
	require.NoError(t, err)
	tests := []struct {
		name   string
		fs     faultFS
		target error
	}{
		{"directory not writable", faultFS{createErr: syscall.EACCES}, os.ErrPermission},
		{"read-only file system", faultFS{createErr: syscall.EROFS}, syscall.EROFS},
		{"rename fails", faultFS{renameErr: syscall.EIO}, syscall.EIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "server.xml")
			require.NoError(t, os.WriteFile(p, orig, 0o640))
			c, err := Load(p)
			require.NoError(t, err)
			_, err = c.SetConnector(ConnectorQuery{Port: "8080"}, ArmGuideConnectorAttrs(7), nil)
			require.NoError(t, err)
			_, err = c.Save(&SaveOptions{NoBackup: true, fs: tt.fs})
			require.ErrorIs(t, err, tt.target)
			assert.Contains(t, err.Error(), p)
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, orig, got, "the file is untouched")
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, ents, 1, "no temp file left behind")
			assert.True(t, c.Changed(), "the edit is still pending and can be saved elsewhere")
		})
	}
}

func TestSaveReadOnlyDirAsUser(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to a read-only directory; covered by TestSaveUnwritable's fault injection")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "server.xml")
	orig, err := os.ReadFile(filepath.Join("testdata", "debian-tomcat10-10.1.60-server.xml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, orig, 0o640))
	require.NoError(t, os.Chmod(dir, 0o555))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	c, err := Load(p)
	require.NoError(t, err)
	_, err = c.DisableAccessLog(AccessLogComment)
	require.NoError(t, err)
	_, err = c.Save(nil)
	require.ErrorIs(t, err, os.ErrPermission)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, orig, got)
}

// TestSaveFailureLeavesNoBackup: a Save with backups on that fails leaves
// no server.xml.nettune.bak, and its error says the file is unchanged
// (issue 24, item 10).
func TestSaveFailureLeavesNoBackup(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "debian-tomcat10-10.1.60-server.xml"))
	require.NoError(t, err)
	for _, fs := range []faultFS{{createErr: syscall.ENOSPC}, {renameErr: syscall.EIO}} {
		dir := t.TempDir()
		p := filepath.Join(dir, "server.xml")
		require.NoError(t, os.WriteFile(p, orig, 0o640))
		c, err := Load(p)
		require.NoError(t, err)
		_, err = c.DisableAccessLog(AccessLogComment)
		require.NoError(t, err)
		res, err := c.Save(&SaveOptions{fs: fs})
		require.Error(t, err)
		assert.ErrorContains(t, err, p+" is unchanged")
		assert.Empty(t, res.Backup)
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, ents, 1, "no server.xml.nettune.bak or temp file left")
		assert.Equal(t, "server.xml", ents[0].Name())
	}
}
