package nic

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIRQAffinityEdit: on this VM's virtio tree the spread over CPU 1
// plans the two queue IRQs (not the configuration one), applies, verifies
// and undoes through /proc/irq, also from its JSON as a journal holds it.
func TestIRQAffinityEdit(t *testing.T) {
	root := virtioFixture(t)
	c := fixtureClient(t, root)
	e, err := c.PlanQueueSpreadEdit("eth0", []int{1})
	require.NoError(t, err)
	assert.Equal(t, "nic-irq-affinity", e.Kind())
	assert.True(t, e.Changed())
	assert.Equal(t, "eth0's queue IRQs: irq 38 cpus 0-1 -> 1, irq 39 cpus 0-1 -> 1", e.Describe())

	ctx := context.Background()
	require.NoError(t, e.Apply(ctx))
	assert.Equal(t, "1", affinityFile(t, root, 38))
	assert.Equal(t, "1", affinityFile(t, root, 39))
	assert.Equal(t, "0-1", affinityFile(t, root, 37), "the configuration IRQ is left alone")
	require.NoError(t, e.Verify(ctx))

	b, err := json.Marshal(e)
	require.NoError(t, err)
	var back IRQAffinityEdit
	require.NoError(t, json.Unmarshal(b, &back))
	require.NoError(t, back.Undo(ctx))
	assert.Equal(t, "0-1", affinityFile(t, root, 38))
	assert.Equal(t, "0-1", affinityFile(t, root, 39))
	assert.ErrorIs(t, back.Verify(ctx), ErrNotApplied, "after the undo the spread no longer holds")

	again, err := c.PlanQueueSpreadEdit("eth0", []int{0, 1})
	require.NoError(t, err)
	assert.True(t, again.Changed())
	same := IRQAffinityEdit{Interface: "eth0", Before: again.Before, After: again.Before}
	assert.False(t, same.Changed())
}
