package nic_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/internal/testutil"
	"github.com/nettune/nettune/nic"
)

func channelsOf(t *testing.T, name string) nic.Channels {
	t.Helper()
	f, err := os.Open(testutil.CorpusFile(t, "cmd-outputs", name))
	require.NoError(t, err)
	defer f.Close()
	_, ch, err := nic.ParseChannels(f)
	require.NoError(t, err)
	return ch
}

// TestPlanChannelsEdit plans the Arm guide's `ethtool -L IF combined 8` on
// the channels its mlx5 NIC printed, and queues = CPUs on devices with
// rx/tx channels only.
func TestPlanChannelsEdit(t *testing.T) {
	mlx5 := channelsOf(t, "ethtool-l_arm-lp_grace-mlx5_enp1s0f0np0_before.txt")
	e, err := nic.PlanChannelsEdit("enp1s0f0np0", mlx5, mlx5.QueueUpdate(8))
	require.NoError(t, err)
	assert.True(t, e.Changed())
	assert.Equal(t, "ethtool -L enp1s0f0np0 combined 8: combined 63 -> 8", e.Describe())
	assert.Equal(t, uint32(8), e.After.Combined)
	assert.NotZero(t, e.NetNS, "the namespace it was planned in")
	after := channelsOf(t, "ethtool-l_arm-lp_grace-mlx5_enp1s0f0np0_after-L-combined-8.txt")
	assert.Equal(t, after, e.After, "what the guide's NIC printed after its own ethtool -L")

	sep := channelsOf(t, "ethtool-l_firedancer-issue1427_eno1_rx-tx-separate_no-combined.txt")
	e, err = nic.PlanChannelsEdit("eno1", sep, sep.QueueUpdate(2))
	require.NoError(t, err)
	assert.Regexp(t, `^ethtool -L eno1 rx 2 tx 2: rx \d+ -> 2, tx \d+ -> 2$`, e.Describe())

	// Unchanged, over the maximum, a bad name.
	e, err = nic.PlanChannelsEdit("enp1s0f0np0", after, after.QueueUpdate(8))
	require.NoError(t, err)
	assert.False(t, e.Changed())
	_, err = nic.PlanChannelsEdit("enp1s0f0np0", mlx5, nic.ChannelsUpdate{Combined: nic.Count(99)})
	assert.Error(t, err)
	_, err = nic.PlanChannelsEdit("a-name-longer-than-15", mlx5, mlx5.QueueUpdate(8))
	assert.Error(t, err)

	// The journal's form round-trips, and keeps the field names older
	// journals used (interface, before).
	b, err := json.Marshal(e)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"interface":"enp1s0f0np0"`)
	assert.Contains(t, string(b), `"before":{`)
	var back nic.ChannelsEdit
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, e, back)
}

// TestChannelsEditOtherNetNS: an edit planned in one network namespace is
// neither applied, verified nor undone from another, where an interface of
// the same name is another device (as `-revert` under `ip netns exec
// other` once changed an unrelated v0, and -verify would read it).
func TestChannelsEditOtherNetNS(t *testing.T) {
	e := nic.ChannelsEdit{Interface: "v0", Before: nic.Channels{MaxRX: 8, MaxTX: 8, RX: 8, TX: 8},
		After: nic.Channels{MaxRX: 8, MaxTX: 8, RX: 2, TX: 2}, NetNS: 1}
	err := e.Undo(context.Background())
	require.ErrorIs(t, err, nic.ErrOtherNetNS)
	assert.ErrorContains(t, err, "undo channels in network namespace 1 on v0")
	assert.ErrorIs(t, e.Apply(context.Background()), nic.ErrOtherNetNS)
	err = e.Verify(context.Background())
	require.ErrorIs(t, err, nic.ErrOtherNetNS)
	assert.ErrorContains(t, err, "verify channels in network namespace 1 on v0")
}
