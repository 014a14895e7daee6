package bootcfg

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/atomicfile"
)

// failRename is the real file system, except that renaming onto a target
// whose name contains failOn fails with errno.
type failRename struct {
	atomicfile.OS
	failOn string
	errno  syscall.Errno
}

func (f failRename) Rename(oldpath, newpath string) error {
	if strings.Contains(newpath, f.failOn) {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: f.errno}
	}
	return f.OS.Rename(oldpath, newpath)
}

// strictPlan writes src as a GRUB defaults file in a temporary directory
// and plans iommu.strict=1 on it.
func strictPlan(t *testing.T, src string) (string, *Plan) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "grub")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	cfg, err := LoadConfig(p)
	require.NoError(t, err)
	plan, err := cfg.Plan(Edit{Set: []Param{P("iommu.strict", "1")}})
	require.NoError(t, err)
	return p, plan
}

func TestApplyRenameFailsOriginalIntact(t *testing.T) {
	src := "GRUB_CMDLINE_LINUX=\"quiet\"\n"
	p, plan := strictPlan(t, src)
	plan.fs = failRename{failOn: "grub", errno: syscall.EIO}
	_, err := plan.Apply()
	require.ErrorIs(t, err, syscall.EIO)
	assert.Contains(t, err.Error(), p)
	b, _ := os.ReadFile(p)
	assert.Equal(t, src, string(b))
	des, _ := os.ReadDir(filepath.Dir(p))
	for _, d := range des {
		assert.NotContains(t, d.Name(), ".tmp-", "no temp file left")
	}
}

// TestApplyRollsBackEarlierFiles: when the second of two files fails, the
// first is put back as it was and its new backup removed.
func TestApplyRollsBackEarlierFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "grub")
	d := filepath.Join(p+".d", "40-z.cfg")
	mainSrc := "GRUB_CMDLINE_LINUX=\"iommu.strict=0\"\n"
	dropSrc := "GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX iommu.strict=0\"\n"
	require.NoError(t, os.WriteFile(p, []byte(mainSrc), 0o644))
	require.NoError(t, os.Mkdir(p+".d", 0o755))
	require.NoError(t, os.WriteFile(d, []byte(dropSrc), 0o644))
	cfg, err := LoadConfig(p)
	require.NoError(t, err)
	plan, err := cfg.Plan(Edit{Set: []Param{P("iommu.strict", "1")}})
	require.NoError(t, err)
	require.Equal(t, []string{p, d}, plan.Files())
	plan.fs = failRename{failOn: "40-z", errno: syscall.ENOSPC}
	_, err = plan.Apply()
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.Contains(t, err.Error(), d)
	b, _ := os.ReadFile(p)
	assert.Equal(t, mainSrc, string(b), "first file put back")
	b, _ = os.ReadFile(d)
	assert.Equal(t, dropSrc, string(b))
	assert.NoFileExists(t, p+".nettune.bak")
}

func TestUnifiedDiffShapes(t *testing.T) {
	assert.Empty(t, unifiedDiff("f", "a\n", "a\n"))
	assert.Equal(t, "--- f\n+++ f\n@@ -0,0 +1 @@\n+x\n", unifiedDiff("f", "", "x\n"))
	assert.Equal(t, "--- f\n+++ f\n@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+X=1\n", unifiedDiff("f", "a", "a\nX=1\n"))
	// Two changes far apart make two hunks.
	old := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	new := "x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ny\n"
	d := unifiedDiff("f", old, new)
	assert.Equal(t, 2, strings.Count(d, "@@ -"), d)
}

// faultFS is the real file system, except that the first rename onto a
// file named failRename, or the first fsync of a directory named
// failSyncDir, fails with errno. Later calls succeed, so a rollback
// through the same seam can put the file back.
type faultFS struct {
	atomicfile.OS
	failRename  string
	failSyncDir string
	errno       syscall.Errno
	fired       *bool
}

func (f faultFS) Rename(oldpath, newpath string) error {
	if f.failRename != "" && filepath.Base(newpath) == f.failRename && !*f.fired {
		*f.fired = true
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: f.errno}
	}
	return f.OS.Rename(oldpath, newpath)
}

func (f faultFS) SyncDir(dir string) error {
	if f.failSyncDir != "" && filepath.Base(dir) == f.failSyncDir && !*f.fired {
		*f.fired = true
		return &os.PathError{Op: "fsync", Path: dir, Err: f.errno}
	}
	return f.OS.SyncDir(dir)
}

