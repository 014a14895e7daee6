//go:build linux

package bootcfg_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/bootcfg"
	"github.com/nettune/nettune/internal/testutil"
)

// TestIntegrationReadOnlyMount makes the file's directory a read-only bind
// mount (as root): the write fails with EROFS, naming the file, and the
// original is untouched. It changes the mount table, so it needs
// NETTUNE_HOST_TESTS=1, and unmounts in t.Cleanup.
func TestIntegrationReadOnlyMount(t *testing.T) {
	testutil.RequireHostTests(t)
	src := "GRUB_CMDLINE_LINUX=\"quiet\"\n"
	p := writeConfig(t, src, nil)
	dir := filepath.Dir(p)
	plan, err := planFor(t, p, bootcfg.Edit{Set: guideParams})
	require.NoError(t, err)
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("skipped: bind mount not permitted here: %v", err)
	}
	t.Cleanup(func() { require.NoError(t, syscall.Unmount(dir, 0)) })
	require.NoError(t, syscall.Mount(dir, dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""))
	_, err = plan.Apply()
	require.ErrorIs(t, err, syscall.EROFS)
	assert.Contains(t, err.Error(), p)
	b, _ := os.ReadFile(p)
	assert.Equal(t, src, string(b))
	assert.NoFileExists(t, p+".nettune.bak")
}
