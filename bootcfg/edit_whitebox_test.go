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

func TestApplyRenameFailsOriginalIntact(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "grub")
	src := "GRUB_CMDLINE_LINUX=\"quiet\"\n"
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	cfg, err := LoadConfig(p)
	require.NoError(t, err)
	plan, err := cfg.Plan(Edit{Set: []Param{P("iommu.strict", "1")}})
	require.NoError(t, err)
	plan.fs = failRename{failOn: "grub", errno: syscall.EIO}
	_, err = plan.Apply()
	require.ErrorIs(t, err, syscall.EIO)
	assert.Contains(t, err.Error(), p)
	b, _ := os.ReadFile(p)
	assert.Equal(t, src, string(b))
	des, _ := os.ReadDir(dir)
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
