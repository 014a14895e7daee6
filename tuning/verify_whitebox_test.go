package tuning

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/cpuset"
)

// journalChange journals ch under step, applies it with apply (nil: its
// own Apply), and marks it applied.
func journalChange(t *testing.T, j *Journal, step string, ch *Change, apply func() error) {
	t.Helper()
	seq, err := j.Begin(step, ch.Undo)
	require.NoError(t, err)
	if apply == nil {
		apply = func() error { return ch.Apply(context.Background()) }
	}
	require.NoError(t, apply())
	require.NoError(t, j.Applied(seq))
}

// TestVerifyUndoHostKinds: the records of the cpu-online, sysctl and
// file kinds carry the state set, and VerifyUndo checks it on a fixture
// root; a sysctl set back by hand differs, naming both values; records
// without the state set, or of another kind, cannot tell.
func TestVerifyUndoHostKinds(t *testing.T) {
	h, _ := newFixtureHost(t, seedsHost())
	ctx := context.Background()
	j, err := CreateJournal(filepath.Join(t.TempDir(), "j"))
	require.NoError(t, err)
	defer j.Close()

	cpus, err := h.KeepOnlineChange(cpuset.Range(0, 7))
	require.NoError(t, err)
	require.NotNil(t, cpus.Verify)
	journalChange(t, j, "cpus", cpus, nil)

	tw, err := h.SysctlChange("net.ipv4.tcp_max_tw_buckets", "262144")
	require.NoError(t, err)
	require.NotNil(t, tw.Verify, "SysctlChange has a Verify")
	twFile := h.root.Proc("sys", "net", "ipv4", "tcp_max_tw_buckets")
	// The fixture's kernel ignores sysctl writes: write the file itself.
	journalChange(t, j, "tw-buckets", tw, func() error { return os.WriteFile(twFile, []byte("262144\n"), 0o644) })

	conf := filepath.Join(t.TempDir(), "app.conf")
	require.NoError(t, os.WriteFile(conf, []byte("a=1\nb=2\n"), 0o644))
	file, err := FileChange(conf, func(old []byte) ([]byte, error) { return []byte(strings.Replace(string(old), "b=2", "b=3", 1)), nil })
	require.NoError(t, err)
	journalChange(t, j, "conf", file, nil)

	check := func(u Undo) (string, bool, error) { return h.VerifyUndo(ctx, u) }
	want, ok, err := check(cpus.Undo[0])
	assert.Equal(t, "online CPUs 0-7", want)
	assert.True(t, ok)
	assert.NoError(t, err)
	want, ok, err = check(tw.Undo[0])
	assert.Equal(t, "sysctl net.ipv4.tcp_max_tw_buckets = 262144", want)
	assert.True(t, ok)
	assert.NoError(t, err)
	want, ok, err = check(file.Undo[0])
	assert.Equal(t, conf+" as written (8 bytes)", want)
	assert.True(t, ok)
	assert.NoError(t, err)

	// A record as older journals hold it: the snapshot only; and a kind
	// that is not this package's.
	snap, err := NewUndo(undoCPUs, CPUSnapshot{Online: cpuset.Range(0, 191)})
	require.NoError(t, err)
	_, ok, err = check(snap)
	assert.False(t, ok)
	assert.ErrorContains(t, err, "holds the CPUs online before the change (0-191) only")
	odd, err := NewUndo("odd", map[string]int{"x": 1})
	require.NoError(t, err)
	_, ok, err = check(odd)
	assert.False(t, ok)
	assert.Error(t, err)

	// Changed by hand: each is named with what was found.
	require.NoError(t, os.WriteFile(twFile, []byte("65536\n"), 0o644))
	require.NoError(t, os.WriteFile(conf, []byte("a=1\nb=4\n"), 0o644))
	require.NoError(t, h.SetOnline(8, true))
	_, ok, err = check(tw.Undo[0])
	assert.True(t, ok)
	assert.ErrorIs(t, err, ErrNotApplied)
	assert.ErrorContains(t, err, `sysctl net.ipv4.tcp_max_tw_buckets is "65536", want "262144"`)
	_, _, err = check(file.Undo[0])
	assert.ErrorContains(t, err, `line 2 is "b=4", want "b=3"`)
	_, _, err = check(cpus.Undo[0])
	assert.ErrorContains(t, err, "online CPUs are 0-8, wanted 0-7")
}
