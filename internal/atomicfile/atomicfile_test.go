package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/atomicfile"
)

const original = "GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX=\"quiet\"\n"

func setup(t *testing.T) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "grub")
	require.NoError(t, os.WriteFile(path, []byte(original), 0o640))
	return dir, path
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// entries lists dir so a test can prove no temp file was left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

func TestWriteFileReplacesAndBacksUp(t *testing.T) {
	dir, path := setup(t)
	res, err := atomicfile.WriteFile(path, []byte("new\n"), nil)
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.False(t, res.InPlace)
	assert.Equal(t, path, res.Path)
	assert.Equal(t, path+atomicfile.DefaultBackupSuffix, res.Backup)
	assert.Equal(t, "new\n", read(t, path))
	assert.Equal(t, original, read(t, res.Backup))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "mode kept")

	// The second change keeps the first backup: it holds the admin's file,
	// never our own output.
	res, err = atomicfile.WriteFile(path, []byte("newer\n"), nil)
	require.NoError(t, err)
	assert.Empty(t, res.Backup)
	assert.Equal(t, original, read(t, path+atomicfile.DefaultBackupSuffix))
	assert.ElementsMatch(t, []string{"grub", "grub.nettune.bak"}, entries(t, dir))

	restored, err := atomicfile.Restore(path, nil)
	require.NoError(t, err)
	assert.True(t, restored)
	assert.Equal(t, original, read(t, path))
	restored, err = atomicfile.Restore(path, nil)
	require.NoError(t, err)
	assert.False(t, restored, "restore is idempotent")
	assert.Equal(t, []string{"grub"}, entries(t, dir))
}

func TestWriteFileUnchangedWritesNothing(t *testing.T) {
	dir, path := setup(t)
	before, err := os.Stat(path)
	require.NoError(t, err)
	res, err := atomicfile.WriteFile(path, []byte(original), nil)
	require.NoError(t, err)
	assert.False(t, res.Changed)
	assert.Empty(t, res.Backup)
	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "inode unchanged: no rename happened")
	assert.Equal(t, []string{"grub"}, entries(t, dir))
}

func TestWriteFileCreatesMissing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new.conf")
	res, err := atomicfile.WriteFile(p, []byte("x"), &atomicfile.Options{Perm: 0o600})
	require.NoError(t, err)
	assert.True(t, res.Changed)
	assert.Empty(t, res.Backup)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestWriteFileFollowsSymlink(t *testing.T) {
	dir, path := setup(t)
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("grub", link))
	res, err := atomicfile.WriteFile(link, []byte("via link\n"), nil)
	require.NoError(t, err)
	assert.Equal(t, path, res.Path)
	assert.Equal(t, "via link\n", read(t, path))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link stays a link")
}

func TestWriteFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	_, err := atomicfile.WriteFile(dir, []byte("x"), nil)
	require.ErrorIs(t, err, atomicfile.ErrNotRegular)
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, err = atomicfile.WriteFile(fifo, []byte("x"), nil)
	require.ErrorIs(t, err, atomicfile.ErrNotRegular)
	assert.Contains(t, err.Error(), fifo)
}

func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("keeping another user's ownership needs root; run as root to test it")
	}
	_, path := setup(t)
	require.NoError(t, os.Chown(path, 0, 65534)) // root:nogroup, like root:tomcat
	_, err := atomicfile.WriteFile(path, []byte("new\n"), nil)
	require.NoError(t, err)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, uint32(0), st.Uid)
	assert.Equal(t, uint32(65534), st.Gid)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}

// faultFS wraps the real file system and fails chosen operations.
type faultFS struct {
	atomicfile.OS
	renameErr, createErr, writeErr, syncDirErr error
}

func (f faultFS) Rename(o, n string) error {
	if f.renameErr != nil {
		return &os.LinkError{Op: "rename", Old: o, New: n, Err: f.renameErr}
	}
	return f.OS.Rename(o, n)
}

func (f faultFS) CreateTemp(dir, pattern string) (atomicfile.File, error) {
	if f.createErr != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: f.createErr}
	}
	file, err := f.OS.CreateTemp(dir, pattern)
	if err != nil || f.writeErr == nil {
		return file, err
	}
	return failingWrite{File: file, err: f.writeErr}, nil
}

func (f faultFS) SyncDir(dir string) error {
	if f.syncDirErr != nil {
		return f.syncDirErr
	}
	return f.OS.SyncDir(dir)
}

type failingWrite struct {
	atomicfile.File
	err error
}

func (w failingWrite) Write(p []byte) (int, error) {
	n, _ := w.File.Write(p[:len(p)/2])
	return n, w.err
}

