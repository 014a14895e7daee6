package tuning_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/tuning"
)

// TestIntegrationPlanCPUAndSysctl runs a two-step plan on the real host —
// only cpu0 online, a higher tcp_max_tw_buckets — keeps it, then reverts
// it from the journal as a later process would.
func TestIntegrationPlanCPUAndSysctl(t *testing.T) {
	testutil.RequireHostTests(t)
	testutil.LockHotplug(t)
	h := tuning.NewDefault()
	before, err := h.CPUSnapshot()
	require.NoError(t, err)
	if !before.Hotpluggable.Contains(1) || !before.Online.Contains(1) {
		t.Skip("skipped: needs cpu1 online and hot-pluggable")
	}
	const tw = "net.ipv4.tcp_max_tw_buckets"
	twBefore, err := h.Sysctl(tw)
	require.NoError(t, err)
	t.Cleanup(func() {
		h.RestoreCPUs(context.Background(), before)
		h.SetSysctl(tw, twBefore)
	})
	n, err := strconv.Atoi(twBefore)
	require.NoError(t, err)
	want := strconv.Itoa(n + 1000)

	keep := before.Online.Without(1)
	steps := []tuning.Step{
		{Name: "cpus", Prepare: func(context.Context) (*tuning.Change, error) { return h.KeepOnlineChange(keep) }},
		{Name: "tw-buckets", Prepare: func(context.Context) (*tuning.Change, error) { return h.SysctlChange(tw, want) }},
	}
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := tuning.CreateJournal(path)
	require.NoError(t, err)
	r := &tuning.Runner{Journal: j, Reverters: h.Reverters(), Keep: true}
	res, err := r.Run(context.Background(), steps)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	assert.Equal(t, tuning.StatusApplied, res[0].Status)
	assert.Contains(t, res[1].Describe, twBefore+" -> "+want)
	online, err := h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, keep.String(), online.String())
	v, err := h.Sysctl(tw)
	require.NoError(t, err)
	assert.Equal(t, want, v)

	reverted, err := tuning.RevertJournal(context.Background(), path, tuning.NewDefault().Reverters())
	require.NoError(t, err)
	assert.Equal(t, []string{"tw-buckets", "cpus"}, reverted)
	online, err = h.OnlineCPUs()
	require.NoError(t, err)
	assert.Equal(t, before.Online.String(), online.String())
	v, err = h.Sysctl(tw)
	require.NoError(t, err)
	assert.Equal(t, twBefore, v)

	// Preparing the same CPU state again is a no-op step.
	ch, err := h.KeepOnlineChange(before.Online)
	require.NoError(t, err)
	assert.Nil(t, ch.Apply)
}