// chainOfThree writes a main file and two drop-ins that each carry
// iommu.strict, so setting it rewrites all three, and returns the plan.
func chainOfThree(t *testing.T) (plan *Plan, paths, srcs []string) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "grub")
	paths = []string{p, filepath.Join(p+".d", "10-a.cfg"), filepath.Join(p+".d", "40-z.cfg")}
	srcs = []string{
		"GRUB_CMDLINE_LINUX=\"quiet iommu.strict=0\"\n",
		"# a\nGRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX iommu.strict=0 a=1\"\n",
		"# z\nGRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX iommu.strict=0 z=1\"\n",
	}
	require.NoError(t, os.Mkdir(p+".d", 0o755))
	for i := range paths {
		require.NoError(t, os.WriteFile(paths[i], []byte(srcs[i]), 0o644))
	}
	cfg, err := LoadConfig(p)
	require.NoError(t, err)
	plan, err = cfg.Plan(Edit{Set: []Param{P("iommu.strict", "1")}})
	require.NoError(t, err)
	require.Equal(t, paths, plan.Files())
	return plan, paths, srcs
}

// TestApplyRollbackSkipsUnchangedFile: the first file already holds its
// planned bytes (Apply leaves it alone), the second is written, the third
// fails. The second must get its own original back — not the first
// file's — and the first keeps what it held.
func TestApplyRollbackSkipsUnchangedFile(t *testing.T) {
	plan, paths, srcs := chainOfThree(t)
	require.NoError(t, os.WriteFile(paths[0], plan.files[0].new, 0o644))
	plan.fs = faultFS{failRename: "40-z.cfg", errno: syscall.EIO, fired: new(bool)}
	_, err := plan.Apply()
	require.ErrorIs(t, err, syscall.EIO)
	assert.Contains(t, err.Error(), paths[2])
	for i, want := range []string{string(plan.files[0].new), srcs[1], srcs[2]} {
		b, err := os.ReadFile(paths[i])
		require.NoError(t, err)
		assert.Equal(t, want, string(b), "file %d: %s", i, paths[i])
		assert.NoFileExists(t, paths[i]+atomicfile.DefaultBackupSuffix, "no backup left by a failed Apply")
	}
}

// TestApplyRollbackAfterRename: the drop-in is renamed into place, then
// the fsync of its directory fails. It was replaced, so it is put back
// with the main file written before it.
func TestApplyRollbackAfterRename(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "grub")
	d := filepath.Join(p+".d", "40-z.cfg")
	mainSrc := "GRUB_CMDLINE_LINUX=\"iommu.strict=0\"\n"
	dropSrc := "GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX iommu.strict=0\"\n"
	require.NoError(t, os.WriteFile(p, []byte(mainSrc), 0o644))
	require.NoError(t, os.Mkdir(p+".d", 0o755))
	require.NoError(t, os.WriteFile(d, []byte(dropSrc), 0o640))
	cfg, err := LoadConfig(p)
	require.NoError(t, err)
	plan, err := cfg.Plan(Edit{Set: []Param{P("iommu.strict", "1")}})
	require.NoError(t, err)
	require.Equal(t, []string{p, d}, plan.Files())
	fired := false
	plan.fs = faultFS{failSyncDir: "grub.d", errno: syscall.EIO, fired: &fired}
	_, err = plan.Apply()
	require.True(t, fired, "the fault was injected")
	require.ErrorIs(t, err, syscall.EIO)
	assert.Contains(t, err.Error(), d)
	b, err := os.ReadFile(d)
	require.NoError(t, err)
	assert.Equal(t, dropSrc, string(b), "the file replaced before the failure is put back")
	fi, err := os.Stat(d)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, mainSrc, string(b))
	assert.NoFileExists(t, p+atomicfile.DefaultBackupSuffix)
	assert.NoFileExists(t, d+atomicfile.DefaultBackupSuffix)
}

// TestUndoLeavesALaterEdit: Undo puts back a file that holds the plan's
// bytes, and refuses, naming the file and its backup, one edited since;
// a failed put-back (ENOSPC on rename) leaves the planned bytes and says so.
func TestUndoLeavesALaterEdit(t *testing.T) {
	src := "GRUB_CMDLINE_LINUX=\"quiet\"\n"
	p, plan := strictPlan(t, src)
	_, err := plan.Apply()
	require.NoError(t, err)
	applied, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NotEqual(t, src, string(applied))

	plan.fs = failRename{failOn: "grub", errno: syscall.ENOSPC}
	err = plan.Undo()
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.Contains(t, err.Error(), p)
	b, _ := os.ReadFile(p)
	assert.Equal(t, applied, b, "a failed undo leaves the file whole")
	plan.fs = nil

	edited := string(applied) + "GRUB_TIMEOUT=3\n"
	require.NoError(t, os.WriteFile(p, []byte(edited), 0o644))
	err = plan.Undo()
	require.Error(t, err)
	assert.Contains(t, err.Error(), p+": the file changed since the plan was applied")
	assert.Contains(t, err.Error(), p+atomicfile.DefaultBackupSuffix)
	b, _ = os.ReadFile(p)
	assert.Equal(t, edited, string(b), "a later edit is kept")

	require.NoError(t, os.WriteFile(p, applied, 0o644))
	require.NoError(t, plan.Undo())
	b, _ = os.ReadFile(p)
	assert.Equal(t, src, string(b))
}