func TestWriteFileFaultsLeaveOriginalIntact(t *testing.T) {
	tests := []struct {
		name string
		fs   faultFS
		want error
	}{
		{name: "rename fails", fs: faultFS{renameErr: syscall.EIO}, want: syscall.EIO},
		{name: "read-only directory", fs: faultFS{createErr: syscall.EROFS}, want: syscall.EROFS},
		{name: "permission denied", fs: faultFS{createErr: syscall.EACCES}, want: os.ErrPermission},
		{name: "disk full", fs: faultFS{writeErr: syscall.ENOSPC}, want: syscall.ENOSPC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, path := setup(t)
			_, err := atomicfile.WriteFile(path, []byte(strings.Repeat("new\n", 1000)), &atomicfile.Options{FS: tt.fs, NoBackup: true})
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, original, read(t, path), "original intact")
			assert.Equal(t, []string{"grub"}, entries(t, dir), "no temp file left")
		})
	}
}

func TestWriteFileSyncDirFailureIsReported(t *testing.T) {
	_, path := setup(t)
	res, err := atomicfile.WriteFile(path, []byte("new\n"), &atomicfile.Options{FS: faultFS{syncDirErr: syscall.EIO}})
	require.ErrorIs(t, err, syscall.EIO)
	assert.True(t, res.Changed, "the replace happened; only durability is in doubt")
}

func TestWriteFileBindMountFallsBackInPlace(t *testing.T) {
	dir, path := setup(t)
	res, err := atomicfile.WriteFile(path, []byte("in place\n"), &atomicfile.Options{FS: faultFS{renameErr: syscall.EBUSY}})
	require.NoError(t, err)
	assert.True(t, res.InPlace)
	assert.Equal(t, "in place\n", read(t, path))
	assert.Equal(t, original, read(t, path+atomicfile.DefaultBackupSuffix))
	assert.ElementsMatch(t, []string{"grub", "grub.nettune.bak"}, entries(t, dir))
}

func TestWriteFileReadOnlyDirectoryReal(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions; the fault-injection test covers this case")
	}
	dir, path := setup(t)
	require.NoError(t, os.Chmod(dir, 0o555))
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	_, err := atomicfile.WriteFile(path, []byte("new\n"), &atomicfile.Options{NoBackup: true})
	require.True(t, errors.Is(err, os.ErrPermission), "%v", err)
	assert.Equal(t, original, read(t, path))
}

// TestWriteFileFaultsLeaveNoBackup: a failed write with backups on leaves
// neither the backup it made nor a temp file, and says the original is
// unchanged (issue 24: server.xml.nettune.bak was left behind and the
// error did not say so).
func TestWriteFileFaultsLeaveNoBackup(t *testing.T) {
	tests := []struct {
		name string
		fs   faultFS
		want error
	}{
		{name: "rename fails", fs: faultFS{renameErr: syscall.EIO}, want: syscall.EIO},
		{name: "read-only directory", fs: faultFS{createErr: syscall.EROFS}, want: syscall.EROFS},
		{name: "disk full", fs: faultFS{writeErr: syscall.ENOSPC}, want: syscall.ENOSPC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, path := setup(t)
			res, err := atomicfile.WriteFile(path, []byte("new\n"), &atomicfile.Options{FS: tt.fs})
			require.ErrorIs(t, err, tt.want)
			require.ErrorIs(t, err, atomicfile.ErrUnchanged)
			assert.ErrorContains(t, err, "; "+path+" is unchanged")
			assert.Empty(t, res.Backup)
			assert.Equal(t, original, read(t, path))
			assert.Equal(t, []string{"grub"}, entries(t, dir), "no backup or temp file left")
		})
	}

	// A backup from an earlier change is the admin's file: a failure now
	// keeps it.
	dir, path := setup(t)
	_, err := atomicfile.WriteFile(path, []byte("first\n"), nil)
	require.NoError(t, err)
	_, err = atomicfile.WriteFile(path, []byte("second\n"), &atomicfile.Options{FS: faultFS{renameErr: syscall.EIO}})
	require.ErrorIs(t, err, atomicfile.ErrUnchanged)
	assert.Equal(t, "first\n", read(t, path))
	assert.Equal(t, original, read(t, path+atomicfile.DefaultBackupSuffix))
	assert.ElementsMatch(t, []string{"grub", "grub.nettune.bak"}, entries(t, dir))
}

// TestWriteFileInPlaceFailureKeepsBackup: when rename is refused and the
// in-place rewrite fails, the file may be cut: the backup stays, and the
// error names it instead of claiming the file is unchanged.
func TestWriteFileInPlaceFailureKeepsBackup(t *testing.T) {
	_, path := setup(t)
	fsys := inPlaceFails{faultFS: faultFS{renameErr: syscall.EBUSY}}
	_, err := atomicfile.WriteFile(path, []byte("new\n"), &atomicfile.Options{FS: fsys})
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.NotErrorIs(t, err, atomicfile.ErrUnchanged)
	assert.ErrorContains(t, err, "the original is in "+path+atomicfile.DefaultBackupSuffix)
	assert.Equal(t, original, read(t, path+atomicfile.DefaultBackupSuffix))
}

// inPlaceFails fails opening the target for an in-place rewrite.
type inPlaceFails struct{ faultFS }

func (f inPlaceFails) OpenFile(name string, flag int, perm os.FileMode) (atomicfile.File, error) {
	if flag&os.O_TRUNC != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	return f.faultFS.OpenFile(name, flag, perm)
}
