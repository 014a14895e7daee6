//go:build linux

package nic_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nettune/nettune/nic"
)

// TestIntegrationChannelsEdit applies, verifies and undoes an edit on a
// real veth with 8 queues each way inside a namespace the test created,
// and refuses to undo it from the host's namespace.
func TestIntegrationChannelsEdit(t *testing.T) {
	ns := nic.NewVethNS(t)
	c := nsClient(t, ns)
	before, err := c.Channels(ns.Veth)
	require.NoError(t, err)
	var e nic.ChannelsEdit
	ctx := context.Background()
	require.NoError(t, nic.InNetNSForTest(ns.Path, func() error {
		var err error
		if e, err = nic.PlanChannelsEdit(ns.Veth, before, before.QueueUpdate(3)); err != nil {
			return err
		}
		if err := e.Apply(ctx); err != nil {
			return err
		}
		return e.Verify(ctx)
	}))
	assert.Equal(t, "ethtool -L "+ns.Veth+" rx 3 tx 3: rx 8 -> 3, tx 8 -> 3", e.Describe())
	got, err := c.Channels(ns.Veth)
	require.NoError(t, err)
	assert.Equal(t, uint32(3), got.RX)
	assert.Equal(t, uint32(3), got.TX)

	// From the host's namespace: refused, nothing touched.
	require.ErrorIs(t, e.Undo(ctx), nic.ErrOtherNetNS)
	got, err = c.Channels(ns.Veth)
	require.NoError(t, err)
	assert.Equal(t, uint32(3), got.RX)

	require.NoError(t, nic.InNetNSForTest(ns.Path, func() error { return e.Undo(ctx) }))
	got, err = c.Channels(ns.Veth)
	require.NoError(t, err)
	assert.Equal(t, before, got)
	// Undo is idempotent.
	require.NoError(t, nic.InNetNSForTest(ns.Path, func() error { return e.Undo(ctx) }))
}
