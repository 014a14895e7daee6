//go:build linux

package tuning_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tuning"
)

// TestIntegrationJournalFullFilesystem reproduces issue 24's full disk: the
// journal on an 8 KiB tmpfs, a step whose begin record does not fit. The
// step fails, the journal ends at its last whole record (before: a torn
// line with no newline), and once space is freed a revert and a new run
// read it (before: "line 4: invalid character" from then on).
func TestIntegrationJournalFullFilesystem(t *testing.T) {
	testutil.RequireRoot(t)
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=8k"); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, 0) })

	dir, a, b := setupFiles(t) // the files live on the real disk
	_ = dir
	path := filepath.Join(mnt, "journal")
	j, err := tuning.CreateJournal(path)
	require.NoError(t, err)
	defer j.Close()
	// Fill the tmpfs but for a little room.
	filler := filepath.Join(mnt, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, 4096), 0o600))
	big := strings.Repeat("x", 8192) // the undo record holds the whole file
	require.NoError(t, os.WriteFile(b, []byte("GRUB_CMDLINE_LINUX=\"quiet\"\n#"+big+"\n"), 0o644))

	rev := tuning.Reverters{tuning.UndoFile: tuning.RevertFile}
	r := &tuning.Runner{Journal: j, Reverters: rev, Keep: true}
	res, err := r.Run(context.Background(), []tuning.Step{
		fileStep("threads", a, `"200"`, `"7"`),
		fileStep("iommu", b, `"quiet"`, `"quiet iommu.strict=1"`),
	})
	require.ErrorIs(t, err, syscall.ENOSPC, "the step that cannot be journaled fails")
	assert.ErrorContains(t, err, "the record was cut back")
	assert.Equal(t, tuning.StatusReverted, res[0].Status, "the step before it is reverted")
	assert.Equal(t, origA, read(t, a))
	assert.NotContains(t, read(t, b), "iommu.strict=1", "never applied")

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotEmpty(t, data)
	assert.Equal(t, byte('\n'), data[len(data)-1], "no torn line: ends %q", data[max(0, len(data)-80):])
	require.NoError(t, j.Close())

	require.NoError(t, os.Remove(filler))
	entries, err := tuning.ReadJournal(path)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the threads step was journaled")
	assert.True(t, entries[0].Reverted)
	steps, err := tuning.RevertJournal(context.Background(), path, rev)
	require.NoError(t, err)
	assert.Empty(t, steps)
	j2, err := tuning.CreateJournal(path)
	require.NoError(t, err, "a new run starts over the reverted journal")
	require.NoError(t, j2.Close())
}
